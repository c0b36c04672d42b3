// Unit tests that need no MPI launcher: conversions, reduction kernels, names, partitions,
// cost models, argument validation and the correctness-data checker itself.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "../src/algorithms/common.hpp"
#include "../src/shm_segment.hpp"
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
    EXPECT_NE(std::string(e.what()).find("mpi, ring, tree, rhd, shm"), std::string::npos) << e.what();
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
  // nccl-tests: gather, scatter, alltoallv (n-1)/n; sendrecv 1.
  EXPECT_DOUBLE_EQ(busbw_factor(Collective::gather, 4), 0.75);
  EXPECT_DOUBLE_EQ(busbw_factor(Collective::scatter, 5), 0.8);
  EXPECT_DOUBLE_EQ(busbw_factor(Collective::sendrecv, 8), 1.0);
  EXPECT_DOUBLE_EQ(busbw_factor(Collective::alltoallv, 2), 0.5);
  EXPECT_EQ(collective_bytes(Collective::gather, 10, DataType::f32, 3), 120u);   // the root's output
  EXPECT_EQ(collective_bytes(Collective::scatter, 10, DataType::f32, 3), 120u);  // the root's input
  EXPECT_EQ(collective_bytes(Collective::sendrecv, 10, DataType::f32, 3), 40u);
  EXPECT_EQ(collective_bytes(Collective::alltoallv, 10, DataType::f32, 3), 40u);  // count bounds a rank's total
  EXPECT_TRUE(is_rooted(Collective::gather));
  EXPECT_TRUE(is_rooted(Collective::scatter));
  EXPECT_FALSE(is_rooted(Collective::sendrecv));
  EXPECT_FALSE(has_in_place(Collective::alltoallv));
  EXPECT_TRUE(has_in_place(Collective::sendrecv));
}

TEST(Algorithms, EachHasTheCollectivesItCanShape) {
  auto has = [](std::string_view algo, Collective c) { return find_algorithm(algo).supports(c); };
  for (Collective c : kAllCollectives) {
    EXPECT_TRUE(has("mpi", c)) << to_string(c);
    EXPECT_TRUE(has("ring", c)) << to_string(c);
  }
  EXPECT_TRUE(has("tree", Collective::gather));
  EXPECT_TRUE(has("tree", Collective::scatter));
  for (Collective c : {Collective::sendrecv, Collective::alltoallv, Collective::alltoall}) {
    EXPECT_FALSE(has("tree", c)) << to_string(c);
    EXPECT_FALSE(has("rhd", c)) << to_string(c);
  }
  EXPECT_FALSE(has("rhd", Collective::gather));
  EXPECT_FALSE(has("rhd", Collective::scatter));
  // shm has every collective but alltoallv.
  for (Collective c : kAllCollectives) EXPECT_EQ(has("shm", c), c != Collective::alltoallv) << to_string(c);
  // hier: the five that reduce or replicate (two levels help them; the others move each block once).
  for (Collective c : kAllCollectives) {
    const bool five = c == Collective::allreduce || c == Collective::allgather || c == Collective::reducescatter ||
                      c == Collective::reduce || c == Collective::broadcast;
    EXPECT_EQ(has("hier", c), five) << to_string(c);
  }
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
  const Cost chain = cost("ring", Collective::gather, 5);  // (p-1)a + (p-1)/p nB
  EXPECT_DOUBLE_EQ(chain.alpha, 4);
  EXPECT_DOUBLE_EQ(chain.beta, 0.8);
  const Cost binomial = cost("tree", Collective::scatter, 5);  // ceil(lg p) a + (p-1)/p nB
  EXPECT_DOUBLE_EQ(binomial.alpha, 3);
  EXPECT_DOUBLE_EQ(binomial.beta, 0.8);
  EXPECT_DOUBLE_EQ(cost("ring", Collective::sendrecv, 4).alpha, 1);
  EXPECT_DOUBLE_EQ(cost("ring", Collective::sendrecv, 4).beta, 1);
  EXPECT_FALSE(find_algorithm("ring").cost(Collective::alltoallv, 4, 1e6, o).has_value());
  EXPECT_NEAR(ring.seconds(1e6, 1e-6, 1e-9, 1e-10), 6e-6 + 1.5e-3 + 0.75e-4, 1e-12);
  // shm: one-shot below the switch (k a + nB + (p-1) nG), two-shot from it on
  // (2k a + (2p-1)/p nB + (p-1)/p nG), k = steps of 256 KiB.
  const Algorithm& shm = find_algorithm("shm");
  // The switch by rank count (64 KiB for 2 or oversubscribed ranks, 4 KiB for 3, 2 KiB from 4
  // on) unless set.
  EXPECT_EQ(shm_two_shot_switch(o, 2, false), std::size_t{64} << 10);
  EXPECT_EQ(shm_two_shot_switch(o, 3, false), std::size_t{4} << 10);
  EXPECT_EQ(shm_two_shot_switch(o, 4, false), std::size_t{2} << 10);
  EXPECT_EQ(shm_two_shot_switch(o, 8, true), std::size_t{64} << 10);
  AlgoOptions fixed = o;
  fixed.shm_two_shot_bytes = 100;
  EXPECT_EQ(shm_two_shot_switch(fixed, 8, false), 100u);
  EXPECT_EQ(shm.cost(Collective::allreduce, 4, 2048, o)->alpha, 2);  // two-shot from 2 KiB at 4 ranks
  const Cost one = *shm.cost(Collective::allreduce, 4, 1024, o);
  EXPECT_DOUBLE_EQ(one.alpha, 1);
  EXPECT_DOUBLE_EQ(one.beta, 1);
  EXPECT_DOUBLE_EQ(one.gamma, 3);
  const Cost two = *shm.cost(Collective::allreduce, 4, 3 << 20, o);
  EXPECT_DOUBLE_EQ(two.alpha, 24);
  EXPECT_DOUBLE_EQ(two.beta, 7.0 / 4);
  EXPECT_DOUBLE_EQ(two.gamma, 0.75);
  // allgather: a block of n/p per rank in steps of 256 KiB; alltoall: n/p in chunk/p pieces.
  const Cost ag = *shm.cost(Collective::allgather, 4, 4 << 20, o);
  EXPECT_DOUBLE_EQ(ag.alpha, 4);
  EXPECT_DOUBLE_EQ(ag.beta, 1);
  const Cost a2a = *shm.cost(Collective::alltoall, 4, 4 << 20, o);
  EXPECT_DOUBLE_EQ(a2a.alpha, 16);
  EXPECT_DOUBLE_EQ(a2a.beta, 7.0 / 4);
  EXPECT_FALSE(shm.cost(Collective::alltoallv, 4, 1e6, o).has_value());
  // Direct (from 1 MiB here; never by default): one handoff, every byte copied once;
  // alltoall has no direct form; allreduce's has two handoffs and reads twice (p-1)/p.
  AlgoOptions direct = o;
  direct.shm_direct_bytes = std::size_t{1} << 20;
  const Cost dar = *shm.cost(Collective::allreduce, 4, 3 << 20, direct);
  EXPECT_DOUBLE_EQ(dar.alpha, 2);
  EXPECT_DOUBLE_EQ(dar.beta, 1.5);
  EXPECT_DOUBLE_EQ(dar.gamma, 0.75);
  EXPECT_DOUBLE_EQ(shm.cost(Collective::allreduce, 4, 512 << 10, direct)->alpha, 4);  // below: two-shot steps
  const Cost dag = *shm.cost(Collective::allgather, 4, 4 << 20, direct);
  EXPECT_DOUBLE_EQ(dag.alpha, 1);
  EXPECT_DOUBLE_EQ(dag.beta, 0.75);
  EXPECT_DOUBLE_EQ(shm.cost(Collective::broadcast, 4, 4 << 20, direct)->beta, 1);
  EXPECT_DOUBLE_EQ(shm.cost(Collective::broadcast, 4, 512 << 10, direct)->alpha, 2);  // below: steps
  EXPECT_DOUBLE_EQ(shm.cost(Collective::alltoall, 4, 4 << 20, direct)->alpha, 16);
  // reducescatter reads 3 of its 4 blocks' pieces and reduces them.
  const Cost drs = *shm.cost(Collective::reducescatter, 4, 4 << 20, direct);
  EXPECT_DOUBLE_EQ(drs.alpha, 1);
  EXPECT_DOUBLE_EQ(drs.beta, 0.75);
  EXPECT_DOUBLE_EQ(drs.gamma, 0.75);
  // hier, one rank per node: the cross algorithm (ring from 256 KiB, rhd or tree below).
  const Algorithm& hier = find_algorithm("hier");
  EXPECT_DOUBLE_EQ(hier.cost(Collective::allreduce, 4, 1e6, o)->alpha, 6);   // ring 2(p-1)
  EXPECT_DOUBLE_EQ(hier.cost(Collective::allreduce, 8, 1024, o)->alpha, 6);  // rhd 2 lg p
  EXPECT_DOUBLE_EQ(hier.cost(Collective::broadcast, 8, 1024, o)->alpha, 3);  // tree ceil(lg p)
  EXPECT_FALSE(hier.cost(Collective::alltoall, 4, 1e6, o).has_value());
  // 2 nodes x 2 ranks, 64 MiB allreduce: shm reducescatter (256 steps of 128 KiB blocks) and
  // allgather (128 steps), ring allreduce of a half in each cross group: the node's link carries
  // 2(N-1)/N = 1 of the array (a flat ring across the two nodes: 2(p-1)/p = 1.5).
  const HierCost h = hier_cost(Collective::allreduce, 2, 2, 64 << 20, o);
  EXPECT_DOUBLE_EQ(h.intra.alpha, 384);
  EXPECT_DOUBLE_EQ(h.intra.beta, 2);
  EXPECT_DOUBLE_EQ(h.intra.gamma, 0.5);
  EXPECT_DOUBLE_EQ(h.inter.alpha, 2);
  EXPECT_DOUBLE_EQ(h.inter.beta, 1);
  EXPECT_DOUBLE_EQ(h.inter.gamma, 0.25);
  // One node: shm's cost, nothing between nodes.
  const HierCost one_node = hier_cost(Collective::broadcast, 1, 4, 4 << 20, o);
  EXPECT_DOUBLE_EQ(one_node.intra.beta, 1);
  EXPECT_DOUBLE_EQ(one_node.inter.alpha, 0);
}

// The shm measured choice: each path three times (direct first, alternating), then the faster by
// the slowest rank's estimate, the loser every 32nd call; the second call replaces the first,
// then a faster call is taken whole and a slower one a quarter.
TEST(ShmPathChoice, ExploresBothThenTakesTheFasterAndRevisitsTheLoser) {
  using detail::shm_choose_direct;
  using detail::shm_record_call;
  detail::ShmPathTimes t;
  std::vector<bool> taken;
  // Direct costs 100 us on this rank, the slots 50 us; a peer reports the slots at 300 us.
  for (int call = 0; call < 64; ++call) {
    const bool d = shm_choose_direct(t, std::max<std::uint64_t>(t.slot_ns, t.slot_ns ? 300000 : 0), t.direct_ns);
    taken.push_back(d);
    shm_record_call(t, d, d ? 100000 : 50000);
  }
  for (int call = 0; call < 6; ++call) EXPECT_EQ(taken[static_cast<std::size_t>(call)], call % 2 == 0) << call;
  EXPECT_EQ(t.slot_ns, 50000u);
  EXPECT_EQ(t.direct_ns, 100000u);
  // From call 6 the slowest rank's slots (300 us) lose to direct (100 us), but calls 32 of
  // them revisit the slots.
  for (int call = 6; call < 64; ++call) EXPECT_EQ(taken[static_cast<std::size_t>(call)], call != 32) << call;
  // Nothing faster locally wins if the slowest rank says otherwise.
  detail::ShmPathTimes u{.slot_ns = 10, .direct_ns = 20, .slot_calls = 3, .direct_calls = 4};
  EXPECT_FALSE(shm_choose_direct(u, 10, 20));
  EXPECT_TRUE(shm_choose_direct(u, 30, 20));
  shm_record_call(u, true, 100);  // slower: a quarter of the way
  EXPECT_EQ(u.direct_ns, (3 * 20 + 100) / 4u);
  EXPECT_EQ(u.direct_calls, 5u);
  shm_record_call(u, true, 5);  // faster: taken whole
  EXPECT_EQ(u.direct_ns, 5u);
  // A path's first call (first touches) is replaced by its second, not averaged with it.
  detail::ShmPathTimes v;
  shm_record_call(v, false, 9000);
  shm_record_call(v, false, 1000);
  EXPECT_EQ(v.slot_ns, 1000u);
  shm_record_call(v, false, 3000);
  EXPECT_EQ(v.slot_ns, (3 * 1000 + 3000) / 4u);
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
  // gather/scatter: the root's big side, in place at the root's block; the other side only at the root.
  EXPECT_EQ(msg({Collective::gather, buf + 16, buf, 8, DataType::f32, ReduceOp::sum, 2}, 2, 4), "");  // in place
  EXPECT_NE(msg({Collective::gather, buf + 8, buf, 8, DataType::f32, ReduceOp::sum, 2}, 2, 4).find("overlap"),
            std::string::npos);
  EXPECT_EQ(msg({Collective::gather, buf, nullptr, 8, DataType::f32, ReduceOp::sum, 2}, 1, 4), "");  // non-root recv
  EXPECT_NE(msg({Collective::gather, buf, nullptr, 8, DataType::f32, ReduceOp::sum, 1}, 1, 4).find("recv buffer"),
            std::string::npos);
  EXPECT_EQ(msg({Collective::scatter, buf, buf + 8, 8, DataType::f32, ReduceOp::sum, 1}, 1, 4), "");  // in place
  EXPECT_EQ(msg({Collective::scatter, nullptr, buf, 8, DataType::f32, ReduceOp::sum, 1}, 0, 4), "");  // non-root send
  EXPECT_NE(msg({Collective::scatter, buf, buf, 8, DataType::f32, ReduceOp::sum, 99}, 0, 4).find("root 99"),
            std::string::npos);
  EXPECT_EQ(msg({Collective::sendrecv, buf, buf, 8, DataType::f32, ReduceOp::sum, 0}, 0, 4), "");  // in place
  EXPECT_NE(msg({Collective::sendrecv, buf, buf + 4, 8, DataType::f32, ReduceOp::sum, 0}, 0, 4).find("overlap"),
            std::string::npos);
}

TEST(Validate, AlltoallvCountsAndDisplacements) {
  float buf[64] = {};
  auto msg = [&](std::size_t count, std::vector<std::size_t> sc, std::vector<std::size_t> sd,
                 std::vector<std::size_t> rc, std::vector<std::size_t> rd, const float* send = nullptr,
                 float* recv = nullptr) -> std::string {
    CollArgs a{
        Collective::alltoallv, send ? send : buf, recv ? recv : buf + 32, count, DataType::f32, ReduceOp::sum, 0};
    a.send_counts = sc, a.send_displs = sd, a.recv_counts = rc, a.recv_displs = rd;
    try {
      validate(a, 1, 3);
    } catch (const InvalidArgument& e) {
      return e.what();
    }
    return "";
  };
  EXPECT_EQ(msg(6, {1, 2, 3}, {0, 1, 3}, {3, 2, 1}, {0, 3, 5}), "");
  EXPECT_EQ(msg(0, {}, {}, {}, {}), "");  // nothing to move
  EXPECT_NE(msg(6, {1, 2}, {0, 1}, {3, 2, 1}, {0, 3, 5}).find("send counts and displacements need 3 entries"),
            std::string::npos);
  EXPECT_NE(msg(5, {1, 2, 3}, {0, 1, 3}, {3, 2, 0}, {0, 3, 5}).find("more than count 5"), std::string::npos);
  EXPECT_NE(msg(0, {1, 0, 0}, {0, 0, 0}, {0, 0, 0}, {0, 0, 0}).find("more than count 0"), std::string::npos);
  EXPECT_NE(msg(6, {1, 1, 3}, {0, 1, 3}, {3, 2, 1}, {0, 3, 5}).find("sends itself 1 elements but receives 2"),
            std::string::npos);
  EXPECT_NE(msg(6, {1, 2, 3}, {0, 1, SIZE_MAX - 1}, {3, 2, 1}, {0, 3, 5}).find("address space"), std::string::npos);
  EXPECT_NE(msg(6, {1, 2, 3}, {0, 1, 3}, {3, 2, 1}, {0, 3, 5}, buf, buf + 4).find("overlap"), std::string::npos);
  EXPECT_EQ(msg(6, {1, 2, 3}, {0, 1, 3}, {3, 2, 1}, {0, 3, 5}, buf, buf + 6), "");  // adjacent, not overlapping
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
      // A high bit of the element's top byte: a large change for any value, 0 included.
      acc[500 * es + es - 1] = static_cast<std::byte>(static_cast<unsigned>(acc[500 * es + es - 1]) ^ 0x40u);
      EXPECT_EQ(check::check_recv(s, 2, acc.data()).wrong, 1u) << to_string(t) << " " << to_string(op);
    }
  }
}

TEST(CheckData, AlltoallvPatternSumsToTheTotalInSharesOfTheDistance) {
  for (int n = 1; n <= 9; ++n) {
    for (std::size_t total : {0u, 1u, 7u, 1000u, 1000003u}) {
      std::size_t sum = 0;
      for (int d = 0; d < n; ++d) {
        const std::size_t share = check::alltoallv_share(total, n, d);
        sum += share;
        if (n > 1) {  // within one element of d / (n(n-1)/2) of the total
          const double exact = static_cast<double>(total) * d / (n * (n - 1) / 2.0);
          EXPECT_LT(std::fabs(static_cast<double>(share) - exact), 1.0) << n << " ranks, " << total << ", d " << d;
        }
      }
      EXPECT_EQ(sum, total) << n << " ranks";
      if (n > 1) {
        EXPECT_EQ(check::alltoallv_share(total, n, 0), 0u);
      }
      for (int r = 0; r < n; ++r) {  // what r receives from q is what q sends r
        const check::AlltoallvLayout l = check::alltoallv_layout(total, n, r);
        EXPECT_EQ(l.recv_displs.back() + l.recv_counts.back(), total);
        for (int q = 0; q < n; ++q)
          EXPECT_EQ(l.recv_counts[static_cast<std::size_t>(q)],
                    check::alltoallv_layout(total, n, q).send_counts[static_cast<std::size_t>(r)]);
      }
    }
  }
  // 4 ranks, 60 elements: distances 1, 2, 3 get 10, 20, 30 (nccl-tests' d / (n(n-1)/2)).
  EXPECT_EQ(check::alltoallv_layout(60, 4, 1).send_counts, (std::vector<std::size_t>{30, 0, 10, 20}));
  EXPECT_EQ(check::alltoallv_share(std::size_t{1} << 62, 3, 2), (std::size_t{1} << 62) / 3 * 2 + 1);
  EXPECT_THROW(check::alltoallv_share(10, 3, 3), InvalidArgument);
}

// Each new collective simulated in memory on 4 "ranks": the right data passes, a misplaced block does not.
TEST(CheckData, GatherScatterSendrecvAlltoallvLayouts) {
  const int n = 4;
  const std::size_t count = 6;
  auto spec = [&](Collective c) { return check::Spec{c, DataType::i32, ReduceOp::sum, count, 2, n, 9}; };
  auto input = [&](const check::Spec& s, int r) {
    std::vector<std::int32_t> v(check::send_elements(s));
    check::fill_send(s, r, v.data());
    return v;
  };
  const check::Spec g = spec(Collective::gather);
  std::vector<std::int32_t> out;
  for (int r = 0; r < n; ++r) {
    const std::vector<std::int32_t> block = input(g, r);
    out.insert(out.end(), block.begin(), block.end());
  }
  EXPECT_EQ(check::check_recv(g, 2, out.data()).wrong, 0u);
  EXPECT_EQ(check::check_recv(g, 1, nullptr).wrong, 0u);  // no output off the root
  std::swap(out[0], out[count]);
  EXPECT_GE(check::check_recv(g, 2, out.data()).wrong, 1u);

  const check::Spec sc = spec(Collective::scatter);
  const std::vector<std::int32_t> all = input(sc, 2);
  EXPECT_EQ(check::check_recv(sc, 3, all.data() + 3 * count).wrong, 0u);
  EXPECT_GE(check::check_recv(sc, 3, all.data() + 2 * count).wrong, 1u);

  const check::Spec sr = spec(Collective::sendrecv);
  EXPECT_EQ(check::check_recv(sr, 0, input(sr, 3).data()).wrong, 0u);  // from the left, wrapping
  EXPECT_GE(check::check_recv(sr, 0, input(sr, 1).data()).wrong, 1u);

  const check::Spec v = spec(Collective::alltoallv);
  const int me = 1;
  const check::AlltoallvLayout mine = check::alltoallv_layout(count, n, me);
  std::vector<std::int32_t> got(count);
  for (int q = 0; q < n; ++q) {
    const check::AlltoallvLayout theirs = check::alltoallv_layout(count, n, q);
    const auto qi = static_cast<std::size_t>(q), mi = static_cast<std::size_t>(me);
    const std::vector<std::int32_t> in = input(v, q);
    std::copy_n(in.begin() + static_cast<std::ptrdiff_t>(theirs.send_displs[mi]), mine.recv_counts[qi],
                got.begin() + static_cast<std::ptrdiff_t>(mine.recv_displs[qi]));
  }
  EXPECT_EQ(check::check_recv(v, me, got.data()).wrong, 0u);
  std::reverse(got.begin(), got.end());
  EXPECT_GE(check::check_recv(v, me, got.data()).wrong, 1u);
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

// Rank counts far beyond what the tests launch, simulated in memory. For every type and op the
// reduction stays exact whatever the combining order (rank order, reverse order, pairs of
// pairs); for sum and prod a result that misses any one rank, or holds one rank twice in place
// of its neighbour, is caught. 1024 elements hold every rank's window at 1024 ranks (128
// elements would). The old data (base(g) + (q mod 17)) failed here: at 512 ranks its bf16 and
// u8 inputs were all 0, so a missing rank passed.
TEST(CheckData, LargeRankCountsStayExactAndSeeEveryRank) {
  const std::size_t count = 1024;
  for (int n : {1, 2, 3, 7, 9, 17, 34, 100, 128, 129, 256, 257, 1000, 1024}) {
    const auto un = static_cast<std::size_t>(n);
    for (DataType t : kAllDataTypes) {
      const std::size_t es = type_size(t), bytes = count * es;
      std::vector<std::byte> in(un * bytes), prefix((un + 1) * bytes), suffix((un + 1) * bytes), out(bytes);
      auto at = [&](std::vector<std::byte>& v, std::size_t r) { return v.data() + r * bytes; };
      auto combine = [&](std::byte* dst, const std::byte* a, const std::byte* b, ReduceOp op) {
        reduce_host(dst, a, b, count, t, op);
      };
      for (ReduceOp op : kAllReduceOps) {
        const check::Spec s{Collective::allreduce, t, op, count, 0, n, 1234567};
        const std::string what =
            std::string(to_string(t)) + " " + std::string(to_string(op)) + " on " + std::to_string(n) + " ranks";
        for (int r = 0; r < n; ++r) check::fill_send(s, r, at(in, static_cast<std::size_t>(r)));
        // prefix[r]: ranks 0..r-1 combined in order (r >= 1); suffix[r]: ranks r..n-1, from the end.
        std::memcpy(at(prefix, 1), at(in, 0), bytes);
        for (std::size_t r = 1; r < un; ++r) combine(at(prefix, r + 1), at(prefix, r), at(in, r), op);
        std::memcpy(at(suffix, un - 1), at(in, un - 1), bytes);
        for (std::size_t r = un - 1; r-- > 0;) combine(at(suffix, r), at(in, r), at(suffix, r + 1), op);
        std::vector<std::byte> tree(in);
        for (std::size_t step = 1; step < un; step *= 2)
          for (std::size_t r = 0; r + step < un; r += 2 * step)
            combine(at(tree, r), at(tree, r), at(tree, r + step), op);
        auto wrong = [&](const std::byte* result) {
          std::memcpy(out.data(), result, bytes);
          if (op == ReduceOp::avg) divide_host(out.data(), count, t, n);
          return check::check_recv(s, 0, out.data());
        };
        for (const std::byte* result : {at(prefix, un), at(suffix, 0), at(tree, 0)}) {
          const check::Result r = wrong(result);
          ASSERT_EQ(r.wrong, 0u) << what << ": element " << r.first_wrong << " want " << r.expected << " got " << r.got;
        }
        if (n == 1 || (op != ReduceOp::sum && op != ReduceOp::prod)) continue;
        std::vector<std::byte> without(bytes), twice(bytes);
        auto drop = [&](std::size_t q) {  // all ranks but q
          if (q == 0) return std::memcpy(without.data(), at(suffix, 1), bytes), void();
          if (q == un - 1) return std::memcpy(without.data(), at(prefix, un - 1), bytes), void();
          combine(without.data(), at(prefix, q), at(suffix, q + 1), op);
        };
        for (std::size_t q = 0; q < un; ++q) {
          drop(q);
          ASSERT_GT(wrong(without.data()).wrong, 0u) << what << ": rank " << q << " missing passed";
          drop((q + 1) % un);  // rank q in place of its neighbour
          combine(twice.data(), without.data(), at(in, q), op);
          ASSERT_GT(wrong(twice.data()).wrong, 0u) << what << ": rank " << q << " twice passed";
        }
      }
    }
  }
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
