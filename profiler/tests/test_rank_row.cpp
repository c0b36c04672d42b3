// A rank's one fixed-size row (formats/src/rank_row.hpp), which the /ranks table and the session's gather
// both carry: every field of RankInfo goes into it and comes back, strings cut to their fields.
#include <gtest/gtest.h>

#include <string>

#include "rank_row.hpp"

namespace cp = commscope::profiler;

TEST(RankRow, CarriesEveryFieldOfRankInfo) {
  const cp::RankInfo info{
      7, "node-3", -1234, 56, "cupti", 789, 10, "0-3,8", 5, 64, "0c2f6a0e-7f51-4a8e-9c1b-5a3f2d4e6b71"};
  const cp::RankInfo back = cp::rank_info(cp::rank_row(info));
  EXPECT_EQ(back.rank, 7);
  EXPECT_EQ(back.host, "node-3");
  EXPECT_EQ(back.clock_offset_ns, -1234);
  EXPECT_EQ(back.clock_error_ns, 56);
  EXPECT_EQ(back.backend, "cupti");
  EXPECT_EQ(back.events, 789);
  EXPECT_EQ(back.dropped_events, 10);
  EXPECT_EQ(back.cpus, "0-3,8");
  EXPECT_EQ(back.cpu_count, 5);
  EXPECT_EQ(back.node_cpus, 64);
  EXPECT_EQ(back.machine, "0c2f6a0e-7f51-4a8e-9c1b-5a3f2d4e6b71");
}

TEST(RankRow, StringsAreCutToTheirFields) {
  cp::RankInfo info;
  info.host = std::string(100, 'h');
  info.cpus = std::string(80, '1');
  const cp::RankInfo back = cp::rank_info(cp::rank_row(info));
  EXPECT_LE(back.host.size(), sizeof(cp::RankRow::host));
  EXPECT_EQ(back.host, info.host.substr(0, back.host.size()));
  EXPECT_LE(back.cpus.size(), sizeof(cp::RankRow::cpus));
  EXPECT_EQ(back.cpus, info.cpus.substr(0, back.cpus.size()));
  EXPECT_EQ(back.machine, "");
}
