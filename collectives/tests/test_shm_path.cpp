// shm's measured choice between the direct path and the slots.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <vector>

#include "../src/shm_segment.hpp"

using namespace commscope;

// The shm measured choice: each path three times (direct first, alternating), then the faster by
// the slowest rank's estimate, the loser every 32nd call; the second call replaces the first,
// then a faster call is taken whole and a slower one a quarter.
TEST(ShmPathChoice, ExploresBothThenTakesTheFasterAndRevisitsTheLoser) {
  using detail::shm_choose_direct;
  using detail::shm_record_call;
  detail::ShmPathTimes t;
  std::vector<bool> taken;
  // Direct costs 100 us on this rank, the slots 50 us; a peer reports the slots at 300 us.
  for (int call = 0; call < 64; ++call) {
    const bool d = shm_choose_direct(t, std::max<std::uint64_t>(t.slot_ns, t.slot_ns ? 300000 : 0), t.direct_ns);
    taken.push_back(d);
    shm_record_call(t, d, d ? 100000 : 50000);
  }
  for (int call = 0; call < 6; ++call) EXPECT_EQ(taken[static_cast<std::size_t>(call)], call % 2 == 0) << call;
  EXPECT_EQ(t.slot_ns, 50000u);
  EXPECT_EQ(t.direct_ns, 100000u);
  // From call 6 the slowest rank's slots (300 us) lose to direct (100 us), but calls 32 of
  // them revisit the slots.
  for (int call = 6; call < 64; ++call) EXPECT_EQ(taken[static_cast<std::size_t>(call)], call != 32) << call;
  // Nothing faster locally wins if the slowest rank says otherwise.
  detail::ShmPathTimes u{.slot_ns = 10, .direct_ns = 20, .slot_calls = 3, .direct_calls = 4};
  EXPECT_FALSE(shm_choose_direct(u, 10, 20));
  EXPECT_TRUE(shm_choose_direct(u, 30, 20));
  shm_record_call(u, true, 100);  // slower: a quarter of the way
  EXPECT_EQ(u.direct_ns, (3 * 20 + 100) / 4u);
  EXPECT_EQ(u.direct_calls, 5u);
  shm_record_call(u, true, 5);  // faster: taken whole
  EXPECT_EQ(u.direct_ns, 5u);
  // A path's first call (first touches) is replaced by its second, not averaged with it.
  detail::ShmPathTimes v;
  shm_record_call(v, false, 9000);
  shm_record_call(v, false, 1000);
  EXPECT_EQ(v.slot_ns, 1000u);
  shm_record_call(v, false, 3000);
  EXPECT_EQ(v.slot_ns, (3 * 1000 + 3000) / 4u);
}
