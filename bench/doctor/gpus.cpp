// commscope-doctor's GPU parts (--device cuda): phase 1's pairs from device buffers through NCCL
// (run_pairs_device), and phase 4: every GPU's GEMM, device copy and host link rates against its
// peaks, then each node's peer copies (gpu_probes.hpp). A node's ranks take its visible GPUs in
// turn, as the bench's do (node_gpu: told apart by PCI bus id, so that ranks which each see a GPU
// of their own, device 0 to all of them, are as many GPUs); where ranks outnumber GPUs only the
// first of each GPU probes it. The GPUs probe at once (what a job sees: 8 GPUs copying from the
// host share the host's memory and PCIe switches); the peer copies run one pair at a time on each
// node (its first rank measures every ordered pair of the node's visible GPUs), the other ranks
// asleep.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <exception>
#include <functional>
#include <string>
#include <tuple>
#include <vector>

#include "commscope/collectives/gather_rows.hpp"
#include "commscope/common/byte_size.hpp"
#include "commscope/common/cpu_list.hpp"
#include "commscope/common/numa_memory.hpp"
#include "commscope/machine/gpu_links.hpp"
#include "commscope/machine/machine_detect.hpp"
#include "cuda_check.hpp"
#include "doctor.hpp"
#include "gpu_memory.hpp"
#include "gpu_probes.hpp"
#include "gpu_setup.hpp"
#include "nccl.hpp"
#include "nccl_p2p_transport.hpp"

namespace commscope::doctor {
namespace {

// A char[N] field of a row as a string: a value of N bytes has no NUL to end it.
template <std::size_t N>
std::string text(const char (&field)[N]) {
  return std::string(h5::get_fixed(field));
}

// NaN where a peak is not known (0): the report then shows "-" for its share.
double gflops_or_nan(double flops) {
  return flops > 0 ? flops / 1e9 : kNaN;
}

// This rank's GPU row; device -1 where the rank has no GPU of its own to probe. Every rank starts
// each of the five rates with the others (`together`, a barrier that every rank passes as often,
// a GPU or none): the GPUs' copies from the host share the host's memory and PCIe switches, and a
// GPU whose windows fell between the others' would read a rate the others could not.
GpuRow probe_gpu(const Options& o, int rank, const Layout& layout, int device,
                 const std::function<void(const char*)>& together) {
  GpuRow row;
  row.rank = rank, row.node = layout.node[static_cast<std::size_t>(rank)], row.device = device;
  h5::set_fixed(row.host, layout.hosts[static_cast<std::size_t>(rank)]);
  const bool mine = device >= 0;
  const gpu::Properties p = mine ? gpu::properties(device) : gpu::Properties{};
  h5::set_fixed(row.name, p.name);
  h5::set_fixed(row.bus_id, p.bus_id);
  // The host copies' buffers are placed on the GPU's NUMA node where the system names one and the
  // kernel places memory there (one page tried first), else where this rank first touches them.
  int host_node = -1;
  std::string placed;  // what the rank should hear of it
  if (const int gpu_node = mine ? machine::sysfs_numa_node("/sys", p.bus_id) : -1; gpu_node >= 0) {
    const NodeMemory trial(1, gpu_node);
    if (trial.placed()) host_node = gpu_node;
    placed = machine::host_memory_placement(gpu_node, machine::numa_nodes_of("/sys", affinity_cpus()),
                                            trial.placed() ? std::string() : trial.why_not());
  }
  if (!placed.empty()) {
    std::printf("# gpus: %s rank %d GPU %d: %s\n", layout.hosts[static_cast<std::size_t>(rank)].c_str(), rank, device,
                placed.c_str());
    std::fflush(stdout);
  }
  const std::size_t bytes = parse_size(o.gpu_bytes);
  const double window = o.probe_time_s;
  const int windows = o.probe_windows;
  together("the fp32 GEMMs");
  if (mine) {
    row.gemm_fp32_gflops = gpu::gemm_gflops(device, model::GemmType::fp32, o.gpu_gemm_n, window, windows);
    row.gemm_fp32_peak_gflops = gflops_or_nan(p.gemm_fp32_peak_flops);
  }
  together("the bf16 GEMMs");
  if (mine && p.major >= 8) {  // bf16 tensor cores: Ampere on
    row.gemm_bf16_gflops = gpu::gemm_gflops(device, model::GemmType::bf16, o.gpu_gemm_n, window, windows);
    row.gemm_bf16_peak_gflops = gflops_or_nan(p.gemm_bf16_peak_flops);
  }
  together("the device copies");
  if (mine) {
    row.d2d_GBps = gpu::d2d_gbytes(device, bytes, window, windows);
    // A copy reads and writes each byte: its peak is half the memory's.
    row.d2d_peak_GBps = p.memory_peak_bytes > 0 ? p.memory_peak_bytes / 2 / 1e9 : kNaN;
  }
  together("the copies from the host");
  if (mine) row.h2d_GBps = gpu::h2d_gbytes(device, bytes, window, windows, host_node);
  together("the copies to the host");
  if (mine) {
    row.d2h_GBps = gpu::d2h_gbytes(device, bytes, window, windows, host_node);
    row.host_link_GBps = p.host_link_gbytes > 0 ? p.host_link_gbytes : kNaN;
    h5::set_fixed(row.host_link, p.host_link);
  }
  return row;
}

// "0.74 of peak", or "" where the peak is not known; " ABOVE its peak" beyond 1.1 of it (the
// peak table, or the clock it was given, is wrong for this device).
std::string of_peak(double value, double peak) {
  if (!std::isfinite(value) || !(peak > 0)) return "";
  char text[64];
  std::snprintf(text, sizeof text, " (%.2f of peak%s)", value / peak, value > 1.1 * peak ? ", ABOVE its peak" : "");
  return text;
}

// Every ordered pair of this node's visible GPUs: the copy one way, and both ways at once (the
// same figure for i -> j and j -> i, measured once). Where other ranks of the node hold contexts
// on the GPUs (`shared`) and a GPU is in an exclusive compute mode, CUDA would refuse this rank
// a context on it: none measured, said. A pair that fails is said and left NaN.
std::vector<PeerRow> probe_peers(const Options& o, int node, const std::string& host, int ngpu, bool shared) {
  std::vector<PeerRow> rows;
  for (int d = 0; d < ngpu && shared; ++d) {
    int mode = cudaComputeModeDefault;
    COMMSCOPE_CUDA_CHECK(cudaDeviceGetAttribute(&mode, cudaDevAttrComputeMode, d));
    if (mode != cudaComputeModeDefault) {
      std::printf(
          "# peers: %s: GPU %d is in an exclusive compute mode (nvidia-smi -c), and another rank holds it: "
          "no peer copies (one rank on the node measures them)\n",
          host.c_str(), d);
      std::fflush(stdout);
      return rows;
    }
  }
  const std::size_t bytes = parse_size(o.gpu_bytes);
  const auto copy = [&](int src, int dst, bool both_ways) {
    try {
      return gpu::peer_copy(src, dst, bytes, o.probe_time_s, o.probe_windows, both_ways);
    } catch (const std::exception& e) {
      std::printf("# peers: %s: GPU %d -> %d: %s\n", host.c_str(), src, dst, e.what());
      std::fflush(stdout);
      return gpu::PeerRate{kNaN, kNaN};
    }
  };
  for (int i = 0; i < ngpu; ++i)
    for (int j = i + 1; j < ngpu; ++j) {
      const gpu::PeerRate ij = copy(i, j, true);
      const gpu::PeerRate ji = copy(j, i, false);
      for (const auto& [src, dst, oneway] : {std::tuple{i, j, ij.oneway_gbytes}, std::tuple{j, i, ji.oneway_gbytes}}) {
        PeerRow r;
        r.node = node, r.src = src, r.dst = dst, r.oneway_GBps = oneway, r.bidir_GBps = ij.bidir_gbytes;
        h5::set_fixed(r.host, host);
        rows.push_back(r);
      }
    }
  return rows;
}

}  // namespace

bool gpus_usable(Communicator& world, const Layout& layout) {
  const int have = machine::visible_gpus();
  int fewest = have;
  MPI_Allreduce(&have, &fewest, 1, MPI_INT, MPI_MIN, world.mpi_comm());
  if (fewest > 0) return true;
  // Each rank without one says so (its host named) and why CUDA says so (a driver older than the
  // runtime the build links is cudaErrorInsufficientDriver, not "no devices"); rank 0 speaks for
  // the run.
  if (have == 0) {
    int count = 0;
    const cudaError_t e = cudaGetDeviceCount(&count);
    std::fprintf(stderr, "commscope-doctor: --device cuda: no usable GPU on rank %d (%s): %s\n", world.rank(),
                 layout.hosts[static_cast<std::size_t>(world.rank())].c_str(),
                 e != cudaSuccess ? cudaGetErrorString(e) : "CUDA sees no device");
  }
  return false;
}

bool run_pairs_device(Communicator& world, const Options& o, const Layout& layout, Output* file) {
  const int rank = world.rank();
  Communicator node = world.split_by_node();
  // NCCL takes a GPU per rank: every rank needs a GPU that no other rank of its node has.
  const NodeGpu gpu = node_gpu(node, "--device cuda");
  const int shares = gpu.first != node.rank();
  int any = shares;
  MPI_Allreduce(&shares, &any, 1, MPI_INT, MPI_MAX, world.mpi_comm());
  if (any) {
    if (node.rank() == 0 && gpu.gpus < node.size())
      std::printf("# pairs: %s: %d ranks share %d GPUs, and NCCL takes one a rank: the pairs from host buffers\n",
                  layout.hosts[static_cast<std::size_t>(rank)].c_str(), node.size(), gpu.gpus);
    std::fflush(stdout);
    return false;
  }
  // Each rank's own GPU, none shared (checked above, as bind_local_gpu would check it again).
  const int device = gpu.device;
  COMMSCOPE_CUDA_CHECK(cudaSetDevice(device));
  const std::size_t bytes = parse_size(o.bytes);
  const gpu::DeviceBuffer data(device, bytes), small(device, 8);
  const gpu::Stream stream(device);
  COMMSCOPE_CUDA_CHECK(cudaMemset(data.ptr, 1, bytes));
  COMMSCOPE_CUDA_CHECK(cudaMemset(small.ptr, 0, 8));
  // Made after the buffers, so ended before them: after a pair stopped answering NCCL's kernels
  // may be stuck, and are aborted, not waited for (freeing the buffers would wait for them).
  struct Nccl {
    ncclComm_t comm;
    ~Nccl() { std::uncaught_exceptions() > 0 ? ncclCommAbort(comm) : ncclCommDestroy(comm); }
  } const nccl{init_nccl(world)};
  NcclP2pTransport t(nccl.comm, stream.get(), rank, world.size(), o.timeout_s);
  run_pairs_on(world, t, PairBuffers{static_cast<std::byte*>(data.ptr), bytes, static_cast<std::byte*>(small.ptr)}, o,
               layout, file, "device buffers, NCCL's point-to-point");
  return true;
}

void run_gpus(Communicator& world, const Options& o, const Layout& layout, Output* file) {
  const int rank = world.rank();
  Communicator node = world.split_by_node();
  const NodeGpu gpu = node_gpu(node, "--device cuda");
  const int ngpu = gpu.visible;
  int most = ngpu;  // the most GPUs a node has: how long its peer copies may take
  MPI_Allreduce(&ngpu, &most, 1, MPI_INT, MPI_MAX, world.mpi_comm());
  // A probe's rate takes its windows, two first calls and its buffers (2 s allowed): the waits are
  // -T beyond what the probes take (5 rates a GPU; 3 a pair of GPUs, one pair at a time).
  const double rate_s = o.probe_windows * o.probe_time_s + 2;
  idle_barrier(world.mpi_comm(), o.timeout_s, "GPU probes, before them");
  const GpuRow mine = probe_gpu(o, rank, layout, gpu.first == node.rank() ? gpu.device : -1, [&](const char* next) {
    idle_barrier(world.mpi_comm(), o.timeout_s + rate_s, std::string("GPU probes, before ") + next);
  });
  idle_barrier(world.mpi_comm(), o.timeout_s + rate_s, "GPU probes, after them");
  const std::vector<GpuRow> all = gather_rows(world.mpi_comm(), std::vector<GpuRow>{mine});
  if (rank == 0) {
    std::printf("# gpus: cuBLAS GEMM n=%d, copies of %s, the GPUs at once\n", o.gpu_gemm_n, o.gpu_bytes.c_str());
    std::vector<GpuRow> rows;
    for (const GpuRow& g : all) {
      if (g.device < 0) continue;
      rows.push_back(g);
      // No bf16 GEMM before Ampere: "-".
      char bf16[32] = "-";
      if (std::isfinite(g.gemm_bf16_gflops)) std::snprintf(bf16, sizeof bf16, "%.1f", g.gemm_bf16_gflops / 1e3);
      std::printf(
          "  rank %4lld %-16s GPU %lld (%s) %s: bf16 GEMM %s TFLOP/s%s, fp32 %.1f%s; device copy %.0f GB/s%s; "
          "host to device %.1f, device to host %.1f GB/s%s, link %s\n",
          static_cast<long long>(g.rank), text(g.host).c_str(), static_cast<long long>(g.device),
          text(g.bus_id).c_str(), text(g.name).c_str(), bf16,
          of_peak(g.gemm_bf16_gflops, g.gemm_bf16_peak_gflops).c_str(), g.gemm_fp32_gflops / 1e3,
          of_peak(g.gemm_fp32_gflops, g.gemm_fp32_peak_gflops).c_str(), g.d2d_GBps,
          of_peak(g.d2d_GBps, g.d2d_peak_GBps).c_str(), g.h2d_GBps, g.d2h_GBps,
          of_peak(std::min(g.h2d_GBps, g.d2h_GBps), g.host_link_GBps).c_str(), text(g.host_link).c_str());
    }
    file->add(rows);
  }
  // The peer copies: each node's first rank, the others asleep. Its ranks' GPUs that it does not see
  // (a GPU of its own to each rank) it cannot copy between: said, on its line.
  std::vector<PeerRow> peers;
  if (node.rank() == 0 && ngpu >= 2)
    peers = probe_peers(o, layout.node[static_cast<std::size_t>(rank)], layout.hosts[static_cast<std::size_t>(rank)],
                        ngpu, node.size() > 1);
  if (node.rank() == 0 && gpu.gpus > ngpu) {
    std::printf(
        "# peers: %s: its ranks hold %d GPUs and its first rank sees %d: no peer copies between the others "
        "(they need every GPU of the node visible to one rank: CUDA_VISIBLE_DEVICES unset, srun without "
        "--gpus-per-task)\n",
        layout.hosts[static_cast<std::size_t>(rank)].c_str(), gpu.gpus, ngpu);
    std::fflush(stdout);
  }
  idle_barrier(world.mpi_comm(), o.timeout_s + most * (most - 1) / 2 * 3 * rate_s, "GPU peer copies");
  const std::vector<PeerRow> gathered = gather_rows(world.mpi_comm(), peers);
  if (rank != 0 || gathered.empty()) return;
  std::printf("# peers: every ordered pair of a node's GPUs, one way and both ways at once (GB/s)\n");
  for (const PeerRow& r : gathered) {
    if (std::isfinite(r.oneway_GBps))
      std::printf("  %-16s GPU %lld -> %lld %8.1f one way %8.1f both ways\n", text(r.host).c_str(),
                  static_cast<long long>(r.src), static_cast<long long>(r.dst), r.oneway_GBps, r.bidir_GBps);
    else
      std::printf("  %-16s GPU %lld -> %lld no peer access (a copy would go through the host)\n", text(r.host).c_str(),
                  static_cast<long long>(r.src), static_cast<long long>(r.dst));
  }
  file->add(gathered);
}

}  // namespace commscope::doctor
