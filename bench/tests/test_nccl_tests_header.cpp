// nccl-tests' run line and rank lines, character for character as nccl-tests 2.19 prints them.
#include <gtest/gtest.h>

#include <string>

#include "compat/nccl_tests_header.hpp"

using namespace commscope::bench;

TEST(NcclTestsHeader, RunLine) {
  Options o;  // -b 8 -e 64M -f 2 -w 5 -n 20 -c 1
  EXPECT_EQ(nccl_tests_run_line(o),
            "# nThread 1 nGpus 1 minBytes 8 maxBytes 67108864 step: 2(factor) warmup iters: 5 iters: 20 agg iters: 1 "
            "validation: 1 graph: 0 unalign: 0");
  o.step = 1024;  // -i 1024
  o.agg_iters = 4;
  o.check_iters = 0;
  o.unalign = 3;
  EXPECT_EQ(nccl_tests_run_line(o),
            "# nThread 1 nGpus 1 minBytes 8 maxBytes 67108864 step: 1024(bytes) warmup iters: 5 iters: 20 agg iters: 4 "
            "validation: 0 graph: 0 unalign: 3");
  o.step = 0;
  o.factor = 1.5;  // nccl-tests' factor is whole; ours keeps its digits
  EXPECT_NE(nccl_tests_run_line(o).find(" step: 1.5(factor) "), std::string::npos) << nccl_tests_run_line(o);
}

TEST(NcclTestsHeader, RankLines) {
  EXPECT_EQ(nccl_tests_rank_line({3, 12345, "node7", 2, "0000:04:00", "NVIDIA H100 80GB HBM3"}),
            "#  Rank  3 Group  0 Pid  12345 on      node7 device  2 [0000:04:00] NVIDIA H100 80GB HBM3");
  EXPECT_EQ(nccl_tests_rank_line({0, 7, "vm", -1, "", "cpu"}),
            "#  Rank  0 Group  0 Pid      7 on         vm device -1 [cpu] cpu");
}
