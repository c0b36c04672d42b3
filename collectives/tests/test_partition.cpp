// The algorithms' partitions: blocks of an array and the fold of a rank count to a power of two.
#include <gtest/gtest.h>

#include <cstddef>

#include "../src/algorithms/common.hpp"

using namespace commscope;

TEST(Partition, BlocksCoverTheArrayAndDifferByAtMostOne) {
  for (std::size_t count : {0u, 1u, 7u, 100u, 1000003u}) {
    for (int parts = 1; parts <= 9; ++parts) {
      const detail::Blocks b{count, parts};
      EXPECT_EQ(b.offset(0), 0u);
      EXPECT_EQ(b.offset(parts), count);
      for (int i = 0; i < parts; ++i) {
        EXPECT_LE(b.size(i), count / static_cast<std::size_t>(parts) + 1);
        EXPECT_GE(b.size(i), count / static_cast<std::size_t>(parts));
      }
    }
  }
}

TEST(Partition, FoldMapsEveryRankAndKeepsRelativeZero) {
  for (int p = 1; p <= 70; ++p) {
    const detail::Fold f(p);
    EXPECT_EQ(f.p2 + f.rem, p);
    EXPECT_EQ(f.p2 & (f.p2 - 1), 0);
    EXPECT_FALSE(f.is_extra(0));
    int extras = 0;
    for (int r = 0; r < p; ++r) {
      if (f.is_extra(r)) {
        ++extras;
        EXPECT_FALSE(f.is_extra(r - 1));
      } else {
        EXPECT_EQ(f.rel_of(f.virt(r)), r);
      }
    }
    EXPECT_EQ(extras, f.rem);
    EXPECT_EQ(f.first_block(0), 0);
    EXPECT_EQ(f.last_block(f.p2 - 1), p);
    for (int v = 0; v + 1 < f.p2; ++v) EXPECT_EQ(f.last_block(v), f.first_block(v + 1));
  }
}
