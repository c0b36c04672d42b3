// The GPU AdamW update's pieces (trainer/cuda/adamw_pieces.hpp), made on the host: checked here,
// where the CPU build runs them, against the CPU update's own walk of the layout.
#include <gtest/gtest.h>

#include <cstddef>
#include <vector>

#include "adamw_pieces.hpp"
#include "commscope/trainer/config.hpp"
#include "commscope/trainer/layout.hpp"
#include "commscope/trainer/optimizer.hpp"

namespace {

namespace ct = commscope::trainer;
using commscope::trainer::cuda_kernels::adamw_pieces;

ct::ModelConfig config() {
  ct::ModelConfig c;
  c.max_seq = 8;
  c.vocab = 10;
  c.padded_vocab = 16;
  c.layers = 5;
  c.heads = 2;
  c.channels = 8;
  return c;
}

// Each element of [begin, begin + count): the weight decay the CPU update applies to it (-1 for
// none: not updated), from its walk.
std::vector<float> cpu_decays(const ct::ParameterLayout& layout, std::size_t begin, std::size_t count, float wd) {
  std::vector<float> out(count, -1.0f);
  ct::for_each_tensor_piece(layout, begin, begin + count, [&](std::size_t b, std::size_t e, bool decay) {
    for (std::size_t i = b; i < e; ++i) {
      EXPECT_EQ(out[i - begin], -1.0f) << "the CPU walk visits element " << i << " twice";
      out[i - begin] = decay ? wd : 0.0f;
    }
  });
  return out;
}

// The pieces: ascending, disjoint, inside the range, each element's decay the CPU's, and every
// element the CPU updates in exactly one piece.
void expect_pieces_match(const ct::ParameterLayout& layout, std::size_t begin, std::size_t count) {
  const float wd = 0.1f;
  const auto pieces = adamw_pieces(layout, begin, count, wd);
  std::vector<float> got(count, -1.0f);
  std::size_t last_end = 0;
  for (const auto& p : pieces) {
    ASSERT_LT(p.begin, p.end);
    ASSERT_LE(last_end, p.begin) << "pieces overlap or are out of order";
    ASSERT_LE(p.end, count);
    last_end = p.end;
    for (std::size_t i = p.begin; i < p.end; ++i) got[i] = p.weight_decay;
  }
  EXPECT_EQ(got, cpu_decays(layout, begin, count, wd)) << "range [" << begin << ", " << begin + count << ")";
}

TEST(AdamWPieces, WholeModelAndShards) {
  const ct::ParameterLayout layout(config());
  const std::size_t total = layout.total();
  expect_pieces_match(layout, 0, total);
  expect_pieces_match(layout, 37, total - 37 - 11);  // a shard cutting tensors
  expect_pieces_match(layout, total / 3, total / 3);
  EXPECT_TRUE(adamw_pieces(layout, 5, 0, 0.1f).empty());
}

// A pipeline's stages hold fewer layers than the model: the pieces walk the stage's layers (a walk
// over the model's would give the last stage's final LayerNorm twice, at a layer it does not have).
TEST(AdamWPieces, PipelineStages) {
  const ct::ModelConfig c = config();
  for (int index = 0; index < 2; ++index) {
    const ct::ParameterLayout layout(c, 1, ct::pipeline_stage(c, 2, index));
    expect_pieces_match(layout, 0, layout.total());
    expect_pieces_match(layout, 3, layout.total() - 7);
  }
}

}  // namespace
