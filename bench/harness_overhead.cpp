// `commscope-microbench harness`: what commscope adds to one MPI collective call. The same
// f32 sum allreduce of --bytes is timed three ways, interleaved round by round on the same
// communicator and buffers:
//   raw    MPI_Allreduce in a bare loop (what IMB and OSU time)
//   run    Communicator::run with the `mpi` algorithm (validation, dispatch, error context)
//   bench  commscope-bench's timed pass (CpuBackend::run_timed's time, with the watchdog
//          thread running), as the bench reports it
// Each round times --calls back-to-back calls per way after a barrier; a round's time per call
// is the slowest rank's, as the bench combines ranks. Printed: the median over rounds of each
// way, and run - raw, bench - raw in ns per call.
#include "harness_overhead.hpp"

#include <mpi.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <exception>
#include <memory>
#include <string>
#include <vector>

#include "backends/backend.hpp"
#include "cases.hpp"
#include "commscope/collectives/communicator.hpp"
#include "commscope/collectives/error.hpp"
#include "commscope/collectives/mpi_transport.hpp"
#include "commscope/common/stats.hpp"
#include "measure.hpp"
#include "watchdog.hpp"

namespace commscope::bench {
namespace {

struct HarnessOptions {
  std::size_t bytes = 8;
  std::int64_t calls = 100000;
  int rounds = 11;
  double timeout_s = 300;
};

// Seconds for `calls` calls of `body` after a barrier, the slowest rank's.
template <class Body>
double timed(MPI_Comm comm, std::int64_t calls, Body body) {
  COMMSCOPE_MPI_CHECK(MPI_Barrier(comm));
  const auto t0 = std::chrono::steady_clock::now();
  body(calls);
  const double mine = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  double slowest = 0;
  COMMSCOPE_MPI_CHECK(MPI_Allreduce(&mine, &slowest, 1, MPI_DOUBLE, MPI_MAX, comm));
  return slowest;
}

int run(const HarnessOptions& o) {
  Communicator comm(MPI_COMM_WORLD);
  const MPI_Comm mc = comm.mpi_comm();
  const int nranks = comm.size();

  // The bench's own case and backend: same buffers, same prepare() as a commscope-bench run.
  Case c;
  c.coll = Collective::allreduce;
  c.algo = "mpi";
  c.count = count_for_bytes(c.coll, o.bytes, c.type, nranks);
  c.bytes = collective_bytes(c.coll, c.count, c.type, nranks);
  c.requested_bytes = o.bytes;
  c.nranks = nranks;
  c.name = "harness";
  std::unique_ptr<Backend> backend = make_cpu_backend(comm, Options{});
  backend->prepare(c, 42);
  Watchdog dog(o.timeout_s, comm.rank());
  const Algorithm& mpi = find_algorithm("mpi");
  const CollArgs args{c.coll, nullptr, nullptr, c.count, c.type, c.op, 0};
  // raw and run share a pair of buffers of their own; bench uses the backend's.
  std::vector<float> send(c.count, 1.0f), recv(c.count, 0.0f);
  CollArgs own = args;
  own.send = send.data();
  own.recv = recv.data();
  const int n = static_cast<int>(c.count);

  std::vector<double> raw, via_run, via_bench;
  for (int r = 0; r < o.rounds; ++r) {
    raw.push_back(timed(mc, o.calls, [&](std::int64_t k) {
      for (std::int64_t i = 0; i < k; ++i)
        COMMSCOPE_MPI_CHECK(MPI_Allreduce(send.data(), recv.data(), n, MPI_FLOAT, MPI_SUM, mc));
    }));
    via_run.push_back(timed(mc, o.calls, [&](std::int64_t k) {
      for (std::int64_t i = 0; i < k; ++i) comm.run(own, mpi);
    }));
    {  // the bench's time: its timed pass, not the sampling pass run_timed adds after it
      WatchScope watch(dog, &c, "the timed calls");
      TimingPlan plan;
      plan.iters = o.calls;
      const double mine = backend->run_timed(plan, dog).total_s;
      double slowest = 0;
      COMMSCOPE_MPI_CHECK(MPI_Allreduce(&mine, &slowest, 1, MPI_DOUBLE, MPI_MAX, mc));
      via_bench.push_back(slowest);
    }
  }
  const double per = 1e9 / static_cast<double>(o.calls);
  const double a = stats::median(raw) * per, b = stats::median(via_run) * per, d = stats::median(via_bench) * per;
  if (comm.rank() == 0) {
    std::printf(
        "# harness overhead: f32 sum allreduce of %zu B on %d ranks, %lld calls x %d rounds, "
        "medians of the slowest rank's time per call\n",
        c.bytes, nranks, static_cast<long long>(o.calls), o.rounds);
    std::printf("%-34s %10.1f ns/call\n", "MPI_Allreduce (raw loop)", a);
    std::printf("%-34s %10.1f ns/call  %+8.1f ns\n", "Communicator::run (algo mpi)", b, b - a);
    std::printf("%-34s %10.1f ns/call  %+8.1f ns\n", "commscope-bench timed loop", d, d - a);
  }
  return 0;
}

}  // namespace

int harness_main(int argc, char** argv) {
  HarnessOptions o;
  CLI::App app{"commscope-microbench harness: the time commscope's harness adds to one MPI_Allreduce call"};
  app.add_option("--bytes", o.bytes, "allreduce size in bytes (f32: at least 4)")
      ->capture_default_str()
      ->check(CLI::Range(std::size_t{4}, std::size_t{1} << 40));
  app.add_option("--calls", o.calls, "back-to-back calls per way and round")
      ->capture_default_str()
      ->check(CLI::Range(std::int64_t{1}, std::int64_t{1} << 40));
  app.add_option("--rounds", o.rounds, "interleaved rounds (the median is printed)")
      ->capture_default_str()
      ->check(CLI::Range(1, 100000));
  int rank = 0;
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == 0) return app.exit(e);
    std::fprintf(stderr, "commscope-microbench harness: %s\n", e.what());
    return 2;
  }
  try {
    MpiRuntime mpi(argc, argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    return run(o);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "commscope-microbench harness: rank %d: %s\n", rank, e.what());
    return 1;
  }
}

}  // namespace commscope::bench
