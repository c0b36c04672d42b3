// The doctor's GPU probes (commscope-doctor --device cuda; docs/doctor.md "GPU nodes"), built
// where COMMSCOPE_WITH_CUDA (gpu_probes.cpp), run by the doctor's GPU phase (gpus.cpp). The peaks
// they are set against are model/gpu_peaks.hpp's, the host links machine/gpu_links.hpp's, the
// rows formats/doctor_file.hpp's (GpuRow, PeerRow), the rule over them analysis's
// doctor_findings.hpp. Each rate is the best of `windows` windows of `window_s` seconds (many
// calls, then one synchronisation), as the CPU probes' are. Errors: TransportError (CUDA) or
// std::runtime_error (cuBLAS) naming the call.
#pragma once

#include <cstddef>
#include <string>

#include "commscope/model/gpu_peaks.hpp"

namespace commscope::doctor::gpu {

// What a device says of itself. SMs, the SM and memory clocks and the bus width from
// cudaDeviceGetAttribute (cudaDevAttrMultiProcessorCount, cudaDevAttrClockRate,
// cudaDevAttrMemoryClockRate, cudaDevAttrGlobalMemoryBusWidth: cudaDeviceProp's clockRate and
// memoryClockRate are deprecated in CUDA 12 and gone in 13); the maximum clocks and the host link
// (the generation's maximum, the width now) from NVML as the machine model reads the GPUs' links
// (machine/nvml.hpp), else from nvidia-smi's clocks.max.* and pcie.link.* where it answers
// (parse_nvidia_smi_csv); the link else from sysfs (sysfs_link_of, by the device's PCI bus id).
struct Properties {
  int device = 0;
  std::string name, bus_id;
  int major = 0, minor = 0, sms = 0, bus_width_bits = 0;
  double sm_clock_mhz = 0, mem_clock_mhz = 0;
  double gemm_fp32_peak_flops = 0, gemm_bf16_peak_flops = 0;  // model::gemm_peak_flops
  double memory_peak_bytes = 0;                               // model::memory_peak_bytes
  double host_link_gbytes = 0;                                // PcieLink::gbytes
  std::string host_link;                                      // PcieLink::detail
};
Properties properties(int device);

// cuBLAS GEMM of n x n x n (cublasGemmEx; fp32: CUBLAS_COMPUTE_32F, bf16: bf16 in, fp32
// accumulate; CUBLAS_DEFAULT_MATH, so fp32 is not TF32), random values in [-1, 1), n large enough
// for the rate to reach its plateau (the doctor's --gpu-gemm, 8192), 2 n^3 flop per call; GFLOP/s.
double gemm_gflops(int device, model::GemmType type, int n, double window_s, int windows);
// cudaMemcpyAsync device to device of `bytes` (many times the L2 cache); GB/s counted once (the
// memory moves twice that: each byte is read and written).
double d2d_gbytes(int device, std::size_t bytes, double window_s, int windows);
// Pinned host memory to the device and back, `bytes` each way; GB/s. The memory is placed on NUMA
// node `numa_node` and registered (cudaHostRegister) where it is 0 or more, else (or where CUDA
// will not register it) cudaMallocHost's.
double h2d_gbytes(int device, std::size_t bytes, double window_s, int windows, int numa_node = -1);
double d2h_gbytes(int device, std::size_t bytes, double window_s, int windows, int numa_node = -1);
// Whether src can read and write dst's memory, peer access enabled where it can.
bool peer_access(int src, int dst);
// Peer copy src -> dst (cudaMemcpyPeerAsync on a stream of src, peer access enabled both ways)
// alone, and with `both_ways` the two directions at once, each on a stream of its source (the
// sum of the two); NaN where the pair cannot access each other (a copy would be staged through
// the host, which is no peer link).
struct PeerRate {
  double oneway_gbytes = 0, bidir_gbytes = 0;
};
PeerRate peer_copy(int src, int dst, std::size_t bytes, double window_s, int windows, bool both_ways);

}  // namespace commscope::doctor::gpu
