// The process grid's rank formula (common/grid_ranks.hpp): rank = tp_rank + tp (dp_rank + dp
// pp_rank), and the group colours the trainer splits the world with.
#include <gtest/gtest.h>

#include <optional>
#include <set>

#include "commscope/common/grid_ranks.hpp"

namespace {

using commscope::GridPlace;
using commscope::GridShape;

TEST(ProcessGrid, ShapeOfRanks) {
  const std::optional<GridShape> s = GridShape::of(8, 2, 2);
  ASSERT_TRUE(s);
  EXPECT_EQ(s->tp, 2);
  EXPECT_EQ(s->dp, 2);
  EXPECT_EQ(s->pp, 2);
  EXPECT_EQ(s->ranks(), 8);
  EXPECT_FALSE(GridShape::of(6, 4, 1));  // 4 does not divide 6
  EXPECT_FALSE(GridShape::of(8, 0, 1));
  EXPECT_FALSE(GridShape::of(8, 2, 0));
  EXPECT_FALSE(GridShape::of(0, 1, 1));
}

TEST(ProcessGrid, TpInnermostPpOutermost) {
  const GridShape s = *GridShape::of(12, 2, 3);  // dp 2
  EXPECT_EQ(s.place(0), (GridPlace{0, 0, 0}));
  EXPECT_EQ(s.place(1), (GridPlace{1, 0, 0}));
  EXPECT_EQ(s.place(2), (GridPlace{0, 1, 0}));
  EXPECT_EQ(s.place(5), (GridPlace{1, 0, 1}));
  EXPECT_EQ(s.place(11), (GridPlace{1, 1, 2}));
  for (int r = 0; r < s.ranks(); ++r) EXPECT_EQ(s.rank(s.place(r)), r) << r;
}

// Every kind of group partitions the world into groups of its size, whose members differ in
// that kind's coordinate only.
TEST(ProcessGrid, GroupColours) {
  const GridShape s = *GridShape::of(24, 2, 3);  // dp 4
  std::set<int> tp, dp, pp, mp;
  for (int r = 0; r < s.ranks(); ++r) {
    const GridPlace p = s.place(r);
    tp.insert(s.tp_color(p));
    dp.insert(s.dp_color(p));
    pp.insert(s.pp_color(p));
    mp.insert(s.mp_color(p));
    for (int q = 0; q < s.ranks(); ++q) {
      const GridPlace o = s.place(q);
      EXPECT_EQ(s.tp_color(p) == s.tp_color(o), p.dp_rank == o.dp_rank && p.pp_rank == o.pp_rank);
      EXPECT_EQ(s.dp_color(p) == s.dp_color(o), p.tp_rank == o.tp_rank && p.pp_rank == o.pp_rank);
      EXPECT_EQ(s.pp_color(p) == s.pp_color(o), p.tp_rank == o.tp_rank && p.dp_rank == o.dp_rank);
      if (s.mp_color(p) == s.mp_color(o) && r != q) {
        EXPECT_NE(s.mp_key(p), s.mp_key(o));
      }
    }
  }
  EXPECT_EQ(tp.size(), 12u);  // dp x pp groups of tp ranks
  EXPECT_EQ(dp.size(), 6u);   // tp x pp groups of dp ranks
  EXPECT_EQ(pp.size(), 8u);   // tp x dp groups of pp ranks
  EXPECT_EQ(mp.size(), 4u);   // one per data-parallel replica
}

}  // namespace
