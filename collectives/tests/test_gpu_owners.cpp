// first_rank_per_gpu and gpus_among (gpu_owners.hpp): which of a node's ranks share a GPU, and how
// many GPUs they hold, by bus id.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "commscope/collectives/gpu_owners.hpp"

namespace commscope {
namespace {

TEST(GpuOwners, EveryGpuVisibleToEveryRank) {
  // 8 ranks over 4 visible GPUs (node rank % 4): ranks 4-7 share the GPUs of ranks 0-3.
  const std::vector<std::string> buses = {"0000:18:00.0", "0000:2A:00.0", "0000:3A:00.0", "0000:5D:00.0",
                                          "0000:18:00.0", "0000:2A:00.0", "0000:3A:00.0", "0000:5D:00.0"};
  EXPECT_EQ(first_rank_per_gpu(buses), (std::vector<int>{0, 1, 2, 3, 0, 1, 2, 3}));
  EXPECT_EQ(gpus_among(buses), 4);
}

TEST(GpuOwners, AGpuOfItsOwnPerRank) {
  // Each rank sees one GPU, device 0 to each of them, a different one: none shares.
  const std::vector<std::string> buses = {"0000:18:00.0", "0000:2A:00.0", "0000:3A:00.0", "0000:5D:00.0"};
  EXPECT_EQ(first_rank_per_gpu(buses), (std::vector<int>{0, 1, 2, 3}));
  EXPECT_EQ(gpus_among(buses), 4);
}

TEST(GpuOwners, OneGpuForAll) {
  EXPECT_EQ(first_rank_per_gpu({"0000:18:00.0", "0000:18:00.0", "0000:18:00.0"}), (std::vector<int>{0, 0, 0}));
  EXPECT_TRUE(first_rank_per_gpu({}).empty());
  EXPECT_EQ(gpus_among({"0000:18:00.0", "0000:18:00.0", "0000:18:00.0"}), 1);
  EXPECT_EQ(gpus_among({"", "", ""}), 0);  // ranks without a GPU
}

}  // namespace
}  // namespace commscope
