// Where a profile's ranks ran (placement.hpp): the CPU list, this process's CPUs, and the summary
// the replay report sets beside its times.

#include "commscope/profiler/placement.hpp"

#include <gtest/gtest.h>

namespace cp = commscope::profiler;

namespace {

cp::RankInfo on(int rank, const std::string& host, const std::string& cpus, int count, int node_cpus) {
  cp::RankInfo r;
  r.rank = rank, r.host = host, r.cpus = cpus, r.cpu_count = count, r.node_cpus = node_cpus;
  return r;
}

TEST(Placement, CpuListJoinsRuns) {
  EXPECT_EQ(cp::cpu_list({}), "");
  EXPECT_EQ(cp::cpu_list({0}), "0");
  EXPECT_EQ(cp::cpu_list({0, 1}), "0-1");
  EXPECT_EQ(cp::cpu_list({0, 1, 2, 3, 8, 10, 11}), "0-3,8,10-11");
}

TEST(Placement, ThisProcessHasCpus) {
  const cp::CpuPlacement p = cp::this_process_cpus();
  EXPECT_GE(p.cpu_count, 1);
  EXPECT_GE(p.node_cpus, p.cpu_count);
  EXPECT_FALSE(p.cpus.empty());
}

TEST(Placement, UnknownWhenAnyRankLacksIt) {
  const cp::PlacementSummary s = cp::summarize_placement({on(0, "vm", "0-1", 2, 2), on(1, "vm", "", 0, 0)});
  EXPECT_FALSE(s.known);
  EXPECT_FALSE(s.shared_unbound);
  EXPECT_EQ(s.text, "not recorded (a file from before it was)");
}

// 4 ranks on 2 CPUs, each free to run on both: which two share a core is the scheduler's pick.
TEST(Placement, MoreRanksThanCpusUnbound) {
  std::vector<cp::RankInfo> ranks;
  for (int r = 0; r < 4; ++r) ranks.push_back(on(r, "vm", "0-1", 2, 2));
  const cp::PlacementSummary s = cp::summarize_placement(ranks);
  EXPECT_TRUE(s.known);
  EXPECT_TRUE(s.shared_unbound);
  EXPECT_EQ(s.text, "4 ranks on 1 host of 2 CPUs, unbound");
}

// Bound two to a core (mpirun --map-by core --bind-to core:overload-allowed): the same every run.
TEST(Placement, MoreRanksThanCpusBound) {
  const cp::PlacementSummary s = cp::summarize_placement(
      {on(0, "vm", "0", 1, 2), on(1, "vm", "1", 1, 2), on(2, "vm", "0", 1, 2), on(3, "vm", "1", 1, 2)});
  EXPECT_FALSE(s.shared_unbound);
  EXPECT_EQ(s.text, "4 ranks on 1 host of 2 CPUs, bound (CPUs 0 | 1 | 0 | 1)");
}

// Unbound but a CPU each: not shared. Two hosts of different sizes, one rank bound.
TEST(Placement, HostsCountedApart) {
  const cp::PlacementSummary s = cp::summarize_placement(
      {on(0, "a", "0-7", 8, 8), on(1, "a", "0-7", 8, 8), on(2, "b", "3", 1, 16), on(3, "b", "0-15", 16, 16)});
  EXPECT_FALSE(s.shared_unbound);
  EXPECT_EQ(s.text, "4 ranks on 2 hosts of 8-16 CPUs, partly bound (CPUs 0-7 | 0-7 | 3 | 0-15)");
  // 3 ranks on a host of 2 CPUs, the others elsewhere: that host is shared.
  EXPECT_TRUE(cp::summarize_placement({on(0, "a", "0-1", 2, 2), on(1, "a", "0-1", 2, 2), on(2, "a", "0-1", 2, 2),
                                       on(3, "b", "0-1", 2, 2)})
                  .shared_unbound);
}

TEST(Placement, ManyRanksListedInPart) {
  std::vector<cp::RankInfo> ranks;
  for (int r = 0; r < 10; ++r) ranks.push_back(on(r, "n", std::to_string(r), 1, 16));
  EXPECT_EQ(cp::summarize_placement(ranks).text,
            "10 ranks on 1 host of 16 CPUs, bound (CPUs 0 | 1 | 2 | 3 | 4 | 5 | 6 | 7 | ...)");
}

}  // namespace
