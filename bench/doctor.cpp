// commscope-doctor: which node or link of a cluster is bad. Run it across the nodes like the
// bench (mpirun/srun, one rank per GPU or core group); it measures, rank 0 writes one HDF5 file,
// and `commscope-report doctor FILE` names the outliers (docs/doctor.md).
//
//   mpirun -np 8 --hostfile hosts build/bin/commscope-doctor -o doctor.h5
//
// 1. pairs: point-to-point latency (ping-pong, half the round trip) and bandwidth, both directions,
//    between every pair of ranks, in rounds of a round-robin tournament so that each rank is in
//    one pair at a time (p-1 rounds for even p, p for odd: one rank sits out each round).
// 2. probes: every rank's sgemm rate (OpenBLAS, one thread) and memcpy rate (bytes copied per
//    second), all ranks at once (--probes concurrent, what a job sees) or one rank at a time
//    (--probes serial: no rank shares the machine with another's probe); by default serial
//    where ranks outnumber their machine's CPUs, whose latency the report then does not judge.
//    Ranks not probing wait asleep; a probe whose CPUs other work shared (runnable tasks beyond
//    the machine's CPUs) in every window is said to be, and the report does not judge it.
// 3. nodes: allreduce inside each node (the nodes at once, each on its own ranks).
// Rows are written after each round and phase, so an interrupted run keeps what it measured. A
// pair that stops answering ends the run within -T, naming the pair and its hosts.
#include <cblas.h>
#include <fcntl.h>
#include <sched.h>
#include <unistd.h>
#include <CLI/CLI.hpp>

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <limits>
#include <map>
#include <memory>
#include <numeric>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "commscope/bench/environment.hpp"
#include "commscope/bench/options.hpp"
#include "commscope/collectives/collectives.hpp"
#include "commscope/collectives/mpi_transport.hpp"
#include "commscope/collectives/transport.hpp"
#include "commscope/common/stats.hpp"
#include "commscope/common/timing.hpp"
#include "commscope/h5/h5.hpp"
#include "doctor_file.hpp"
#include "doctor_schedule.hpp"
#include "measure.hpp"

using namespace commscope;
using stats::median;

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

struct Options {
  std::string out = "doctor.h5";
  std::string bytes = "1M";  // bandwidth message
  int window = 8;            // messages in flight per bandwidth iteration
  int bw_iters = 3;
  int passes = 3;
  int lat_iters = 50;
  int gemm_n = 384;
  std::string copy_bytes = "32M";
  double probe_time_s = 0.25;
  int probe_windows = 3;
  std::string probes = "auto";  // concurrent, serial, auto: serial where ranks outnumber CPUs
  std::string node_bytes = "16M";
  std::string node_algo = "mpi";
  int node_iters = 5;
  double timeout_s = 60;
  bool no_probes = false, no_nodes = false;
};

using timing::now_s;

// Every rank's host name, in rank order, and each rank's node: hosts numbered in order of
// first appearance. The names are the ones the world communicator's transport gathered.
struct Layout {
  std::vector<std::string> hosts;
  std::vector<int> node;
  std::vector<std::string> node_host;
};

Layout layout_of(const MpiTransport& t) {
  Layout l;
  std::map<std::string, int> index;
  for (int r = 0; r < t.size(); ++r) {
    std::string h(t.host_of(r));
    auto [it, fresh] = index.emplace(h, static_cast<int>(l.node_host.size()));
    if (fresh) l.node_host.push_back(h);
    l.hosts.push_back(std::move(h));
    l.node.push_back(it->second);
  }
  return l;
}

std::unique_ptr<doctor::File> open_file(const Options& o, const bench::Environment& env, const Layout& l) {
  auto f = std::make_unique<doctor::File>(o.out, static_cast<std::int64_t>(l.hosts.size()),
                                          static_cast<std::int64_t>(l.node_host.size()));
  h5::Group meta = f->meta();
  for (const auto& [k, v] : env.fields)
    if (k != "nranks") meta.set_attr(k, v);
  meta.set_attr("bandwidth_bytes", static_cast<std::uint64_t>(bench::parse_size(o.bytes)));
  meta.set_attr("window", o.window);
  meta.set_attr("bandwidth_iters", o.bw_iters);
  meta.set_attr("latency_bytes", 8);
  meta.set_attr("latency_iters", o.lat_iters);
  meta.set_attr("passes", o.passes);
  meta.set_attr("probes", o.no_probes ? std::string("none") : o.probes);
  meta.set_attr("sgemm_n", o.gemm_n);
  meta.set_attr("probe_time_s", o.probe_time_s);
  meta.set_attr("probe_windows", o.probe_windows);
  meta.set_attr("memcpy_bytes", static_cast<std::uint64_t>(bench::parse_size(o.copy_bytes)));
  meta.set_attr("node_allreduce_algo", o.node_algo);
  meta.set_attr("timeout_s", o.timeout_s);
  return f;
}

// Rank 0's file, closed (published under its name, status recorded) by main when the run fails.
std::unique_ptr<doctor::File> g_file;
char g_partial[4096], g_final[4096];

// The launcher ends the job with SIGTERM when another rank fails: publish the rows flushed so far.
void publish_on_signal(int sig) {
  ::rename(g_partial, g_final);
  std::signal(sig, SIG_DFL);
  std::raise(sig);
}

// One 8-byte round trip between this rank and `peer`, the lower rank sending first: its duration.
double round_trip(Transport& t, int me, int peer) {
  std::array<std::byte, 8> small{};
  const double t0 = now_s();
  for (int leg = 0; leg < 2; ++leg) {
    (leg == 0) == (me < peer) ? t.post_send(small.data(), small.size(), peer)
                              : t.post_recv(small.data(), small.size(), peer);
    t.wait();
  }
  return now_s() - t0;
}

// Measures one pair from this rank's side: latency (when this rank is the lower, the pinger)
// and this rank's send bandwidth (both ranks send in turn, the lower first).
struct PairResult {
  double latency_us = kNaN, send_GBps = kNaN;
};

PairResult measure_pair(Transport& t, int me, int peer, const Options& o, std::vector<std::byte>& buf) {
  PairResult res;
  const bool lower = me < peer;
  std::array<std::byte, 8> small{};
  // Latency: 5 warm-up round trips, then lat_iters timed ones; the median half round trip.
  std::vector<double> rtt;
  for (int i = 0; i < 5 + o.lat_iters; ++i) {
    const double dt = round_trip(t, me, peer);
    if (i >= 5) rtt.push_back(dt);
  }
  if (lower) res.latency_us = median(rtt) / 2 * 1e6;
  // Bandwidth: `window` messages in flight, then a 1-byte acknowledgement; one warm-up.
  const std::size_t msg = buf.size() / static_cast<std::size_t>(o.window);
  auto stream = [&](bool sending) {
    std::vector<double> rate;
    for (int i = 0; i < 1 + o.bw_iters; ++i) {
      const double t0 = now_s();
      for (int w = 0; w < o.window; ++w) {
        std::byte* b = buf.data() + static_cast<std::size_t>(w) * msg;
        sending ? t.post_send(b, msg, peer) : t.post_recv(b, msg, peer);
      }
      t.wait();
      sending ? t.post_recv(small.data(), 1, peer) : t.post_send(small.data(), 1, peer);
      t.wait();
      if (i >= 1) rate.push_back(static_cast<double>(msg) * o.window / (now_s() - t0) / 1e9);
    }
    return median(rate);
  };
  for (int turn = 0; turn < 2; ++turn) {
    const bool sending = (turn == 0) == lower;
    const double r = stream(sending);
    if (sending) res.send_GBps = r;
  }
  return res;
}

// A barrier whose waiting ranks sleep (1 ms between tests) rather than poll, for the probes: a
// rank polling in MPI_Barrier takes a share of a CPU from the rank probing beside it, whatever
// mpi_yield_when_idle says, since each rank a launcher's daemon starts sits in a session (a
// scheduler autogroup) of its own, where yielding yields to no one. Past timeout_s: TimeoutError.
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

// This rank's sgemm rate (2 n^3 flop per call) and memcpy rate, each the best of windows of
// probe_time seconds in which the machine's runnable tasks did not outnumber its CPUs (else the
// best of all, marked shared): a window spans many scheduler periods, so that a CPU quota or a
// clock held low shows in every window's rate, while other work on the machine only ever slows a
// window down, and is seen in the run queue.
std::pair<ProbeRate, ProbeRate> probe(const Options& o) {
  const std::size_t n = static_cast<std::size_t>(o.gemm_n);
  std::vector<float> a(n * n), b(n * n), c(n * n);
  for (std::size_t i = 0; i < n * n; ++i) a[i] = static_cast<float>(i % 7) * 0.25f, b[i] = static_cast<float>(i % 5);
  const std::size_t bytes = bench::parse_size(o.copy_bytes);
  std::vector<std::byte> src(bytes, std::byte{1}), dst(bytes);
  const RunQueue queue;
  const double cpus = static_cast<double>(std::max(1L, sysconf(_SC_NPROCESSORS_ONLN)));
  // Calls of `work` for probe_time seconds, `windows` times (after one untimed call), the run
  // queue sampled at most once a millisecond.
  auto rate = [&](double units_per_call, auto&& work) {
    work(0);
    ProbeRate best, best_shared;
    best_shared.shared = true;
    for (int w = 0; w < o.probe_windows; ++w) {
      long calls = 0;
      double runnable = 0, samples = 0;
      const double t0 = now_s();
      double t = t0, sampled = -1;
      while (t - t0 < o.probe_time_s) {
        work(calls++), t = now_s();
        if (t - sampled < 1e-3) continue;
        const double r = queue.now();
        if (std::isfinite(r)) runnable += r, ++samples;
        sampled = t;
      }
      const ProbeRate window{units_per_call * static_cast<double>(calls) / (t - t0),
                             samples > 0 ? runnable / samples : kNaN, false};
      // Shared: some task waited for a CPU half the window or more (one more runnable than CPUs);
      // a task busy on another CPU (2.2 runnable on 2 CPUs, every rate alike) takes nothing.
      ProbeRate& kept = window.runnable > cpus + 0.5 ? best_shared : best;
      if (!(window.rate <= kept.rate)) kept.rate = window.rate, kept.runnable = window.runnable;
    }
    return std::isfinite(best.rate) ? best : best_shared;
  };
  const int m = o.gemm_n;
  const ProbeRate gflops = rate(2.0 * static_cast<double>(n * n * n) / 1e9, [&](long) {
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, m, m, m, 1.0f, a.data(), m, b.data(), m, 0.0f, c.data(), m);
  });
  const ProbeRate gbps = rate(static_cast<double>(bytes) / 1e9, [&](long i) {
    std::memcpy(i % 2 ? src.data() : dst.data(), i % 2 ? dst.data() : src.data(), bytes);
  });
  return {gflops, gbps};
}

// Every rank's probes, concurrent or one rank at a time, the others asleep in idle_barrier; rank 0
// writes the rows and, where a probe's CPU was shared with other work in every window, says so
// (printed and in /meta probes_shared: the report then does not judge the probes).
void run_probes(Communicator& world, const Options& o, const Layout& layout, doctor::File* file) {
  const int rank = world.rank(), p = world.size();
  std::pair<ProbeRate, ProbeRate> rates;
  for (int r = 0; r < (o.probes == "concurrent" ? 1 : p); ++r) {
    idle_barrier(world.mpi_comm(), o.timeout_s, "probes, before rank " + std::to_string(r) + "'s");
    if (o.probes == "concurrent" || r == rank) rates = probe(o);
  }
  idle_barrier(world.mpi_comm(), o.timeout_s, "probes, after the last");
  const ProbeRate& busier = rates.first.runnable >= rates.second.runnable ? rates.first : rates.second;
  const std::array<double, 5> send{rates.first.rate, rates.second.rate, busier.runnable,
                                   rates.first.shared || rates.second.shared ? 1.0 : 0.0,
                                   static_cast<double>(sysconf(_SC_NPROCESSORS_ONLN))};
  std::vector<double> all(rank == 0 ? send.size() * static_cast<std::size_t>(p) : 0);
  MPI_Gather(send.data(), 5, MPI_DOUBLE, all.data(), 5, MPI_DOUBLE, 0, world.mpi_comm());
  if (rank != 0) return;
  std::printf("# probes (%s): sgemm n=%d, memcpy %s\n", o.probes.c_str(), o.gemm_n, o.copy_bytes.c_str());
  std::vector<doctor::RankRow> rows;
  std::string shared;  // the first 8 ranks whose probes shared their CPUs
  int nshared = 0;
  for (int s = 0; s < p; ++s) {
    const double* v = &all[5 * static_cast<std::size_t>(s)];
    doctor::RankRow row;
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

int run(int argc, char** argv) {
  Options o;
  CLI::App app{
      "commscope-doctor: point-to-point latency and bandwidth between every pair of ranks, each rank's sgemm and "
      "memcpy rate, and each node's allreduce, into one HDF5 file; `commscope-report doctor FILE` names the slow "
      "node or link",
      "commscope-doctor"};
  app.add_option("-o,--out", o.out, "HDF5 file to write")->capture_default_str();
  app.add_option("-b,--bytes", o.bytes, "bytes sent per bandwidth iteration (K, M, G suffixes)")->capture_default_str();
  app.add_option("--window", o.window, "messages in flight per bandwidth iteration (the bytes split among them)")
      ->check(CLI::Range(1, 1024))
      ->capture_default_str();
  app.add_option("--bw-iters", o.bw_iters, "timed bandwidth iterations per direction")
      ->check(CLI::Range(1, 100000))
      ->capture_default_str();
  app.add_option("--passes", o.passes,
                 "times every pair is measured, at different moments (the report takes the best pass)")
      ->check(CLI::Range(1, 1000))
      ->capture_default_str();
  app.add_option("--lat-iters", o.lat_iters, "timed ping-pong round trips per pair")
      ->check(CLI::Range(1, 1000000))
      ->capture_default_str();
  app.add_option("--gemm", o.gemm_n, "sgemm probe: n x n matrices")->check(CLI::Range(16, 8192))->capture_default_str();
  app.add_option("--copy-bytes", o.copy_bytes, "memcpy probe: bytes per copy")->capture_default_str();
  app.add_option("--probe-time", o.probe_time_s, "probes: seconds per timing window (several scheduler periods)")
      ->check(CLI::Range(0.001, 3600.0))
      ->capture_default_str();
  app.add_option("--probe-windows", o.probe_windows, "probes: timing windows per probe (the median counts)")
      ->check(CLI::Range(1, 1000))
      ->capture_default_str();
  app.add_option("--probes", o.probes,
                 "concurrent: all ranks probe at once; serial: one rank at a time; auto: serial where ranks "
                 "outnumber the CPUs of a machine (concurrent probes would measure their share of a CPU), else "
                 "concurrent")
      ->check(CLI::IsMember({"concurrent", "serial", "auto"}))
      ->capture_default_str();
  app.add_option("--node-bytes", o.node_bytes, "per-node allreduce: array size")->capture_default_str();
  app.add_option("--node-algo", o.node_algo, "per-node allreduce: algorithm")->capture_default_str();
  app.add_option("--node-iters", o.node_iters, "per-node allreduce: timed calls")
      ->check(CLI::Range(1, 100000))
      ->capture_default_str();
  app.add_option("-T,--timeout", o.timeout_s, "seconds a pair or node may stop answering before the run ends")
      ->check(CLI::Range(0.001, 1e6))
      ->capture_default_str();
  app.add_flag("--no-probes", o.no_probes, "skip the sgemm and memcpy probes");
  app.add_flag("--no-nodes", o.no_nodes, "skip the per-node allreduce");
  int rank = 0, p = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &p);
  try {
    app.parse(argc, argv);
    const std::size_t bw = bench::parse_size(o.bytes);
    if (bw < static_cast<std::size_t>(o.window)) throw CLI::ValidationError("--bytes", "at least one byte per message");
    if (bench::parse_size(o.copy_bytes) == 0) throw CLI::ValidationError("--copy-bytes", "must be positive");
    if (bench::parse_size(o.node_bytes) < 4) throw CLI::ValidationError("--node-bytes", "at least one f32");
    const Algorithm& a = find_algorithm(o.node_algo);
    if (!a.supports(Collective::allreduce)) throw CLI::ValidationError("--node-algo", "has no allreduce");
  } catch (const CLI::CallForHelp& e) {
    if (rank == 0) app.exit(e);
    return 0;
  } catch (const CLI::ParseError& e) {
    if (rank == 0) std::fprintf(stderr, "commscope-doctor: %s (see --help)\n", e.what());
    return 2;
  } catch (const std::exception& e) {  // a size or algorithm name
    if (rank == 0) std::fprintf(stderr, "commscope-doctor: %s\n", e.what());
    return 2;
  }
  openblas_set_num_threads(1);

  CommOptions copts;
  copts.timeout_s = o.timeout_s;
  Communicator world(MPI_COMM_WORLD, copts);
  const Layout layout = layout_of(*world.transport().as_mpi());
  const bench::Environment env = bench::capture_environment(world.mpi_comm(), argc, argv);
  const std::string* found = env.find("oversubscribed");
  const std::string oversubscribed = found ? *found : std::string();
  if (o.probes == "auto") o.probes = oversubscribed.empty() ? "concurrent" : "serial";
  if (rank == 0) {
    if (o.out.size() + 16 > sizeof g_partial) throw InvalidArgument("--out path too long");
    bench::print_environment(stdout, env, "commscope-doctor");
    if (!oversubscribed.empty())
      std::printf("# ranks outnumber CPUs: latency is the scheduler's here, the report does not judge it\n");
    g_file = open_file(o, env, layout);
    std::snprintf(g_partial, sizeof g_partial, "%s.partial", o.out.c_str());
    std::snprintf(g_final, sizeof g_final, "%s", o.out.c_str());
    for (int sig : {SIGINT, SIGTERM, SIGHUP}) std::signal(sig, publish_on_signal);
  }
  doctor::File* file = g_file.get();
  Transport& t = world.transport();
  t.set_context(CallContext{Collective::sendrecv, "doctor", DataType::u8, ReduceOp::sum, 0, 0, p});

  // 1. Pairs.
  std::vector<std::byte> buf(bench::parse_size(o.bytes));
  const int rounds = doctor::rounds(p);
  if (rank == 0)
    std::printf(
        "# pairs: %d ranks on %zu nodes, %d passes of %d rounds; latency %d B x %d, bandwidth %s in %d messages x %d\n",
        p, layout.node_host.size(), o.passes, rounds, 8, o.lat_iters, o.bytes.c_str(), o.window, o.bw_iters);
  // A warm-up pass: every pair exchanges a few small messages first, so that no round pays for
  // connections being made (many transports connect a pair on its first message).
  for (int r = 0; r < rounds; ++r) {
    const int peer = doctor::partner(rank, r, p);
    for (int i = 0; peer >= 0 && i < 10; ++i) round_trip(t, rank, peer);
  }
  world.barrier();
  // Each pass deals the ranks to the tournament's seats anew, so that the pairs sharing a round
  // (and a host's network link, when hosts hold several ranks) differ from pass to pass.
  std::vector<int> seat(static_cast<std::size_t>(p)), at_seat(seat.size());
  for (int step = 0; step < o.passes * rounds; ++step) {
    const int pass = step / rounds, r = step % rounds;
    if (r == 0) {
      std::iota(at_seat.begin(), at_seat.end(), 0);
      if (pass > 0) std::shuffle(at_seat.begin(), at_seat.end(), std::mt19937(static_cast<unsigned>(pass)));
      for (int i = 0; i < p; ++i) seat[static_cast<std::size_t>(at_seat[static_cast<std::size_t>(i)])] = i;
    }
    const int other = doctor::partner(seat[static_cast<std::size_t>(rank)], r, p);
    const int peer = other < 0 ? -1 : at_seat[static_cast<std::size_t>(other)];
    PairResult mine;
    if (peer >= 0) {
      try {
        mine = measure_pair(t, rank, peer, o, buf);
      } catch (const TimeoutError& e) {
        throw TimeoutError("pair test rank " + std::to_string(rank) + " (" + layout.hosts[rank] + ") <-> rank " +
                           std::to_string(peer) + " (" + layout.hosts[peer] + ") stopped answering: " + e.what());
      }
    }
    std::array<double, 3> send{static_cast<double>(peer), mine.latency_us, mine.send_GBps};
    std::vector<double> all(rank == 0 ? 3 * static_cast<std::size_t>(p) : 0);
    MPI_Gather(send.data(), 3, MPI_DOUBLE, all.data(), 3, MPI_DOUBLE, 0, world.mpi_comm());
    if (rank != 0) continue;
    std::vector<doctor::PairRow> rows;
    for (int s = 0; s < p; ++s) {
      const int d = static_cast<int>(all[3 * s]);
      if (d < 0) continue;
      doctor::PairRow row;
      row.src = s, row.dst = d, row.pass = pass, row.round = r;
      h5::set_fixed(row.src_host, layout.hosts[s]);
      h5::set_fixed(row.dst_host, layout.hosts[d]);
      row.latency_us = all[3 * std::min(s, d) + 1];
      row.bandwidth_GBps = all[3 * s + 2];
      rows.push_back(row);
      std::printf("  pass %d round %3d  %4d -> %-4d %-16s -> %-16s %10.2f us %10.3f GB/s\n", pass, r, s, d,
                  layout.hosts[s].c_str(), layout.hosts[d].c_str(), row.latency_us, row.bandwidth_GBps);
    }
    file->add(rows);
    std::fflush(stdout);
  }

  // 2. Probes.
  if (!o.no_probes) run_probes(world, o, layout, file);

  // 3. Each node's allreduce, the nodes at once.
  if (!o.no_nodes) {
    Communicator node = world.split_by_node();
    const std::size_t bytes = bench::parse_size(o.node_bytes) / 4 * 4;
    const std::size_t count = bytes / 4;
    const int n = node.size();
    double t_med = kNaN;
    if (n > 1) {
      std::vector<float> in(count, 1.0f), out(count);
      std::vector<double> times;
      for (int i = 0; i < 1 + o.node_iters; ++i) {
        node.barrier();
        const double t0 = now_s();
        node.allreduce(in.data(), out.data(), count, DataType::f32, ReduceOp::sum, o.node_algo);
        double dt = now_s() - t0, slowest = 0;
        MPI_Allreduce(&dt, &slowest, 1, MPI_DOUBLE, MPI_MAX, node.mpi_comm());
        if (i >= 1) times.push_back(slowest);
      }
      t_med = median(times);
    }
    std::array<double, 2> send{node.rank() == 0 ? static_cast<double>(layout.node[rank]) : -1.0, t_med};
    std::vector<double> all(rank == 0 ? 2 * static_cast<std::size_t>(p) : 0);
    MPI_Gather(send.data(), 2, MPI_DOUBLE, all.data(), 2, MPI_DOUBLE, 0, world.mpi_comm());
    if (rank == 0) {
      std::printf("# nodes: f32 sum allreduce of %zu B (%s) inside each node, the nodes at once\n", bytes,
                  o.node_algo.c_str());
      std::vector<doctor::NodeRow> rows;
      for (int s = 0; s < p; ++s) {
        if (all[2 * s] < 0) continue;
        doctor::NodeRow row;
        row.node = static_cast<std::int64_t>(all[2 * s]);
        h5::set_fixed(row.host, layout.node_host[static_cast<std::size_t>(row.node)]);
        row.ranks = std::count(layout.node.begin(), layout.node.end(), row.node);
        row.bytes = static_cast<std::int64_t>(bytes);
        row.allreduce_us = all[2 * s + 1] * 1e6;
        row.busbw_GBps = row.ranks > 1 ? busbw_factor(Collective::allreduce, static_cast<int>(row.ranks)) *
                                             static_cast<double>(bytes) / all[2 * s + 1] / 1e9
                                       : kNaN;
        rows.push_back(row);
        if (row.ranks > 1) {
          std::printf("  node %4lld %-16s %3lld ranks %12.1f us %8.3f GB/s\n", static_cast<long long>(row.node),
                      layout.node_host[static_cast<std::size_t>(row.node)].c_str(), static_cast<long long>(row.ranks),
                      row.allreduce_us, row.busbw_GBps);
        } else {
          std::printf("  node %4lld %-16s %3lld rank: no allreduce inside it\n", static_cast<long long>(row.node),
                      layout.node_host[static_cast<std::size_t>(row.node)].c_str(), static_cast<long long>(row.ranks));
        }
      }
      file->add(rows);
    }
  }
  if (rank == 0) {
    file->finish("complete");
    g_file.reset();
    std::printf("# wrote %s: commscope-report doctor %s names the outliers\n", o.out.c_str(), o.out.c_str());
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  MpiRuntime mpi(argc, argv);
  try {
    return run(argc, argv);
  } catch (const std::exception& e) {
    int rank = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    std::fprintf(stderr, "commscope-doctor: rank %d: %s\n", rank, h5::one_line(e.what()).c_str());
    std::fflush(stderr);
    if (g_file) {  // keep what was measured, saying why it stops there
      try {
        g_file->finish("failed: " + h5::one_line(e.what()));
      } catch (const std::exception&) {
      }
    }
    MPI_Abort(MPI_COMM_WORLD, 3);
    return 3;
  }
}
