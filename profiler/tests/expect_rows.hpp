#pragma once
// Field-by-field equality of a profile's summary tables, for the tests that read profiles back
// (the profiler's own and the report's readers).

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "commscope/formats/profile.hpp"

inline void expect_same_breakdown(const std::vector<commscope::profiler::BreakdownRow>& got,
                                  const std::vector<commscope::profiler::BreakdownRow>& want) {
  ASSERT_EQ(got.size(), want.size());
  for (std::size_t i = 0; i < want.size(); ++i) {
    SCOPED_TRACE("breakdown[" + std::to_string(i) + "]");
    const auto& g = got[i];
    const auto& w = want[i];
    EXPECT_EQ(g.rank, w.rank);
    EXPECT_EQ(g.iteration, w.iteration);
    EXPECT_EQ(g.start_ns, w.start_ns);
    EXPECT_EQ(g.window_ns, w.window_ns);
    EXPECT_EQ(g.kernel_ns, w.kernel_ns);
    EXPECT_EQ(g.intra_ns, w.intra_ns);
    EXPECT_EQ(g.inter_ns, w.inter_ns);
    EXPECT_EQ(g.comm_ns, w.comm_ns);
    EXPECT_EQ(g.comm_wait_ns, w.comm_wait_ns);
    EXPECT_EQ(g.comm_transfer_ns, w.comm_transfer_ns);
    EXPECT_EQ(g.overlap_ns, w.overlap_ns);
    EXPECT_EQ(g.kernels, w.kernels);
    EXPECT_EQ(g.communications, w.communications);
    EXPECT_EQ(g.operators, w.operators);
    EXPECT_EQ(g.identity_ok, w.identity_ok);
  }
}

inline void expect_same_operators(const std::vector<commscope::profiler::OperatorTotalRow>& got,
                                  const std::vector<commscope::profiler::OperatorTotalRow>& want) {
  ASSERT_EQ(got.size(), want.size());
  for (std::size_t i = 0; i < want.size(); ++i) {
    SCOPED_TRACE("operators[" + std::to_string(i) + "]");
    const auto& g = got[i];
    const auto& w = want[i];
    EXPECT_EQ(g.rank, w.rank);
    EXPECT_EQ(g.name, w.name);
    EXPECT_EQ(g.calls, w.calls);
    EXPECT_EQ(g.host_ns, w.host_ns);
    EXPECT_EQ(g.kernel_ns, w.kernel_ns);
    EXPECT_EQ(g.comm_ns, w.comm_ns);
    EXPECT_EQ(g.intra_ns, w.intra_ns);
    EXPECT_EQ(g.total_ns, w.total_ns);
  }
}
