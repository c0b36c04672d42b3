#include <chrono>
#include <thread>
#include <vector>

#include "runner.hpp"

namespace commscope::replay {

void spend_gap(GapMode mode, std::int64_t ns) {
  if (mode == GapMode::kNone || ns <= 0) return;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::nanoseconds(ns);
  if (mode == GapMode::kWait) {
    std::this_thread::sleep_until(deadline);
    return;
  }
  // C += A B, [128, 128] f32 each (192 KiB together: the core's caches and its share of memory
  // traffic, as a training step's GEMMs); the clock is read every 8 rows (~130k multiply-adds).
  constexpr int kN = 128;
  static thread_local std::vector<float> a(kN * kN, 1.0f / kN), b(kN * kN, 0.5f), c(kN * kN, 0.0f);
  for (int row = 0;; row = (row + 8) % kN) {
    for (int i = row; i < row + 8; ++i)
      for (int k = 0; k < kN; ++k) {
        const float aik = a[i * kN + k];
        for (int j = 0; j < kN; ++j) c[i * kN + j] += aik * b[k * kN + j];
      }
    if (std::chrono::steady_clock::now() >= deadline) break;
  }
}

}  // namespace commscope::replay
