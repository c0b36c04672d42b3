// f16 and bf16 conversions: every f16 value, rounding against the compiler's _Float16.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "commscope/collectives/half.hpp"

using namespace commscope;

TEST(Half, EveryF16SurvivesARoundTripThroughF32) {
  for (std::uint32_t h = 0; h < 65536; ++h) {
    const float f = f16_to_f32(static_cast<std::uint16_t>(h));
    if (std::isnan(f)) {
      EXPECT_TRUE(std::isnan(f16_to_f32(f32_to_f16(f)))) << h;
    } else {
      EXPECT_EQ(f32_to_f16(f), h) << "f16 bits " << h << " -> " << f;
    }
  }
}

#ifdef __FLT16_MAX__
TEST(Half, F32ToF16RoundsLikeTheCompiler) {
  std::mt19937 rng(7);
  std::vector<float> values = {0.0f,
                               -0.0f,
                               65504.0f,
                               65519.99f,
                               65520.0f,
                               1e-8f,
                               5.96e-8f,
                               2.98e-8f,
                               2.99e-8f,
                               6.1e-5f,
                               -6.1e-5f,
                               std::numeric_limits<float>::infinity(),
                               1.0f + 0x1p-11f,
                               1.0f + 0x1p-11f + 0x1p-23f,
                               1.0f + 3 * 0x1p-11f};
  for (int i = 0; i < 200000; ++i) {
    std::uint32_t bits = rng();
    float f;
    std::memcpy(&f, &bits, 4);
    if (!std::isnan(f)) values.push_back(f);
  }
  for (float f : values) {
    const auto want = static_cast<_Float16>(f);
    std::uint16_t want_bits;
    std::memcpy(&want_bits, &want, 2);
    EXPECT_EQ(f32_to_f16(f), want_bits) << f;
  }
}
#endif

TEST(Half, Bf16RoundsToNearestEven) {
  EXPECT_EQ(f32_to_bf16(1.0f), 0x3f80);
  EXPECT_EQ(f32_to_bf16(1.0f + 0x1p-8f), 0x3f80);             // halfway, even stays
  EXPECT_EQ(f32_to_bf16(1.0f + 0x1p-7f + 0x1p-8f), 0x3f82);   // halfway, odd rounds up
  EXPECT_EQ(f32_to_bf16(1.0f + 0x1p-8f + 0x1p-20f), 0x3f81);  // above halfway
  EXPECT_TRUE(std::isnan(bf16_to_f32(f32_to_bf16(std::numeric_limits<float>::quiet_NaN()))));
  EXPECT_EQ(bf16_to_f32(f32_to_bf16(-3.5f)), -3.5f);
}
