#include "watchdog.hpp"

#include <pthread.h>

#include <algorithm>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "cases.hpp"
#include "clock.hpp"
#include "commscope/collectives/mpi_transport.hpp"
#include "commscope/common/stop_signals.hpp"
#include "commscope/common/timing.hpp"
#include "commscope/profiler/flight.hpp"
#include "results.hpp"

namespace commscope::bench {

Watchdog::Watchdog(double timeout_s, int rank) : timeout_s_(timeout_s), rank_(rank) {
  if (timeout_s_ <= 0) return;
  // The watchdog thread must not take the signals meant for the main thread's handlers.
  sigset_t all, old;
  sigfillset(&all);
  pthread_sigmask(SIG_BLOCK, &all, &old);
  thread_ = std::thread([this] { watch(); });
  pthread_sigmask(SIG_SETMASK, &old, nullptr);
}

Watchdog::~Watchdog() {
  if (!thread_.joinable()) return;
  {
    std::lock_guard lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  thread_.join();
}

void Watchdog::begin(const Case* c, const char* what) noexcept {
  case_.store(c, std::memory_order_relaxed);
  what_.store(what, std::memory_order_relaxed);
  iteration_.store(-1, std::memory_order_relaxed);
  step_.fetch_add(1, std::memory_order_relaxed);
  busy_.store(true, std::memory_order_release);
}

void Watchdog::watch() {
  const auto timeout_ns = static_cast<std::int64_t>(timeout_s_ * 1e9);
  const auto period = std::chrono::milliseconds(std::clamp<std::int64_t>(timeout_ns / 20'000'000, 10, 500));
  // The last (step, iteration) seen and when it was first seen: progress is any change of it.
  std::uint64_t seen_step = 0;
  std::int64_t seen_it = -2, seen_ns = now_ns();
  // A tick far later than its period: this rank itself was not running (timing::Ticks).
  timing::Ticks ticks(std::chrono::duration<double>(period).count());
  std::unique_lock lock(mu_);
  while (!cv_.wait_for(lock, period, [this] { return stop_; })) {
    const bool resumed = ticks.late();
    if (!busy_.load(std::memory_order_acquire)) continue;
    const std::uint64_t step = step_.load(std::memory_order_relaxed);
    const std::int64_t it = iteration_.load(std::memory_order_relaxed);
    const std::int64_t now = now_ns();
    if (step != seen_step || it != seen_it || resumed) {
      seen_step = step;
      seen_it = it;
      seen_ns = now;
      continue;
    }
    const std::int64_t idle = now - seen_ns;
    if (idle <= timeout_ns) continue;
    const Case* c = case_.load(std::memory_order_relaxed);
    // Who went quiet: in a blocking MPI call the rank cannot tell whom it waits on, but it knows
    // whom it last heard from and when (a peer on a dead host or link is silent since).
    std::string silent;
    try {
      silent = MpiTransport::silent_peers(std::max(1.0, static_cast<double>(idle) * 1e-9 / 2));
    } catch (...) {
    }
    std::fprintf(stderr,
                 "commscope-bench: rank %d: timeout: no progress for %.1f s (-T %g) in %s of %s, after call %lld; "
                 "silent peers: %s; ending the run\n",
                 rank_, static_cast<double>(idle) * 1e-9, timeout_s_, what_.load(std::memory_order_relaxed),
                 c ? describe(*c).c_str() : "?", static_cast<long long>(it + 1),
                 silent.empty() ? "none" : silent.c_str());
    std::fflush(stderr);
    (void)profiler::flight::dump("timeout");  // where this rank is, for commscope-report hang
    // The main thread is blocked in communication, not in the results file: publish what
    // was flushed so far, then end without running destructors that could block on MPI.
    stop::publish_now();
    std::_Exit(3);
  }
}

}  // namespace commscope::bench
