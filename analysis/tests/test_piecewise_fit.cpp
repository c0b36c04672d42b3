// Unit tests of the piecewise alpha-beta fits on synthetic curves: a clean two-regime curve is
// cut at its switch with R^2 near 1 per regime, a straight line (exact or noisy) is never cut,
// Open MPI's jump from 1.4 ms at 8 MiB to 73 ms at 32 MiB gets its own regime.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <stdexcept>
#include <vector>

#include "commscope/analysis/piecewise_fit.hpp"

namespace ca = commscope::analysis;

namespace {

constexpr double kMiB = 1024.0 * 1024.0;

// t = alpha + beta S below `switch_bytes` (inclusive), alpha2 + beta2 S above, on 8 B .. 64 MiB
// by factors of 2 (24 sizes), each time times (1 + noise z).
std::vector<ca::Sample> curve(double alpha, double beta, double switch_bytes, double alpha2, double beta2,
                              double noise = 0, unsigned seed = 1) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> z(0.0, 1.0);
  std::vector<ca::Sample> out;
  for (double s = 8; s <= 64 * kMiB; s *= 2) {
    const double t = s <= switch_bytes ? alpha + beta * s : alpha2 + beta2 * s;
    out.push_back({s, t * (1.0 + noise * z(rng))});
  }
  return out;
}

std::vector<ca::Sample> line(double alpha, double beta, double noise = 0, unsigned seed = 1) {
  return curve(alpha, beta, 1e300, 0, 0, noise, seed);
}

TEST(PiecewiseFit, CleanTwoRegimeCurveSplitsAtTheSwitch) {
  // 2 us + S / 10 GB/s up to 1 MiB (beta 1e-4 us/B), then 500 us + S / 0.5 GB/s (2e-3 us/B).
  const auto regimes = ca::fit_piecewise(curve(2, 1e-4, kMiB, 500, 2e-3));
  ASSERT_EQ(regimes.size(), 2u);
  EXPECT_EQ(regimes[0].from_bytes, 8);
  EXPECT_EQ(regimes[0].to_bytes, kMiB);
  EXPECT_EQ(regimes[1].from_bytes, 2 * kMiB);
  EXPECT_EQ(regimes[1].to_bytes, 64 * kMiB);
  EXPECT_EQ(regimes[0].last + 1, regimes[1].first);
  for (const auto& r : regimes) {
    EXPECT_GT(r.fit.r_squared, 0.9999);
    EXPECT_EQ(r.quality, ca::FitQuality::fits);
  }
  EXPECT_NEAR(regimes[0].fit.alpha_us, 2, 1e-6);
  EXPECT_NEAR(regimes[0].fit.bandwidth_gbps, 10, 1e-6);
  EXPECT_NEAR(regimes[1].fit.alpha_us, 500, 1e-6);
  EXPECT_NEAR(regimes[1].fit.bandwidth_gbps, 0.5, 1e-6);
}

TEST(PiecewiseFit, StraightLineIsNotSplit) {
  const auto exact = ca::fit_piecewise(line(3, 2e-4));
  ASSERT_EQ(exact.size(), 1u);
  EXPECT_EQ(exact[0].first, 0u);
  EXPECT_EQ(exact[0].last, 23u);
  EXPECT_NEAR(exact[0].fit.r_squared, 1, 1e-12);
  // Noise cut into regimes would be noise fitted: 3% and 10% relative noise, many seeds.
  for (double noise : {0.03, 0.1})
    for (unsigned seed = 1; seed <= 40; ++seed)
      EXPECT_EQ(ca::fit_piecewise(line(3, 2e-4, noise, seed)).size(), 1u) << "noise " << noise << " seed " << seed;
}

TEST(PiecewiseFit, ProtocolJumpOfOpenMpi) {
  // 1 us + S / 6 GB/s up to 8 MiB (1.4 ms there), then S / 0.46 GB/s (73 ms at 32 MiB), 3% noise.
  const auto samples = curve(1, 1.0 / 6e3, 8 * kMiB, 0, 1.0 / 460, 0.03, 3);
  EXPECT_LT(ca::fit_alpha_beta(samples).r_squared, 0.9);  // one line does not fit
  const auto regimes = ca::fit_piecewise(samples);
  ASSERT_GE(regimes.size(), 2u);
  EXPECT_EQ(regimes.back().from_bytes, 16 * kMiB);
  EXPECT_EQ(regimes[regimes.size() - 2].to_bytes, 8 * kMiB);
  for (const auto& r : regimes) EXPECT_NE(r.quality, ca::FitQuality::poor) << r.from_bytes;
  EXPECT_NEAR(regimes.back().fit.bandwidth_gbps, 0.46, 0.05);
}

TEST(PiecewiseFit, ThreeRegimes) {
  // Eager (1 us, 5 GB/s) to 16 KiB, rendezvous (20 us, 8 GB/s) to 4 MiB, a slow path above.
  std::vector<ca::Sample> s;
  for (const auto& x : curve(1, 2e-4, 16 * 1024, 20, 1.25e-4)) s.push_back(x);
  for (auto& x : s)
    if (x.bytes > 4 * kMiB) x.time_us = 2000 + 1e-3 * x.bytes;
  const auto regimes = ca::fit_piecewise(s);
  ASSERT_EQ(regimes.size(), 3u);
  EXPECT_EQ(regimes[0].to_bytes, 16 * 1024);
  EXPECT_EQ(regimes[1].to_bytes, 4 * kMiB);
  // At most max_regimes; fewer sizes than two regimes need: one.
  EXPECT_LE(ca::fit_piecewise(s, {.max_regimes = 2}).size(), 2u);
  EXPECT_EQ(ca::fit_piecewise(std::span(s).first(5)).size(), 1u);
  EXPECT_EQ(ca::fit_piecewise(std::span(s).first(2)).size(), 1u);
}

TEST(PiecewiseFit, QualityOfAFit) {
  const std::vector<ca::Sample> noisy_flat = {{8, 5.2}, {16, 4.6}, {32, 5.5}, {64, 4.8}, {128, 5.0}};
  ca::AlphaBetaFit f = ca::fit_alpha_beta(noisy_flat);
  EXPECT_LT(f.r_squared, 0.9);  // the variation is noise: R^2 says nothing
  EXPECT_EQ(ca::fit_quality(f, noisy_flat), ca::FitQuality::flat);
  f.r_squared = 0.95;
  EXPECT_EQ(ca::fit_quality(f, noisy_flat), ca::FitQuality::fits);
  // Noise of +-40%: not flat within 15%, and R^2 low: no line is stated.
  const std::vector<ca::Sample> scattered = {{8, 5}, {16, 8}, {32, 4}, {64, 7.5}, {128, 4.5}};
  EXPECT_EQ(ca::fit_quality(ca::fit_alpha_beta(scattered), scattered), ca::FitQuality::poor);
  // A rising line with R^2 < 0.9 is not flat: the later times are far from alpha.
  const std::vector<ca::Sample> rising = {{100, 10}, {200, 16}, {300, 12}, {400, 20}, {500, 15}};
  const ca::AlphaBetaFit r = ca::fit_alpha_beta(rising);
  EXPECT_LT(r.r_squared, 0.9);
  EXPECT_EQ(ca::fit_quality(r, rising), ca::FitQuality::poor);
  EXPECT_EQ(ca::fit_quality_name(ca::FitQuality::poor), "does not fit");
  EXPECT_EQ(ca::fit_quality_name(ca::FitQuality::flat), "flat");
}

TEST(PiecewiseFit, RegimeAtAndBadInput) {
  const auto regimes = ca::fit_piecewise(curve(2, 1e-4, kMiB, 500, 2e-3));
  ASSERT_EQ(regimes.size(), 2u);
  EXPECT_EQ(&ca::regime_at(regimes, 1), &regimes[0]);
  EXPECT_EQ(&ca::regime_at(regimes, 1.4 * kMiB), &regimes[0]);  // nearer 1 MiB than 2 MiB in log
  EXPECT_EQ(&ca::regime_at(regimes, 1.5 * kMiB), &regimes[1]);
  EXPECT_EQ(&ca::regime_at(regimes, 1e12), &regimes[1]);
  EXPECT_THROW(ca::regime_at(std::vector<ca::Regime>{}, 1), std::invalid_argument);

  const std::vector<ca::Sample> descending = {{16, 1}, {8, 1}, {32, 2}};
  EXPECT_THROW(ca::fit_piecewise(descending), std::invalid_argument);
  const std::vector<ca::Sample> zero_time = {{8, 1}, {16, 0}, {32, 2}};
  EXPECT_THROW(ca::fit_piecewise(zero_time), std::invalid_argument);
  EXPECT_THROW(ca::fit_piecewise(std::vector<ca::Sample>{{8, 1}}), std::invalid_argument);
  EXPECT_THROW(ca::fit_piecewise(line(1, 1e-4), {.min_points = 1}), std::invalid_argument);
}

}  // namespace
