#include <gtest/gtest.h>

#include <numeric>

#include "commscope/trainer/layout.hpp"

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
