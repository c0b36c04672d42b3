// The GPU peaks against the datasheets' figures of known devices.
#include <gtest/gtest.h>

#include "commscope/model/gpu_peaks.hpp"

namespace commscope::model {
namespace {

TEST(GpuPeaks, A100) {
  // 108 SMs at 1410 MHz: 312 TFLOP/s bf16 dense, 19.5 fp32.
  EXPECT_NEAR(gemm_peak_flops(8, 0, 108, 1410, GemmType::bf16) / 1e12, 312, 0.5);
  EXPECT_NEAR(gemm_peak_flops(8, 0, 108, 1410, GemmType::fp32) / 1e12, 19.5, 0.05);
}

TEST(GpuPeaks, H100Sxm) {
  // The datasheet's 989.4 TFLOP/s dense bf16 is 132 SMs at 1830 MHz; at the 1980 MHz that
  // nvidia-smi reports as clocks.max.sm the same rate gives 1070. fp32: 67 TFLOP/s at 1980 MHz.
  EXPECT_NEAR(gemm_peak_flops(9, 0, 132, 1830, GemmType::bf16) / 1e12, 989.4, 0.5);
  EXPECT_NEAR(gemm_peak_flops(9, 0, 132, 1980, GemmType::bf16) / 1e12, 1070.5, 0.5);
  EXPECT_NEAR(gemm_peak_flops(9, 0, 132, 1980, GemmType::fp32) / 1e12, 66.9, 0.1);
}

TEST(GpuPeaks, OtherArchitectures) {
  EXPECT_NEAR(gemm_peak_flops(7, 0, 80, 1530, GemmType::fp32) / 1e12, 15.7, 0.05);   // V100
  EXPECT_EQ(gemm_peak_flops(7, 0, 80, 1530, GemmType::bf16), 0);                     // no bf16
  EXPECT_NEAR(gemm_peak_flops(8, 6, 84, 1740, GemmType::bf16) / 1e12, 149.7, 0.1);   // A40
  EXPECT_NEAR(gemm_peak_flops(8, 9, 142, 2520, GemmType::bf16) / 1e12, 366.4, 0.5);  // L40S
  EXPECT_NEAR(gemm_peak_flops(8, 9, 128, 2520, GemmType::fp32) / 1e12, 82.6, 0.1);   // RTX 4090
}

TEST(GpuPeaks, UnknownIsZero) {
  EXPECT_EQ(gemm_peak_flops(10, 0, 148, 1965, GemmType::bf16), 0);  // Blackwell: no cited per-SM rate
  EXPECT_EQ(gemm_peak_flops(7, 5, 40, 1590, GemmType::fp32), 0);
  EXPECT_EQ(gemm_peak_flops(8, 0, 0, 1410, GemmType::bf16), 0);
  EXPECT_EQ(gemm_peak_flops(8, 0, 108, 0, GemmType::bf16), 0);
  EXPECT_EQ(arch_name(7, 5), "sm_75 (not in the table)");
  EXPECT_EQ(arch_name(9, 0), "sm_90 Hopper (H100, H200)");
}

TEST(GpuPeaks, Memory) {
  EXPECT_NEAR(memory_peak_bytes(5120, 1215) / 1e9, 1555.2, 0.1);  // A100 40GB HBM2
  EXPECT_NEAR(memory_peak_bytes(5120, 2619) / 1e9, 3352.3, 0.1);  // H100 SXM HBM3
  EXPECT_NEAR(memory_peak_bytes(384, 10501) / 1e9, 1008.1, 0.1);  // RTX 4090 GDDR6X
  EXPECT_EQ(memory_peak_bytes(0, 1215), 0);
}

}  // namespace
}  // namespace commscope::model
