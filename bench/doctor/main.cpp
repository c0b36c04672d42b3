// commscope-doctor: which node or link of a cluster is bad. Run it across the nodes like the
// bench (mpirun/srun, one rank per GPU or core group); it measures, rank 0 writes one HDF5 file,
// and `commscope-report doctor FILE` names the outliers (docs/doctor.md).
//
//   mpirun -np 8 --hostfile hosts build/bin/commscope-doctor -o doctor.h5
//
// 1. pairs: point-to-point latency (ping-pong, half the round trip) and bandwidth, both directions,
//    between every pair of ranks, in rounds of a round-robin tournament so that each rank is in
//    one pair at a time (p-1 rounds for even p, p for odd: one rank sits out each round); with
//    --device cuda from device buffers through NCCL's point-to-point where every rank has a GPU
//    of its own, else from host buffers over MPI.
// 2. probes: every rank's sgemm rate (OpenBLAS, one thread) and memcpy rate (bytes copied per
//    second), all ranks at once (--probes concurrent, what a job sees) or one rank at a time
//    (--probes serial: no rank shares the machine with another's probe); by default serial
//    where ranks outnumber their machine's CPUs, whose latency the report then does not judge.
//    Ranks not probing wait asleep; a probe whose CPUs other work shared (runnable tasks beyond
//    the machine's CPUs) in every window is said to be, and the report does not judge it.
// 3. nodes: allreduce inside each node (the nodes at once, each on its own ranks).
// 4. gpus (--device cuda): every GPU's bf16 and fp32 GEMM rate (cuBLAS), device copy rate and
//    pinned host-to-device and device-to-host rates, each against the peak its properties give;
//    each node's peer copies between its GPUs, every ordered pair, one way and both ways at once.
// Rows are written after each round and phase (pairs.cpp, probes.cpp, nodes.cpp), so an interrupted run keeps what it
// measured. A pair that stops answering ends the run within -T, naming the pair and its hosts.
#include <cblas.h>

#include <CLI/CLI.hpp>
#include <cstdio>
#include <map>
#include <memory>
#include <string>

#include "commscope/bench/environment.hpp"
#include "commscope/common/byte_size.hpp"
#include "commscope/h5/h5.hpp"
#include "doctor.hpp"

namespace commscope::doctor {

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

Output::Output(const Options& o, const bench::Environment& env, const Layout& l) {
  stop::check_path(o.out);
  file_ = std::make_unique<File>(o.out, static_cast<std::int64_t>(l.hosts.size()),
                                 static_cast<std::int64_t>(l.node_host.size()));
  h5::Group meta = file_->meta();
  for (const auto& [k, v] : env.fields)
    if (k != "nranks") meta.set_attr(k, v);
  meta.set_attr("bandwidth_bytes", static_cast<std::uint64_t>(parse_size(o.bytes)));
  meta.set_attr("window", o.window);
  meta.set_attr("bandwidth_iters", o.bw_iters);
  meta.set_attr("latency_bytes", 8);
  meta.set_attr("latency_iters", o.lat_iters);
  meta.set_attr("passes", o.passes);
  meta.set_attr("probes", o.no_probes ? std::string("none") : o.probes);
  meta.set_attr("sgemm_n", o.gemm_n);
  meta.set_attr("probe_time_s", o.probe_time_s);
  meta.set_attr("probe_windows", o.probe_windows);
  meta.set_attr("memcpy_bytes", static_cast<std::uint64_t>(parse_size(o.copy_bytes)));
  meta.set_attr("node_allreduce_algo", o.node_algo);
  meta.set_attr("timeout_s", o.timeout_s);
  meta.set_attr("device", o.device);
  if (o.device == "cuda") {
    meta.set_attr("gpu_gemm_n", o.gpu_gemm_n);
    meta.set_attr("gpu_bytes", static_cast<std::uint64_t>(parse_size(o.gpu_bytes)));
  }
  tracked_ = std::make_unique<stop::TrackedFile>(file_->h5().partial_path(), o.out, "rows");
}

void Output::finish(const std::string& status) {
  const stop::WriteGuard guard;
  if (!file_ || !tracked_->begin_close()) return;  // done, or published by a stop
  struct Done {
    stop::TrackedFile& tracked;
    ~Done() { tracked.end_close(); }
  } done{*tracked_};
  File* f = file_.get();
  f->finish(status);
}

namespace {

// The options, checked; exit status >= 0 when the run is not to go on (help, bad usage).
int parse_options(int argc, char** argv, int rank, Options& o) {
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
  app.add_option("--probe-windows", o.probe_windows,
                 "probes: timing windows per probe, one a rank per round of the ranks (the best counts)")
      ->check(CLI::Range(1, 1000))
      ->capture_default_str();
  app.add_option("--debug-slow-probe-rank", o.debug_slow_probe_rank)->group("");
  app.add_option("--debug-slow-probe-seconds", o.debug_slow_probe_s)->group("");
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
  app.add_option("--device", o.device,
                 "cuda: the GPUs too (each GPU's GEMM and copy rates against its peaks, each node's peer copies)")
      ->check(CLI::IsMember({"cpu", "cuda"}))
      ->capture_default_str();
  // At most 16384: an fp32 GEMM of it is 8.8e12 flop, about 0.15 s at an H100's 60 TFLOP/s, and its
  // matrices are filled through 1 GiB of each rank's host memory; 65536 would be 9 s a call, past
  // the probes' waits, and 16 GiB a rank.
  app.add_option("--gpu-gemm", o.gpu_gemm_n, "GPU GEMMs (--device cuda): n x n matrices")
      ->check(CLI::Range(64, 16384))
      ->capture_default_str();
  app.add_option("--gpu-bytes", o.gpu_bytes, "GPU copies (--device cuda): bytes per copy")->capture_default_str();
  app.add_flag("--no-probes", o.no_probes, "skip the sgemm and memcpy probes");
  app.add_flag("--no-nodes", o.no_nodes, "skip the per-node allreduce");
  try {
    app.parse(argc, argv);
    const std::size_t bw = parse_size(o.bytes);
    if (bw < static_cast<std::size_t>(o.window)) throw CLI::ValidationError("--bytes", "at least one byte per message");
    if (parse_size(o.copy_bytes) == 0) throw CLI::ValidationError("--copy-bytes", "must be positive");
    if (parse_size(o.node_bytes) < 4) throw CLI::ValidationError("--node-bytes", "at least one f32");
    if (parse_size(o.gpu_bytes) == 0) throw CLI::ValidationError("--gpu-bytes", "must be positive");
#ifndef COMMSCOPE_WITH_CUDA
    if (o.device == "cuda")
      throw CLI::ValidationError("--device cuda", "this build has no CUDA (configure with -DCOMMSCOPE_CUDA=ON)");
#endif
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
  return -1;
}

// Rank 0's file, finished by main when the run fails (published under its name, status recorded).
std::unique_ptr<Output> g_file;

int run(int argc, char** argv) {
  int rank = 0, p = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &p);
  Options o;
  if (const int rc = parse_options(argc, argv, rank, o); rc >= 0) return rc;
  openblas_set_num_threads(1);

  CommOptions copts;
  copts.timeout_s = o.timeout_s;
  Communicator world(MPI_COMM_WORLD, copts);
  stop::install("commscope-doctor", rank, stop::Mode::kPublishAndDie);
  const Layout layout = layout_of(*world.transport().as_mpi());
#ifdef COMMSCOPE_WITH_CUDA
  if (o.device == "cuda" && !gpus_usable(world, layout)) return 2;  // each rank without one said so
#endif
  const bench::Environment env = bench::capture_environment(world.mpi_comm(), argc, argv);
  const std::string* found = env.find("oversubscribed");
  const std::string oversubscribed = found ? *found : std::string();
  if (o.probes == "auto") o.probes = oversubscribed.empty() ? "concurrent" : "serial";
  if (rank == 0) {
    bench::print_environment(stdout, env, "commscope-doctor");
    if (!oversubscribed.empty())
      std::printf("# ranks outnumber CPUs: latency is the scheduler's here, the report does not judge it and the "
                  "bench's --doctor does not take it\n");
    g_file = std::make_unique<Output>(o, env, layout);
  }
  Output* file = g_file.get();
#ifdef COMMSCOPE_WITH_CUDA
  if (o.device != "cuda" || !run_pairs_device(world, o, layout, file)) run_pairs(world, o, layout, file);
#else
  run_pairs(world, o, layout, file);
#endif
  if (!o.no_probes) run_probes(world, o, layout, file);
  if (!o.no_nodes) run_nodes(world, o, layout, file);
#ifdef COMMSCOPE_WITH_CUDA
  if (o.device == "cuda") run_gpus(world, o, layout, file);
#endif
  if (rank == 0) {
    file->finish("complete");
    g_file.reset();
    std::printf("# wrote %s: commscope-report doctor %s names the outliers\n", o.out.c_str(), o.out.c_str());
  }
  return 0;
}

}  // namespace
}  // namespace commscope::doctor

int main(int argc, char** argv) {
  using namespace commscope;
  MpiRuntime mpi(argc, argv);
  try {
    return doctor::run(argc, argv);
  } catch (const std::exception& e) {
    int rank = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    std::fprintf(stderr, "commscope-doctor: rank %d: %s\n", rank, h5::one_line(e.what()).c_str());
    std::fflush(stderr);
    if (doctor::g_file) {  // keep what was measured, saying why it stops there
      try {
        doctor::g_file->finish("failed: " + h5::one_line(e.what()));
      } catch (const std::exception&) {
      }
    }
    MPI_Abort(MPI_COMM_WORLD, 3);
    return 3;
  }
}
