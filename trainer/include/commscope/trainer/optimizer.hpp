#pragma once
// AdamW with a linear warm-up + cosine learning-rate schedule and global-norm gradient clipping.

#include <cstddef>
#include <cstdint>
#include <span>

#include "commscope/trainer/layout.hpp"

namespace commscope::trainer {

struct AdamWOptions {
  float lr = 3e-4f;  // peak learning rate
  float beta1 = 0.9f;
  float beta2 = 0.95f;
  float eps = 1e-8f;
  float weight_decay = 0.1f;  // on the matrices (wte, wpe, qkvw, attprojw, fcw, fcprojw) only
  float grad_clip = 1.0f;     // global gradient norm limit; 0: no clipping
  int warmup_steps = 0;       // linear from lr/warmup to lr
  int total_steps = 0;        // cosine decay to min_lr_fraction * lr at total_steps; 0: constant after warm-up
  float min_lr_fraction = 0.1f;
};

// The learning rate of step `step` (0-based).
float learning_rate(const AdamWOptions& options, std::int64_t step);

// True for the tensors weight decay applies to.
bool decays(Tensor t);

// One AdamW update of the parameters [begin, begin + params.size()) of the layout (any range:
// a whole buffer or a rank's shard), with grads already multiplied by grad_scale afterwards
// (clipping): g = grads[i] * grad_scale. t is the 1-based step count for bias correction.
void adamw_update(const ParameterLayout& layout, std::size_t begin, std::span<float> params,
                  std::span<const float> grads, std::span<float> m, std::span<float> v, float lr, float grad_scale,
                  const AdamWOptions& options, std::int64_t t);

}  // namespace commscope::trainer
