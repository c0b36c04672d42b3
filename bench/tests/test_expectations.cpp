// RunExpectations: the rows' expected columns as the bench writes them, and its verdict lines
// (docs/verdicts.md), on made-up rows and models.
#include "expectations.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

using namespace commscope;
using namespace commscope::bench;

namespace {

ResultRow row(const char* collective, int nranks, double bytes, double time_us, bool in_place = false) {
  ResultRow r;
  set_text(r.collective, collective);
  set_text(r.algorithm, "ring");
  set_text(r.type, "f32");
  set_text(r.op, "sum");
  r.nranks = nranks;
  r.in_place = in_place ? 1 : 0;
  r.bytes = static_cast<std::uint64_t>(bytes);
  r.time_us = time_us;
  r.algbw_GBps = bytes / time_us / 1e3;
  r.busbw_GBps = r.algbw_GBps * (std::string(collective) == "allreduce" ? 2.0 * (nranks - 1) / nranks : 1.0);
  return r;
}

const char* kOneRank = "node host=h1 ranks=1 cpus=4 copy=10GB/s copy.source=measured\n";
const char* kTwoRanks =
    "node host=h1 ranks=2 cpus=4 copy=10GB/s copy.source=measured intra=5GB/s intra.source=measured\n";

}  // namespace

TEST(RunExpectations, WithoutAModelNothingIsSet) {
  RunExpectations e("", 2, "");
  ResultRow r = row("allreduce", 2, 1 << 20, 500);
  e.judge(r);
  EXPECT_TRUE(std::isnan(r.expected_time_us) && std::isnan(r.expected_busbw_GBps) && std::isnan(r.of_expected));
  EXPECT_TRUE(e.verdict_lines().empty());
}

// One rank: one copy of the array at the copy rate, 1 MiB at 10 GB/s = 104.8576 us; measured in
// 200 us: 52% of the model, below.
TEST(RunExpectations, OneRankHasEveryFigure) {
  RunExpectations e(kOneRank, 1, "");
  ResultRow r = row("broadcast", 1, 1 << 20, 200);
  e.judge(r);
  EXPECT_NEAR(r.expected_time_us, 104.8576, 1e-9);
  EXPECT_NEAR(r.expected_busbw_GBps, 10, 1e-9);
  EXPECT_NEAR(r.of_expected, 0.524288, 1e-12);
  const std::vector<std::string> lines = e.verdict_lines();
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_EQ(lines[0].rfind("broadcast ring at 1 MiB: busbw 5.24 GB/s = 52% of the 10 GB/s that h1's memory", 0), 0u)
      << lines[0];
  EXPECT_EQ(lines[0].substr(lines[0].size() - 7), ": below") << lines[0];
}

// Two ranks, a model without the latency per message: the rows' figures are NaN (the model lacks
// an input), the verdicts take the run's own latency from its 8 B row (10 us over the ring's 2
// messages), as the report does: the 8 B row is latency-bound and judged against it.
TEST(RunExpectations, WithoutTheModelsLatencyTheRowsAreNaNTheVerdictsUseTheRuns) {
  RunExpectations e(kTwoRanks, 2, "");
  ResultRow small = row("allreduce", 2, 8, 10), large = row("allreduce", 2, 1 << 20, 500);
  e.judge(small);
  e.judge(large);
  EXPECT_TRUE(std::isnan(small.expected_time_us) && std::isnan(large.of_expected));
  const std::vector<std::string> lines = e.verdict_lines();
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_EQ(lines[0].rfind("allreduce ring at 8 B: latency-bound, 10 us = ", 0), 0u) << lines[0];
  EXPECT_NE(lines[0].find("(latency 10 us)"), std::string::npos) << lines[0];
  EXPECT_EQ(lines[1].rfind("allreduce ring at 1 MiB: busbw ", 0), 0u) << lines[1];
}

// In-place rows get their figures but the verdicts judge the out-of-place ones, as the report.
TEST(RunExpectations, InPlaceRowsAreNotJudged) {
  RunExpectations e(kOneRank, 1, "");
  ResultRow oop = row("broadcast", 1, 1 << 20, 200), ip = row("broadcast", 1, 1 << 20, 2000, true);
  e.judge(oop);
  e.judge(ip);
  EXPECT_NEAR(ip.of_expected, 0.0524288, 1e-12);
  ASSERT_EQ(e.verdict_lines().size(), 1u);
  EXPECT_NE(e.verdict_lines()[0].find("= 52% of"), std::string::npos) << e.verdict_lines()[0];
}

TEST(RunExpectations, AModelOfOtherRanksIsSaid) {
  RunExpectations e("node host=h1 ranks=4 copy=10GB/s copy.source=measured\n", 2, "");
  ResultRow r = row("allreduce", 2, 1 << 20, 500);
  e.judge(r);
  EXPECT_TRUE(std::isnan(r.of_expected));
  EXPECT_EQ(e.verdict_lines(),
            std::vector<std::string>{"no verdicts, the machine model places 4 ranks, the run has 2"});
}

// -N 0 (until a signal): the rows' figures, no rows kept and no verdicts.
TEST(RunExpectations, WithoutVerdictsTheRowsStillHaveTheirFigures) {
  RunExpectations e(kOneRank, 1, "", false);
  ResultRow r = row("broadcast", 1, 1 << 20, 200);
  e.judge(r);
  EXPECT_NEAR(r.of_expected, 0.524288, 1e-12);
  EXPECT_TRUE(e.verdict_lines().empty());
}

// One call of 5 stalled for a scheduler's time slice: the mean per call is 4000 us, the median
// iteration 120 us. The row and its verdict are the typical call's (the lower of the two): 1 MiB at
// 10 GB/s in 120 us is 87% of the model, good, with its own busbw (8.74 GB/s); by the mean it read
// 2.6%, far below.
TEST(RunExpectations, AStalledCallDoesNotDecide) {
  RunExpectations e(kOneRank, 1, "");
  ResultRow r = row("broadcast", 1, 1 << 20, 4000);
  r.p50_us = 120;
  e.judge(r);
  EXPECT_NEAR(r.of_expected, 104.8576 / 120, 1e-12);
  const std::vector<std::string> lines = e.verdict_lines();
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_EQ(lines[0].rfind("broadcast ring at 1 MiB: busbw 8.74 GB/s = 87% of the 10 GB/s", 0), 0u) << lines[0];
  EXPECT_EQ(lines[0].substr(lines[0].size() - 6), ": good") << lines[0];
  // A median above the mean (a file or a run without samples: 0) leaves the mean.
  ResultRow m = row("broadcast", 1, 1 << 20, 200);
  m.p50_us = 250;
  e.judge(m);
  EXPECT_NEAR(m.of_expected, 0.524288, 1e-12);
}

TEST(RunExpectations, TheThresholdsLine) {
  EXPECT_EQ(verdict_thresholds(),
            "Verdicts against the machine model (of_expected = expected time / the time of the typical call, the lower "
            "of the mean and the median; the figures are that call's): good from 70%, below from "
            "40%, far below under it, above the model over 105% (docs/verdicts.md)");
}
