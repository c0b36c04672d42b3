// CPU lists (cpu_list.hpp): written with runs joined, read back, malformed ones refused.
#include "commscope/common/cpu_list.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

namespace commscope {
namespace {

TEST(CpuList, JoinsRuns) {
  EXPECT_EQ(cpu_list({}), "");
  EXPECT_EQ(cpu_list({0}), "0");
  EXPECT_EQ(cpu_list({0, 1}), "0-1");
  EXPECT_EQ(cpu_list({0, 1, 2, 3, 8, 10, 11}), "0-3,8,10-11");
}

TEST(CpuList, Parse) {
  EXPECT_EQ(parse_cpu_list(""), std::vector<int>{});
  EXPECT_EQ(parse_cpu_list("3"), std::vector<int>{3});
  EXPECT_EQ(parse_cpu_list("0-3,8,10-11"), (std::vector<int>{0, 1, 2, 3, 8, 10, 11}));
  EXPECT_EQ(parse_cpu_list("8,0-1,1"), (std::vector<int>{0, 1, 8}));
  for (const char* bad : {"-1", "3-1", "0,", "0-", "a", "0;1", "1,,2", "99999999"})
    EXPECT_EQ(parse_cpu_list(bad), std::vector<int>{}) << bad;
  EXPECT_EQ(parse_cpu_list(cpu_list({0, 1, 2, 5, 7, 8})), (std::vector<int>{0, 1, 2, 5, 7, 8}));
}

TEST(CpuList, ThisProcessRunsSomewhere) {
  const std::vector<int> cpus = affinity_cpus();
  ASSERT_FALSE(cpus.empty());
  EXPECT_TRUE(std::is_sorted(cpus.begin(), cpus.end()));
}

}  // namespace
}  // namespace commscope
