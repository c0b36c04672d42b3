#include "sampling.hpp"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <random>
#include <vector>

#include "commscope/trainer/data.hpp"
#include "commscope/trainer/model.hpp"

namespace commscope::trainer {
namespace {

int sample_token(std::span<const float> probs, int vocab, float temperature, std::mt19937_64& rng) {
  std::vector<double> w(static_cast<std::size_t>(vocab));
  for (int i = 0; i < vocab; ++i)
    w[static_cast<std::size_t>(i)] = std::pow(std::max(0.0, static_cast<double>(probs[static_cast<std::size_t>(i)])),
                                              1.0 / static_cast<double>(temperature));
  std::discrete_distribution<int> pick(w.begin(), w.end());
  return pick(rng);
}

}  // namespace

std::string sample_text(const ModelConfig& config, int seq, std::span<const float> params, const std::string& prompt,
                        int tokens, float temperature, std::uint64_t seed) {
  Gpt2<float> sampler(config, 1, seq);
  std::copy(params.begin(), params.end(), sampler.params().begin());
  const std::vector<std::uint16_t> bytes = encode_bytes(prompt);
  std::vector<int> text(bytes.begin(), bytes.end());
  if (text.empty()) text.push_back('\n');
  std::mt19937_64 rng(seed);
  std::vector<int> window(static_cast<std::size_t>(seq), 0);
  for (int i = 0; i < tokens; ++i) {
    const std::size_t n = std::min(text.size(), static_cast<std::size_t>(seq));
    std::copy(text.end() - static_cast<std::ptrdiff_t>(n), text.end(), window.begin());
    sampler.forward(window.data(), nullptr);
    const auto probs = sampler.probs().subspan((n - 1) * static_cast<std::size_t>(config.padded_vocab));
    text.push_back(sample_token(probs, config.vocab, temperature, rng));
  }
  return decode_bytes(text);
}

}  // namespace commscope::trainer
