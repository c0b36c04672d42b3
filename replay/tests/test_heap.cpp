// The replay's heap setting (heap.hpp): an MPI collective's per-call temporaries, freed, stay in
// the heap for the next call instead of being given back and faulted in again. Its own process:
// the setting is the process's.
#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>

#include "commscope/replay/heap.hpp"

#if defined(__GLIBC__)
#include <malloc.h>
#endif

namespace rp = commscope::replay;

#if defined(__GLIBC__)
namespace {

constexpr std::size_t kBlock = std::size_t{7} << 20;  // zero3's reduce-scatter array, small model

struct Heap {
  std::size_t arena, mapped, free_bytes;  // bytes: the heap (sbrk), mmapped blocks, free in the heap
};
Heap heap() {
  const struct mallinfo2 m = mallinfo2();
  return {m.arena, m.hblkhd, m.fordblks};
}

// One collective's temporaries: two blocks, written, then freed; returns the heap after.
Heap one_call() {
  void* volatile a = std::malloc(kBlock);
  void* volatile b = std::malloc(kBlock);
  EXPECT_TRUE(a != nullptr && b != nullptr);
  std::memset(a, 1, kBlock);
  std::memset(b, 1, kBlock);
  std::free(b);
  std::free(a);
  return heap();
}

}  // namespace

TEST(ReplayHeap, FreedTemporariesStayForTheNextCall) {
  // glibc's default in a process that holds little: the first call's blocks are mapped and
  // unmapped, the next ones' (the threshold raised to their size) come from the heap, which is
  // trimmed when they are freed: every call faults its 14 MiB in again.
  const Heap start = heap();
  (void)one_call();
  for (int call = 1; call < 3; ++call)
    EXPECT_LT(one_call().arena, start.arena + kBlock) << "default, call " << call << ": the heap was kept";

  ASSERT_TRUE(rp::keep_freed_heap());
  for (int call = 0; call < 3; ++call) {
    const Heap after = one_call();
    EXPECT_EQ(after.mapped, start.mapped) << "call " << call << ": blocks mapped, not taken from the heap";
    EXPECT_GE(after.arena, 2 * kBlock) << "call " << call << ": the heap was given back";
    EXPECT_GE(after.free_bytes, 2 * kBlock) << "call " << call << ": the freed blocks left the heap";
  }
}
#else
TEST(ReplayHeap, FreedTemporariesStayForTheNextCall) {
  GTEST_SKIP() << "not glibc: no heap setting";
}
#endif
