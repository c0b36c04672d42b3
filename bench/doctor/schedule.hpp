// The doctor's pair schedule: a round-robin tournament (the circle method), so that in every
// round each rank is in at most one pair and over all rounds every pair meets exactly once; within
// a round, the streams in waves so that no host's link carries two of them at once.
#pragma once

#include <algorithm>
#include <cstddef>
#include <span>
#include <vector>

namespace commscope::doctor {

// Players: p ranks, plus a dummy when p is odd (its partner sits the round out).
constexpr int players(int p) {
  return p % 2 ? p + 1 : p;
}

// Rounds for p ranks: p - 1 for even p, p for odd p (none for a single rank).
constexpr int rounds(int p) {
  return p < 2 ? 0 : players(p) - 1;
}

// Rank x's partner in round r (0 <= r < rounds(p)), or -1 when x sits this round out. Players
// 0..m-2 pair up as x + y = 2r (mod m-1); the one left over (x = r) meets player m-1.
constexpr int partner(int x, int r, int p) {
  const int m = players(p), k = m - 1;
  int y = 0;
  if (x == m - 1) {
    y = r;
  } else if (x == r % k) {
    y = m - 1;
  } else {
    y = ((2 * r - x) % k + k) % k;
  }
  return y < p ? y : -1;
}

// The waves of one round's streams. `peer[x]`: rank x's partner in the round (-1: it sits out);
// `node[x]`: its node. A pair between two nodes streams through both nodes' links, so two such
// pairs of a round that share a node would each measure a share of its link (2 emulated hosts x 2
// ranks at 1gbit, where every round's two pairs both cross or neither does: 0.05-0.08 GB/s a pair
// against the link's 0.123); each gets the first wave in which neither of its nodes streams yet,
// the pairs in order of their lower rank, and pairs within a node (no link) go in wave 0. Each
// rank's wave (-1: it sits out); at least as many waves as the most pairs between nodes that one
// node holds in the round (and, taken greedily, fewer than twice that).
inline std::vector<int> stream_waves(std::span<const int> peer, std::span<const int> node) {
  const std::size_t p = peer.size();
  std::vector<int> wave(p, -1);
  const int nodes = p == 0 ? 0 : *std::max_element(node.begin(), node.end()) + 1;
  std::vector<std::vector<int>> streaming(static_cast<std::size_t>(nodes));  // per node, the waves its link streams in
  auto in = [](const std::vector<int>& waves, int w) {
    return std::find(waves.begin(), waves.end(), w) != waves.end();
  };
  for (std::size_t x = 0; x < p; ++x) {
    const int y = peer[x];
    if (y < 0 || static_cast<std::size_t>(y) < x) continue;
    const auto a = static_cast<std::size_t>(node[x]), b = static_cast<std::size_t>(node[static_cast<std::size_t>(y)]);
    int w = 0;
    if (a != b) {
      while (in(streaming[a], w) || in(streaming[b], w)) ++w;
      streaming[a].push_back(w);
      streaming[b].push_back(w);
    }
    wave[x] = wave[static_cast<std::size_t>(y)] = w;
  }
  return wave;
}

}  // namespace commscope::doctor
