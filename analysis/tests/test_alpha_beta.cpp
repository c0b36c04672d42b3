// Unit tests of alpha_beta: fits on exact and noisy synthetic data, the textbook curves
// (hand-computed in comments), busbw factors, name mapping, crossovers and their text.
#include <gtest/gtest.h>

#include <string>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <random>
#include <stdexcept>
#include <vector>

#include "commscope/analysis/alpha_beta.hpp"

namespace ca = commscope::analysis;
using ca::Collective;
using ca::TextbookAlgorithm;

namespace {

double rel(double got, double want) {
  return std::abs(got - want) / std::abs(want);
}

// ---------------------------------------------------------------- busbw, names

TEST(AlphaBeta, BusbwFactors) {
  EXPECT_DOUBLE_EQ(ca::busbw_factor(Collective::allreduce, 4), 1.5);  // 2 * 3/4
  EXPECT_DOUBLE_EQ(ca::busbw_factor(Collective::allgather, 4), 0.75);
  EXPECT_DOUBLE_EQ(ca::busbw_factor(Collective::reducescatter, 4), 0.75);
  EXPECT_DOUBLE_EQ(ca::busbw_factor(Collective::alltoall, 8), 0.875);
  EXPECT_DOUBLE_EQ(ca::busbw_factor(Collective::reduce, 4), 1.0);
  EXPECT_DOUBLE_EQ(ca::busbw_factor(Collective::broadcast, 4), 1.0);
  EXPECT_DOUBLE_EQ(ca::busbw_factor(Collective::allreduce, 1), 0.0);
  EXPECT_DOUBLE_EQ(ca::busbw_factor(Collective::gather, 4), 0.75);  // nccl-tests: (p-1)/p
  EXPECT_DOUBLE_EQ(ca::busbw_factor(Collective::scatter, 5), 0.8);
  EXPECT_DOUBLE_EQ(ca::busbw_factor(Collective::alltoallv, 8), 0.875);
  EXPECT_DOUBLE_EQ(ca::busbw_factor(Collective::sendrecv, 4), 1.0);
  EXPECT_THROW(ca::busbw_factor(Collective::allreduce, 0), std::invalid_argument);
}

TEST(AlphaBeta, Names) {
  for (const char* n : {"allreduce", "allgather", "reducescatter", "reduce", "broadcast", "alltoall", "gather",
                        "scatter", "sendrecv", "alltoallv"}) {
    EXPECT_EQ(ca::collective_name(ca::parse_collective(n)), n);
  }
  EXPECT_THROW(ca::parse_collective("gatherv"), std::invalid_argument);
  EXPECT_EQ(ca::textbook_algorithm_for(Collective::gather, "tree"), TextbookAlgorithm::binomial_tree);
  EXPECT_FALSE(ca::textbook_algorithm_for(Collective::gather, "ring").has_value());  // our chain: no textbook curve
  EXPECT_FALSE(ca::textbook_algorithm_for(Collective::sendrecv, "ring").has_value());
  EXPECT_FALSE(ca::textbook_algorithm_for(Collective::alltoallv, "ring").has_value());
  EXPECT_EQ(ca::textbook_algorithm_for(Collective::allreduce, "ring"), TextbookAlgorithm::ring);
  EXPECT_EQ(ca::textbook_algorithm_for(Collective::allreduce, "rhd"), TextbookAlgorithm::rabenseifner);
  EXPECT_EQ(ca::textbook_algorithm_for(Collective::allreduce, "tree"), TextbookAlgorithm::binomial_tree);
  EXPECT_EQ(ca::textbook_algorithm_for(Collective::allgather, "rhd"), TextbookAlgorithm::recursive_doubling);
  EXPECT_EQ(ca::textbook_algorithm_for(Collective::reducescatter, "rhd"), TextbookAlgorithm::recursive_halving);
  EXPECT_EQ(ca::textbook_algorithm_for(Collective::broadcast, "tree"), TextbookAlgorithm::binomial_tree);
  EXPECT_EQ(ca::textbook_algorithm_for(Collective::broadcast, "rhd"), TextbookAlgorithm::scatter_allgather);
  EXPECT_EQ(ca::textbook_algorithm_for(Collective::alltoall, "ring"), TextbookAlgorithm::pairwise_exchange);
  EXPECT_FALSE(ca::textbook_algorithm_for(Collective::allreduce, "mpi").has_value());
  EXPECT_FALSE(ca::textbook_algorithm_for(Collective::allreduce, "shm").has_value());
  EXPECT_FALSE(ca::textbook_algorithm_for(Collective::allreduce, "hier").has_value());
  EXPECT_FALSE(ca::textbook_algorithm_for(Collective::broadcast, "ring").has_value());
  EXPECT_FALSE(ca::textbook_algorithm_for(Collective::alltoall, "rhd").has_value());
  EXPECT_FALSE(ca::textbook_algorithm_for(Collective::allreduce, "nccl").has_value());
  EXPECT_THROW(ca::textbook_algorithm_for(Collective::allreduce, "bogus"), std::invalid_argument);
  EXPECT_EQ(ca::textbook_algorithm_name(TextbookAlgorithm::rabenseifner), "rabenseifner");
}

// ---------------------------------------------------------------- textbook curves

// p = 4, a = 1, B = 0.01, G = 0.001, n = 1000 bytes (nB = 10, nG = 1, (p-1)/p = 0.75, lg p = 2).
TEST(AlphaBeta, TextbookCostsByHand) {
  const int p = 4;
  const double a = 1, B = 0.01, G = 0.001, n = 1000;
  auto t = [&](Collective c, TextbookAlgorithm alg) {
    const auto terms = ca::textbook_cost(c, alg, p);
    EXPECT_TRUE(terms.has_value());
    return terms ? terms->time(a, B, G, n) : -1.0;
  };
  using A = TextbookAlgorithm;
  EXPECT_DOUBLE_EQ(t(Collective::allreduce, A::ring), 21.75);                   // 6 + 15 + 0.75
  EXPECT_DOUBLE_EQ(t(Collective::allreduce, A::rabenseifner), 19.75);           // 4 + 15 + 0.75
  EXPECT_DOUBLE_EQ(t(Collective::allreduce, A::recursive_doubling), 24.0);      // 2 (1 + 10 + 1)
  EXPECT_DOUBLE_EQ(t(Collective::allreduce, A::binomial_tree), 46.0);           // 2*2 (1 + 10) + 2*1
  EXPECT_DOUBLE_EQ(t(Collective::allgather, A::ring), 10.5);                    // 3 + 7.5
  EXPECT_DOUBLE_EQ(t(Collective::allgather, A::recursive_doubling), 9.5);       // 2 + 7.5
  EXPECT_DOUBLE_EQ(t(Collective::reducescatter, A::ring), 11.25);               // 3 + 0.75 * 11
  EXPECT_DOUBLE_EQ(t(Collective::reducescatter, A::recursive_halving), 10.25);  // 2 + 8.25
  EXPECT_DOUBLE_EQ(t(Collective::reduce, A::binomial_tree), 24.0);              // 2 (1 + 10 + 1)
  EXPECT_DOUBLE_EQ(t(Collective::reduce, A::rabenseifner), 19.75);              // 4 + 15 + 0.75
  EXPECT_DOUBLE_EQ(t(Collective::broadcast, A::binomial_tree), 22.0);           // 2 (1 + 10)
  EXPECT_DOUBLE_EQ(t(Collective::broadcast, A::scatter_allgather), 19.0);       // 4 + 15
  EXPECT_DOUBLE_EQ(t(Collective::alltoall, A::pairwise_exchange), 10.5);        // 3 + 7.5
  EXPECT_DOUBLE_EQ(t(Collective::gather, A::binomial_tree), 9.5);               // 2 + 7.5
  EXPECT_DOUBLE_EQ(t(Collective::scatter, A::binomial_tree), 9.5);              // 2 + 7.5
  EXPECT_FALSE(ca::textbook_cost(Collective::sendrecv, A::ring, p).has_value());
  EXPECT_FALSE(ca::textbook_cost(Collective::alltoallv, A::pairwise_exchange, p).has_value());
  EXPECT_FALSE(ca::textbook_cost(Collective::alltoall, A::ring, p).has_value());
  EXPECT_FALSE(ca::textbook_cost(Collective::broadcast, A::ring, p).has_value());
  // Through our names: allreduce "rhd" = Rabenseifner.
  const auto rhd = ca::textbook_time_us(Collective::allreduce, "rhd", p, n, {a, B, G});
  ASSERT_TRUE(rhd.has_value());
  EXPECT_DOUBLE_EQ(*rhd, 19.75);
  EXPECT_FALSE(ca::textbook_time_us(Collective::allreduce, "mpi", p, n, {a, B, G}).has_value());
}

TEST(AlphaBeta, TextbookCostsOddRankCounts) {
  // p = 3 Rabenseifner: p2 = 2 (lg 1, (p2-1)/p2 = 1/2) plus the fold: alpha 2+2, beta 1+2, gamma 1/2+1.
  const auto r3 = ca::textbook_cost(Collective::allreduce, TextbookAlgorithm::rabenseifner, 3);
  ASSERT_TRUE(r3.has_value());
  EXPECT_DOUBLE_EQ(r3->alpha_count, 4.0);
  EXPECT_DOUBLE_EQ(r3->beta_factor, 3.0);
  EXPECT_DOUBLE_EQ(r3->gamma_factor, 1.5);
  // p = 5 binomial broadcast: ceil(lg 5) = 3 rounds.
  const auto b5 = ca::textbook_cost(Collective::broadcast, TextbookAlgorithm::binomial_tree, 5);
  ASSERT_TRUE(b5.has_value());
  EXPECT_DOUBLE_EQ(b5->alpha_count, 3.0);
  EXPECT_DOUBLE_EQ(b5->beta_factor, 3.0);
  // p = 5 ring allreduce: 8 alpha, 8/5 beta, 4/5 gamma (exact at any p).
  const auto g5 = ca::textbook_cost(Collective::allreduce, TextbookAlgorithm::ring, 5);
  ASSERT_TRUE(g5.has_value());
  EXPECT_DOUBLE_EQ(g5->alpha_count, 8.0);
  EXPECT_DOUBLE_EQ(g5->beta_factor, 1.6);
  EXPECT_DOUBLE_EQ(g5->gamma_factor, 0.8);
  // One rank costs nothing.
  for (auto alg : {TextbookAlgorithm::ring, TextbookAlgorithm::rabenseifner, TextbookAlgorithm::recursive_doubling,
                   TextbookAlgorithm::binomial_tree}) {
    const auto t1 = ca::textbook_cost(Collective::allreduce, alg, 1);
    ASSERT_TRUE(t1.has_value());
    EXPECT_DOUBLE_EQ(t1->time(5, 1, 1, 1e6), 0.0) << ca::textbook_algorithm_name(alg);
  }
  EXPECT_THROW(ca::textbook_cost(Collective::allreduce, TextbookAlgorithm::ring, 0), std::invalid_argument);
}

// Ring vs rhd (Rabenseifner) allreduce on 8 ranks: the same bandwidth terms, alpha 14 vs 6, so rhd
// is faster by 8 alpha at every size; ring beats the binomial tree at large sizes (2(p-1)/p = 1.75
// vs 2 lg p = 6 nB) and loses at small ones (14 vs 6 alpha).
TEST(AlphaBeta, RingVersusRhdOrdering) {
  const ca::CostParams cp{10.0, 1e-4, 1e-5};
  for (double n : ca::pow2_sizes(1, 1 << 30)) {
    const double ring = *ca::textbook_time_us(Collective::allreduce, "ring", 8, n, cp);
    const double rhd = *ca::textbook_time_us(Collective::allreduce, "rhd", 8, n, cp);
    EXPECT_NEAR(ring - rhd, 80.0, 1e-6 * ring) << n;
  }
  const double small = 8, large = 1 << 28;
  EXPECT_LT(*ca::textbook_time_us(Collective::allreduce, "tree", 8, small, cp),
            *ca::textbook_time_us(Collective::allreduce, "ring", 8, small, cp));
  EXPECT_GT(*ca::textbook_time_us(Collective::allreduce, "tree", 8, large, cp),
            *ca::textbook_time_us(Collective::allreduce, "ring", 8, large, cp));
}

// ---------------------------------------------------------------- fits

std::vector<ca::Sample> synthetic(double alpha, double beta, double noise, unsigned seed, int reps = 5) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> z(0.0, 1.0);
  std::vector<ca::Sample> out;
  for (double n : ca::pow2_sizes(8, 256.0 * 1024 * 1024)) {
    for (int r = 0; r < reps; ++r) out.push_back({n, (alpha + beta * n) * (1.0 + noise * z(rng))});
  }
  return out;
}

TEST(AlphaBeta, FitExactData) {
  std::vector<ca::Sample> s = synthetic(5.0, 1e-4, 0.0, 1, 1);
  s.push_back({0.0, 5.0});  // a zero-byte call: alpha alone
  for (auto w : {ca::FitWeighting::relative, ca::FitWeighting::absolute}) {
    const ca::AlphaBetaFit f = ca::fit_alpha_beta(s, w);
    EXPECT_NEAR(f.alpha_us, 5.0, 1e-9);
    EXPECT_NEAR(f.beta_us_per_byte, 1e-4, 1e-15);
    EXPECT_NEAR(f.bandwidth_gbps, 10.0, 1e-9);  // 1e-3 / 1e-4
    EXPECT_NEAR(f.r_squared, 1.0, 1e-12);
    EXPECT_LT(f.max_relative_error, 1e-9);
    EXPECT_EQ(f.samples, s.size());
    EXPECT_EQ(f.weighting, w);
    EXPECT_NEAR(f.predict_us(1e6), 105.0, 1e-6);
  }
}

TEST(AlphaBeta, FitRecoversAlphaBetaUnderNoise) {
  struct Pair {
    double alpha_us, beta_us_per_byte;
  };
  // 10 GB/s at 5 us; 100 GB/s at 1.5 us; 1 GB/s at 50 us; 400 GB/s at 20 us.
  unsigned seed = 42;
  double weighted_alpha_error = 0, plain_alpha_error = 0;
  for (const Pair& p : {Pair{5.0, 1e-4}, Pair{1.5, 1e-5}, Pair{50.0, 1e-3}, Pair{20.0, 2.5e-6}}) {
    const auto s = synthetic(p.alpha_us, p.beta_us_per_byte, 0.03, seed++);
    const ca::AlphaBetaFit f = ca::fit_alpha_beta(s);
    const ca::AlphaBetaFit u = ca::fit_alpha_beta_unweighted(s);
    std::printf(
        "  true alpha %.3g us, beta %.3g us/B: weighted alpha %.4g beta %.4g (%.4g GB/s) R2 %.5f maxrel %.3f;"
        " unweighted alpha %.4g beta %.4g\n",
        p.alpha_us, p.beta_us_per_byte, f.alpha_us, f.beta_us_per_byte, f.bandwidth_gbps, f.r_squared,
        f.max_relative_error, u.alpha_us, u.beta_us_per_byte);
    EXPECT_LT(rel(f.alpha_us, p.alpha_us), 0.05);
    EXPECT_LT(rel(f.beta_us_per_byte, p.beta_us_per_byte), 0.05);
    EXPECT_LT(rel(f.bandwidth_gbps, 1e-3 / p.beta_us_per_byte), 0.05);
    EXPECT_GT(f.r_squared, 0.99);
    EXPECT_LT(f.max_relative_error, 0.2);  // 3% noise: a 6-sigma outlier is already 18%
    EXPECT_EQ(f.samples, 26u * 5u);        // 2^3 .. 2^28, 5 repetitions
    weighted_alpha_error += rel(f.alpha_us, p.alpha_us);
    plain_alpha_error += rel(u.alpha_us, p.alpha_us);
  }
  // Why relative weights: the plain fit's alpha is decided by the largest sizes' noise.
  std::printf("  summed relative alpha errors: weighted %.3f, plain %.3f\n", weighted_alpha_error, plain_alpha_error);
  EXPECT_GT(plain_alpha_error, 10 * weighted_alpha_error);
}

// Times that grow faster than their bytes (a cache or protocol change inside the sizes): the free
// line's intercept is negative (-491.7 us came out of a broadcast's sizes in the suite); a latency is
// never negative, so the fit is the best line with alpha >= 0, through the origin, and says so.
// Weights 1/t^2: beta = sum(x/t) / sum(x^2/t^2) over the points.
TEST(AlphaBeta, FitNeverGivesANegativeLatency) {
  const std::vector<ca::Sample> s{{1000, 1}, {2000, 3}, {4000, 8}};
  const ca::AlphaBetaFit fit = ca::fit_alpha_beta(s);
  EXPECT_EQ(fit.alpha_us, 0);
  EXPECT_TRUE(fit.no_latency_term);
  const double num = 1000.0 / 1 + 2000.0 / 3 + 4000.0 / 8;
  const double den = 1e6 / 1 + 4e6 / 9 + 16e6 / 64;
  EXPECT_DOUBLE_EQ(fit.beta_us_per_byte, num / den);
  EXPECT_DOUBLE_EQ(fit.bandwidth_gbps, 1e-3 / (num / den));
  // A line with a positive intercept is the free fit, unchanged.
  const ca::AlphaBetaFit free = ca::fit_alpha_beta({{{1000, 2}, {2000, 3}, {4000, 5}}});
  EXPECT_FALSE(free.no_latency_term);
  EXPECT_NEAR(free.alpha_us, 1, 1e-9);
}

TEST(AlphaBeta, FitRejectsBadInput) {
  const std::vector<ca::Sample> one_size = {{1024, 3.0}, {1024, 3.1}, {1024, 2.9}};
  EXPECT_THROW(ca::fit_alpha_beta(one_size), std::invalid_argument);
  EXPECT_THROW(ca::fit_alpha_beta(std::vector<ca::Sample>{}), std::invalid_argument);
  EXPECT_THROW(ca::fit_alpha_beta(std::vector<ca::Sample>{{8, 1.0}, {-16, 2.0}}), std::invalid_argument);
  EXPECT_THROW(ca::fit_alpha_beta(std::vector<ca::Sample>{{8, 1.0}, {16, NAN}}), std::invalid_argument);
  // A zero time cannot be weighted by 1/t^2, but the plain fit takes it.
  const std::vector<ca::Sample> zero_time = {{0, 0.0}, {100, 1.0}, {200, 2.0}};
  EXPECT_THROW(ca::fit_alpha_beta(zero_time), std::invalid_argument);
  const ca::AlphaBetaFit u = ca::fit_alpha_beta_unweighted(zero_time);
  EXPECT_NEAR(u.alpha_us, 0.0, 1e-12);
  EXPECT_NEAR(u.beta_us_per_byte, 0.01, 1e-12);
  // Two distinct sizes are enough: the line through them.
  const ca::AlphaBetaFit two = ca::fit_alpha_beta(std::vector<ca::Sample>{{0, 2.0}, {1000, 12.0}});
  EXPECT_NEAR(two.alpha_us, 2.0, 1e-12);
  EXPECT_NEAR(two.beta_us_per_byte, 0.01, 1e-15);
  // A flat line: beta 0, bandwidth infinite.
  const ca::AlphaBetaFit flat = ca::fit_alpha_beta(std::vector<ca::Sample>{{0, 2.0}, {1000, 2.0}});
  EXPECT_TRUE(std::isinf(flat.bandwidth_gbps));
}

// ---------------------------------------------------------------- crossovers

TEST(AlphaBeta, FormatBytes) {
  EXPECT_EQ(ca::format_bytes(0), "0 B");
  EXPECT_EQ(ca::format_bytes(512), "512 B");
  EXPECT_EQ(ca::format_bytes(1000), "1000 B");
  EXPECT_EQ(ca::format_bytes(1024), "1 KiB");
  EXPECT_EQ(ca::format_bytes(1536), "1.5 KiB");
  EXPECT_EQ(ca::format_bytes(32768), "32 KiB");
  EXPECT_EQ(ca::format_bytes(4.0 * 1024 * 1024), "4 MiB");
  EXPECT_EQ(ca::format_bytes(2.0 * 1024 * 1024 * 1024), "2 GiB");
}

// Low alpha / high beta (2 us, 1e-3 us/B) against high alpha / low beta (20 us, 1e-4 us/B):
// equal at n* = (20 - 2) / (1e-3 - 1e-4) = 20000 bytes, between the grid's 16 KiB and 32 KiB.
TEST(AlphaBeta, CrossoverOfTwoLines) {
  const double a1 = 2, b1 = 1e-3, a2 = 20, b2 = 1e-4;
  const double n_star = (a2 - a1) / (b1 - b2);
  for (const std::vector<double>& grid : {ca::pow2_sizes(1, 1 << 20), [] {
                                            std::vector<double> g;  // a finer, non-power-of-two grid
                                            for (double n = 100; n < 1e6; n *= 1.07) g.push_back(n);
                                            return g;
                                          }()}) {
    std::vector<ca::CostCurve> curves(2);
    curves[0].name = "low-alpha";
    curves[1].name = "low-beta";
    for (double n : grid) {
      curves[0].time_us.push_back(a1 + b1 * n);
      curves[1].time_us.push_back(a2 + b2 * n);
    }
    const auto xs = ca::find_crossovers(grid, curves);
    ASSERT_EQ(xs.size(), 1u);
    EXPECT_EQ(xs[0].from, "low-alpha");
    EXPECT_EQ(xs[0].to, "low-beta");
    // Within one grid step: the previous grid size is below n*, the reported one at or above.
    const auto it = std::find(grid.begin(), grid.end(), xs[0].bytes);
    ASSERT_NE(it, grid.end());
    ASSERT_NE(it, grid.begin());
    EXPECT_LT(*(it - 1), n_star);
    EXPECT_GE(xs[0].bytes, n_star);
    EXPECT_NEAR(xs[0].interpolated_bytes, n_star, 1e-9 * n_star);  // linear interpolation of lines: exact
  }
  // The text on the power-of-two grid.
  const auto grid = ca::pow2_sizes(1, 1 << 20);
  ca::AlphaBetaFit f1, f2;
  f1.alpha_us = a1, f1.beta_us_per_byte = b1, f2.alpha_us = a2, f2.beta_us_per_byte = b2;
  const std::vector<ca::CostCurve> curves = {ca::curve_from_fit("rhd", f1, grid), ca::curve_from_fit("ring", f2, grid)};
  const std::string text = ca::describe_crossovers(grid, curves);
  std::printf("  %s (n* = %.0f B)\n", text.c_str(), n_star);
  EXPECT_EQ(text, "rhd below 32 KiB, ring from 32 KiB (to 1 MiB, the largest size)");
}

TEST(AlphaBeta, CrossoverFromNoisyFits) {
  // Fit both algorithms from 3%-noise samples, then find the crossover on the grid.
  const double a1 = 2, b1 = 1e-3, a2 = 20, b2 = 1e-4, n_star = (a2 - a1) / (b1 - b2);
  const auto f1 = ca::fit_alpha_beta(synthetic(a1, b1, 0.03, 7));
  const auto f2 = ca::fit_alpha_beta(synthetic(a2, b2, 0.03, 8));
  const auto grid = ca::pow2_sizes(8, 256.0 * 1024 * 1024);
  const std::vector<ca::CostCurve> curves = {ca::curve_from_fit("a", f1, grid), ca::curve_from_fit("b", f2, grid)};
  const auto xs = ca::find_crossovers(grid, curves);
  ASSERT_EQ(xs.size(), 1u);
  std::printf("  fitted crossover at %.0f B (grid %s), true %.0f B\n", xs[0].interpolated_bytes,
              ca::format_bytes(xs[0].bytes).c_str(), n_star);
  EXPECT_GE(xs[0].bytes, n_star);
  EXPECT_LT(xs[0].bytes / 2, n_star);
  EXPECT_LT(rel(xs[0].interpolated_bytes, n_star), 0.1);
}

TEST(AlphaBeta, CrossoversOfTextbookCurvesAndThreeCurves) {
  // Allreduce on 8 ranks, a = 10 us, B = 1e-4 us/B, no reduction cost: recursive doubling
  // 3a + 3nB against Rabenseifner 6a + 1.75nB cross at n = 3a / 1.25B = 240000 B (< 256 KiB).
  const auto grid = ca::pow2_sizes(1, 1 << 30);
  std::vector<ca::CostCurve> curves(2);
  curves[0].name = "recursive_doubling";
  curves[1].name = "rabenseifner";
  const auto rd = *ca::textbook_cost(Collective::allreduce, TextbookAlgorithm::recursive_doubling, 8);
  const auto rab = *ca::textbook_cost(Collective::allreduce, TextbookAlgorithm::rabenseifner, 8);
  for (double n : grid) {
    curves[0].time_us.push_back(rd.time(10, 1e-4, 0, n));
    curves[1].time_us.push_back(rab.time(10, 1e-4, 0, n));
  }
  EXPECT_EQ(ca::describe_crossovers(grid, curves),
            "recursive_doubling below 256 KiB, rabenseifner from 256 KiB (to 1 GiB, the largest size)");
  EXPECT_NEAR(ca::find_crossovers(grid, curves).at(0).interpolated_bytes, 240000.0, 1e-6);

  // Three lines: A (1, 1e-2) fastest small, B (10, 1e-3) middle, C (100, 1e-4) large.
  // A = B at 9 / 9e-3 = 1000 B; B = C at 90 / 9e-4 = 100000 B.
  std::vector<ca::CostCurve> three(3);
  const double al[] = {1, 10, 100}, be[] = {1e-2, 1e-3, 1e-4};
  const char* names[] = {"A", "B", "C"};
  for (int k = 0; k < 3; ++k) {
    three[k].name = names[k];
    for (double n : grid) three[k].time_us.push_back(al[k] + be[k] * n);
  }
  const auto xs = ca::find_crossovers(grid, three);
  ASSERT_EQ(xs.size(), 2u);
  EXPECT_DOUBLE_EQ(xs[0].bytes, 1024.0);
  EXPECT_DOUBLE_EQ(xs[1].bytes, 131072.0);
  EXPECT_EQ(ca::describe_crossovers(grid, three),
            "A below 1 KiB, B from 1 KiB to 128 KiB, C from 128 KiB (to 1 GiB, the largest size)");
  // No change: one name.
  std::vector<ca::CostCurve> one = {three[0]};
  EXPECT_EQ(ca::describe_crossovers(std::span(grid).first(5), std::vector<ca::CostCurve>{{"A", {1, 2, 3, 4, 5}}}),
            "A fastest at all sizes");
  EXPECT_TRUE(ca::find_crossovers(grid, one).empty());
  // Bad input.
  EXPECT_THROW(ca::find_crossovers(grid, std::vector<ca::CostCurve>{}), std::invalid_argument);
  EXPECT_THROW(ca::find_crossovers(std::vector<double>{1, 2}, three), std::invalid_argument);
  EXPECT_THROW(ca::find_crossovers(std::vector<double>{2, 1}, std::vector<ca::CostCurve>{{"A", {1, 2}}}),
               std::invalid_argument);
}

TEST(AlphaBeta, Pow2Sizes) {
  const auto g = ca::pow2_sizes(8, 256.0 * 1024 * 1024);
  ASSERT_EQ(g.size(), 26u);
  EXPECT_DOUBLE_EQ(g.front(), 8.0);
  EXPECT_DOUBLE_EQ(g.back(), 268435456.0);
  EXPECT_DOUBLE_EQ(ca::pow2_sizes(5, 40).front(), 8.0);  // rounded up
  EXPECT_THROW(ca::pow2_sizes(0, 8), std::invalid_argument);
}

}  // namespace

// predict carries a fit to other rank counts with the fitted algorithm's own terms: a binomial
// tree's 2 log p messages and 2 log p n bytes, not the ring's 2(p-1) and 2(p-1)/p n (which it used
// for every algorithm); algorithms without a textbook curve fall back to the ring's.
TEST(AlphaBeta, CarryFitUsesTheAlgorithmsOwnTerms) {
  ca::AlphaBetaFit fit;
  fit.alpha_us = 10;
  fit.beta_us_per_byte = 0.001;
  std::string as;
  // tree allreduce 2 -> 8 ranks, 1000 B: 10 x 6/2 + 1 x 6/2 = 33.
  EXPECT_DOUBLE_EQ(ca::carry_fit_us(fit, Collective::allreduce, "tree", 2, 8, 1000, &as), 33.0);
  EXPECT_EQ(as, "tree");
  // ring: 10 x 14/2 + 1 x 1.75/1 = 71.75; mpi carried as a ring.
  EXPECT_DOUBLE_EQ(ca::carry_fit_us(fit, Collective::allreduce, "ring", 2, 8, 1000, &as), 71.75);
  EXPECT_DOUBLE_EQ(ca::carry_fit_us(fit, Collective::allreduce, "mpi", 2, 8, 1000, &as), 71.75);
  EXPECT_EQ(as, "ring");
  // rhd allgather (recursive doubling): log p messages, (p-1)/p n bytes: 10 x 3/1 + 1 x 0.875/0.5.
  EXPECT_DOUBLE_EQ(ca::carry_fit_us(fit, Collective::allgather, "rhd", 2, 8, 1000, &as), 31.75);
  EXPECT_EQ(as, "rhd");
}
