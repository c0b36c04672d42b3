// The encoder backward's token groups (trainer/cuda/token_groups.hpp), made on the host and read by
// the CUDA kernel: checked here, where the CPU build runs them.
#include <gtest/gtest.h>

#include <climits>
#include <cstdint>
#include <map>
#include <vector>

#include "token_groups.hpp"

namespace {

using commscope::trainer::cuda::group_tokens;
using commscope::trainer::cuda::token_groups_ints;

// token -> its positions in order, from the packed groups; checks the layout on the way.
std::map<int, std::vector<int>> unpack(const std::vector<int>& packed, int n, int groups) {
  std::map<int, std::vector<int>> out;
  const int* start = packed.data() + n;
  const int* token = packed.data() + 2 * n + 1;
  EXPECT_EQ(start[0], 0);
  for (int g = 0; g < groups; ++g) {
    EXPECT_LT(start[g], start[g + 1]) << "group " << g << " is empty";
    if (g > 0) {
      EXPECT_LT(token[g - 1], token[g]) << "groups out of token order";
    }
    for (int j = start[g]; j < start[g + 1]; ++j) out[token[g]].push_back(packed[static_cast<std::size_t>(j)]);
  }
  return out;
}

// The same from the tokens directly: the positions of each token in [v0, v0 + rows), ascending.
std::map<int, std::vector<int>> expected(const std::vector<int>& tokens, int v0, int rows) {
  std::map<int, std::vector<int>> out;
  for (int i = 0; i < static_cast<int>(tokens.size()); ++i)
    if (tokens[static_cast<std::size_t>(i)] >= v0 && tokens[static_cast<std::size_t>(i)] - v0 < rows)
      out[tokens[static_cast<std::size_t>(i)]].push_back(i);
  return out;
}

TEST(TokenGroups, EveryTokensPositionsInOrder) {
  const std::vector<int> tokens = {7, 3, 7, 50256, 0, 3, 3, 9, 7, 0};
  const int n = static_cast<int>(tokens.size());
  std::vector<int> packed(token_groups_ints(tokens.size()), -1);
  std::vector<std::uint64_t> keys;
  const int groups = group_tokens(tokens.data(), n, 0, INT_MAX, packed.data(), keys);
  EXPECT_EQ(groups, 5);
  EXPECT_EQ(unpack(packed, n, groups), expected(tokens, 0, INT_MAX));
  EXPECT_EQ(packed[static_cast<std::size_t>(n + groups)], n);  // the last group ends at the last position
}

TEST(TokenGroups, OnlyARanksRows) {
  const std::vector<int> tokens = {7, 3, 7, 12, 0, 3, 15, 9, 8, 16};
  const int n = static_cast<int>(tokens.size());
  std::vector<int> packed(token_groups_ints(tokens.size()));
  std::vector<std::uint64_t> keys;
  for (int v0 : {0, 8, 16}) {
    const int groups = group_tokens(tokens.data(), n, v0, 8, packed.data(), keys);
    EXPECT_EQ(unpack(packed, n, groups), expected(tokens, v0, 8)) << "rows from " << v0;
  }
  EXPECT_EQ(group_tokens(tokens.data(), n, 100, 8, packed.data(), keys), 0);  // no token of this rank's
  EXPECT_EQ(packed[static_cast<std::size_t>(n)], 0);
}

TEST(TokenGroups, ManyPositions) {
  std::vector<int> tokens(8192);
  for (std::size_t i = 0; i < tokens.size(); ++i) tokens[i] = static_cast<int>((i * 7919) % 1021);
  std::vector<int> packed(token_groups_ints(tokens.size()));
  std::vector<std::uint64_t> keys;
  const int n = static_cast<int>(tokens.size());
  const int groups = group_tokens(tokens.data(), n, 0, INT_MAX, packed.data(), keys);
  EXPECT_EQ(groups, 1021);
  EXPECT_EQ(unpack(packed, n, groups), expected(tokens, 0, INT_MAX));
}

}  // namespace
