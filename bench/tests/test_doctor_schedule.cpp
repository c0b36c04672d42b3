// The doctor's tournament: every pair of ranks meets exactly once, no rank is in two pairs of
// one round, and partners agree, for 1 to 40 ranks (odd counts sit one rank out per round).
#include <gtest/gtest.h>

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
