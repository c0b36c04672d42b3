// The -J results file's fields computed apart from writing it.
#include <gtest/gtest.h>

#include "compat/json_results.hpp"

using namespace commscope;
using namespace commscope::bench;

TEST(Json, NcclVersionCodes) {
  EXPECT_EQ(nccl_version_code("2.28.9"), 22809);
  EXPECT_EQ(nccl_version_code("2.8.4"), 2804);  // before 2.9 the minor took two digits less
  EXPECT_EQ(nccl_version_code("none"), 0);
}
