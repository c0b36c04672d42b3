// Text sampled from a trained model, as llm.c samples after training: the prompt's bytes, then
// `tokens` tokens drawn one at a time from the softmax at `temperature`.
#pragma once

#include <cstdint>
#include <span>
#include <string>

#include "commscope/trainer/config.hpp"

namespace commscope::trainer {

// `params`: the whole model's (layout of `config`); windows of `seq` tokens.
std::string sample_text(const ModelConfig& config, int seq, std::span<const float> params, const std::string& prompt,
                        int tokens, float temperature, std::uint64_t seed);

}  // namespace commscope::trainer
