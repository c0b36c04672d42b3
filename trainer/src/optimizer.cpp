#include "commscope/trainer/optimizer.hpp"

#include <algorithm>
#include <cmath>
#include <numbers>

namespace commscope::trainer {

float learning_rate(const AdamWOptions& o, std::int64_t step) {
  if (o.warmup_steps > 0 && step < o.warmup_steps)
    return o.lr * static_cast<float>(step + 1) / static_cast<float>(o.warmup_steps);
  if (o.total_steps <= o.warmup_steps) return o.lr;
  const double progress = std::clamp(
      static_cast<double>(step - o.warmup_steps) / static_cast<double>(o.total_steps - o.warmup_steps), 0.0, 1.0);
  const double min_lr = static_cast<double>(o.min_lr_fraction) * o.lr;
  return static_cast<float>(min_lr + 0.5 * (1.0 + std::cos(std::numbers::pi * progress)) * (o.lr - min_lr));
}

bool decays(Tensor t) {
  return t == Tensor::wte || t == Tensor::wpe || t == Tensor::qkvw || t == Tensor::attprojw || t == Tensor::fcw ||
         t == Tensor::fcprojw;
}

void adamw_update(const ParameterLayout& layout, std::size_t begin, std::span<float> params,
                  std::span<const float> grads, std::span<float> m, std::span<float> v, float lr, float grad_scale,
                  const AdamWOptions& o, std::int64_t t) {
  const float correction1 = 1.0f - std::pow(o.beta1, static_cast<float>(t));
  const float correction2 = 1.0f - std::pow(o.beta2, static_cast<float>(t));
  for_each_tensor_piece(layout, begin, begin + params.size(), [&](std::size_t b, std::size_t e, bool decay) {
    const float wd = decay ? o.weight_decay : 0.0f;
    const auto first = static_cast<std::ptrdiff_t>(b - begin), last = static_cast<std::ptrdiff_t>(e - begin);
#pragma omp parallel for schedule(static)
    for (std::ptrdiff_t i = first; i < last; ++i) {
      const auto k = static_cast<std::size_t>(i);
      const float g = grads[k] * grad_scale;
      m[k] = o.beta1 * m[k] + (1.0f - o.beta1) * g;
      v[k] = o.beta2 * v[k] + (1.0f - o.beta2) * g * g;
      const float m_hat = m[k] / correction1, v_hat = v[k] / correction2;
      params[k] -= lr * (m_hat / (std::sqrt(v_hat) + o.eps) + wd * params[k]);
    }
  });
}

}  // namespace commscope::trainer
