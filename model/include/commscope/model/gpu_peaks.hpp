// What a GPU can do at most, from what its properties say (commscope-doctor --device cuda,
// docs/doctor.md "GPU nodes"): the dense GEMM peak of its architecture (the one table of rates per
// streaming multiprocessor and clock, gpu_peaks.cpp, each row's source in a comment there), times
// its SM count and SM clock; and its memory's peak from the bus width and the memory clock. The
// link to the host is PCIe (bench's pcie_gbytes_per_lane, per lane and generation). No I/O.
#pragma once

#include <string>
#include <vector>

namespace commscope::model {

// Dense (no structured sparsity) floating-point operations per clock per SM, an FMA counting 2.
// 0 where the architecture has none (Volta's tensor cores take fp16, not bf16).
struct ArchPeak {
  int major = 0, minor = 0;     // compute capability (sm_80: 8, 0)
  const char* name = "";        // "Ampere (A100)"
  double fp32_flop_per_clk_sm;  // CUDA cores, fp32 FMA
  double bf16_flop_per_clk_sm;  // tensor cores, bf16 in, fp32 accumulate
  const char* note = "";        // what the row is for and what it is not
};

// The table, by compute capability.
const std::vector<ArchPeak>& arch_peaks();
// The row of sm_MAJOR MINOR; nullptr for an architecture the table does not know.
const ArchPeak* arch_peak(int major, int minor);

enum class GemmType { fp32, bf16 };
// Peak GEMM FLOP/s of a device: sms x sm_clock_mhz x 1e6 x the architecture's rate per SM and
// clock. 0 where the architecture or its type is not known, or sms or the clock is not positive.
double gemm_peak_flops(int major, int minor, int sms, double sm_clock_mhz, GemmType type);

// Peak device memory bytes/s: bus_width_bits x memory_clock_mhz x 1e6 x 2 (double data rate) / 8,
// the memory clock as the CUDA properties and NVML give it (HBM2 of an A100 40GB: 1215 MHz, so
// 5120 bits give 1555 GB/s). 0 where either is not positive.
double memory_peak_bytes(int bus_width_bits, double memory_clock_mhz);

// "sm_80 Ampere (A100)"; "sm_75 (not in the table)" for one it does not know.
std::string arch_name(int major, int minor);

}  // namespace commscope::model
