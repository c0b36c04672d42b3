// The CUDA AdamW launchers (the kernel is in kernels.cu): the host side, which needs the trainer's
// C++20 headers, so it is compiled as C++ rather than by nvcc.
#include <cmath>
#include <vector>

#include "adamw_pieces.hpp"
#include "commscope/trainer/layout.hpp"
#include "commscope/trainer/optimizer.hpp"
#include "kernels_cuda.hpp"

namespace commscope::trainer::cuda_kernels {

namespace {

using detail::AdamWPiece;

detail::AdamWStep step_scalars(float lr, float grad_scale, const AdamWOptions& o, std::int64_t t) {
  // The bias corrections exactly as the CPU adamw_update computes them: float pow, here on the host.
  return {lr,
          grad_scale,
          o.beta1,
          o.beta2,
          1.0f - o.beta1,
          1.0f - o.beta2,
          o.eps,
          1.0f - std::pow(o.beta1, static_cast<float>(t)),
          1.0f - std::pow(o.beta2, static_cast<float>(t))};
}

}  // namespace

void adamw_update(float* params, const float* grads, float* m, float* v, std::size_t count, float lr, float grad_scale,
                  float weight_decay, const AdamWOptions& options, std::int64_t t, cudaStream_t stream) {
  if (count == 0) return;
  const AdamWPiece whole{0, count, weight_decay};
  detail::launch_adamw(params, grads, m, v, static_cast<float*>(nullptr), &whole, 1,
                       step_scalars(lr, grad_scale, options, t), stream);
}

template <class G>
void adamw_update(const ParameterLayout& layout, std::size_t begin, float* params, const G* grads, float* m, float* v,
                  G* out, std::size_t count, float lr, float grad_scale, const AdamWOptions& options, std::int64_t t,
                  cudaStream_t stream) {
  const std::vector<AdamWPiece> merged = adamw_pieces(layout, begin, count, options.weight_decay);
  if (merged.empty()) return;
  detail::launch_adamw(params, grads, m, v, out, merged.data(), merged.size(), step_scalars(lr, grad_scale, options, t),
                       stream);
}

template void adamw_update<float>(const ParameterLayout&, std::size_t, float*, const float*, float*, float*, float*,
                                  std::size_t, float, float, const AdamWOptions&, std::int64_t, cudaStream_t);
template void adamw_update<__nv_bfloat16>(const ParameterLayout&, std::size_t, float*, const __nv_bfloat16*, float*,
                                          float*, __nv_bfloat16*, std::size_t, float, float, const AdamWOptions&,
                                          std::int64_t, cudaStream_t);

}  // namespace commscope::trainer::cuda_kernels
