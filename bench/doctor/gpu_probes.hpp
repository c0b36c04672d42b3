// The doctor's GPU probes (commscope-doctor --device cuda; docs/doctor.md "GPU nodes"): declared
// here, not yet implemented. Their CUDA part (gpu_probes.cu, built where COMMSCOPE_WITH_CUDA) is to
// be written and checked on a GPU node; what is CPU-side is done and tested: the peaks
// (model/gpu_peaks.hpp), the links from nvidia-smi's and sysfs's text (machine/gpu_links.hpp),
// the rows (formats/doctor_file.hpp: GpuRow, PeerRow) and the report's rule (analysis's
// doctor_findings.hpp). Each rate is the best of the probe's windows, as the CPU probes' are.
#pragma once

#include <cstddef>
#include <string>

#include "commscope/model/gpu_peaks.hpp"

namespace commscope::doctor::gpu {

// What a device says of itself. SMs, the SM and memory clocks and the bus width from
// cudaDeviceGetAttribute (cudaDevAttrMultiProcessorCount, cudaDevAttrClockRate,
// cudaDevAttrMemoryClockRate, cudaDevAttrGlobalMemoryBusWidth: cudaDeviceProp's clockRate and
// memoryClockRate are deprecated in CUDA 12 and gone in 13), the maximum clocks from nvidia-smi's
// clocks.max.sm and clocks.max.mem where it answers (parse_nvidia_smi_csv), the host link from
// its pcie.link.* figures, else sysfs (sysfs_link_of, by the device's PCI bus id).
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
// accumulate), n large enough for the rate to reach its plateau (to be chosen on a GPU), 2 n^3
// flop per call, timed with events over windows of `window_s`; GFLOP/s.
double gemm_gflops(int device, model::GemmType type, int n, double window_s, int windows);
// cudaMemcpyAsync device to device of `bytes` (at least 4x the L2 cache; 1 GiB); GB/s counted once.
double d2d_gbytes(int device, std::size_t bytes, int windows);
// Pinned host memory (cudaMallocHost) to the device and back, `bytes` each way; GB/s.
double h2d_gbytes(int device, std::size_t bytes, int windows);
double d2h_gbytes(int device, std::size_t bytes, int windows);
// Peer copy src -> dst (cudaDeviceEnablePeerAccess, cudaMemcpyPeerAsync) alone, and both
// directions at once on two streams (the sum); NaN where the pair cannot access each other.
struct PeerRate {
  double oneway_gbytes = 0, bidir_gbytes = 0;
};
PeerRate peer_copy(int src, int dst, std::size_t bytes, int windows);

}  // namespace commscope::doctor::gpu
