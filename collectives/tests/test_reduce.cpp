// The host reduction kernels against scalar references, in place too; integer wrap-around and
// avg's division.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <random>
#include <vector>

#include "commscope/collectives/collectives.hpp"
#include "commscope/collectives/half.hpp"

using namespace commscope;

namespace {
double reference(ReduceOp op, double a, double b) {
  switch (op) {
    case ReduceOp::sum:
    case ReduceOp::avg:
      return a + b;
    case ReduceOp::prod:
      return a * b;
    case ReduceOp::min:
      return std::min(a, b);
    case ReduceOp::max:
      return std::max(a, b);
  }
  return 0;
}
}  // namespace

TEST(Reduce, EveryTypeAndOpMatchesScalarReferenceIncludingInPlace) {
  std::mt19937 rng(3);
  constexpr std::size_t n = 1037;  // not a multiple of any vector width
  for (DataType t : kAllDataTypes) {
    for (ReduceOp op : kAllReduceOps) {
      // Small integers keep every result exact in every type (unsigned types stay non-negative).
      const bool is_unsigned = t == DataType::u8 || t == DataType::u32 || t == DataType::u64;
      std::vector<long long> a(n), b(n);
      for (std::size_t i = 0; i < n; ++i) {
        a[i] = static_cast<long long>(rng() % 15) - (is_unsigned ? 0 : 7);
        b[i] = static_cast<long long>(rng() % 15) - (is_unsigned ? 0 : 7);
      }
      const std::size_t es = type_size(t);
      std::vector<std::byte> ba(n * es), bb(n * es), out(n * es);
      auto put = [&](std::vector<std::byte>& buf, const std::vector<long long>& v) {
        for (std::size_t i = 0; i < n; ++i) {
          switch (t) {
            case DataType::f32:
              reinterpret_cast<float*>(buf.data())[i] = static_cast<float>(v[i]);
              break;
            case DataType::f64:
              reinterpret_cast<double*>(buf.data())[i] = static_cast<double>(v[i]);
              break;
            case DataType::f16:
              reinterpret_cast<std::uint16_t*>(buf.data())[i] = f32_to_f16(static_cast<float>(v[i]));
              break;
            case DataType::bf16:
              reinterpret_cast<std::uint16_t*>(buf.data())[i] = f32_to_bf16(static_cast<float>(v[i]));
              break;
            case DataType::i32:
              reinterpret_cast<std::int32_t*>(buf.data())[i] = static_cast<std::int32_t>(v[i]);
              break;
            case DataType::i64:
              reinterpret_cast<std::int64_t*>(buf.data())[i] = v[i];
              break;
            case DataType::u8:
              reinterpret_cast<std::uint8_t*>(buf.data())[i] = static_cast<std::uint8_t>(v[i]);
              break;
            case DataType::i8:
              reinterpret_cast<std::int8_t*>(buf.data())[i] = static_cast<std::int8_t>(v[i]);
              break;
            case DataType::u32:
              reinterpret_cast<std::uint32_t*>(buf.data())[i] = static_cast<std::uint32_t>(v[i]);
              break;
            case DataType::u64:
              reinterpret_cast<std::uint64_t*>(buf.data())[i] = static_cast<std::uint64_t>(v[i]);
              break;
          }
        }
      };
      auto get = [&](const std::vector<std::byte>& buf, std::size_t i) -> double {
        switch (t) {
          case DataType::f32:
            return reinterpret_cast<const float*>(buf.data())[i];
          case DataType::f64:
            return reinterpret_cast<const double*>(buf.data())[i];
          case DataType::f16:
            return f16_to_f32(reinterpret_cast<const std::uint16_t*>(buf.data())[i]);
          case DataType::bf16:
            return bf16_to_f32(reinterpret_cast<const std::uint16_t*>(buf.data())[i]);
          case DataType::i32:
            return reinterpret_cast<const std::int32_t*>(buf.data())[i];
          case DataType::i64:
            return static_cast<double>(reinterpret_cast<const std::int64_t*>(buf.data())[i]);
          case DataType::u8:
            return reinterpret_cast<const std::uint8_t*>(buf.data())[i];
          case DataType::i8:
            return reinterpret_cast<const std::int8_t*>(buf.data())[i];
          case DataType::u32:
            return reinterpret_cast<const std::uint32_t*>(buf.data())[i];
          case DataType::u64:
            return static_cast<double>(reinterpret_cast<const std::uint64_t*>(buf.data())[i]);
        }
        return 0;
      };
      put(ba, a);
      put(bb, b);
      reduce_host(out.data(), ba.data(), bb.data(), n, t, op);
      reduce_host(ba.data(), ba.data(), bb.data(), n, t, op);  // in place
      for (std::size_t i = 0; i < n; ++i) {
        double want = reference(op, static_cast<double>(a[i]), static_cast<double>(b[i]));
        if (t == DataType::u8) want = static_cast<double>(static_cast<std::uint8_t>(static_cast<long long>(want)));
        ASSERT_EQ(get(out, i), want) << to_string(t) << " " << to_string(op) << " at " << i;
        ASSERT_EQ(get(ba, i), want) << "in place " << to_string(t) << " " << to_string(op);
      }
    }
  }
}

TEST(Reduce, IntegerOverflowWrapsAndDivideTruncates) {
  std::int32_t a[2] = {std::numeric_limits<std::int32_t>::max(), -7};
  std::int32_t b[2] = {1, 0};
  reduce_host(a, a, b, 2, DataType::i32, ReduceOp::sum);
  EXPECT_EQ(a[0], std::numeric_limits<std::int32_t>::min());
  divide_host(a + 1, 1, DataType::i32, 2);
  EXPECT_EQ(a[1], -3);
  std::uint8_t u[1] = {250}, v[1] = {10};
  reduce_host(u, u, v, 1, DataType::u8, ReduceOp::sum);
  EXPECT_EQ(u[0], 4);
  // The new widths: i8 wraps like i32 and min/max compare signed; u64 min/max compare unsigned.
  std::int8_t c[2] = {127, -3}, d[2] = {1, 5};
  reduce_host(c, c, d, 1, DataType::i8, ReduceOp::sum);
  EXPECT_EQ(c[0], -128);
  reduce_host(c + 1, c + 1, d + 1, 1, DataType::i8, ReduceOp::min);
  EXPECT_EQ(c[1], -3);
  std::uint64_t big[1] = {~std::uint64_t{0}}, one[1] = {1};
  reduce_host(big, big, one, 1, DataType::u64, ReduceOp::max);
  EXPECT_EQ(big[0], ~std::uint64_t{0});
  std::uint32_t w[1] = {4294967295u}, x[1] = {7};
  divide_host(w, 1, DataType::u32, 2);
  EXPECT_EQ(w[0], 2147483647u);
  reduce_host(w, w, x, 1, DataType::u32, ReduceOp::prod);
  EXPECT_EQ(w[0], 2147483647u * 7u);
  EXPECT_THROW(divide_host(u, 1, DataType::u8, 0), InvalidArgument);
}

// avg divides by the rank count, which need not fit the element type: 8-bit avg over 128 or
// 256 ranks once divided by -128 and by 0 (a crash).
TEST(Kernels, AvgDividesByRankCountsBeyondTheType) {
  std::int8_t i8[] = {100, -100, 127, -128};
  divide_host(i8, 4, DataType::i8, 128);
  EXPECT_EQ(std::vector<int>(i8, i8 + 4), (std::vector<int>{0, 0, 0, -1}));
  std::uint8_t u8[] = {255, 7};
  divide_host(u8, 2, DataType::u8, 256);
  EXPECT_EQ(std::vector<int>(u8, u8 + 2), (std::vector<int>{0, 0}));
  std::uint32_t u32[] = {4000000000u};
  divide_host(u32, 1, DataType::u32, 3);
  EXPECT_EQ(u32[0], 1333333333u);
}
