#include "measure.hpp"

#include <signal.h>
#include <unistd.h>

#include <cstdio>

#include <algorithm>
#include <cmath>
#include <limits>

#include "clock.hpp"
#include "commscope/collectives/clock_offsets.hpp"
#include "commscope/collectives/mpi_transport.hpp"
#include "commscope/common/stats.hpp"
#include "commscope/common/stop_line.hpp"
#include "results.hpp"
#include "watchdog.hpp"

namespace commscope::bench {

TimingPlan timing_plan(const Options& o, std::int64_t iters) {
  TimingPlan p;
  p.warmup = o.warmup;
  p.iters = iters;
  p.agg = o.agg_iters;
  p.blocking = o.blocking;
  p.graph_launches = o.cuda_graphs;
  return p;
}

namespace {

// One rank's value combined over ranks as -a says (max, min, avg or rank 0's), on every rank.
double combine(double mine, Combine how, MPI_Comm mc, int nranks) {
  double all = mine;
  if (how == Combine::max) COMMSCOPE_MPI_CHECK(MPI_Allreduce(&mine, &all, 1, MPI_DOUBLE, MPI_MAX, mc));
  if (how == Combine::min) COMMSCOPE_MPI_CHECK(MPI_Allreduce(&mine, &all, 1, MPI_DOUBLE, MPI_MIN, mc));
  if (how == Combine::avg) {
    COMMSCOPE_MPI_CHECK(MPI_Allreduce(&mine, &all, 1, MPI_DOUBLE, MPI_SUM, mc));
    all /= nranks;
  }
  if (how == Combine::rank0) COMMSCOPE_MPI_CHECK(MPI_Bcast(&all, 1, MPI_DOUBLE, 0, mc));
  return all;
}

}  // namespace

Measurement measure(Backend& backend, Communicator& comm, const Case& c, std::int64_t iters, const Options& o,
                    Watchdog& dog) {
  const MPI_Comm mc = comm.mpi_comm();
  const int rank = comm.rank();
  Measurement m;
  m.iterations = iters;
  backend.prepare(c, o.seed);
  if (rank == o.stall_rank && c.requested_bytes >= o.stall_bytes) {
    // Test aid: this rank never enters the collective; the others must time out.
    for (;;) ::pause();
  }
  if (rank == o.kill_rank && c.requested_bytes >= o.kill_bytes) {
    // Test aid: this rank dies; the launcher must end the others, which say where they were.
    std::fflush(nullptr);
    ::raise(SIGKILL);
  }
  const ActivityMarker in_case(describe(c).c_str());  // what a signal handler names

  WatchScope watch(dog, &c, "the timed calls");
  const TimingPlan plan = timing_plan(o, iters);
  const LocalTimings t = backend.run_timed(plan, dog);

  // The slowest rank, then the totals combined per -a (max, min, avg or rank 0's).
  struct {
    double value;
    int rank;
  } mine{t.total_s, rank}, slowest{};
  COMMSCOPE_MPI_CHECK(MPI_Allreduce(&mine, &slowest, 1, MPI_DOUBLE_INT, MPI_MAXLOC, mc));
  const double calls = static_cast<double>(plan.calls());
  // -a max is the slowest rank's total, found above.
  const double total = o.combine == Combine::max ? slowest.value : combine(t.total_s, o.combine, mc, comm.size());
  m.time_s = calls > 0 ? total / calls : 0;
  m.cpu_time_s = calls > 0 ? combine(t.launch_s, o.combine, mc, comm.size()) / calls : 0;
  m.slowest_rank = slowest.rank;

  // Per-iteration samples at rank 0: the max over ranks of each call's duration, and the
  // spread of the ranks' arrivals at each call on rank 0's clock (each rank's offset to it
  // estimated now, after the timed calls). Every rank runs the same device and plan, so all
  // have samples (and arrival times) or none has: a CUDA graph times only the whole.
  const int n = static_cast<int>(t.op_s.size());
  std::vector<double> op_max(rank == 0 ? t.op_s.size() : 0);
  if (n > 0) COMMSCOPE_MPI_CHECK(MPI_Reduce(t.op_s.data(), op_max.data(), n, MPI_DOUBLE, MPI_MAX, 0, mc));
  std::vector<std::int64_t> arr_max, arr_min;
  if (!t.arrival_ns.empty()) {
    const ClockOffsets clocks = estimate_clock_offsets(mc, 8, now_ns);
    std::vector<std::int64_t> common(t.arrival_ns);
    for (std::int64_t& a : common) a += clocks.offset_ns[static_cast<std::size_t>(rank)];
    const int na = static_cast<int>(common.size());
    arr_max.resize(rank == 0 ? common.size() : 0);
    arr_min.resize(arr_max.size());
    COMMSCOPE_MPI_CHECK(MPI_Reduce(common.data(), arr_max.data(), na, MPI_INT64_T, MPI_MAX, 0, mc));
    COMMSCOPE_MPI_CHECK(MPI_Reduce(common.data(), arr_min.data(), na, MPI_INT64_T, MPI_MIN, 0, mc));
  }
  if (o.per_iter_timing && comm.size() > 1 && n > 0) {
    m.samples.rank_time_us.resize(rank == 0 ? t.op_s.size() * static_cast<std::size_t>(comm.size()) : 0);
    COMMSCOPE_MPI_CHECK(MPI_Gather(t.op_s.data(), n, MPI_DOUBLE, m.samples.rank_time_us.data(), n, MPI_DOUBLE, 0, mc));
    for (double& v : m.samples.rank_time_us) v *= 1e6;
  }
  if (rank == 0) {
    m.samples.time_us.resize(op_max.size());
    for (std::size_t i = 0; i < op_max.size(); ++i) m.samples.time_us[i] = op_max[i] * 1e6;
    m.samples.skew_us.resize(arr_max.size());
    for (std::size_t i = 0; i < arr_max.size(); ++i)
      m.samples.skew_us[i] = static_cast<double>(arr_max[i] - arr_min[i]) * 1e-3;
  }

  // Correctness after timing, on fresh inputs.
  std::uint64_t wrong = 0;
  for (int i = 0; i < o.check_iters; ++i)
    wrong += backend.check_once(o.seed + static_cast<std::uint64_t>(i), o.corrupt);
  static_assert(sizeof(unsigned long long) == sizeof(std::uint64_t));
  unsigned long long mine_wrong = wrong, all_wrong = 0;
  COMMSCOPE_MPI_CHECK(MPI_Allreduce(&mine_wrong, &all_wrong, 1, MPI_UNSIGNED_LONG_LONG, MPI_SUM, mc));
  m.nwrong = all_wrong;
  return m;
}

}  // namespace commscope::bench
