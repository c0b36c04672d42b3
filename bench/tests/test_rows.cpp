// A result row from a measurement: bandwidths with nccl-tests' bus factors, percentiles and
// the per-iteration statistics.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "cases.hpp"
#include "commscope/bench/options.hpp"
#include "commscope/common/stats.hpp"
#include "measure.hpp"
#include "results.hpp"

using namespace commscope;
using namespace commscope::bench;

TEST(Bandwidth, BusbwFactorsOfEveryCollective) {
  Options o;
  for (int n : {1, 2, 3, 8}) {
    for (Collective coll : kAllCollectives) {
      Case c;
      c.coll = coll;
      c.algo = "ring";
      c.nranks = n;
      c.count = 1000;
      c.bytes = collective_bytes(coll, c.count, DataType::f32, n);
      Measurement m;
      m.iterations = 1;
      m.time_s = 1e-3;
      const ResultRow r = make_row(c, m, o, "cpu");
      const double algbw = static_cast<double>(c.bytes) / 1e-3 / 1e9;
      // nccl-tests: 1 for reduce, broadcast, sendrecv; 2(n-1)/n for allreduce; (n-1)/n otherwise.
      const bool one = coll == Collective::reduce || coll == Collective::broadcast || coll == Collective::sendrecv;
      double factor = one ? 1.0 : static_cast<double>(n - 1) / n;
      if (coll == Collective::allreduce) factor = 2.0 * (n - 1) / n;
      EXPECT_DOUBLE_EQ(r.algbw_GBps, algbw) << to_string(coll) << " n=" << n;
      EXPECT_DOUBLE_EQ(r.busbw_GBps, algbw * factor) << to_string(coll) << " n=" << n;
      // The array measured: one rank's count, or n blocks of it.
      const bool single = one || coll == Collective::allreduce || coll == Collective::alltoallv;
      const std::size_t per_rank = single ? 1000u : 1000u * static_cast<std::size_t>(n);
      EXPECT_EQ(c.bytes, per_rank * 4) << to_string(coll);
    }
  }
}

TEST(Stats, PercentilesAndRow) {
  EXPECT_TRUE(std::isnan(stats::percentile({}, 0.5)));
  EXPECT_EQ(stats::percentile({5, 1, 3, 2, 4}, 0.5), 3);
  EXPECT_EQ(stats::percentile({5, 1, 3, 2, 4}, 0.99), 5);
  EXPECT_EQ(stats::percentile({5, 1, 3, 2, 4}, 0.0), 1);
  std::vector<double> many(100);
  for (int i = 0; i < 100; ++i) many[static_cast<std::size_t>(i)] = 100 - i;
  EXPECT_EQ(stats::percentile(many, 0.99), 99);
  Case c;
  c.bytes = 100;
  c.nranks = 2;
  Measurement m;
  m.iterations = 3;
  m.time_s = 2e-6;
  m.samples.time_us = {3, 1, 2};
  m.samples.skew_us = {0.5, 1.5, 1};
  const ResultRow r = make_row(c, m, Options{}, "cpu");
  EXPECT_EQ(r.min_us, 1);
  EXPECT_EQ(r.p50_us, 2);
  EXPECT_EQ(r.max_us, 3);
  EXPECT_DOUBLE_EQ(r.skew_us, 1);
  EXPECT_EQ(r.iterations, 3);
}

TEST(Stats, IterStatsSkipTheFirstIterations) {
  const IterStats s = iter_stats({100, 1, 2, 3, 4}, 1);  // -K 1 drops the slow first iteration
  EXPECT_EQ(s.n, 4u);
  EXPECT_EQ(s.min, 1);
  EXPECT_EQ(s.max, 4);
  EXPECT_DOUBLE_EQ(s.mean, 2.5);
  EXPECT_DOUBLE_EQ(s.stdev, std::sqrt(1.25));
  EXPECT_EQ(s.p50, 2);
  EXPECT_EQ(s.p99, 4);
  EXPECT_TRUE(std::isnan(iter_stats({1, 2}, 2).mean));
  Case c;
  c.bytes = 100;
  c.nranks = 2;
  Measurement m;
  m.iterations = 5;
  m.time_s = 2e-6;
  m.cpu_time_s = 1e-6;
  m.samples.time_us = {100, 1, 2, 3, 4};
  Options o;
  o.per_iter_skip = 1;
  const ResultRow r = make_row(c, m, o, "cpu");
  EXPECT_EQ(r.max_us, 4);
  EXPECT_DOUBLE_EQ(r.mean_us, 2.5);
  EXPECT_DOUBLE_EQ(r.cpu_time_us, 1);
}
