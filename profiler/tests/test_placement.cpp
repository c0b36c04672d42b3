// Where a profile's ranks ran (placement.hpp): this process's CPUs, and the summary
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
  EXPECT_TRUE(cp::summarize_placement(
                  {on(0, "a", "0-1", 2, 2), on(1, "a", "0-1", 2, 2), on(2, "a", "0-1", 2, 2), on(3, "b", "0-1", 2, 2)})
                  .shared_unbound);
}

TEST(Placement, ManyRanksListedInPart) {
  std::vector<cp::RankInfo> ranks;
  for (int r = 0; r < 10; ++r) ranks.push_back(on(r, "n", std::to_string(r), 1, 16));
  EXPECT_EQ(cp::summarize_placement(ranks).text,
            "10 ranks on 1 host of 16 CPUs, bound (CPUs 0 | 1 | 2 | 3 | 4 | 5 | 6 | 7 | ...)");
}

cp::RankInfo at(int rank, const std::string& host, const std::string& machine, const std::string& cpus, int count,
                int node_cpus) {
  cp::RankInfo r = on(rank, host, cpus, count, node_cpus);
  r.machine = machine;
  return r;
}

// The emulated cluster's case: 4 ranks of 2 threads each on 4 hosts (namespaces with their own
// host names) of one 2-CPU machine had 2 cores, not 8 (4 hosts x 2 CPUs).
TEST(Placement, CoresOfHostsSharingOneMachine) {
  std::vector<cp::RankInfo> ranks;
  for (int r = 0; r < 4; ++r) ranks.push_back(at(r, "host" + std::to_string(r + 1), "boot-a", "0-1", 2, 2));
  const cp::CoreCount c = cp::count_cores(ranks, 2);
  EXPECT_TRUE(c.known);
  EXPECT_FALSE(c.by_host);
  EXPECT_EQ(c.machines, 1);
  EXPECT_EQ(c.hosts, 4);
  EXPECT_DOUBLE_EQ(c.cores, 2);
  EXPECT_DOUBLE_EQ(c.cpus_per_rank, 0.5);
}

// Ranks bound to CPUs count the CPUs they were bound to: two ranks on CPU 0 of a 4-CPU node
// have 1 core; a rank of 1 thread free on all 4 has 1; two machines add up, the fewest CPUs per
// rank is the most crowded machine's.
TEST(Placement, CoresFromAffinityAndThreads) {
  EXPECT_DOUBLE_EQ(cp::count_cores({at(0, "n", "m", "0", 1, 4), at(1, "n", "m", "0", 1, 4)}, 1).cores, 1);
  EXPECT_DOUBLE_EQ(cp::count_cores({at(0, "n", "m", "0-3", 4, 4)}, 1).cores, 1);
  EXPECT_DOUBLE_EQ(cp::count_cores({at(0, "n", "m", "0-3", 4, 4)}, 8).cores, 4);
  const cp::CoreCount two =
      cp::count_cores({at(0, "a", "m1", "0-7", 8, 8), at(1, "b", "m2", "0", 1, 8), at(2, "b", "m2", "0", 1, 8)}, 4);
  EXPECT_EQ(two.machines, 2);
  EXPECT_DOUBLE_EQ(two.cores, 5);  // 4 threads on m1, CPU 0 on m2
  EXPECT_DOUBLE_EQ(two.cpus_per_rank, 0.5);
  // A list cut short (63 characters) counts its cpu_count, up to the node's CPUs.
  EXPECT_DOUBLE_EQ(cp::count_cores({at(0, "n", "m", "0,2,4", 40, 64), at(1, "n", "m", "1", 1, 64)}, 64).cores, 41);
}

// Files without the machine count each host as one (the rule before machines were recorded);
// without the CPUs nothing is known.
TEST(Placement, CoresByHostWithoutMachine) {
  std::vector<cp::RankInfo> ranks;
  for (int r = 0; r < 4; ++r) ranks.push_back(on(r, "host" + std::to_string(r + 1), "0-1", 2, 2));
  const cp::CoreCount c = cp::count_cores(ranks, 2);
  EXPECT_TRUE(c.known);
  EXPECT_TRUE(c.by_host);
  EXPECT_EQ(c.machines, 4);
  EXPECT_DOUBLE_EQ(c.cores, 8);
  EXPECT_FALSE(cp::count_cores({on(0, "vm", "", 0, 0)}, 1).known);
  EXPECT_FALSE(cp::count_cores({}, 1).known);
}

TEST(Placement, ThisProcessHasAMachine) {
  EXPECT_FALSE(cp::this_process_cpus().machine.empty());  // Linux: /proc/sys/kernel/random/boot_id
}

}  // namespace
