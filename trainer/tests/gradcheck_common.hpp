#pragma once
// What the gradient checks share: the model they check, its token batches and the error measure.

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include "commscope/trainer/model.hpp"

namespace commscope::trainer::gradcheck {

inline constexpr int kBatch = 2, kSeq = 8;

// "tiny" (2 layers, 2 heads, 32 channels, context 32) with 200 tokens padded to 256, so the
// padding paths run.
inline ModelConfig test_config() {
  ModelConfig c = preset("tiny");
  c.vocab = 200;
  c.padded_vocab = pad_vocab(c.vocab);
  return c;
}

// kBatch x kSeq tokens below `vocab`, from `seed`.
inline std::vector<int> random_tokens(std::uint64_t seed, int vocab) {
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<int> token(0, vocab - 1);
  std::vector<int> v(static_cast<std::size_t>(kBatch * kSeq));
  for (int& t : v) t = token(rng);
  return v;
}

// |analytic - numeric| relative to the larger of the two, or to `floor` when both are smaller.
inline double rel_error(double analytic, double numeric, double floor) {
  return std::abs(analytic - numeric) / std::max({std::abs(analytic), std::abs(numeric), floor});
}

}  // namespace commscope::trainer::gradcheck
