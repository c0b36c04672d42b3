// The FLOPs of a GPT-2 training iteration, in one header that depends on nothing: the trainer's
// step log and the analysis (model_math.hpp's flops_per_iteration, the report's predictions)
// both count them here (docs/design.md, "Analysis formulas").
#pragma once

namespace commscope {

// One training iteration (forward + backward = 3x forward) of b sequences of s tokens through l
// transformer blocks of d channels:
//   b (72 s d^2 + 12 s^2 d) l
// (per block forward: 24 b s d^2 for the matmuls + 4 b s^2 d for attention scores and values).
// The output head's 6 b s d V is left out.
constexpr double transformer_flops(double b, double s, double d, double l) noexcept {
  return b * (72.0 * s * d * d + 12.0 * s * s * d) * l;
}

}  // namespace commscope
