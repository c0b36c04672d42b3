#pragma once
// The recording clock. The hot path reads raw ticks (the TSC on x86-64 when the kernel itself
// uses it as its clocksource, i.e. it is invariant and synchronised across cores; otherwise
// CLOCK_MONOTONIC in ns); a TickConverter calibrated at session start and stop turns ticks into
// ns since the rank's epoch. Reading CLOCK_MONOTONIC costs ~30 ns in a VM, the TSC ~10 ns, and a
// scope reads the clock twice: that is the difference between meeting a 50 ns/event budget and not.

#include <cstdint>
#include <ctime>

#if defined(__x86_64__)
#include <x86intrin.h>
#endif

#include <atomic>

namespace commscope::profiler {

inline std::int64_t mono_ns() noexcept {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<std::int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

namespace detail {
// Set once per session before recording starts (TickConverter::start), read on every event.
inline std::atomic<bool> g_use_tsc{false};
}  // namespace detail

inline std::int64_t ticks() noexcept {
#if defined(__x86_64__)
  if (detail::g_use_tsc.load(std::memory_order_relaxed)) return static_cast<std::int64_t>(__rdtsc());
#endif
  return mono_ns();
}

// Whether the TSC is usable here: x86-64 and the kernel's current clocksource is "tsc".
bool tsc_usable() noexcept;

// Converts raw ticks to ns since the epoch (the mono_ns() value at start()).
class TickConverter {
 public:
  // Picks the time source (TSC when usable and allowed), sets the epoch, takes the first
  // calibration pair.
  void start(bool allow_tsc = true) noexcept;
  // Takes the second calibration pair (the TSC rate is measured over the whole session).
  void stop() noexcept;

  bool uses_tsc() const noexcept { return tsc_; }
  const char* source() const noexcept { return tsc_ ? "tsc" : "steady_clock"; }
  std::int64_t epoch_mono_ns() const noexcept { return epoch_mono_; }
  // ns since the epoch; valid after stop() (before it, with the TSC, a nominal rate is used).
  std::int64_t to_ns(std::int64_t raw) const noexcept;
  // mono_ns() -> ns since the epoch.
  std::int64_t mono_to_ns(std::int64_t mono) const noexcept { return mono - epoch_mono_; }

 private:
  bool tsc_ = false;
  std::int64_t epoch_mono_ = 0;
  std::int64_t tsc0_ = 0, mono0_ = 0, tsc1_ = 0, mono1_ = 0;
  double ns_per_tick_ = 1.0;
};

}  // namespace commscope::profiler
