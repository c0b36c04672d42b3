#include "commscope/replay/heap.hpp"

#if defined(__GLIBC__)
#include <malloc.h>

#include <climits>
#endif

namespace commscope::replay {

bool keep_freed_heap() {
#if defined(__GLIBC__)
  // M_TRIM_THRESHOLD as large as an int goes: the heap's top is never given back.
  return mallopt(M_MMAP_THRESHOLD, static_cast<int>(kKeptBlockBytes)) == 1 && mallopt(M_TRIM_THRESHOLD, INT_MAX) == 1;
#else
  return false;
#endif
}

}  // namespace commscope::replay
