// The device kernels' element arithmetic (device_math.cuh), compiled for the host, against the
// host reference (reduce_host, divide_host, half.hpp) bit for bit: every f16 value, the rounding
// boundaries of f32 -> f16/bf16, and every (type, op) on random bits and special values.
// On a GPU the same source runs the same integer and IEEE operations, except that the
// hardware's own NaN results may carry another payload or sign. A NaN's sign and payload are
// not defined for a + b either (the host compiler may commute the operands, and x86 returns the
// first NaN operand), so a NaN matches any NaN.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "commscope/collectives/half.hpp"
#include "commscope/collectives/reduce.hpp"
#include "device_math.cuh"

namespace commscope {
namespace {

std::uint32_t bits(float f) {
  return devmath::float_bits(f);
}

TEST(DeviceMath, F16ToF32EveryValue) {
  for (std::uint32_t h = 0; h <= 0xffffu; ++h) {
    const auto v = static_cast<std::uint16_t>(h);
    ASSERT_EQ(bits(devmath::f16_to_f32(v)), bits(f16_to_f32(v))) << std::hex << h;
  }
}

TEST(DeviceMath, Bf16ToF32EveryValue) {
  for (std::uint32_t h = 0; h <= 0xffffu; ++h) {
    const auto v = static_cast<std::uint16_t>(h);
    ASSERT_EQ(bits(devmath::bf16_to_f32(v)), bits(bf16_to_f32(v))) << std::hex << h;
  }
}

// Floats around every rounding decision: all signs, exponents and high mantissa bits, with
// the dropped low bits at and beside the halfway points of f16 (13 bits) and bf16 (16 bits).
std::vector<std::uint32_t> boundary_floats() {
  std::vector<std::uint32_t> out;
  const std::uint32_t lows[] = {0, 1, 0x0fff, 0x1000, 0x1001, 0x1fff, 0x2000, 0x3000, 0x7fff, 0x8000, 0x8001, 0xffff};
  for (std::uint32_t sign = 0; sign < 2; ++sign)
    for (std::uint32_t exp = 0; exp < 256; ++exp)
      for (std::uint32_t high = 0; high < 128; ++high)
        for (std::uint32_t low : lows) out.push_back(sign << 31 | exp << 23 | high << 16 | low);
  std::mt19937 rng(7);
  for (int i = 0; i < (1 << 21); ++i) out.push_back(static_cast<std::uint32_t>(rng()));
  return out;
}

TEST(DeviceMath, F32ToHalvesRoundLikeTheHost) {
  for (std::uint32_t x : boundary_floats()) {
    const float f = devmath::bits_float(x);
    ASSERT_EQ(devmath::f32_to_f16(f), f32_to_f16(f)) << std::hex << x;
    ASSERT_EQ(devmath::f32_to_bf16(f), f32_to_bf16(f)) << std::hex << x;
  }
}

// Runs the kernels' element functions over whole arrays, as the kernels do.
struct HostReduce {
  void* dst;
  const void* a;
  const void* b;
  std::size_t count;
  template <typename Codec, typename Op>
  void run() const {
    using S = typename Codec::storage;
    for (std::size_t i = 0; i < count; ++i)
      static_cast<S*>(dst)[i] = devmath::combine<Codec, Op>(static_cast<const S*>(a)[i], static_cast<const S*>(b)[i]);
  }
};

struct HostDivide {
  void* buf;
  std::size_t count;
  int divisor;
  template <typename Codec>
  void run() const {
    using S = typename Codec::storage;
    for (std::size_t i = 0; i < count; ++i)
      static_cast<S*>(buf)[i] = devmath::divide_one<Codec>(static_cast<S*>(buf)[i], divisor);
  }
};

template <typename T>
void put(std::vector<std::byte>& v, std::size_t i, T x) {
  std::memcpy(v.data() + i * sizeof(T), &x, sizeof(T));
}

// Random bits, with special values of the type at the front (so that each meets the others).
std::vector<std::byte> sample(DataType t, std::size_t n, std::uint32_t seed) {
  std::vector<std::byte> v(n * type_size(t));
  std::mt19937 rng(seed);
  for (std::byte& b : v) b = static_cast<std::byte>(rng() & 0xffu);
  std::vector<double> specials = {0.0,
                                  -0.0,
                                  1.0,
                                  -1.0,
                                  0.5,
                                  3.0,
                                  -7.25,
                                  65504.0,
                                  65520.0,
                                  1e-7,
                                  -6e-8,
                                  1e30,
                                  std::numeric_limits<double>::infinity(),
                                  -std::numeric_limits<double>::infinity(),
                                  std::numeric_limits<double>::quiet_NaN()};
  for (std::size_t i = 0; i < specials.size() && i < n; ++i) {
    const double s = specials[(i + seed) % specials.size()];
    switch (t) {
      case DataType::f32:
        put(v, i, static_cast<float>(s));
        break;
      case DataType::f64:
        put(v, i, s);
        break;
      case DataType::f16:
        put(v, i, f32_to_f16(static_cast<float>(s)));
        break;
      case DataType::bf16:
        put(v, i, f32_to_bf16(static_cast<float>(s)));
        break;
      case DataType::i32: {
        const std::int32_t ints[] = {0, 1, -1, std::numeric_limits<std::int32_t>::min(),
                                     std::numeric_limits<std::int32_t>::max()};
        put(v, i, ints[i % 5]);
        break;
      }
      case DataType::i64: {
        const std::int64_t ints[] = {0, 1, -1, std::numeric_limits<std::int64_t>::min(),
                                     std::numeric_limits<std::int64_t>::max()};
        put(v, i, ints[i % 5]);
        break;
      }
      case DataType::u8: {
        const std::uint8_t ints[] = {0, 1, 127, 128, 255};
        put(v, i, ints[i % 5]);
        break;
      }
      case DataType::i8: {
        const std::int8_t ints[] = {0, 1, -1, -128, 127};
        put(v, i, ints[i % 5]);
        break;
      }
      case DataType::u32: {
        const std::uint32_t ints[] = {0, 1, 0x7fffffffu, 0x80000000u, 0xffffffffu};
        put(v, i, ints[i % 5]);
        break;
      }
      case DataType::u64: {
        const std::uint64_t ints[] = {0, 1, std::uint64_t{1} << 63, (std::uint64_t{1} << 63) - 1, ~std::uint64_t{0}};
        put(v, i, ints[i % 5]);
        break;
      }
    }
  }
  return v;
}

bool is_nan(const std::byte* p, DataType t) {
  switch (t) {
    case DataType::f32: {
      float f;
      std::memcpy(&f, p, sizeof f);
      return f != f;
    }
    case DataType::f64: {
      double d;
      std::memcpy(&d, p, sizeof d);
      return d != d;
    }
    case DataType::f16:
    case DataType::bf16: {
      std::uint16_t h;
      std::memcpy(&h, p, sizeof h);
      const float f = t == DataType::f16 ? f16_to_f32(h) : bf16_to_f32(h);
      return f != f;
    }
    default:
      return false;
  }
}

// The first element whose bits differ (a NaN matches any NaN), or -1.
long first_difference(const std::vector<std::byte>& want, const std::vector<std::byte>& got, DataType t) {
  const std::size_t w = type_size(t);
  for (std::size_t i = 0; i + w <= want.size(); i += w) {
    if (std::memcmp(&want[i], &got[i], w) == 0) continue;
    if (is_nan(&want[i], t) && is_nan(&got[i], t)) continue;
    return static_cast<long>(i / w);
  }
  return -1;
}

TEST(DeviceMath, ReduceMatchesHostEveryTypeAndOp) {
  constexpr std::size_t n = 4099;
  for (DataType t : kAllDataTypes) {
    const std::vector<std::byte> a = sample(t, n, 1), b = sample(t, n, 2);
    for (ReduceOp op : kAllReduceOps) {
      std::vector<std::byte> want(a.size()), got(a.size());
      reduce_host(want.data(), a.data(), b.data(), n, t, op);
      const HostReduce f{got.data(), a.data(), b.data(), n};
      ASSERT_TRUE(devmath::dispatch_reduce(t, op, f));
      EXPECT_EQ(first_difference(want, got, t), -1) << to_string(t) << " " << to_string(op);
    }
  }
}

TEST(DeviceMath, DivideMatchesHostEveryType) {
  constexpr std::size_t n = 4099;
  for (DataType t : kAllDataTypes) {
    for (int divisor : {1, 2, 3, 5, 7, 8, 255}) {
      std::vector<std::byte> want = sample(t, n, 3), got = want;
      divide_host(want.data(), n, t, divisor);
      const HostDivide f{got.data(), n, divisor};
      ASSERT_TRUE(devmath::dispatch_type(t, f));
      EXPECT_EQ(first_difference(want, got, t), -1) << to_string(t) << " / " << divisor;
    }
  }
}

TEST(DeviceMath, InvalidEnumValuesAreRefused) {
  const HostReduce r{nullptr, nullptr, nullptr, 0};
  EXPECT_FALSE(devmath::dispatch_reduce(static_cast<DataType>(99), ReduceOp::sum, r));
  EXPECT_FALSE(devmath::dispatch_reduce(DataType::f32, static_cast<ReduceOp>(99), r));
  const HostDivide d{nullptr, 0, 1};
  EXPECT_FALSE(devmath::dispatch_type(static_cast<DataType>(99), d));
}

}  // namespace
}  // namespace commscope
