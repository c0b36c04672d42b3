#include "commscope/model/gpu_peaks.hpp"

namespace commscope::model {

// Dense rates per SM and clock, each derived from the whitepaper's per-SM unit counts and checked
// against its datasheet product (SMs x boost clock x rate = the quoted TFLOP/s).
//  - Volta sm_70: "NVIDIA Tesla V100 GPU Architecture" whitepaper (2017): 64 FP32 cores per SM
//    (15.7 TFLOP/s = 80 SMs x 1.53 GHz x 128); 8 tensor cores per SM, 64 fp16 FMA/clk each
//    (125 TFLOP/s fp16 = 80 x 1.53 GHz x 1024). No bf16.
//  - Ampere sm_80: "NVIDIA A100 Tensor Core GPU Architecture" whitepaper (2020): 64 FP32 cores per
//    SM (19.5 TFLOP/s = 108 x 1.41 GHz x 128); 4 tensor cores per SM, 256 dense fp16/bf16 FMA/clk
//    each (312 TFLOP/s bf16 = 108 x 1.41 GHz x 2048).
//  - Ampere sm_86: "NVIDIA Ampere GA102 GPU Architecture" whitepaper (2020): 128 FP32 cores per SM
//    (A40: 37.4 TFLOP/s = 84 x 1.74 GHz x 256); 4 tensor cores per SM, 128 dense fp16 FMA/clk each
//    (A40: 149.7 TFLOP/s bf16 = 84 x 1.74 GHz x 1024; GeForce parts halve it with fp32 accumulate).
//  - Ada sm_89: "NVIDIA Ada GPU Architecture" whitepaper (2022): 128 FP32 cores per SM (RTX 4090:
//    82.6 TFLOP/s = 128 x 2.52 GHz x 256); 4 tensor cores per SM, 1024 dense fp16/bf16 flop/clk per
//    SM (L40S: 362 TFLOP/s bf16 = 142 x 2.52 GHz x 1024; GeForce parts halve it with fp32 accumulate).
//  - Hopper sm_90: "NVIDIA H100 Tensor Core GPU Architecture" whitepaper (2022) and the H100 SXM
//    datasheet: 128 FP32 cores per SM; 4 tensor cores per SM, 512 dense fp16/bf16 FMA/clk each
//    (twice A100's 256): bf16 989.4 TFLOP/s dense = 132 SMs x 1.83 GHz x 4096.
//  - Blackwell sm_100 is not in the table: its public sources (the B200 datasheets) give per-GPU
//    figures without the SM count and clock they were taken at, so no per-SM rate can be cited.
const std::vector<ArchPeak>& arch_peaks() {
  static const std::vector<ArchPeak> table{
      {7, 0, "Volta (V100)", 128, 0, "no bf16 tensor cores (fp16: 1024 flop/clk/SM)"},
      {8, 0, "Ampere (A100)", 128, 2048, ""},
      {8, 6, "Ampere (GA10x: A40, A10, RTX 30)", 256, 1024, "GeForce parts: bf16 half this"},
      {8, 9, "Ada (L40S, L4, RTX 40)", 256, 1024, "GeForce parts: bf16 half this"},
      {9, 0, "Hopper (H100, H200)", 256, 4096, ""},
  };
  return table;
}

const ArchPeak* arch_peak(int major, int minor) {
  for (const ArchPeak& a : arch_peaks())
    if (a.major == major && a.minor == minor) return &a;
  return nullptr;
}

double gemm_peak_flops(int major, int minor, int sms, double sm_clock_mhz, GemmType type) {
  const ArchPeak* a = arch_peak(major, minor);
  if (!a || sms <= 0 || !(sm_clock_mhz > 0)) return 0;
  const double per = type == GemmType::fp32 ? a->fp32_flop_per_clk_sm : a->bf16_flop_per_clk_sm;
  return sms * sm_clock_mhz * 1e6 * per;
}

double memory_peak_bytes(int bus_width_bits, double memory_clock_mhz) {
  if (bus_width_bits <= 0 || !(memory_clock_mhz > 0)) return 0;
  return bus_width_bits * memory_clock_mhz * 1e6 * 2 / 8;
}

std::string arch_name(int major, int minor) {
  const std::string sm = "sm_" + std::to_string(major) + std::to_string(minor);
  const ArchPeak* a = arch_peak(major, minor);
  return a ? sm + " " + a->name : sm + " (not in the table)";
}

}  // namespace commscope::model
