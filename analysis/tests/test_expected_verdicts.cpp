// Known answers of the verdict rule (expected_verdicts.hpp) on synthetic machine models and rows:
// the figures to the printed digit. n = 64 MiB; 2 hosts x 2 CPU ranks, copy 10 GB/s, links
// 0.125 GB/s (1 Gbit/s), 50 us per message. The ring allreduce expects 6 x 50 + 1.5 n / 125 +
// 0.75 n / 1e4 = 810639.5 us, busbw 1.5 n / that = 0.1242 GB/s.
#include "commscope/analysis/expected_verdicts.hpp"
#include "machine_fixtures.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

using namespace commscope;
using namespace commscope::analysis;
using commscope::test_fixtures::cluster;

namespace {

constexpr double kN = 64.0 * 1024 * 1024;

// A row of `busbw` GB/s for the allreduce on 4 ranks (time from nccl-tests' busbw: 1.5 n / busbw).
MeasuredRow allreduce_row(double bytes, double busbw) {
  return {bytes, 1.5 * bytes / (busbw * 1e3), busbw};
}

std::vector<std::string> lines(const MachineModel& m, std::string_view algo, const std::vector<MeasuredRow>& rows) {
  const std::vector<int> place = placement_of(m, 4);
  const auto judged = judge_rows(m, place, Collective::allreduce, algo, rows);
  return verdict_lines("allreduce", algo, judged, m);
}

}  // namespace

TEST(ExpectedVerdicts, ThresholdsOnATable) {
  const std::vector<std::pair<double, VerdictClass>> table{
      {1.2, VerdictClass::above_model}, {1.05, VerdictClass::good}, {0.7, VerdictClass::good},
      {0.69, VerdictClass::below},      {0.4, VerdictClass::below}, {0.39, VerdictClass::far_below},
      {0.01, VerdictClass::far_below}};
  for (const auto& [of, v] : table) EXPECT_EQ(classify_of_expected(of), v) << of;
}

// 88.6% at 16 and 64 MiB: one range, "from 16 MiB", the figures at 64 MiB; 8 B latency-bound:
// 300.1 us expected against 320 measured = 93.8%.
TEST(ExpectedVerdicts, GoodAtTheLinkRateAndLatencyBoundSizes) {
  const std::vector<MeasuredRow> rows{{8, 320, 0}, allreduce_row(16 << 20, 0.110), allreduce_row(kN, 0.110)};
  const auto judged = judge_rows(cluster(2, 2), placement_of(cluster(2, 2), 4), Collective::allreduce, "ring", rows);
  ASSERT_EQ(judged.size(), 3u);
  EXPECT_NEAR(*judged[2].of_expected, 0.8858278255, 1e-9);
  EXPECT_NEAR(*judged[2].expected.busbw_GBps, 0.1241776300, 1e-9);
  EXPECT_NEAR(*judged[0].of_expected, 0.9378018750, 1e-9);
  EXPECT_EQ(lines(cluster(2, 2), "ring", rows),
            (std::vector<std::string>{
                "allreduce ring at 8 B: latency-bound, 320 us = 94% of the speed of the expected 300 us (latency "
                "300 us): good",
                "allreduce ring from 16 MiB: busbw 0.11 GB/s = 89% of the 0.124 GB/s that host1's link (0.125 GB/s, "
                "system: eth0 1000 Mb/s) allows [2 sizes, all 89%]: good"}));
}

// One host's link shaped to a tenth: 8.5% of the expected busbw, and the doctor's pairs name it.
TEST(ExpectedVerdicts, FarBelowNamesTheDoctorsSlowLink) {
  MachineModel m = cluster(2, 2);
  m.nodes[0].nic_measured = {0.116, FigureSource::doctor, "doctor pairs"};
  m.nodes[1].nic_measured = {0.012, FigureSource::doctor, "doctor pairs"};
  EXPECT_EQ(lines(m, "ring", {allreduce_row(kN, 0.0105)}),
            (std::vector<std::string>{"allreduce ring at 64 MiB: busbw 0.0105 GB/s = 8.5% of the 0.124 GB/s that "
                                      "host1's link (0.125 GB/s, system: eth0 1000 Mb/s) allows: far below; host2's "
                                      "link measured 0.012 GB/s (doctor), the others 0.116"}));
  // Four hosts, the three fast ones printing the same figure: one figure, not "0.116-0.116".
  MachineModel three = cluster(4, 1);
  three.nodes[3].nic_measured = {0.11602, FigureSource::doctor, "doctor pairs"};
  three.nodes[0].nic_measured = {0.11601, FigureSource::doctor, "doctor pairs"};
  three.nodes[1].nic_measured = {0.012, FigureSource::doctor, "doctor pairs"};
  three.nodes[2].nic_measured = {0.11604, FigureSource::doctor, "doctor pairs"};
  const std::string slow = lines(three, "ring", {allreduce_row(kN, 0.0105)}).front();
  EXPECT_NE(slow.find("host2's link measured 0.012 GB/s (doctor), the others 0.116"), std::string::npos) << slow;
  EXPECT_EQ(slow.find("0.116-"), std::string::npos) << slow;
  // Without a doctor file: the verdict, and how to find the culprit.
  EXPECT_EQ(lines(cluster(2, 2), "ring", {allreduce_row(kN, 0.0105)}).front(),
            "allreduce ring at 64 MiB: busbw 0.0105 GB/s = 8.5% of the 0.124 GB/s that host1's link (0.125 GB/s, "
            "system: eth0 1000 Mb/s) allows: far below (no doctor file: its pairs would measure each host's link)");
}

// hier on 2 x 2 with host2's link given as 0.1 GB/s: the slowest link is between the nodes, host2's,
// shared by the node's 2 cross groups; expected 689643.6 us, busbw 0.1460 GB/s; measured 0.130.
TEST(ExpectedVerdicts, HierSlowestLinkBetweenNodes) {
  MachineModel m = cluster(2, 2);
  m.nodes[1].nic = {0.1, FigureSource::user, "--link-rate host2=800mbit"};
  EXPECT_EQ(
      lines(m, "hier", {allreduce_row(kN, 0.130)}),
      (std::vector<std::string>{"allreduce hier at 64 MiB: busbw 0.13 GB/s = 89% of the 0.146 GB/s that host2's "
                                "link (0.1 GB/s, given: --link-rate host2=800mbit; 2 flows at once) allows: good"}));
}

// No rate for host2's link: no verdict, what is missing said instead.
TEST(ExpectedVerdicts, MissingNicRateIsNotJudged) {
  MachineModel m = cluster(2, 2);
  m.nodes[1].nic = {};
  EXPECT_EQ(lines(m, "ring", {{8, 320, 0}, allreduce_row(kN, 0.110)}),
            (std::vector<std::string>{"allreduce ring: not judged, the model lacks host2's link rate (its NIC reports "
                                      "none: --link-rate host2=RATE)"}));
  const auto judged = judge_rows(m, placement_of(m, 4), Collective::allreduce, "ring", {{allreduce_row(kN, 0.110)}});
  EXPECT_FALSE(judged.front().of_expected);
}

// The run's own latency where no doctor file gave one: the smallest time per message at the
// smallest size (ring allreduce 4 ranks: 6 messages; mpi: the fewest of the textbook's, recursive doubling's 2).
TEST(ExpectedVerdicts, LatencyOfTheRunItself) {
  const std::vector<RowOfRun> rows{{Collective::allreduce, "ring", 4, {8, 300, 0}},
                                   {Collective::allreduce, "mpi", 4, {8, 60, 0}},
                                   {Collective::allreduce, "ring", 4, {1024, 30, 0}}};  // not the smallest size
  const auto l = latency_of_run(rows);
  ASSERT_TRUE(l);
  EXPECT_DOUBLE_EQ(l->latency_us, 30);
  EXPECT_EQ(l->from, "allreduce mpi at 8 B");
  EXPECT_FALSE(latency_of_run({}));
  // A sweep from 1 MiB has no latency-sized row: a megabyte's time is not a message's latency.
  const std::vector<RowOfRun> large{{Collective::allreduce, "ring", 2, {1 << 20, 326, 0}}};
  EXPECT_FALSE(latency_of_run(large));
}

// A range's verdict is its median's: 95%, 50% and 30% over three sizes are "below", the line's
// figures those of its largest size, the spread in brackets.
TEST(ExpectedVerdicts, ARangeIsJudgedByItsMedian) {
  const MachineModel m = cluster(2, 2);
  auto judged = judge_rows(m, placement_of(m, 4), Collective::allreduce, "ring",
                           {{allreduce_row(16 << 20, 0.1), allreduce_row(32 << 20, 0.1), allreduce_row(kN, 0.1)}});
  judged[0].of_expected = 0.95, judged[1].of_expected = 0.5, judged[2].of_expected = 0.3;
  const auto out = verdict_lines("allreduce", "ring", judged, m);
  ASSERT_EQ(out.size(), 1u);
  const std::string tail =
      "allows [3 sizes: median 50%, 30% to 95%]: below (no doctor file: its pairs would measure "
      "each host's link)";
  EXPECT_EQ(out.front().substr(out.front().size() - tail.size()), tail) << out.front();
  EXPECT_EQ(out.front().substr(0, 42), "allreduce ring from 16 MiB: busbw 0.1 GB/s") << out.front();
}

// A model without the latency (a file from before the bench measured it): 64 MiB is judged
// without it, said on its line; 256 KiB (3165 us without it, under 20 x 6 messages x a generous
// 100 us) is not, and the line says what is missing and below which time.
TEST(ExpectedVerdicts, WithoutTheLatencyLargeSizesAreJudged) {
  MachineModel m = cluster(2, 2);
  m.latency_source = FigureSource::none, m.latency_us = 0;
  const auto out = lines(m, "ring", {allreduce_row(256 << 10, 0.1), allreduce_row(kN, 0.11)});
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[0],
            "allreduce ring: not judged at some sizes, the model lacks the latency per message (the bench measures "
            "it at start-up; else a doctor file's 8 B pairs or a machine file's latency_us), needed below 20x a "
            "generous 100 us per message");
  EXPECT_EQ(out[1].substr(0, 57), "allreduce ring at 64 MiB: busbw 0.11 GB/s = 89% of the 0.") << out[1];
  const std::string tail = " (latency not in the model: priced without it): good";
  EXPECT_EQ(out[1].substr(out[1].size() - tail.size()), tail) << out[1];
}

// A latency per message above what the run took per message (a start-up probe on a busy machine):
// the latency-bound sizes are above the model, and the line says the latency figure is too high,
// with the run's own figure (ring allreduce on 4 ranks: 6 messages; 30 us at 8 B = 5 us each).
// A range merely faster than a right latency keeps the usual wording.
TEST(ExpectedVerdicts, LatencyAboveTheRunsOwnIsNamed) {
  MachineModel m = cluster(2, 2);
  m.latency_detail = "8 B pairs";
  EXPECT_EQ(lines(m, "ring", {{8, 30, 0}}),
            (std::vector<std::string>{
                "allreduce ring at 8 B: latency-bound, 30 us = 1000% of the speed of the expected 300 us (latency "
                "300 us): above the model: its latency, 50 us per message (doctor: 8 B pairs), is over this run's "
                "own 5 us per message: too high for these steps (a latency measured on a busy machine, or steps that "
                "cost less than an MPI message, as shared memory's; a machine file's latency_us sets it)"}));
  // 8 B in 285 us: 105.3% of the expected 300, above the threshold, 47.5 us a message: named.
  // 8 B in 310 us: good, the usual wording.
  EXPECT_NE(lines(m, "ring", {{8, 285, 0}}).front().find("is over this run's own 47.5 us per message"),
            std::string::npos);
  EXPECT_EQ(lines(m, "ring", {{8, 310, 0}}).front().find("is over this run's own"), std::string::npos);
}
