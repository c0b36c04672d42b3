// Unit tests that need no MPI launcher: conversions, reduction kernels, names, partitions,
// cost models, argument validation and the correctness-data checker itself.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "../src/algorithms/common.hpp"
#include "commscope/collectives/check_data.hpp"
#include "commscope/collectives/collectives.hpp"
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

TEST(Names, ParseAndPrintRoundTripAndErrorsListValidNames) {
  for (DataType t : kAllDataTypes) EXPECT_EQ(parse_datatype(to_string(t)), t);
  for (ReduceOp o : kAllReduceOps) EXPECT_EQ(parse_reduce_op(to_string(o)), o);
  for (Collective c : kAllCollectives) EXPECT_EQ(parse_collective(to_string(c)), c);
  try {
    parse_datatype("f8");
    FAIL() << "no exception";
  } catch (const UnknownName& e) {
    EXPECT_NE(std::string(e.what()).find("f32, f64, f16, bf16, i32, i64, u8, i8, u32, u64"), std::string::npos)
        << e.what();
  }
  try {
    find_algorithm("butterfly");
    FAIL() << "no exception";
  } catch (const UnknownName& e) {
    EXPECT_NE(std::string(e.what()).find("mpi, ring, tree, rhd"), std::string::npos) << e.what();
  }
  EXPECT_EQ(find_algorithm("rhd").name(), "rhd");
}

TEST(Formulas, BusBandwidthFactorsAndSizes) {
  EXPECT_DOUBLE_EQ(busbw_factor(Collective::allreduce, 8), 2.0 * 7 / 8);
  EXPECT_DOUBLE_EQ(busbw_factor(Collective::allgather, 4), 0.75);
  EXPECT_DOUBLE_EQ(busbw_factor(Collective::reducescatter, 5), 0.8);
  EXPECT_DOUBLE_EQ(busbw_factor(Collective::alltoall, 2), 0.5);
  EXPECT_DOUBLE_EQ(busbw_factor(Collective::reduce, 7), 1.0);
  EXPECT_DOUBLE_EQ(busbw_factor(Collective::broadcast, 3), 1.0);
  EXPECT_DOUBLE_EQ(busbw_factor(Collective::allreduce, 1), 0.0);
  EXPECT_EQ(collective_bytes(Collective::allgather, 10, DataType::f64, 3), 240u);
  EXPECT_EQ(collective_bytes(Collective::allreduce, 10, DataType::f16, 3), 20u);
}

TEST(Formulas, AlphaBetaCostsMatchTheTextbook) {
  const AlgoOptions o;
  auto cost = [&](std::string_view algo, Collective c, int p) { return *find_algorithm(algo).cost(c, p, 1e6, o); };
  const Cost ring = cost("ring", Collective::allreduce, 4);
  EXPECT_DOUBLE_EQ(ring.alpha, 6);
  EXPECT_DOUBLE_EQ(ring.beta, 1.5);
  EXPECT_DOUBLE_EQ(ring.gamma, 0.75);
  const Cost rab = cost("rhd", Collective::allreduce, 8);  // 2 lg p a + 2(p-1)/p nB + (p-1)/p nG
  EXPECT_DOUBLE_EQ(rab.alpha, 6);
  EXPECT_DOUBLE_EQ(rab.beta, 1.75);
  EXPECT_DOUBLE_EQ(rab.gamma, 0.875);
  const Cost tree = cost("tree", Collective::allreduce, 5);  // 2 ceil(lg p)(a + nB) + ceil(lg p) nG
  EXPECT_DOUBLE_EQ(tree.alpha, 6);
  EXPECT_DOUBLE_EQ(tree.beta, 6);
  EXPECT_DOUBLE_EQ(tree.gamma, 3);
  const Cost rdb = cost("rhd", Collective::allgather, 16);  // lg p a + (p-1)/p nB
  EXPECT_DOUBLE_EQ(rdb.alpha, 4);
  EXPECT_DOUBLE_EQ(rdb.beta, 15.0 / 16);
  EXPECT_DOUBLE_EQ(cost("tree", Collective::broadcast, 8).beta, 3);
  EXPECT_FALSE(find_algorithm("mpi").cost(Collective::allreduce, 4, 1e6, o).has_value());
  EXPECT_FALSE(find_algorithm("tree").cost(Collective::alltoall, 4, 1e6, o).has_value());
  EXPECT_NEAR(ring.seconds(1e6, 1e-6, 1e-9, 1e-10), 6e-6 + 1.5e-3 + 0.75e-4, 1e-12);
}

TEST(Partition, BlocksCoverTheArrayAndDifferByAtMostOne) {
  for (std::size_t count : {0u, 1u, 7u, 100u, 1000003u}) {
    for (int parts = 1; parts <= 9; ++parts) {
      const detail::Blocks b{count, parts};
      EXPECT_EQ(b.offset(0), 0u);
      EXPECT_EQ(b.offset(parts), count);
      for (int i = 0; i < parts; ++i) {
        EXPECT_LE(b.size(i), count / static_cast<std::size_t>(parts) + 1);
        EXPECT_GE(b.size(i), count / static_cast<std::size_t>(parts));
      }
    }
  }
}

TEST(Partition, FoldMapsEveryRankAndKeepsRelativeZero) {
  for (int p = 1; p <= 70; ++p) {
    const detail::Fold f(p);
    EXPECT_EQ(f.p2 + f.rem, p);
    EXPECT_EQ(f.p2 & (f.p2 - 1), 0);
    EXPECT_FALSE(f.is_extra(0));
    int extras = 0;
    for (int r = 0; r < p; ++r) {
      if (f.is_extra(r)) {
        ++extras;
        EXPECT_FALSE(f.is_extra(r - 1));
      } else {
        EXPECT_EQ(f.rel_of(f.virt(r)), r);
      }
    }
    EXPECT_EQ(extras, f.rem);
    EXPECT_EQ(f.first_block(0), 0);
    EXPECT_EQ(f.last_block(f.p2 - 1), p);
    for (int v = 0; v + 1 < f.p2; ++v) EXPECT_EQ(f.last_block(v), f.first_block(v + 1));
  }
}

TEST(Validate, RejectsBadArgumentsWithAMessage) {
  float buf[64] = {};
  auto msg = [](const CollArgs& a, int rank, int n) -> std::string {
    try {
      validate(a, rank, n);
    } catch (const InvalidArgument& e) {
      return e.what();
    }
    return "";
  };
  EXPECT_NE(
      msg({Collective::allreduce, nullptr, buf, 4, DataType::f32, ReduceOp::sum, 0}, 0, 2).find("send buffer is null"),
      std::string::npos);
  EXPECT_NE(
      msg({Collective::allreduce, buf, nullptr, 4, DataType::f32, ReduceOp::sum, 0}, 0, 2).find("recv buffer is null"),
      std::string::npos);
  EXPECT_EQ(msg({Collective::allreduce, nullptr, nullptr, 0, DataType::f32, ReduceOp::sum, 0}, 0, 2), "");
  EXPECT_NE(
      msg({Collective::reduce, buf, buf + 8, 4, DataType::f32, ReduceOp::sum, 2}, 0, 2).find("root 2 out of range"),
      std::string::npos);
  EXPECT_NE(msg({Collective::broadcast, buf, buf, 4, DataType::f32, ReduceOp::sum, -1}, 0, 2).find("root -1"),
            std::string::npos);
  EXPECT_EQ(msg({Collective::reduce, buf, nullptr, 4, DataType::f32, ReduceOp::sum, 1}, 0, 2), "");     // non-root recv
  EXPECT_EQ(msg({Collective::broadcast, nullptr, buf, 4, DataType::f32, ReduceOp::sum, 1}, 0, 2), "");  // non-root send
  EXPECT_NE(msg({Collective::allgather, buf, buf, std::size_t{1} << 62, DataType::f64, ReduceOp::sum, 0}, 0, 4)
                .find("count overflow"),
            std::string::npos);
  EXPECT_NE(msg({Collective::allreduce, buf, buf + 1, 8, DataType::f32, ReduceOp::sum, 0}, 0, 2).find("overlap"),
            std::string::npos);
  EXPECT_EQ(msg({Collective::allgather, buf + 8, buf, 8, DataType::f32, ReduceOp::sum, 0}, 1, 4), "");  // in place
  EXPECT_NE(msg({Collective::allgather, buf, buf, 8, DataType::f32, ReduceOp::sum, 0}, 1, 4).find("overlap"),
            std::string::npos);
  EXPECT_EQ(msg({Collective::reducescatter, buf, buf + 16, 8, DataType::f32, ReduceOp::sum, 0}, 2, 4), "");  // in place
  EXPECT_NE(msg({Collective::allreduce, buf, buf + 8, 4, static_cast<DataType>(42), ReduceOp::sum, 0}, 0, 2)
                .find("invalid datatype"),
            std::string::npos);
  EXPECT_NE(msg({Collective::allreduce, buf, buf + 8, 4, DataType::f32, static_cast<ReduceOp>(9), 0}, 0, 2)
                .find("invalid reduction op"),
            std::string::npos);
}

// The checker, exercised without MPI: simulate each collective on 5 "ranks" in memory.
TEST(CheckData, SimulatedReductionsPassAndCorruptionIsCaught) {
  const int n = 5;
  for (DataType t : kAllDataTypes) {
    for (ReduceOp op : kAllReduceOps) {
      const check::Spec s{Collective::allreduce, t, op, 999, 0, n, 77};
      const std::size_t es = type_size(t);
      std::vector<std::byte> acc(999 * es), in(999 * es);
      check::fill_send(s, 3, acc.data());  // any order of ranks must give the same result
      for (int r : {0, 4, 1, 2}) {
        check::fill_send(s, r, in.data());
        reduce_host(acc.data(), acc.data(), in.data(), 999, t, op);
      }
      if (op == ReduceOp::avg) divide_host(acc.data(), 999, t, n);
      const check::Result ok = check::check_recv(s, 2, acc.data());
      EXPECT_EQ(ok.wrong, 0u) << to_string(t) << " " << to_string(op) << " first " << ok.first_wrong << " want "
                              << ok.expected << " got " << ok.got;
      acc[500 * es] = static_cast<std::byte>(static_cast<unsigned>(acc[500 * es]) ^ 0x40u);
      EXPECT_EQ(check::check_recv(s, 2, acc.data()).wrong, 1u) << to_string(t) << " " << to_string(op);
    }
  }
}

TEST(CheckData, GatherLayoutsAreChecked) {
  const int n = 3;
  const check::Spec s{Collective::allgather, DataType::bf16, ReduceOp::sum, 10, 0, n, 5};
  std::vector<std::uint16_t> out(30);
  for (int r = 0; r < n; ++r) check::fill_send(s, r, out.data() + 10 * r);
  EXPECT_EQ(check::check_recv(s, 1, out.data()).wrong, 0u);
  std::swap_ranges(out.begin(), out.begin() + 10, out.begin() + 10);  // blocks of ranks 0 and 1 mixed up
  EXPECT_GE(check::check_recv(s, 1, out.data()).wrong, 5u);
}
