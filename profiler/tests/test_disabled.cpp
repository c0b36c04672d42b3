// Compiled with COMMSCOPE_PROFILER_DISABLE: the scopes are empty and record nothing even while a
// session records.
#include <gtest/gtest.h>

#include <type_traits>

#include "../src/registry.hpp"
#include "commscope/profiler/recorder.hpp"

namespace cp = commscope::profiler;

TEST(CompiledOut, ScopesAreEmptyAndRecordNothing) {
  static_assert(std::is_empty_v<cp::KernelScope> && std::is_empty_v<cp::OperatorScope> &&
                std::is_empty_v<cp::CommScope> && std::is_empty_v<cp::IterationScope>);
  cp::detail::configure_buffers(64, 1024);
  cp::detail::g_recording.store(true);
  {
    COMMSCOPE_PROFILE_ITERATION(1);
    COMMSCOPE_PROFILE_OPERATOR("op");
    COMMSCOPE_PROFILE_KERNEL("k");
    COMMSCOPE_PROFILE_COMM("allreduce", "ring", 8);
    cp::KernelScope k(0);
  }
  cp::detail::g_recording.store(false);
  std::int64_t dropped = -1;
  EXPECT_TRUE(cp::detail::collect_events(0, dropped).empty());
}
