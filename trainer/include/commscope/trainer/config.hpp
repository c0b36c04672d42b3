#pragma once
// GPT-2 model configurations and the presets of commscope-train.

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace commscope::trainer {

struct ModelConfig {
  int max_seq = 0;       // maxT: positions in wpe
  int vocab = 0;         // V: real vocabulary
  int padded_vocab = 0;  // Vp >= V: rows of wte (llm.c pads 50257 to 50304 for GEMM alignment)
  int layers = 0;        // L
  int heads = 0;         // NH
  int channels = 0;      // C (divisible by heads)

  std::int64_t parameter_count() const;  // sum of the 16 tensors' sizes (padded vocabulary)
  // "" when valid, else one line saying what is wrong.
  std::string problem() const;
  // "" when tensor parallelism over tp ranks can split this model (heads and the padded
  // vocabulary's rows both divisible by tp), else what is not, as "the model's ... by it".
  std::string tensor_parallel_problem(int tp) const;
  // Throws std::out_of_range "<who>: <what> token <t> outside [0, vocab)" for the first of the n
  // tokens that is not a token of this vocabulary.
  void check_tokens(const int* tokens, std::size_t n, const char* who, const char* what) const;
};

// Presets: "tiny" (tests: 2 layers, 2 heads, 32 channels, context 32, byte vocabulary),
// "small" (6 layers, 6 heads, 384 channels, context 256, byte vocabulary), "gpt2-124m" (12, 12,
// 768, context 1024, vocabulary 50257 padded to 50304: llm.c's gpt2_124M.bin). Throws
// std::invalid_argument naming the presets for an unknown name.
ModelConfig preset(std::string_view name);
std::vector<std::string> preset_names();

// The vocabulary padded up to a multiple of 128 (llm.c's rule; 50257 -> 50304, 256 -> 256).
int pad_vocab(int vocab);

}  // namespace commscope::trainer
