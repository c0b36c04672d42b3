// NCCL's tuning log read back (nccl_tuning.hpp): the line format of NCCL 2.19-2.28's
// INFO(NCCL_TUNING, "%s: %ld Bytes -> Algo %s proto %s channel{Lo..Hi}={%d..%d}"), with the
// prefix NCCL_DEBUG_FILE lines carry and the fields later versions append, and the summary
// per collective in runs of sizes.
#include "nccl_tuning.hpp"

#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <vector>

using namespace commscope::bench;

TEST(NcclTuning, ParsesTheLinesAndNothingElse) {
  const auto c = parse_nccl_tuning_line(
      "gpu1:12345:12400 [0] NCCL INFO AllReduce: 4194304 Bytes -> Algo RING proto SIMPLE channel{Lo..Hi}={0..31}");
  ASSERT_TRUE(c);
  EXPECT_EQ(c->collective, "AllReduce");
  EXPECT_EQ(c->bytes, 4194304u);
  EXPECT_EQ(c->algorithm, "RING");
  EXPECT_EQ(c->protocol, "SIMPLE");
  // Later versions append fields (cgaClusterSize, comm): read all the same.
  const auto d = parse_nccl_tuning_line(
      "h:1:2 [0] NCCL INFO AllGather: 8 Bytes -> Algo NVLS proto LL128 channel{Lo..Hi}={0..1} cgaClusterSize 4");
  ASSERT_TRUE(d);
  EXPECT_EQ(d->algorithm + "/" + d->protocol, "NVLS/LL128");
  for (const char* other : {"h:1:2 [0] NCCL INFO NCCL version 2.28.3+cuda13.0",
                            "h:1:2 [0] NCCL INFO Channel 00/32 : 0 1", "NCCL INFO AllReduce: x Bytes -> Algo RING proto LL",
                            "NCCL INFO AllReduce: 8 Bytes -> Algo", "NCCL WARN AllReduce: 8 Bytes -> Algo RING proto LL",
                            ""})
    EXPECT_FALSE(parse_nccl_tuning_line(other)) << other;
}

TEST(NcclTuning, SummaryInRunsOfSizes) {
  const std::vector<NcclChoice> log{
      {"AllReduce", 8, "TREE", "LL"},          {"AllReduce", 8, "TREE", "LL"},  // repeated calls
      {"AllReduce", 1024, "TREE", "LL"},       {"AllReduce", 65536, "RING", "LL128"},
      {"AllReduce", 1048576, "RING", "SIMPLE"}, {"AllReduce", 4194304, "RING", "SIMPLE"},
      {"AllGather", 1024, "RING", "LL"},       {"AllGather", 1024, "RING", "SIMPLE"}};  // two at one size
  EXPECT_EQ(summarize_nccl_choices(log),
            "AllReduce: TREE/LL 8 B to 1 KiB, RING/LL128 at 64 KiB, RING/SIMPLE from 1 MiB; "
            "AllGather: RING/LL+RING/SIMPLE at 1 KiB");
  EXPECT_EQ(summarize_nccl_choices({}), "");
}

// The log is the bench's only where the user has not asked NCCL for one; read from its file.
TEST(NcclTuning, StartsOnlyWhereTheUserHasNoLog) {
  ::setenv("NCCL_DEBUG", "WARN", 1);
  {
    NcclTuningLog log;
    log.start(testing::TempDir());
    EXPECT_EQ(log.note(), "NCCL_DEBUG is set (WARN): its tuning lines are the user's, not read");
    EXPECT_TRUE(log.read().empty());
  }
  ::unsetenv("NCCL_DEBUG");
  ::unsetenv("NCCL_DEBUG_FILE");
  NcclTuningLog log;
  log.start(testing::TempDir());
  EXPECT_EQ(log.note(), "");
  EXPECT_STREQ(std::getenv("NCCL_DEBUG"), "INFO");
  EXPECT_STREQ(std::getenv("NCCL_DEBUG_SUBSYS"), "TUNING");
  const char* path = std::getenv("NCCL_DEBUG_FILE");
  ASSERT_NE(path, nullptr);
  std::ofstream(path) << "h:1:2 [0] NCCL INFO NCCL version 2.28.3\n"
                      << "h:1:2 [0] NCCL INFO Broadcast: 64 Bytes -> Algo RING proto LL channel{Lo..Hi}={0..0}\n";
  const std::vector<NcclChoice> read = log.read();
  ASSERT_EQ(read.size(), 1u);
  EXPECT_EQ(summarize_nccl_choices(read), "Broadcast: RING/LL at 64 B");
}
