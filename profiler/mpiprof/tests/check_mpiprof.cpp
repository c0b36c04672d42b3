// Checks the profile libcommscope-mpiprof.so wrote for tests/mpi_app.c (3 ranks, ITERS
// iterations, rank 1 late by 6 ms each): usage: test_mpiprof_check FILE ITERS
//   - every rank has ITERS + 1 iterations (the time before the first MPI_Pcontrol is step 0);
//   - per rank and iteration 1..ITERS: 2 allreduce, 1 sendrecv, 1 barrier events, the 1 MiB
//     allreduce on MPI_COMM_WORLD numbered (seq >= 0), the one on the split communicator not;
//   - host compute ("compute" kernel events) of at least 4 ms per iteration, 10 ms on rank 1;
//   - the late rank waits least: every other rank waits more than 5x as long (+ 0.5 ms); the
//     wait itself is the scheduler's too when 3 ranks share 2 cores, so no absolute bound;
//   - operator totals per MPI function (MPI_Allreduce 2 per iteration, MPI_Sendrecv and
//     MPI_Barrier 1);
//   - the breakdown identity (kernel + intra + inter + comm == step) on every row.
#include <cstdio>
#include <cstdlib>
#include <map>
#include <string>
#include <utility>

#include "commscope/profiler/profile_file.hpp"

namespace pf = commscope::profiler;

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: test_mpiprof_check FILE ITERS\n");
    return 2;
  }
  const int iters = std::atoi(argv[2]);
  const pf::Profile p = pf::read_profile(argv[1], true);
  int failures = 0;
  auto check = [&](bool ok, const std::string& what) {
    std::printf("%s: %s\n", ok ? "ok" : "FAIL", what.c_str());
    failures += ok ? 0 : 1;
  };
  const int nranks = static_cast<int>(p.ranks.size());
  check(nranks == 3, "3 ranks (" + std::to_string(nranks) + ")");
  std::map<int, int> rows;
  std::map<int, double> wait_ms;
  for (const auto& r : p.breakdown) {
    ++rows[r.rank];
    if (r.kernel_ns + r.intra_ns + r.inter_ns + r.comm_ns != r.window_ns)
      check(false, "identity on rank " + std::to_string(r.rank) + " step " + std::to_string(r.iteration));
    if (r.iteration >= 1) wait_ms[r.rank] += static_cast<double>(r.comm_wait_ns) / 1e6;
  }
  for (int r = 0; r < nranks; ++r)
    check(rows[r] == iters + 1, "rank " + std::to_string(r) + ": " + std::to_string(rows[r]) + " iterations, wanted " +
                                    std::to_string(iters + 1));
  for (int r = 0; r < nranks && r < static_cast<int>(p.events.size()); ++r) {
    std::map<std::string, int> calls;
    int numbered = 0, unnumbered_allreduce = 0;
    double compute_ms = 0;
    for (const auto& e : p.events[static_cast<std::size_t>(r)]) {
      if (e.iteration < 1) continue;
      const std::string& name = p.strings.at(e.name);
      if (e.kind == pf::EventKind::kCommunication) {
        ++calls[name];
        if (name == "allreduce" && e.seq >= 0) ++numbered;
        if (name == "allreduce" && e.seq < 0) ++unnumbered_allreduce;
      } else if (e.kind == pf::EventKind::kKernel && name == "compute") {
        compute_ms += static_cast<double>(e.duration_ns()) / 1e6;
      }
    }
    const std::string who = "rank " + std::to_string(r) + ": ";
    check(calls["allreduce"] == 2 * iters && calls["sendrecv"] == iters && calls["barrier"] == iters,
          who + std::to_string(calls["allreduce"]) + " allreduce, " + std::to_string(calls["sendrecv"]) +
              " sendrecv, " + std::to_string(calls["barrier"]) + " barrier events");
    check(numbered == iters && unnumbered_allreduce == iters,
          who + std::to_string(numbered) + " world allreduces numbered, " + std::to_string(unnumbered_allreduce) +
              " split-communicator ones not");
    const double want = (r == 1 ? 10.0 : 4.0) * iters;
    check(compute_ms >= want, who + "compute " + std::to_string(compute_ms) + " ms, at least " + std::to_string(want));
  }
  // Operator totals per MPI function: the report's "top operators".
  std::map<std::pair<int, std::string>, std::int64_t> op_calls;
  for (const auto& o : p.operators) op_calls[{o.rank, p.strings.at(o.name)}] += o.calls;
  for (int r = 0; r < nranks; ++r)
    check(op_calls[{r, "MPI_Allreduce"}] == 2 * iters && op_calls[{r, "MPI_Sendrecv"}] == iters &&
              op_calls[{r, "MPI_Barrier"}] == iters,
          "rank " + std::to_string(r) + " operators: MPI_Allreduce " + std::to_string(op_calls[{r, "MPI_Allreduce"}]) +
              ", MPI_Sendrecv " + std::to_string(op_calls[{r, "MPI_Sendrecv"}]) + ", MPI_Barrier " +
              std::to_string(op_calls[{r, "MPI_Barrier"}]) + " calls");
  for (int r = 0; r < nranks; ++r) {
    if (r == 1) continue;
    check(wait_ms[1] < wait_ms[r], "the late rank 1 waits less (" + std::to_string(wait_ms[1]) + " ms) than rank " +
                                       std::to_string(r) + " (" + std::to_string(wait_ms[r]) + " ms)");
    check(wait_ms[r] > 5 * wait_ms[1] + 0.5, "rank " + std::to_string(r) + " waits " + std::to_string(wait_ms[r]) +
                                                 " ms, more than 5x the late rank's wait + 0.5 ms");
  }
  std::printf("%s\n", failures ? "test_mpiprof_check: FAILED" : "test_mpiprof_check: all checks passed");
  return failures ? 1 : 0;
}
