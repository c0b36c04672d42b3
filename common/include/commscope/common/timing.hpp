// Timing small pieces of work on the host: one clock and one best-of rule for the suite's
// reference rates (commscope-quickbench's loops, commscope-train's sgemm and cuBLAS references,
// the doctor's probes).
#pragma once

#include <algorithm>
#include <chrono>
#include <limits>

namespace commscope::timing {

// Seconds on the steady clock: only differences mean anything.
inline double now_s() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

// Seconds that `work()` takes on the host clock.
template <class Work>
double seconds_of(Work&& work) {
  const double t0 = now_s();
  work();
  return now_s() - t0;
}

// The fastest of `reps` calls of `timed()`, which returns its own seconds (host clock, CUDA
// events, ...), the first call left out as a warm-up (reps >= 2); +inf if none took time.
template <class Timed>
double best_seconds(int reps, Timed&& timed) {
  double best = std::numeric_limits<double>::infinity();
  for (int rep = 0; rep < reps; ++rep) {
    const double s = timed();
    if (rep > 0 && s > 0) best = std::min(best, s);
  }
  return best;
}

// A watchdog's ticks, every `period_s`: late() is true where this tick came more than four
// periods, and at least a second, after the last one. The process did not run meanwhile (stopped
// by SIGSTOP, held by a debugger, its machine paused), so the time without progress a watchdog
// measured across it is its own, not its peers': it counts again from the late tick (a rank
// stopped for longer than the timeout, then resumed by its launcher's SIGCONT, would otherwise
// report a timeout of its own at once).
class Ticks {
 public:
  explicit Ticks(double period_s) : late_s_(std::max(1.0, 4 * period_s)), last_(now_s()) {}
  bool late() {
    const double t = now_s();
    const bool was_late = t - last_ > late_s_;
    last_ = t;
    return was_late;
  }

 private:
  double late_s_, last_;
};

}  // namespace commscope::timing
