#include <gtest/gtest.h>

#include <numeric>
#include <vector>

#include "commscope/trainer/cpu_engine.hpp"
#include "commscope/trainer/layout.hpp"
#include "parallel/pipeline.hpp"
#include "parallel/tensor_parallel.hpp"

namespace ct = commscope::trainer;

TEST(Config, Gpt2_124mHasLlmcsParameterCount) {
  const ct::ModelConfig c = ct::preset("gpt2-124m");
  EXPECT_EQ(c.padded_vocab, 50304);
  EXPECT_EQ(ct::pad_vocab(50257), 50304);
  EXPECT_EQ(ct::pad_vocab(256), 256);
  EXPECT_EQ(c.parameter_count(), 124'475'904);
  EXPECT_EQ(ct::ParameterLayout(c).total(), 124'475'904u);
  EXPECT_EQ(c.problem(), "");
  EXPECT_THROW(ct::preset("huge"), std::invalid_argument);
  ct::ModelConfig bad = c;
  bad.heads = 5;
  EXPECT_NE(bad.problem(), "");
}

TEST(Layout, SegmentsTileTheBufferAndLayersAreContiguous) {
  const ct::ModelConfig c = ct::preset("tiny");
  const ct::ParameterLayout layout(c);
  std::size_t next = 0;
  for (int s = 0; s < layout.segment_count(); ++s) {
    EXPECT_EQ(layout.segment(s).offset, next);
    next += layout.segment(s).count;
  }
  EXPECT_EQ(next, layout.total());
  EXPECT_EQ(layout.offset(ct::Tensor::ln1w, 1), layout.segment(2).offset);
  EXPECT_EQ(layout.offset(ct::Tensor::lnfw), layout.segment(c.layers + 1).offset);
  EXPECT_EQ(layout.offset(ct::Tensor::lnfb), layout.offset(ct::Tensor::lnfw) + static_cast<std::size_t>(c.channels));
  EXPECT_EQ(layout.offset(ct::Tensor::fcprojb, 0) + layout.size(ct::Tensor::fcprojb), layout.segment(2).offset);
}

TEST(Layout, LlmcOrderRoundTripsAndIsTensorMajor) {
  const ct::ModelConfig c = ct::preset("tiny");
  const ct::ParameterLayout layout(c);
  std::vector<float> ours(layout.total()), llmc(layout.total()), back(layout.total());
  std::iota(ours.begin(), ours.end(), 0.0f);
  layout.to_llmc(ours, llmc);
  layout.from_llmc(llmc, back);
  EXPECT_EQ(ours, back);
  // In llm.c's order, layer 1's ln1w follows layer 0's ln1w directly (after wte and wpe).
  const std::size_t ln1w_llmc = layout.size(ct::Tensor::wte) + layout.size(ct::Tensor::wpe);
  EXPECT_EQ(llmc[ln1w_llmc], static_cast<float>(layout.offset(ct::Tensor::ln1w, 0)));
  EXPECT_EQ(llmc[ln1w_llmc + static_cast<std::size_t>(c.channels)],
            static_cast<float>(layout.offset(ct::Tensor::ln1w, 1)));
  EXPECT_EQ(llmc.back(), static_cast<float>(layout.total() - 1));  // lnfb last in both
}

// Tensor parallelism: each rank's layout holds its share of the split tensors and the whole of the
// others; the ranks' shards put together give back the whole buffer, every element once.
TEST(Layout, TensorParallelShardsTileTheWholeModel) {
  ct::ModelConfig c = ct::preset("tiny");
  c.heads = 4;  // tp 2 and 4
  const ct::ParameterLayout whole(c);
  std::vector<float> full(whole.total());
  std::iota(full.begin(), full.end(), 0.0f);  // exact in float: the tiny model has < 2^24 elements
  const std::size_t C = static_cast<std::size_t>(c.channels);
  for (int tp : {1, 2, 4}) {
    const ct::ParameterLayout part(c, tp);
    const auto n = static_cast<std::size_t>(tp);
    EXPECT_EQ(part.tp(), tp);
    EXPECT_EQ(part.size(ct::Tensor::qkvw), 3 * C * C / n);
    EXPECT_EQ(part.size(ct::Tensor::attprojw), C * C / n);
    EXPECT_EQ(part.size(ct::Tensor::fcprojw), 4 * C * C / n);
    EXPECT_EQ(part.size(ct::Tensor::fcprojb), C);
    std::vector<float> shards;
    for (int r = 0; r < tp; ++r) {
      const std::vector<float> mine = ct::parallel::tp_shard<float>(c, tp, r, full);
      ASSERT_EQ(mine.size(), part.total());
      // Rank r's first q row is row r C/tp of the whole qkvw; its first attprojw element is
      // column r C/tp of row 0.
      EXPECT_EQ(mine[part.offset(ct::Tensor::qkvw, 1)],
                full[whole.offset(ct::Tensor::qkvw, 1) + static_cast<std::size_t>(r) * C / n * C]);
      EXPECT_EQ(mine[part.offset(ct::Tensor::attprojw, 0)],
                full[whole.offset(ct::Tensor::attprojw, 0) + static_cast<std::size_t>(r) * C / n]);
      shards.insert(shards.end(), mine.begin(), mine.end());
    }
    EXPECT_EQ(ct::parallel::tp_unshard<float>(c, tp, shards), full) << "tp " << tp;
    // Every split element appears in exactly one shard, every replicated one in each.
    std::vector<int> seen(full.size(), 0);
    for (float x : shards) ++seen[static_cast<std::size_t>(x)];
    for (int t = 0; t < ct::kTensorCount; ++t) {
      const auto tensor = static_cast<ct::Tensor>(t);
      const std::size_t o = whole.offset(tensor, 0);
      for (std::size_t i = 0; i < whole.size(tensor); ++i)
        ASSERT_EQ(seen[o + i], ct::is_tp_sharded(tensor) ? 1 : tp) << ct::tensor_name(tensor) << " tp " << tp;
    }
  }
  EXPECT_THROW(ct::ParameterLayout(c, 3), std::invalid_argument);  // 4 heads
  EXPECT_THROW(ct::parallel::tp_shard<float>(c, 2, 2, full), std::invalid_argument);
  std::vector<float> llmc(ct::ParameterLayout(c, 2).total());
  EXPECT_THROW(ct::ParameterLayout(c, 2).to_llmc(llmc, llmc), std::invalid_argument);
}

// Pipeline stages: the layers dealt out (the first stages take the remainder), each stage's layout
// holding its layers, the first and last segment 0, the last the final layernorm; every element
// of the whole model comes from exactly one stage's shard, except segment 0, held by the first
// and the last.
TEST(Layout, PipelineStagesSplitTheLayers) {
  ct::ModelConfig c = ct::preset("tiny");
  c.layers = 6;
  const int firsts[] = {0, 2, 4, 5}, counts[] = {2, 2, 1, 1};
  const ct::ParameterLayout whole(c);
  std::vector<float> full(whole.total());
  std::iota(full.begin(), full.end(), 0.0f);
  std::vector<int> seen(whole.total(), 0);
  for (int s = 0; s < 4; ++s) {
    const ct::Stage st = ct::pipeline_stage(c, 4, s);
    EXPECT_EQ(st.first_layer, firsts[s]);
    EXPECT_EQ(st.layers, counts[s]);
    const ct::ParameterLayout part(c, 1, st);
    EXPECT_EQ(part.segment_count(), st.layers + 2);
    EXPECT_EQ(part.segment(0).count, st.first() || st.last() ? whole.segment(0).count : 0u);
    EXPECT_EQ(part.segment(st.layers + 1).count, st.last() ? whole.segment(c.layers + 1).count : 0u);
    const std::vector<float> mine = ct::parallel::model_shard<float>(c, 1, 0, st, full);
    ASSERT_EQ(mine.size(), part.total());
    for (int l = 0; l < st.layers; ++l) {  // a stage's layer l is the whole model's first_layer + l
      EXPECT_EQ(mine[part.offset(ct::Tensor::qkvw, l)], full[whole.offset(ct::Tensor::qkvw, st.first_layer + l)]);
      const ct::Segment seg = whole.segment(1 + st.first_layer + l);
      for (std::size_t i = 0; i < seg.count; ++i) ++seen[seg.offset + i];
    }
  }
  for (int s = 1; s <= c.layers; ++s) {
    const ct::Segment seg = whole.segment(s);
    for (std::size_t i = 0; i < seg.count; ++i) ASSERT_EQ(seen[seg.offset + i], 1) << "segment " << s;
  }
  EXPECT_THROW(ct::pipeline_stage(c, 7, 0), std::invalid_argument);  // more stages than layers
  EXPECT_THROW(ct::pipeline_stage(c, 2, 2), std::invalid_argument);
  std::vector<float> llmc(ct::ParameterLayout(c, 1, ct::pipeline_stage(c, 2, 0)).total());
  EXPECT_THROW(ct::ParameterLayout(c, 1, ct::pipeline_stage(c, 2, 0)).to_llmc(llmc, llmc), std::invalid_argument);
}

// 1F1B: stage s runs min(p - s - 1, m) forwards ahead, then one forward and one backward in turn;
// GPipe: every forward, then every backward. (+i: forward of micro-batch i; -(i+1): its backward.)
TEST(Pipeline, SchedulesAndSlots) {
  EXPECT_EQ(ct::parallel::pipeline_schedule(0, 2, 3, false), (std::vector<int>{0, 1, -1, 2, -2, -3}));
  EXPECT_EQ(ct::parallel::pipeline_schedule(1, 2, 3, false), (std::vector<int>{0, -1, 1, -2, 2, -3}));
  EXPECT_EQ(ct::parallel::pipeline_schedule(0, 4, 2, false), (std::vector<int>{0, 1, -1, -2}));  // m < p: all ahead
  EXPECT_EQ(ct::parallel::pipeline_schedule(0, 2, 2, true), (std::vector<int>{0, 1, -1, -2}));
  EXPECT_EQ(ct::parallel::pipeline_slots(0, 4, 8, false), 4);
  EXPECT_EQ(ct::parallel::pipeline_slots(3, 4, 8, false), 1);
  EXPECT_EQ(ct::parallel::pipeline_slots(0, 4, 2, false), 2);
  EXPECT_EQ(ct::parallel::pipeline_slots(3, 4, 8, true), 8);
}
