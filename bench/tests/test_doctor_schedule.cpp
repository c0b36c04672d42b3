// The doctor's tournament: every pair of ranks meets exactly once, no rank is in two pairs of
// one round, and partners agree, for 1 to 40 ranks (odd counts sit one rank out per round).
#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <utility>
#include <vector>

#include "schedule.hpp"  // bench/doctor/

namespace doc = commscope::doctor;

TEST(DoctorSchedule, EveryPairOnceOnePairPerRankPerRound) {
  for (int p = 1; p <= 40; ++p) {
    SCOPED_TRACE(p);
    EXPECT_EQ(doc::rounds(p), p < 2 ? 0 : (p % 2 ? p : p - 1));
    std::set<std::pair<int, int>> met;
    for (int r = 0; r < doc::rounds(p); ++r) {
      int idle = 0;
      for (int x = 0; x < p; ++x) {
        const int y = doc::partner(x, r, p);
        if (y < 0) {
          ++idle;
          continue;
        }
        ASSERT_GE(y, 0);
        ASSERT_LT(y, p);
        ASSERT_NE(x, y);
        ASSERT_EQ(doc::partner(y, r, p), x) << "round " << r;  // partners agree: one pair each
        if (x < y) {
          EXPECT_TRUE(met.insert({x, y}).second) << x << "-" << y << " met twice";
        }
      }
      EXPECT_EQ(idle, p % 2) << "round " << r;
    }
    EXPECT_EQ(met.size(), static_cast<std::size_t>(p * (p - 1) / 2));
  }
}

// A round's streams in waves (stream_waves): both ranks of a pair in one wave, pairs within a node
// in wave 0, no node's link in two streams of one wave, and as few waves as the busiest node needs
// at least, fewer than twice that at most; over every round of 1 to 40 ranks on nodes of 1 to 5
// ranks, in blocks and round robin.
TEST(DoctorSchedule, StreamWavesGiveEachLinkOneStreamAtATime) {
  for (int per_node = 1; per_node <= 5; ++per_node) {
    for (int p = 1; p <= 40; ++p) {
      for (const bool blocks : {true, false}) {
        SCOPED_TRACE(::testing::Message() << p << " ranks, " << per_node << " a node, blocks " << blocks);
        const int nodes = (p + per_node - 1) / per_node;
        std::vector<int> node(static_cast<std::size_t>(p));
        for (int x = 0; x < p; ++x) node[static_cast<std::size_t>(x)] = blocks ? x / per_node : x % nodes;
        for (int r = 0; r < doc::rounds(p); ++r) {
          std::vector<int> peer(static_cast<std::size_t>(p));
          for (int x = 0; x < p; ++x) peer[static_cast<std::size_t>(x)] = doc::partner(x, r, p);
          const std::vector<int> wave = doc::stream_waves(peer, node);
          ASSERT_EQ(wave.size(), peer.size());
          std::set<std::pair<int, int>> streaming;  // (wave, node) of the streams between nodes
          std::vector<int> crossing(static_cast<std::size_t>(nodes), 0);
          int waves = 0;
          for (int x = 0; x < p; ++x) {
            const int y = peer[static_cast<std::size_t>(x)], w = wave[static_cast<std::size_t>(x)];
            if (y < 0) {
              EXPECT_EQ(w, -1) << "rank " << x << " sits out";
              continue;
            }
            ASSERT_GE(w, 0);
            EXPECT_EQ(wave[static_cast<std::size_t>(y)], w) << "round " << r << ": " << x << "-" << y;
            waves = std::max(waves, w + 1);
            const int a = node[static_cast<std::size_t>(x)], b = node[static_cast<std::size_t>(y)];
            if (a == b) {
              EXPECT_EQ(w, 0) << "round " << r << ": " << x << "-" << y << " within a node";
            } else if (x < y) {
              EXPECT_TRUE(streaming.insert({w, a}).second) << "round " << r << " wave " << w << ": node " << a;
              EXPECT_TRUE(streaming.insert({w, b}).second) << "round " << r << " wave " << w << ": node " << b;
              ++crossing[static_cast<std::size_t>(a)], ++crossing[static_cast<std::size_t>(b)];
            }
          }
          const int busiest = *std::max_element(crossing.begin(), crossing.end());
          EXPECT_GE(std::max(waves, 1), busiest) << "round " << r;
          EXPECT_LE(waves, std::max(1, 2 * busiest - 1)) << "round " << r;
        }
      }
    }
  }
}
