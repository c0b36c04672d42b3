// The doctor's outlier rule (outliers.hpp): logs, median, MAD with a floor of ln 1.2, 3.5 sigmas.
#include <gtest/gtest.h>

#include <cmath>
#include <cstddef>
#include <limits>
#include <random>
#include <vector>

#include "commscope/analysis/outliers.hpp"

namespace ca = commscope::analysis;

namespace {
// The indices the rule names.
std::vector<std::size_t> named(const std::vector<double>& values, ca::Worse worse) {
  std::vector<std::size_t> out;
  for (const ca::Outlier& o : ca::outliers(values, worse)) out.push_back(o.index);
  return out;
}
}  // namespace

TEST(Outliers, NamesTheSlowOneOnly) {
  const std::vector<double> bw{1.0, 1.05, 0.95, 0.1, 1.02, 0.98};
  EXPECT_EQ(named(bw, ca::Worse::low), std::vector<std::size_t>{3});
  EXPECT_TRUE(ca::outliers(bw, ca::Worse::high).empty());  // 0.1 is not "high"
}

TEST(Outliers, FloorNeedsAFactorOf189) {
  // Identical peers: the MAD is 0, the floor decides: 1.2^3.5 = 1.892x.
  EXPECT_NEAR(std::pow(ca::kOutlierFloorRatio, ca::kOutlierSigmas), 1.892, 0.001);
  EXPECT_TRUE(ca::outliers({1, 1, 1, 1, 1 / 1.85}, ca::Worse::low).empty());
  EXPECT_EQ(named({1, 1, 1, 1, 1 / 1.95}, ca::Worse::low), std::vector<std::size_t>{4});
  EXPECT_EQ(named({20, 20, 20, 40}, ca::Worse::high), std::vector<std::size_t>{3});
  EXPECT_TRUE(ca::outliers({20, 20, 20, 36}, ca::Worse::high).empty());
}

TEST(Outliers, SpreadPeersNeedALargerFactor) {
  // Peers spread over 2x: a value 3x below the median is within their spread.
  const std::vector<double> v{40, 55, 70, 80, 60, 45, 20};
  const ca::RobustSpread s = ca::robust_spread(v);
  EXPECT_GT(ca::outlier_factor(s), 3.0);
  EXPECT_TRUE(ca::outliers(v, ca::Worse::low).empty());
}

TEST(Outliers, TooFewOrUnusableValues) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  EXPECT_TRUE(ca::outliers({1, 0.01}, ca::Worse::low).empty());              // 2 values: which one is odd?
  EXPECT_TRUE(ca::outliers({1, nan, 0.01, -3, 0}, ca::Worse::low).empty());  // 2 usable
  EXPECT_EQ(named({1, nan, 1.1, 0.9, 0.01}, ca::Worse::low), std::vector<std::size_t>{4});
  EXPECT_EQ(ca::robust_spread({nan, 0}).n, 0u);
  EXPECT_TRUE(std::isnan(ca::finite_median({nan})));
  EXPECT_DOUBLE_EQ(ca::finite_median({3, nan, 1, 2, 10}), 2.5);
}

TEST(Outliers, BeyondPeersItIsNotAmong) {
  // A host judged against the links between the other hosts: with 3 hosts, one link.
  const ca::RobustSpread one_link = ca::robust_spread({10});
  EXPECT_TRUE(ca::beyond(5, one_link, ca::Worse::low));  // 2x below: past 1.89x
  EXPECT_FALSE(ca::beyond(5.5, one_link, ca::Worse::low));
  EXPECT_FALSE(ca::beyond(20, one_link, ca::Worse::low));
  EXPECT_TRUE(ca::beyond(20, one_link, ca::Worse::high));
  EXPECT_FALSE(ca::beyond(1, ca::robust_spread({}), ca::Worse::low));  // no peers
  EXPECT_FALSE(ca::beyond(std::numeric_limits<double>::quiet_NaN(), one_link, ca::Worse::low));
}

TEST(Outliers, AValueIsJudgedAgainstItsPeersNotItself) {
  // 3 nodes, two 10% either side of 1 and one 2.5x below them. Taken among all three, the slow
  // value is the median's neighbour and half the MAD: the rule would need 3.1x and names nothing.
  // Against its two peers (median 1, spread 10%) the floor decides and it is named.
  const std::vector<double> three{1.1, 0.9, 0.4};
  ASSERT_EQ(ca::outliers(three, ca::Worse::low).size(), 1u);
  EXPECT_EQ(ca::outliers(three, ca::Worse::low)[0].index, 2u);
  EXPECT_DOUBLE_EQ(ca::outliers(three, ca::Worse::low)[0].peers_median, 1.0);
  // Half of 4 nodes at half speed: each slow one against the other three (two good) is named.
  const std::vector<std::size_t> slow_half{1, 3};
  EXPECT_EQ(named({1, 0.5, 1, 0.5}, ca::Worse::low), slow_half);
  // Two of 3 at half speed: against one good and one slow peer, neither is named.
  EXPECT_TRUE(ca::outliers({1, 0.5, 0.5}, ca::Worse::low).empty());
}

TEST(Outliers, EachAgainstTheSpreadOfTheOthersExactly) {
  // outliers() works the others' spread out without building it per value: it must name what
  // robust_spread of the others and beyond() name, with their median, on sets with ties, unusable
  // values and spread peers.
  std::mt19937 gen(7);
  std::uniform_real_distribution<double> spread(0.5, 1.5), low(0.05, 0.6);
  const double nan = std::numeric_limits<double>::quiet_NaN();
  std::size_t named = 0;
  for (int trial = 0; trial < 400; ++trial) {
    const std::size_t n = 3 + static_cast<std::size_t>(trial % 23);
    std::vector<double> v(n);
    for (double& x : v) x = trial % 3 == 0 ? std::round(spread(gen) * 4) / 4 : spread(gen);  // ties every third
    v[static_cast<std::size_t>(trial) % n] *= trial % 2 ? low(gen) : 1 / low(gen);
    if (trial % 5 == 0) v[(static_cast<std::size_t>(trial) / 5) % n] = trial % 10 ? nan : 0.0;
    for (ca::Worse worse : {ca::Worse::low, ca::Worse::high}) {
      std::vector<ca::Outlier> want;
      if (ca::robust_spread(v).n >= ca::kOutlierMinValues)
        for (std::size_t i = 0; i < n; ++i) {
          std::vector<double> peers = v;
          peers.erase(peers.begin() + static_cast<std::ptrdiff_t>(i));
          const ca::RobustSpread s = ca::robust_spread(peers);
          if (ca::beyond(v[i], s, worse)) want.push_back({i, s.median});
        }
      const std::vector<ca::Outlier> got = ca::outliers(v, worse);
      named += want.size();
      ASSERT_EQ(got.size(), want.size()) << "trial " << trial;
      for (std::size_t k = 0; k < got.size(); ++k) {
        EXPECT_EQ(got[k].index, want[k].index) << "trial " << trial;
        EXPECT_EQ(got[k].peers_median, want[k].peers_median) << "trial " << trial;
      }
    }
  }
  EXPECT_GT(named, 200u);  // the sets name something, and on both sides
}
