// A hang must end. Blocking MPI collectives have no deadline of their own, and a rank that
// never arrives stalls every other one, so a watchdog thread watches the main thread's
// progress: when a rank makes no progress for `timeout_s` while inside a communication step,
// it prints which collective, algorithm, size and rank, publishes the results file written
// so far, and ends the process with a non-zero status (the launcher then ends the others).
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <string>
#include <thread>

namespace commscope::bench {

struct Case;

class Watchdog {
 public:
  // timeout_s <= 0: no watchdog thread; every call below is then a cheap no-op.
  Watchdog(double timeout_s, int rank);
  ~Watchdog();
  Watchdog(const Watchdog&) = delete;
  Watchdog& operator=(const Watchdog&) = delete;

  // Entering a communication step of case `c` (which must outlive end()); `what` names it.
  void begin(const Case* c, const char* what) noexcept;
  // Progress: call `iteration` finished. One relaxed store and no clock read, so that it can
  // sit in a timed loop: the watchdog thread notices the change and keeps the time itself.
  void progress(std::int64_t iteration) noexcept { iteration_.store(iteration, std::memory_order_relaxed); }
  void end() noexcept { busy_.store(false, std::memory_order_release); }

 private:
  void watch();

  double timeout_s_;
  int rank_;
  std::atomic<bool> busy_{false};
  std::atomic<const Case*> case_{nullptr};
  std::atomic<const char*> what_{""};
  std::atomic<std::uint64_t> step_{0};  // begin() count: a new step is progress too
  std::atomic<std::int64_t> iteration_{-1};
  std::mutex mu_;
  std::condition_variable cv_;
  bool stop_ = false;
  std::thread thread_;
};

// RAII begin/end.
class WatchScope {
 public:
  WatchScope(Watchdog& d, const Case* c, const char* what) : d_(d) { d_.begin(c, what); }
  ~WatchScope() { d_.end(); }
  WatchScope(const WatchScope&) = delete;
  WatchScope& operator=(const WatchScope&) = delete;

 private:
  Watchdog& d_;
};

}  // namespace commscope::bench
