#pragma once
// The pieces of a GPU AdamW update (adamw.cpp): free of CUDA, so that the CPU build's tests check
// them against the CPU update's walk.
#include <algorithm>
#include <cstddef>
#include <vector>

#include "adamw_piece.hpp"
#include "commscope/trainer/layout.hpp"
#include "commscope/trainer/optimizer.hpp"

namespace commscope::trainer::cuda_kernels {

// The parameters [begin, begin + count) of the layout cut where the weight decay changes: the
// pieces that lie in one tensor each, as the CPU update walks them (for_each_tensor_piece),
// relative to begin, in buffer order, neighbours of the same decay merged (so that a launch, up
// to 32 pieces, covers as much as it can). Ascending and disjoint.
inline std::vector<detail::AdamWPiece> adamw_pieces(const ParameterLayout& layout, std::size_t begin,
                                                     std::size_t count, float weight_decay) {
  std::vector<detail::AdamWPiece> pieces;
  for_each_tensor_piece(layout, begin, begin + count, [&](std::size_t b, std::size_t e, bool decay) {
    pieces.push_back({b - begin, e - begin, decay ? weight_decay : 0.0f});
  });
  std::sort(pieces.begin(), pieces.end(), [](const auto& x, const auto& y) { return x.begin < y.begin; });
  std::vector<detail::AdamWPiece> merged;
  for (const detail::AdamWPiece& p : pieces) {
    if (!merged.empty() && merged.back().end == p.begin && merged.back().weight_decay == p.weight_decay)
      merged.back().end = p.end;
    else
      merged.push_back(p);
  }
  return merged;
}

}  // namespace commscope::trainer::cuda_kernels
