// commscope-doctor, phase 2: every rank's sgemm rate (OpenBLAS, one thread) and memcpy rate (bytes
// copied per second), all ranks at once (--probes concurrent, what a job sees) or one rank at a
// time (--probes serial: no rank shares the machine with another's probe). Ranks not probing wait
// asleep; a probe whose CPUs other work shared (runnable tasks beyond the machine's CPUs) in every
// window is said to be, and the report does not judge it.
#include <cblas.h>
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "commscope/common/byte_size.hpp"
#include "commscope/common/timing.hpp"
#include "doctor.hpp"

namespace commscope::doctor {
namespace {

using timing::now_s;

// Runnable tasks on this machine now (the kernel's nr_running, /proc/loadavg's "R/T"), the
// caller included; NaN where it cannot be read.
class RunQueue {
 public:
  RunQueue() : fd_(::open("/proc/loadavg", O_RDONLY | O_CLOEXEC)) {}
  ~RunQueue() {
    if (fd_ >= 0) ::close(fd_);
  }
  RunQueue(const RunQueue&) = delete;
  RunQueue& operator=(const RunQueue&) = delete;
  double now() const {
    char text[128];
    const ssize_t n = fd_ < 0 ? -1 : ::pread(fd_, text, sizeof text - 1, 0);
    if (n <= 0) return kNaN;
    text[n] = 0;
    double load[3];
    int running = 0, total = 0;
    return std::sscanf(text, "%lf %lf %lf %d/%d", &load[0], &load[1], &load[2], &running, &total) == 5 ? running : kNaN;
  }

 private:
  int fd_;
};

// One probe's rate and whether it was this rank's own: `runnable` is the mean count of runnable
// tasks on the machine during the windows that count, `shared` that they outnumbered its CPUs in
// every window (other work then took turns on the probe's CPU, and the rate is a share of one).
struct ProbeRate {
  double rate = kNaN, runnable = kNaN;
  bool shared = false;
};

// A probe's windows so far: the best of those in which the machine's runnable tasks did not
// outnumber its CPUs, else the best of all, marked shared.
class BestWindow {
 public:
  void add(const ProbeRate& window) {
    ProbeRate& kept = window.shared ? shared_ : own_;
    if (!(window.rate <= kept.rate)) kept = window;
  }
  const ProbeRate& best() const { return std::isfinite(own_.rate) ? own_ : shared_; }

 private:
  ProbeRate own_, shared_;
};

// One window of probe_time seconds of this rank's sgemm rate (2 n^3 flop per call) and one of its
// memcpy rate, each added to its best: a window spans many scheduler periods, so that a CPU quota
// or a clock held low shows in every window's rate, while other work on the machine only ever
// slows a window down, and is seen in the run queue. `slow_until` (now_s(), the test aid): calls
// before it take ten times as long.
void probe(const Options& o, BestWindow& gemm, BestWindow& copy, double slow_until) {
  const std::size_t n = static_cast<std::size_t>(o.gemm_n);
  std::vector<float> a(n * n), b(n * n), c(n * n);
  for (std::size_t i = 0; i < n * n; ++i) a[i] = static_cast<float>(i % 7) * 0.25f, b[i] = static_cast<float>(i % 5);
  const std::size_t bytes = parse_size(o.copy_bytes);
  std::vector<std::byte> src(bytes, std::byte{1}), dst(bytes);
  const RunQueue queue;
  const double cpus = static_cast<double>(std::max(1L, sysconf(_SC_NPROCESSORS_ONLN)));
  // Calls of `work` for probe_time seconds (after one untimed call), the run queue sampled at most
  // once a millisecond.
  auto window = [&](double units_per_call, auto&& work) {
    work(0);
    long calls = 0;
    double runnable = 0, samples = 0;
    const double t0 = now_s();
    double t = t0, sampled = -1;
    while (t - t0 < o.probe_time_s) {
      const double before = t;
      work(calls++), t = now_s();
      if (t < slow_until) {  // the test aid: nine times the call's time more
        std::this_thread::sleep_for(std::chrono::duration<double>(9 * (t - before)));
        t = now_s();
      }
      if (t - sampled < 1e-3) continue;
      const double r = queue.now();
      if (std::isfinite(r)) runnable += r, ++samples;
      sampled = t;
    }
    const double mean_runnable = samples > 0 ? runnable / samples : kNaN;
    // Shared: some task waited for a CPU half the window or more (one more runnable than CPUs);
    // a task busy on another CPU (2.2 runnable on 2 CPUs, every rate alike) takes nothing.
    return ProbeRate{units_per_call * static_cast<double>(calls) / (t - t0), mean_runnable, mean_runnable > cpus + 0.5};
  };
  const int m = o.gemm_n;
  gemm.add(window(2.0 * static_cast<double>(n * n * n) / 1e9, [&](long) {
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, m, m, m, 1.0f, a.data(), m, b.data(), m, 0.0f, c.data(), m);
  }));
  copy.add(window(static_cast<double>(bytes) / 1e9, [&](long i) {
    std::memcpy(i % 2 ? src.data() : dst.data(), i % 2 ? dst.data() : src.data(), bytes);
  }));
}

}  // namespace

// Waiting ranks sleep rather than poll: whatever mpi_yield_when_idle says, each rank a launcher's
// daemon starts sits in a session (a scheduler autogroup) of its own, where yielding yields to
// no one.
void idle_barrier(MPI_Comm comm, double timeout_s, const std::string& what) {
  MPI_Request req;
  MPI_Ibarrier(comm, &req);
  const double t0 = now_s();
  for (int done = 0; !done;) {
    MPI_Test(&req, &done, MPI_STATUS_IGNORE);
    if (!done && now_s() - t0 > timeout_s)
      throw TimeoutError(what + ": a rank stopped answering: timeout after " + std::to_string(timeout_s) + " s");
    if (!done) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
}

// Every rank's probes, concurrent or one rank at a time, the others asleep in idle_barrier; rank 0
// writes the rows and, where a probe's CPU was shared with other work in every window, says so
// (printed and in /meta probes_shared: the report then does not judge the probes). One window a
// rank per round, --probe-windows rounds: a rank's windows lie apart, so that a moment of
// interference (another tenant, a host slowed for a few seconds) spoils one of them, not all. One
// rank's three windows back to back once read half its peers' sgemm, which hid a node at a tenth
// of them from the rule with 4 nodes (cluster.doctor.cpu).
void run_probes(Communicator& world, const Options& o, const Layout& layout, Output* file) {
  const int rank = world.rank(), p = world.size();
  const int turns = o.probes == "concurrent" ? 1 : p;
  BestWindow gemm, copy;
  double slow_until = -1;
  for (int w = 0; w < o.probe_windows; ++w) {
    for (int r = 0; r < turns; ++r) {
      idle_barrier(world.mpi_comm(), o.timeout_s,
                   "probes, before rank " + std::to_string(r) + "'s window " + std::to_string(w + 1));
      if (w == 0 && r == 0 && rank == o.debug_slow_probe_rank) slow_until = now_s() + o.debug_slow_probe_s;
      if (turns == 1 || r == rank) probe(o, gemm, copy, slow_until);
    }
  }
  idle_barrier(world.mpi_comm(), o.timeout_s, "probes, after the last");
  const std::pair<ProbeRate, ProbeRate> rates{gemm.best(), copy.best()};
  const ProbeRate& busier = rates.first.runnable >= rates.second.runnable ? rates.first : rates.second;
  const std::array<double, 5> send{rates.first.rate, rates.second.rate, busier.runnable,
                                   rates.first.shared || rates.second.shared ? 1.0 : 0.0,
                                   static_cast<double>(sysconf(_SC_NPROCESSORS_ONLN))};
  std::vector<double> all(rank == 0 ? send.size() * static_cast<std::size_t>(p) : 0);
  MPI_Gather(send.data(), 5, MPI_DOUBLE, all.data(), 5, MPI_DOUBLE, 0, world.mpi_comm());
  if (rank != 0) return;
  std::printf("# probes (%s): sgemm n=%d, memcpy %s\n", o.probes.c_str(), o.gemm_n, o.copy_bytes.c_str());
  std::vector<RankRow> rows;
  std::string shared;  // the first 8 ranks whose probes shared their CPUs
  int nshared = 0;
  for (int s = 0; s < p; ++s) {
    const double* v = &all[5 * static_cast<std::size_t>(s)];
    RankRow row;
    row.rank = s, row.node = layout.node[s];
    h5::set_fixed(row.host, layout.hosts[s]);
    row.sgemm_gflops = v[0], row.memcpy_GBps = v[1];
    rows.push_back(row);
    std::printf("  rank %4d %-16s sgemm %9.2f GFLOP/s  memcpy %8.2f GB/s  runnable %5.1f on %g CPUs%s\n", s,
                layout.hosts[s].c_str(), v[0], v[1], v[2], v[4], v[3] > 0 ? " (shared)" : "");
    char said[160];
    std::snprintf(said, sizeof said, "rank %d (%s): %.1f runnable tasks on %g CPUs", s, layout.hosts[s].c_str(), v[2],
                  v[4]);
    if (v[3] > 0 && ++nshared <= 8) shared += (shared.empty() ? "" : "; ") + std::string(said);
  }
  if (nshared > 8) shared += "; ... (" + std::to_string(nshared) + " ranks)";
  file->add(rows);
  if (!shared.empty()) {
    std::printf("# probes not judged: other work shared the probing CPUs in every window (%s)\n", shared.c_str());
    file->meta().set_attr("probes_shared", shared);
  }
  std::fflush(stdout);
}

}  // namespace commscope::doctor
