// A (1,2,2)-shaped workload with a known answer for the wait/transfer split, profiled under
// mpirun -np 4: ranks {0,1} are stage 0 and {2,3} stage 1, each stage one tensor-parallel
// group. Every iteration starts at a barrier (not profiled); each group then sums an array over
// its own communicator, and stage 0 sends a message to stage 1 (rank r to r + 2). Rank 2 reaches
// its group's sum `delay` late (it sleeps first), and stage 0's sum is slow: its scope lasts
// `delay` longer than the call (a slow link's transfer). The known answer: rank 3, rank 2's
// peer, waits about `delay` an iteration; ranks 0, 1 and 2 wait next to nothing, and stage 0's
// `delay` is transfer. Numbered by one counter per process (--one-counter: every communication
// on the profiled communicator, as before communicators had their own numbers), stage 0's sums
// are matched with stage 1's, and ranks 0 and 1 appear to wait for rank 2 instead of
// transferring.
//
//   mpirun -np 4 test_profiler_late_stage OUT.h5 [--one-counter] [--delay-ms N] [--iterations N]
//
// Exit 0 when the waits are as stated (checked on rank 0), 1 otherwise; it prints each rank's
// median wait and transfer per iteration either way.

#include <mpi.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <string>
#include <vector>

#include "commscope/common/stats.hpp"
#include "commscope/profiler/session.hpp"
#include "commscope/profiler/vocabulary.hpp"

namespace cp = commscope::profiler;

namespace {

void sleep_ms(int ms) {
  timespec ts{ms / 1000, static_cast<long>(ms % 1000) * 1'000'000};
  nanosleep(&ts, nullptr);
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (argc < 2 || size != 4) {
    if (rank == 0) std::fprintf(stderr, "usage: mpirun -np 4 %s OUT.h5 [--one-counter] [--delay-ms N]\n", argv[0]);
    MPI_Finalize();
    return 2;
  }
  bool one_counter = false;
  int delay_ms = 100, iterations = 5;
  for (int i = 2; i < argc; ++i) {
    if (std::strcmp(argv[i], "--one-counter") == 0) one_counter = true;
    if (std::strcmp(argv[i], "--delay-ms") == 0 && i + 1 < argc) delay_ms = std::atoi(argv[++i]);
    if (std::strcmp(argv[i], "--iterations") == 0 && i + 1 < argc) iterations = std::atoi(argv[++i]);
  }
  const int stage = rank / 2;
  MPI_Comm tp = MPI_COMM_NULL;
  MPI_Comm_split(MPI_COMM_WORLD, stage, rank, &tp);
  cp::CommGroup tp_group(cp::communicator_label("tp", cp::world_ranks(tp)));
  cp::CommGroup link(cp::link_label("pp", stage == 0 ? rank : rank - 2, stage == 0 ? rank + 2 : rank));
  const cp::NameId allreduce = cp::name_id("tp.allreduce"), mpi = cp::name_id("mpi"), send = cp::name_id("pp.send"),
                   recv = cp::name_id("pp.recv");
  std::vector<float> data(1024, 1.0f), message(1024, 0.0f);
  const auto bytes = static_cast<std::int64_t>(data.size() * sizeof(float));

  cp::SessionOptions options;
  options.output = argv[1];
  options.backend = cp::BackendChoice::kHost;
  cp::Profile profile;
  {
    cp::Session session(MPI_COMM_WORLD, options);
    for (int it = 0; it < iterations; ++it) {
      MPI_Barrier(MPI_COMM_WORLD);
      COMMSCOPE_PROFILE_ITERATION(it);
      if (rank == 2) sleep_ms(delay_ms);
      {
        cp::CommScope c =
            one_counter ? cp::CommScope(allreduce, mpi, bytes) : cp::CommScope(allreduce, mpi, bytes, tp_group);
        MPI_Allreduce(MPI_IN_PLACE, data.data(), static_cast<int>(data.size()), MPI_FLOAT, MPI_SUM, tp);
        if (stage == 0) sleep_ms(delay_ms);  // the slow link's transfer
      }
      if (stage == 0) {
        cp::CommScope c = one_counter ? cp::CommScope(send, mpi, bytes) : cp::CommScope(send, mpi, bytes, link);
        MPI_Send(message.data(), static_cast<int>(message.size()), MPI_FLOAT, rank + 2, it, MPI_COMM_WORLD);
      } else {
        cp::CommScope c = one_counter ? cp::CommScope(recv, mpi, bytes) : cp::CommScope(recv, mpi, bytes, link);
        MPI_Recv(message.data(), static_cast<int>(message.size()), MPI_FLOAT, rank - 2, it, MPI_COMM_WORLD,
                 MPI_STATUS_IGNORE);
      }
    }
    profile = session.finish();
  }
  MPI_Comm_free(&tp);

  int ok = 1;
  if (rank == 0) {
    // Each rank's median over the iterations (one iteration that the scheduler of a loaded
    // machine delayed does not decide).
    std::vector<std::vector<double>> waits(4), transfers(4);
    for (const cp::BreakdownRow& r : profile.breakdown) {
      waits[static_cast<std::size_t>(r.rank)].push_back(static_cast<double>(r.comm_wait_ns) / 1e6);
      transfers[static_cast<std::size_t>(r.rank)].push_back(static_cast<double>(r.comm_transfer_ns) / 1e6);
    }
    for (int r = 0; r < 4; ++r) {
      // Rank 3 waits for rank 2; everyone else waits for no one; stage 0 transfers for `delay`
      // (0.6 and 0.3 of the delay allow for the scheduling of 4 ranks on fewer cores).
      const auto i = static_cast<std::size_t>(r);
      const double wait = commscope::stats::median(waits[i]), transfer = commscope::stats::median(transfers[i]);
      const bool good =
          (r == 3 ? wait >= 0.6 * delay_ms : wait <= 0.3 * delay_ms) && (r >= 2 || transfer >= 0.6 * delay_ms);
      std::printf(
          "rank %d (stage %d): wait %.2f ms, transfer %.2f ms (medians per iteration; expected: wait %s, "
          "transfer %s)%s\n",
          r, r / 2, wait, transfer, r == 3 ? "about the delay" : "none", r < 2 ? "about the delay" : "short",
          good ? "" : "  WRONG");
      ok &= good ? 1 : 0;
    }
    std::printf("%s\n", ok ? "known answer: only the late rank's peer waits" : "FAILED");
  }
  MPI_Bcast(&ok, 1, MPI_INT, 0, MPI_COMM_WORLD);
  MPI_Finalize();
  return ok ? 0 : 1;
}
