// Unit tests of the tie rule: percentiles by nearest rank, when one time is clearly below
// another (measured spreads, unknown spreads), noisy equal algorithms coming out as ties, and
// verdicts merged into size ranges.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <stdexcept>
#include <vector>

#include "commscope/analysis/fastest.hpp"
#include "commscope/common/stats.hpp"

namespace ca = commscope::analysis;
using Kind = ca::Verdict::Kind;

namespace {

// The suite's one percentile (commscope/common/stats.hpp), as the tie rule uses it.
TEST(Fastest, NearestRankPercentiles) {
  const std::vector<double> ten = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10};
  EXPECT_EQ(commscope::stats::nearest_rank(ten, 0.1), 1);  // rank ceil(1) = 1
  EXPECT_EQ(commscope::stats::nearest_rank(ten, 0.9), 9);
  EXPECT_EQ(commscope::stats::nearest_rank(ten, 0.5), 5);
  EXPECT_EQ(commscope::stats::nearest_rank(ten, 0), 1);
  EXPECT_EQ(commscope::stats::nearest_rank(ten, 1), 10);
  EXPECT_EQ(commscope::stats::nearest_rank(ten, 1.5), 10);                              // clamped
  EXPECT_TRUE(std::isnan(commscope::stats::nearest_rank(std::vector<double>{}, 0.5)));  // none: NaN, never 0
  EXPECT_TRUE(std::isnan(commscope::stats::mean(std::vector<double>{})));
  EXPECT_EQ(commscope::stats::median({4, 1, 3, 2}), 2.5);
  const auto spread = ca::p10_p90({10, 3, 7, 1, 9, 2, 8, 4, 6, 5});  // any order
  ASSERT_TRUE(spread);
  EXPECT_EQ(spread->lo, 1);
  EXPECT_EQ(spread->hi, 9);
  EXPECT_FALSE(ca::p10_p90({1, 2}));  // below kMinSpreadValues: unknown
  const auto h = ca::hull(ca::Interval{1, 3}, ca::Interval{2, 5});
  EXPECT_EQ(h->lo, 1);
  EXPECT_EQ(h->hi, 5);
  EXPECT_EQ(ca::hull(std::nullopt, ca::Interval{2, 5})->lo, 2);
  EXPECT_FALSE(ca::hull(std::nullopt, std::nullopt));
}

TEST(Fastest, ClearlyFaster) {
  const ca::Timed a{"a", 10, ca::Interval{9, 11}}, b{"b", 13, ca::Interval{12, 14}}, c{"c", 12, ca::Interval{10.5, 13}};
  EXPECT_TRUE(ca::clearly_faster(a, b));   // 11 < 12: apart
  EXPECT_FALSE(ca::clearly_faster(a, c));  // 11 >= 10.5: overlap
  EXPECT_FALSE(ca::clearly_faster(b, a));  // slower is never clearly faster
  // Spread unknown on either side: only kUnknownSpreadFactor (2x) counts.
  const ca::Timed u1{"u1", 10, std::nullopt}, u2{"u2", 19.9, std::nullopt}, u3{"u3", 20, std::nullopt};
  EXPECT_FALSE(ca::clearly_faster(u1, u2));
  EXPECT_TRUE(ca::clearly_faster(u1, u3));
  EXPECT_FALSE(ca::clearly_faster(a, u2));
  EXPECT_TRUE(ca::clearly_faster(a, ca::Timed{"x", 25, std::nullopt}));
}

// Two algorithms with the same true time and 10% per-call noise, 20 samples each: whichever has
// the lower median, their p10-p90 intervals overlap, so no seed names a winner.
TEST(Fastest, NoisyEqualAlgorithmsTie) {
  std::mt19937_64 rng(7);
  std::normal_distribution<double> z(0.0, 1.0);
  auto measure = [&](const char* name, double t) {
    std::vector<double> samples;
    for (int i = 0; i < 20; ++i) samples.push_back(t * (1 + 0.1 * z(rng)));
    std::vector<double> sorted = samples;
    std::sort(sorted.begin(), sorted.end());
    return ca::Timed{name, commscope::stats::nearest_rank(sorted, 0.5), ca::p10_p90(samples)};
  };
  for (int trial = 0; trial < 200; ++trial) {
    const std::vector<ca::Timed> c = {measure("ring", 100), measure("tree", 100), measure("rhd", 300)};
    const ca::Verdict v = ca::fastest(c);
    ASSERT_EQ(v.kind, Kind::tie) << trial;
    ASSERT_EQ(v.names.size(), 2u);  // rhd, 3x slower, is not in the tie
    EXPECT_EQ(v.names[0], "ring");
    EXPECT_EQ(v.names[1], "tree");
  }
  // 30% apart with 2% noise: a winner.
  const std::vector<ca::Timed> apart = {measure("ring", 100), {"tree", 130, ca::Interval{127, 133}}};
  EXPECT_EQ(ca::fastest(apart), (ca::Verdict{Kind::winner, {"ring"}}));
}

TEST(Fastest, VerdictsAndTheirText) {
  const std::vector<ca::Timed> c = {
      {"ring", 12, ca::Interval{11, 13}}, {"tree", 10, ca::Interval{9, 11.5}}, {"rhd", 30, ca::Interval{29, 31}}};
  const ca::Verdict v = ca::fastest(c);
  EXPECT_EQ(v, (ca::Verdict{Kind::tie, {"ring", "tree"}}));  // in the candidates' order
  EXPECT_EQ(ca::verdict_text(v), "tie (ring, tree)");
  const std::vector<ca::Timed> no_fit = {{"ring", 12, std::nullopt}, {"mpi", NAN, std::nullopt}};
  EXPECT_EQ(ca::verdict_text(ca::fastest(no_fit)), "unknown (no fit for mpi)");
  // One algorithm without a fit does not void the others' verdict: it is left out, and said so.
  const std::vector<ca::Timed> one_unfit = {
      {"ring", 10, ca::Interval{9, 11}}, {"rhd", NAN, std::nullopt}, {"tree", 30, ca::Interval{29, 31}}};
  EXPECT_EQ(ca::fastest(one_unfit), (ca::Verdict{Kind::winner, {"ring"}, {"rhd"}}));
  EXPECT_EQ(ca::verdict_text(ca::fastest(one_unfit)), "ring (rhd not judged: no fit)");
  EXPECT_THROW(ca::fastest(std::vector<ca::Timed>{}), std::invalid_argument);
}

TEST(Fastest, DescribeMergesSizesWithTheSameVerdict) {
  const ca::Verdict ring{Kind::winner, {"ring"}}, tie{Kind::tie, {"ring", "tree"}}, rhd{Kind::winner, {"rhd"}};
  const std::vector<double> sizes = {8, 16, 32, 64, 128, 256};
  const std::vector<ca::Verdict> v = {ring, ring, tie, tie, rhd, rhd};
  EXPECT_EQ(ca::describe_verdicts(sizes, v),
            "ring below 32 B, tie (ring, tree) from 32 B to 128 B, rhd from 128 B (to 256 B, the largest size)");
  // A verdict of the largest size alone is said of that size, not of sizes above it.
  EXPECT_EQ(ca::describe_verdicts(std::span(sizes).first(5), std::span(v).first(5)),
            "ring below 32 B, tie (ring, tree) from 32 B to 128 B, rhd at 128 B, the largest size");
  EXPECT_EQ(ca::describe_verdicts(std::span(sizes).first(2), std::span(v).first(2)), "ring fastest at all sizes");
  EXPECT_EQ(ca::describe_verdicts(std::span(sizes).subspan(2, 2), std::span(v).subspan(2, 2)),
            "tie (ring, tree) at all sizes");
  // Which of the tied is ahead does not split a range: the names keep the candidates' order.
  const std::vector<ca::Timed> ring_ahead = {{"ring", 10, ca::Interval{9, 12}}, {"tree", 11, ca::Interval{10, 12}}};
  const std::vector<ca::Timed> tree_ahead = {{"ring", 11, ca::Interval{10, 12}}, {"tree", 10, ca::Interval{9, 12}}};
  const std::vector<ca::Verdict> both = {ca::fastest(ring_ahead), ca::fastest(tree_ahead)};
  EXPECT_EQ(ca::describe_verdicts(std::span(sizes).first(2), both), "tie (ring, tree) at all sizes");
  EXPECT_THROW(ca::describe_verdicts(sizes, std::span(v).first(2)), std::invalid_argument);
  EXPECT_THROW(ca::describe_verdicts(std::vector<double>{16, 8}, std::span(v).first(2)), std::invalid_argument);
}

}  // namespace
