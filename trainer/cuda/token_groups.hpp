#pragma once
// The positions of a micro-batch's tokens grouped by token, for the encoder's backward
// (cuda_kernels::encoder_backward): it adds each token's positions of dout into the token's row of
// dwte, and with the groups made on the host, where the tokens are before the step, one block per
// token reads that token's positions and nothing else (N C reads in all, one launch with the
// positions' sum into dwpe), deterministically and with one rounding per row.
//
// Free of CUDA, so that the CPU build's tests check it.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

namespace commscope::trainer::cuda {

// One array of ints, uploaded at once, for N positions:
//   [0, N)               the grouped positions: group 0's in ascending order, then group 1's, ...
//   [N, N + G + 1)       group g's positions are [start[g], start[g + 1]) of the above
//   [2N + 1, 2N + 1 + G) group g's token
// Groups in ascending token order; G <= N.
inline std::size_t token_groups_ints(std::size_t positions) {
  return 3 * positions + 1;
}

// Groups the positions [0, n) of tokens whose token lies in [v0, v0 + rows) (a rank's vocabulary
// rows; every token with v0 = 0 and rows = INT_MAX) into packed (token_groups_ints(n) ints);
// returns G. keys is scratch, kept by the caller between calls.
inline int group_tokens(const int* tokens, int n, int v0, int rows, int* packed, std::vector<std::uint64_t>& keys) {
  if (n < 0) throw std::invalid_argument("group_tokens: negative count " + std::to_string(n));
  keys.clear();
  for (int i = 0; i < n; ++i)
    if (tokens[i] >= v0 && tokens[i] - v0 < rows)
      keys.push_back(static_cast<std::uint64_t>(static_cast<std::uint32_t>(tokens[i])) << 32 |
                     static_cast<std::uint32_t>(i));
  std::sort(keys.begin(), keys.end());  // by token, then position
  int* positions = packed;
  int* start = packed + n;
  int* token = packed + 2 * static_cast<std::ptrdiff_t>(n) + 1;
  int groups = 0;
  for (std::size_t j = 0; j < keys.size(); ++j) {
    const int t = static_cast<int>(keys[j] >> 32);
    if (groups == 0 || token[groups - 1] != t) {
      start[groups] = static_cast<int>(j);
      token[groups++] = t;
    }
    positions[j] = static_cast<int>(keys[j] & 0xffffffffu);
  }
  start[groups] = static_cast<int>(keys.size());
  return groups;
}

}  // namespace commscope::trainer::cuda
