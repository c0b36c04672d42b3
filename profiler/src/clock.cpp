#include "commscope/profiler/clock.hpp"

#include <cstdio>
#include <cstring>

namespace commscope::profiler {

bool tsc_usable() noexcept {
#if defined(__x86_64__)
  // The kernel only keeps "tsc" as its clocksource when the TSC is invariant and synchronised
  // across CPUs; otherwise it falls back to hpet/acpi_pm (and so do we, to CLOCK_MONOTONIC).
  std::FILE* f = std::fopen("/sys/devices/system/clocksource/clocksource0/current_clocksource", "r");
  if (f == nullptr) return false;
  char source[64] = {};
  const bool ok = std::fgets(source, sizeof source, f) != nullptr;
  std::fclose(f);
  return ok && std::strncmp(source, "tsc", 3) == 0 && (source[3] == '\n' || source[3] == '\0');
#else
  return false;
#endif
}

namespace {

// A (tsc, mono) pair read as close together as we can: the tightest of a few brackets.
void sample_pair(std::int64_t& tsc, std::int64_t& mono) noexcept {
  std::int64_t best = -1;
  for (int i = 0; i < 7; ++i) {
    const std::int64_t m0 = mono_ns();
#if defined(__x86_64__)
    const auto t = static_cast<std::int64_t>(__rdtsc());
#else
    const std::int64_t t = 0;
#endif
    const std::int64_t m1 = mono_ns();
    if (best < 0 || m1 - m0 < best) {
      best = m1 - m0;
      tsc = t;
      mono = m0 + (m1 - m0) / 2;
    }
  }
}

}  // namespace

void TickConverter::start(bool allow_tsc) noexcept {
  tsc_ = allow_tsc && tsc_usable();
  detail::g_use_tsc.store(tsc_, std::memory_order_relaxed);
  if (tsc_) {
    sample_pair(tsc0_, mono0_);
    epoch_mono_ = mono0_;
    tsc1_ = tsc0_;
    mono1_ = mono0_;
    ns_per_tick_ = 1.0;  // refined by stop(); until then only mono_to_ns is meaningful
  } else {
    epoch_mono_ = mono_ns();
  }
}

void TickConverter::stop() noexcept {
  if (!tsc_) return;
  sample_pair(tsc1_, mono1_);
  if (tsc1_ > tsc0_) ns_per_tick_ = static_cast<double>(mono1_ - mono0_) / static_cast<double>(tsc1_ - tsc0_);
}

std::int64_t TickConverter::to_ns(std::int64_t raw) const noexcept {
  if (!tsc_) return raw - epoch_mono_;
  // Relative to the first calibration pair, so the product stays small and exact enough
  // (a run of hours is < 2^45 ticks; double keeps 53 bits).
  const double dt = static_cast<double>(raw - tsc0_) * ns_per_tick_;
  return mono0_ - epoch_mono_ + static_cast<std::int64_t>(dt >= 0 ? dt + 0.5 : dt - 0.5);
}

}  // namespace commscope::profiler
