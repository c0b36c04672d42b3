#include "commscope/trainer/config.hpp"

#include <stdexcept>

namespace commscope::trainer {

int pad_vocab(int vocab) {
  return (vocab + 127) / 128 * 128;
}

std::int64_t ModelConfig::parameter_count() const {
  const std::int64_t C = channels, L = layers;
  const std::int64_t per_layer = 2 * C + 3 * C * C + 3 * C + C * C + C + 2 * C + 4 * C * C + 4 * C + 4 * C * C + C;
  return static_cast<std::int64_t>(padded_vocab) * C + static_cast<std::int64_t>(max_seq) * C + L * per_layer + 2 * C;
}

std::string ModelConfig::problem() const {
  if (layers < 1) return "the model needs at least 1 layer (got " + std::to_string(layers) + ")";
  if (heads < 1) return "the model needs at least 1 head (got " + std::to_string(heads) + ")";
  if (channels < 1 || channels % heads != 0)
    return "channels (" + std::to_string(channels) + ") must be a positive multiple of heads (" +
           std::to_string(heads) + ")";
  if (max_seq < 1) return "the context length must be at least 1 (got " + std::to_string(max_seq) + ")";
  if (vocab < 2) return "the vocabulary needs at least 2 tokens (got " + std::to_string(vocab) + ")";
  if (padded_vocab < vocab) return "the padded vocabulary is smaller than the vocabulary";
  return "";
}

std::string ModelConfig::tensor_parallel_problem(int tp) const {
  if (tp < 1 || heads % tp != 0) return "the model's " + std::to_string(heads) + " heads are not divisible by it";
  if (padded_vocab % tp != 0)
    return "the model's padded vocabulary of " + std::to_string(padded_vocab) +
           " rows (the vocabulary-parallel wte) is not divisible by it";
  return "";
}

void ModelConfig::check_tokens(const int* tokens, std::size_t n, const char* who, const char* what) const {
  for (std::size_t i = 0; i < n; ++i)
    if (tokens[i] < 0 || tokens[i] >= vocab)
      throw std::out_of_range(std::string(who) + ": " + what + " token " + std::to_string(tokens[i]) + " outside [0, " +
                              std::to_string(vocab) + ")");
}

std::vector<std::string> preset_names() {
  return {"tiny", "small", "gpt2-124m"};
}

ModelConfig preset(std::string_view name) {
  if (name == "tiny") return {32, 256, 256, 2, 2, 32};
  if (name == "small") return {256, 256, 256, 6, 6, 384};
  if (name == "gpt2-124m") return {1024, 50257, 50304, 12, 12, 768};
  throw std::invalid_argument("unknown model '" + std::string(name) + "' (presets: tiny, small, gpt2-124m)");
}

}  // namespace commscope::trainer
