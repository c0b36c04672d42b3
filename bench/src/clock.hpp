// The bench's clock: every timed loop, the watchdog and the clock-offset estimate read it, so
// that their nanoseconds compare.
#pragma once

#include <chrono>
#include <cstdint>

namespace commscope::bench {

// ns on the monotonic clock (steady_clock: never steps back, unlike the wall clock).
inline std::int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

}  // namespace commscope::bench
