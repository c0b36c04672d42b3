#pragma once
// AdamW with a linear warm-up + cosine learning-rate schedule and global-norm gradient clipping.

#include <algorithm>
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

// Calls f(b, e, decay) for the pieces [b, e) of [begin, end) that lie in one tensor each (the
// layout's own layers: a pipeline stage's), tensor by tensor: the update's walk, the CPU's and
// the GPU's (which sorts and merges the pieces into launches).
template <class F>
void for_each_tensor_piece(const ParameterLayout& layout, std::size_t begin, std::size_t end, F&& f) {
  const int layers = layout.layers();
  for (int ti = 0; ti < kTensorCount; ++ti) {
    const auto t = static_cast<Tensor>(ti);
    for (int l = 0; l < (is_per_layer(t) ? layers : 1); ++l) {
      const std::size_t b = std::max(begin, layout.offset(t, l));
      const std::size_t e = std::min(end, layout.offset(t, l) + layout.size(t));
      if (b < e) f(b, e, decays(t));
    }
  }
}

// One AdamW update of the parameters [begin, begin + params.size()) of the layout (any range:
// a whole buffer or a rank's shard), with grads already multiplied by grad_scale afterwards
// (clipping): g = grads[i] * grad_scale. t is the 1-based step count for bias correction.
void adamw_update(const ParameterLayout& layout, std::size_t begin, std::span<float> params,
                  std::span<const float> grads, std::span<float> m, std::span<float> v, float lr, float grad_scale,
                  const AdamWOptions& options, std::int64_t t);

}  // namespace commscope::trainer
