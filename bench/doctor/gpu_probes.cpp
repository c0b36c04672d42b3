// The doctor's GPU probes (gpu_probes.hpp): cuBLAS GEMMs, device, host and peer copies, each
// timed by the host clock over windows of many calls ended by a synchronisation (a window spans
// o.probe_time seconds, so a call's launch and the synchronisation are lost in it), the best
// window counting, as the CPU probes count.
#include "gpu_probes.hpp"
#include "gpu_memory.hpp"

#include <cublas_v2.h>
#include <cuda_runtime_api.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <limits>
#include <memory>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "commscope/collectives/half.hpp"
#include "commscope/common/numa_memory.hpp"
#include "commscope/common/timing.hpp"
#include "commscope/machine/gpu_links.hpp"
#include "commscope/machine/nvml.hpp"
#include "cuda_check.hpp"

namespace commscope::doctor::gpu {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

#define CS_CUBLAS_CHECK(call)                                                                               \
  do {                                                                                                      \
    const cublasStatus_t rc_ = (call);                                                                      \
    if (rc_ != CUBLAS_STATUS_SUCCESS)                                                                       \
      throw std::runtime_error(std::string(#call) + ": " + cublasGetStatusString(rc_) + " (" __FILE__ ")"); \
  } while (0)

// Pinned host memory: placed on NUMA node `node` and registered with CUDA where given (and CUDA
// registers it), else cudaMallocHost's, where this thread first touches it; every byte `fill`
// where it is 0 or more (what a copy to the device sends; -1: a copy's destination), written once.
struct HostBuffer {
  HostBuffer(std::size_t bytes, int node, int fill) {
    if (node >= 0) {
      placed = std::make_unique<NodeMemory>(bytes, node, static_cast<unsigned char>(std::max(fill, 0)));
      if (cudaHostRegister(placed->data(), bytes, cudaHostRegisterDefault) == cudaSuccess) {
        ptr = placed->data();
        return;
      }
      (void)cudaGetLastError();
      placed.reset();
    }
    COMMSCOPE_CUDA_CHECK(cudaMallocHost(&ptr, bytes));
    if (fill >= 0) std::memset(ptr, fill, bytes);
  }
  ~HostBuffer() {
    if (placed)
      cudaHostUnregister(placed->data());
    else if (ptr)
      cudaFreeHost(ptr);
  }
  HostBuffer(const HostBuffer&) = delete;
  HostBuffer& operator=(const HostBuffer&) = delete;
  std::unique_ptr<NodeMemory> placed;
  void* ptr = nullptr;
};

// Units of work per second of `issue` (which enqueues one call and returns its units), the best
// of `windows` windows of `window_s` seconds each, after one call that warms up (cuBLAS's choice
// of kernel, the lazy loading of a module: the first call can take many times a call) and one that
// prices a call (a window takes as many calls as fill it). `sync` waits for what was enqueued.
template <class Issue, class Sync>
double best_rate(double window_s, int windows, Issue&& issue, Sync&& sync) {
  issue();
  sync();
  double t0 = timing::now_s();
  issue();
  sync();
  const double first = std::max(timing::now_s() - t0, 1e-7);
  const long calls = std::max(1L, static_cast<long>(window_s / first));
  double best = 0;
  for (int w = 0; w < windows; ++w) {
    double units = 0;
    t0 = timing::now_s();
    for (long c = 0; c < calls; ++c) units += issue();
    sync();
    best = std::max(best, units / (timing::now_s() - t0));
  }
  return best;
}

// Matrices of values in [-1, 1) from a fixed generator: a constant matrix flips few bits, draws
// less power than a GEMM of real values and would run faster than one.
void fill_random(void* device_ptr, std::size_t count, bool bf16) {
  std::vector<float> f(count);
  std::uint64_t x = 0x9e3779b97f4a7c15ull;
  for (float& v : f) {
    x ^= x << 13, x ^= x >> 7, x ^= x << 17;
    v = static_cast<float>(static_cast<double>(x >> 40) / static_cast<double>(1ull << 24) * 2.0 - 1.0);
  }
  if (!bf16) {
    COMMSCOPE_CUDA_CHECK(cudaMemcpy(device_ptr, f.data(), count * sizeof(float), cudaMemcpyHostToDevice));
    return;
  }
  std::vector<std::uint16_t> h(count);
  std::transform(f.begin(), f.end(), h.begin(), f32_to_bf16);  // rounded to nearest even (half.hpp)
  COMMSCOPE_CUDA_CHECK(cudaMemcpy(device_ptr, h.data(), count * sizeof(std::uint16_t), cudaMemcpyHostToDevice));
}

// nvidia-smi's rows for this machine's GPUs, read once; none where it does not answer.
const std::vector<machine::SmiGpu>& smi_gpus() {
  static const std::vector<machine::SmiGpu> rows = [] {
    std::vector<machine::SmiGpu> out;
    FILE* p = popen(
        "nvidia-smi --query-gpu=index,name,pci.bus_id,pcie.link.gen.current,pcie.link.width.current,"
        "pcie.link.gen.max,pcie.link.width.max,clocks.max.sm,clocks.max.mem --format=csv 2>/dev/null",
        "r");
    if (!p) return out;
    std::string text;
    char buf[4096];
    for (std::size_t n; (n = std::fread(buf, 1, sizeof buf, p)) > 0;) text.append(buf, n);
    if (pclose(p) != 0) return out;
    try {
      out = machine::parse_nvidia_smi_csv(text);
    } catch (const std::exception&) {
      out.clear();  // another format: the CUDA attributes and sysfs stand
    }
    return out;
  }();
  return rows;
}

}  // namespace

Properties properties(int device) {
  Properties p;
  p.device = device;
  COMMSCOPE_CUDA_CHECK(cudaSetDevice(device));
  auto attr = [device](cudaDeviceAttr a) {
    int v = 0;
    COMMSCOPE_CUDA_CHECK(cudaDeviceGetAttribute(&v, a, device));
    return v;
  };
  p.major = attr(cudaDevAttrComputeCapabilityMajor);
  p.minor = attr(cudaDevAttrComputeCapabilityMinor);
  p.sms = attr(cudaDevAttrMultiProcessorCount);
  p.bus_width_bits = attr(cudaDevAttrGlobalMemoryBusWidth);
  p.sm_clock_mhz = attr(cudaDevAttrClockRate) / 1e3;  // kHz
  p.mem_clock_mhz = attr(cudaDevAttrMemoryClockRate) / 1e3;
  char bus[32] = {};
  COMMSCOPE_CUDA_CHECK(cudaDeviceGetPCIBusId(bus, sizeof bus, device));
  cudaDeviceProp prop{};
  COMMSCOPE_CUDA_CHECK(cudaGetDeviceProperties(&prop, device));
  p.name = prop.name;
  p.bus_id = bus;
  // The maximum clocks, and the host link by machine::trained_link (the generation's maximum, the
  // width now): from NVML, as the machine model reads the GPUs' links (machine/nvml.hpp); else
  // nvidia-smi's row of this device (by bus id); the link else from sysfs.
  machine::PcieLink link;
  const auto take = [&p, &link](double sm_mhz, double mem_mhz, machine::PcieLink from) {
    if (sm_mhz > 0) p.sm_clock_mhz = sm_mhz;
    if (mem_mhz > 0) p.mem_clock_mhz = mem_mhz;
    link = std::move(from);
  };
  if (const machine::NvmlGpu g = machine::nvml_gpu(p.bus_id); g.error.empty())
    take(g.sm_clock_max_mhz, g.mem_clock_max_mhz,
         machine::trained_link(g.pcie_gen_max, g.pcie_gen_current, g.pcie_width_max, g.pcie_width_current,
                               "NVML: max gen, width now"));
  if (!(link.gbytes > 0)) {  // no NVML, or it gave no link
    const std::string address = machine::sysfs_address(p.bus_id);
    for (const machine::SmiGpu& s : smi_gpus())
      if (machine::sysfs_address(s.bus_id) == address) take(s.sm_clock_max_mhz, s.mem_clock_max_mhz, s.link);
  }
  if (!(link.gbytes > 0)) link = machine::sysfs_link_of("/sys", p.bus_id);
  p.host_link_gbytes = link.gbytes;
  p.host_link = link.detail;
  p.gemm_fp32_peak_flops = model::gemm_peak_flops(p.major, p.minor, p.sms, p.sm_clock_mhz, model::GemmType::fp32);
  p.gemm_bf16_peak_flops = model::gemm_peak_flops(p.major, p.minor, p.sms, p.sm_clock_mhz, model::GemmType::bf16);
  p.memory_peak_bytes = model::memory_peak_bytes(p.bus_width_bits, p.mem_clock_mhz);
  return p;
}

double gemm_gflops(int device, model::GemmType type, int n, double window_s, int windows) {
  const bool bf16 = type == model::GemmType::bf16;
  const std::size_t count = static_cast<std::size_t>(n) * static_cast<std::size_t>(n);
  const std::size_t elem = bf16 ? 2 : 4;
  DeviceBuffer a(device, count * elem), b(device, count * elem), c(device, count * elem);
  fill_random(a.ptr, count, bf16);
  fill_random(b.ptr, count, bf16);
  const Stream stream(device);
  cublasHandle_t handle = nullptr;
  CS_CUBLAS_CHECK(cublasCreate(&handle));
  const std::unique_ptr<cublasContext, cublasStatus_t (*)(cublasHandle_t)> owned(handle, cublasDestroy);
  CS_CUBLAS_CHECK(cublasSetStream(handle, stream.get()));
  // CUBLAS_DEFAULT_MATH: fp32 stays fp32 on the CUDA cores (no TF32); bf16 in, fp32 accumulate.
  CS_CUBLAS_CHECK(cublasSetMathMode(handle, CUBLAS_DEFAULT_MATH));
  const cudaDataType t = bf16 ? CUDA_R_16BF : CUDA_R_32F;
  const float alpha = 1.0f, beta = 0.0f;
  const double flop = 2.0 * n * static_cast<double>(n) * n;
  const double rate = best_rate(
      window_s, windows,
      [&] {
        CS_CUBLAS_CHECK(cublasGemmEx(handle, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &alpha, a.ptr, t, n, b.ptr, t, n, &beta,
                                     c.ptr, t, n, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
        return flop;
      },
      [&] { COMMSCOPE_CUDA_CHECK(cudaStreamSynchronize(stream.get())); });
  return rate / 1e9;
}

namespace {

// cudaMemcpyAsync of `bytes` from src to dst on one stream of `device`: GB/s.
double copy_rate(int device, void* dst, const void* src, std::size_t bytes, cudaMemcpyKind kind, double window_s,
                 int windows) {
  const Stream stream(device);
  return best_rate(
             window_s, windows,
             [&] {
               COMMSCOPE_CUDA_CHECK(cudaMemcpyAsync(dst, src, bytes, kind, stream.get()));
               return static_cast<double>(bytes);
             },
             [&] { COMMSCOPE_CUDA_CHECK(cudaStreamSynchronize(stream.get())); }) /
         1e9;
}

}  // namespace

double d2d_gbytes(int device, std::size_t bytes, double window_s, int windows) {
  DeviceBuffer a(device, bytes), b(device, bytes);
  COMMSCOPE_CUDA_CHECK(cudaMemset(a.ptr, 1, bytes));
  return copy_rate(device, b.ptr, a.ptr, bytes, cudaMemcpyDeviceToDevice, window_s, windows);
}

double h2d_gbytes(int device, std::size_t bytes, double window_s, int windows, int numa_node) {
  DeviceBuffer d(device, bytes);
  const HostBuffer h(bytes, numa_node, 1);
  return copy_rate(device, d.ptr, h.ptr, bytes, cudaMemcpyHostToDevice, window_s, windows);
}

double d2h_gbytes(int device, std::size_t bytes, double window_s, int windows, int numa_node) {
  DeviceBuffer d(device, bytes);
  const HostBuffer h(bytes, numa_node, -1);
  COMMSCOPE_CUDA_CHECK(cudaMemset(d.ptr, 1, bytes));
  return copy_rate(device, h.ptr, d.ptr, bytes, cudaMemcpyDeviceToHost, window_s, windows);
}

bool peer_access(int src, int dst) {
  int can = 0;
  COMMSCOPE_CUDA_CHECK(cudaDeviceCanAccessPeer(&can, src, dst));
  if (!can) return false;
  COMMSCOPE_CUDA_CHECK(cudaSetDevice(src));
  const cudaError_t e = cudaDeviceEnablePeerAccess(dst, 0);
  if (e == cudaErrorPeerAccessAlreadyEnabled)
    (void)cudaGetLastError();
  else
    COMMSCOPE_CUDA_CHECK(e);
  return true;
}

PeerRate peer_copy(int src, int dst, std::size_t bytes, double window_s, int windows, bool both_ways) {
  PeerRate r{kNaN, kNaN};
  if (!peer_access(src, dst) || !peer_access(dst, src)) return r;
  DeviceBuffer a_src(src, bytes), a_dst(dst, bytes), b_src(src, bytes), b_dst(dst, bytes);
  COMMSCOPE_CUDA_CHECK(cudaSetDevice(src));
  COMMSCOPE_CUDA_CHECK(cudaMemset(a_src.ptr, 1, bytes));
  COMMSCOPE_CUDA_CHECK(cudaSetDevice(dst));
  COMMSCOPE_CUDA_CHECK(cudaMemset(b_dst.ptr, 2, bytes));
  const Stream s_src(src), s_dst(dst);
  const auto sync = [&] {
    COMMSCOPE_CUDA_CHECK(cudaStreamSynchronize(s_src.get()));
    COMMSCOPE_CUDA_CHECK(cudaStreamSynchronize(s_dst.get()));
  };
  const double b = static_cast<double>(bytes);
  // One way: the copy on the source's stream (the source's copy engine pushes).
  r.oneway_gbytes = best_rate(
                        window_s, windows,
                        [&] {
                          COMMSCOPE_CUDA_CHECK(cudaMemcpyPeerAsync(a_dst.ptr, dst, a_src.ptr, src, bytes, s_src.get()));
                          return b;
                        },
                        sync) /
                    1e9;
  if (!both_ways) return r;
  // Both ways at once, each from its own side: the sum of the two directions.
  r.bidir_gbytes = best_rate(
                       window_s, windows,
                       [&] {
                         COMMSCOPE_CUDA_CHECK(cudaMemcpyPeerAsync(a_dst.ptr, dst, a_src.ptr, src, bytes, s_src.get()));
                         COMMSCOPE_CUDA_CHECK(cudaMemcpyPeerAsync(b_src.ptr, src, b_dst.ptr, dst, bytes, s_dst.get()));
                         return 2 * b;
                       },
                       sync) /
                   1e9;
  return r;
}

}  // namespace commscope::doctor::gpu
