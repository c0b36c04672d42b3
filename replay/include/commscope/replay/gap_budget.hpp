#pragma once
// A replay rank's gaps, kept to their recorded sum (docs/replay.md, "Gaps").

#include <algorithm>
#include <cstdint>

namespace commscope::replay {

// How late a rank's gaps ran, taken off its next ones. A rank spending a gap (busy or asleep)
// sees its deadline only when it runs again: on a node with more ranks than cores, a time slice
// late, 2-4 ms a gap; zero3 at 4 ranks on 2 cores has 27 gaps a step, and each step's gaps
// came out 70-120 ms (13-24%) longer than recorded. The recorded compute ended when its work
// was done, on a slice it ran in, so the replay's lateness is its own: the next gaps of the
// iteration absorb it, and their sum stays the recorded one.
class GapBudget {
 public:
  // The time to spend for a recorded gap of `recorded_ns` (ns).
  std::int64_t next(std::int64_t recorded_ns) {
    const std::int64_t give = std::max<std::int64_t>(0, recorded_ns - late_ns_);
    late_ns_ -= std::max<std::int64_t>(0, recorded_ns) - give;
    return give;
  }
  // A gap asked for `asked_ns` took `took_ns`.
  void spent(std::int64_t asked_ns, std::int64_t took_ns) { late_ns_ += std::max<std::int64_t>(0, took_ns - asked_ns); }
  void reset() { late_ns_ = 0; }  // a new iteration
  std::int64_t late_ns() const { return late_ns_; }

 private:
  std::int64_t late_ns_ = 0;
};

}  // namespace commscope::replay
