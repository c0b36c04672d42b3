// IEEE binary16 (f16) and bfloat16 (bf16) conversions, as plain integer arithmetic so that
// reduction loops over 16-bit types vectorise without F16C or AVX512-BF16. Storage is uint16_t;
// arithmetic happens in f32 (the library reduces 16-bit types in f32, rounding once per step).
#pragma once

#include <bit>
#include <cstdint>

namespace commscope {

namespace half_detail {
// Branch-free select: a when c, else b. Written with masks because GCC does not if-convert
// the float arithmetic feeding a ternary (it may trap), which would keep loops scalar.
inline std::uint32_t select(bool c, std::uint32_t a, std::uint32_t b) {
  const std::uint32_t m = 0u - static_cast<std::uint32_t>(c);
  return (a & m) | (b & ~m);
}
}  // namespace half_detail

// f16 bits -> f32, exact for every input (subnormals, infinities, NaN payload kept in the top bits).
inline float f16_to_f32(std::uint16_t h) {
  const std::uint32_t sign = static_cast<std::uint32_t>(h & 0x8000u) << 16;
  const std::uint32_t em = h & 0x7fffu;  // exponent and mantissa
  const std::uint32_t exp = em & 0x7c00u;
  // Normal numbers: move the fields into place and rebias the exponent by 127 - 15.
  const std::uint32_t normal = (em << 13) + ((127u - 15u) << 23);
  // Inf/NaN: exponent all ones in f32 too.
  const std::uint32_t infnan = (em << 13) | 0x7f800000u;
  // Subnormal f16 (exp 0): value = mantissa * 2^-24; build it in float arithmetic, exactly.
  const float sub = static_cast<float>(static_cast<std::int32_t>(em)) * 0x1p-24f;  // signed: SSE2 converts it
  const std::uint32_t subnormal = std::bit_cast<std::uint32_t>(sub);
  using half_detail::select;
  const std::uint32_t mag = select(exp == 0x7c00u, infnan, select(exp == 0, subnormal, normal));
  return std::bit_cast<float>(sign | mag);
}

// f32 -> f16 bits, round to nearest even; overflow gives infinity, NaN stays a (quiet) NaN.
inline std::uint16_t f32_to_f16(float f) {
  const std::uint32_t x = std::bit_cast<std::uint32_t>(f);
  const std::uint32_t sign = (x >> 16) & 0x8000u;
  const std::uint32_t ax = x & 0x7fffffffu;
  // Normal range: rebias, then round the 13 dropped mantissa bits to nearest even.
  const std::uint32_t odd = (ax >> 13) & 1u;
  const std::uint32_t normal = (ax - ((127u - 15u) << 23) + 0xfffu + odd) >> 13;
  // Below the smallest normal f16 (2^-14): adding 0.5 makes the FPU round the value to a
  // multiple of 2^-24 (the f16 subnormal step) in the low mantissa bits, nearest even.
  const float shifted = std::bit_cast<float>(ax) + 0.5f;
  const std::uint32_t subnormal = std::bit_cast<std::uint32_t>(shifted) - 0x3f000000u;
  // Compare as signed (ax < 2^31): baseline SSE2 has signed, not unsigned, vector compares.
  const auto sax = static_cast<std::int32_t>(ax);
  using half_detail::select;
  const std::uint32_t mag = select(sax > 0x7f800000, 0x7e00u,
                                   select(sax >= 0x477ff000, 0x7c00u,  // rounds to >= 65520: infinity
                                          select(sax < 0x38800000, subnormal, normal)));
  return static_cast<std::uint16_t>(sign | mag);
}

inline float bf16_to_f32(std::uint16_t b) {
  return std::bit_cast<float>(static_cast<std::uint32_t>(b) << 16);
}

// f32 -> bf16 bits, round to nearest even; NaN stays a quiet NaN.
inline std::uint16_t f32_to_bf16(float f) {
  const std::uint32_t x = std::bit_cast<std::uint32_t>(f);
  const std::uint32_t rounded = (x + 0x7fffu + ((x >> 16) & 1u)) >> 16;
  const std::uint32_t nan = (x >> 16) | 0x0040u;
  return static_cast<std::uint16_t>(
      half_detail::select(static_cast<std::int32_t>(x & 0x7fffffffu) > 0x7f800000, nan, rounded));
}

}  // namespace commscope
