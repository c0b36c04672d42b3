#include "commscope/trainer/layout.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>

namespace commscope::trainer {

std::string_view tensor_name(Tensor t) {
  static constexpr std::string_view names[kTensorCount] = {"wte",      "wpe",      "ln1w", "ln1b", "qkvw", "qkvb",
                                                           "attprojw", "attprojb", "ln2w", "ln2b", "fcw",  "fcb",
                                                           "fcprojw",  "fcprojb",  "lnfw", "lnfb"};
  return names[static_cast<int>(t)];
}

Stage pipeline_stage(const ModelConfig& config, int count, int index) {
  if (count < 1 || count > config.layers || index < 0 || index >= count)
    throw std::invalid_argument("pipeline parallelism over " + std::to_string(count) + " stages needs 1 to " +
                                std::to_string(config.layers) + " stages (one layer each at least)");
  Stage s;
  s.index = index, s.count = count;
  const int base = config.layers / count, extra = config.layers % count;
  s.layers = base + (index < extra ? 1 : 0);
  s.first_layer = index * base + std::min(index, extra);
  return s;
}

ParameterLayout::ParameterLayout(const ModelConfig& config, int tp, Stage stage)
    : config_(config), tp_(tp), stage_(stage) {
  if (const std::string p = config.tensor_parallel_problem(tp); !p.empty())
    throw std::invalid_argument("tensor parallelism over " + std::to_string(tp) + " ranks: " + p);
  if (stage_.layers == 0 && stage_.whole()) stage_.layers = config.layers;
  if (stage_.count < 1 || stage_.index < 0 || stage_.index >= stage_.count || stage_.layers < 1 ||
      stage_.first_layer < 0 || stage_.first_layer + stage_.layers > config.layers)
    throw std::invalid_argument("pipeline stage " + std::to_string(stage_.index) + " of " +
                                std::to_string(stage_.count) + " (layers " + std::to_string(stage_.first_layer) + ".." +
                                std::to_string(stage_.first_layer + stage_.layers - 1) + ") is not a stage of " +
                                std::to_string(config.layers) + " layers");
  const std::size_t C = static_cast<std::size_t>(config.channels);
  const std::size_t Cl = C / static_cast<std::size_t>(tp);  // this rank's share of C (heads divide C)
  const bool embeddings = stage_.first() || stage_.last(), head = stage_.last();
  const std::size_t sizes[kTensorCount] = {embeddings ? static_cast<std::size_t>(config.padded_vocab) / tp * C : 0,
                                           embeddings ? static_cast<std::size_t>(config.max_seq) * C : 0,
                                           C,
                                           C,
                                           3 * Cl * C,
                                           3 * Cl,
                                           C * Cl,
                                           C,
                                           C,
                                           C,
                                           4 * Cl * C,
                                           4 * Cl,
                                           4 * Cl * C,
                                           C,
                                           head ? C : 0,
                                           head ? C : 0};
  std::copy(std::begin(sizes), std::end(sizes), sizes_.begin());
  for (int t = static_cast<int>(Tensor::ln1w); t <= static_cast<int>(Tensor::fcprojb); ++t) {
    layer_offset_[static_cast<std::size_t>(t)] = layer_size_;
    layer_size_ += sizes_[static_cast<std::size_t>(t)];
  }
  total_ = sizes_[0] + sizes_[1] + static_cast<std::size_t>(stage_.layers) * layer_size_ +
           sizes_[static_cast<int>(Tensor::lnfw)] + sizes_[static_cast<int>(Tensor::lnfb)];
}

std::size_t ParameterLayout::offset(Tensor t, int layer) const noexcept {
  const std::size_t embeddings = sizes_[0] + sizes_[1];
  switch (t) {
    case Tensor::wte:
      return 0;
    case Tensor::wpe:
      return sizes_[0];
    case Tensor::lnfw:
      return embeddings + static_cast<std::size_t>(stage_.layers) * layer_size_;
    case Tensor::lnfb:
      return embeddings + static_cast<std::size_t>(stage_.layers) * layer_size_ +
             sizes_[static_cast<int>(Tensor::lnfw)];
    default:
      return embeddings + static_cast<std::size_t>(layer) * layer_size_ + layer_offset_[static_cast<std::size_t>(t)];
  }
}

Segment ParameterLayout::segment(int s) const noexcept {
  const std::size_t embeddings = sizes_[0] + sizes_[1];
  if (s == 0) return {0, embeddings};
  if (s <= stage_.layers) return {embeddings + static_cast<std::size_t>(s - 1) * layer_size_, layer_size_};
  return {embeddings + static_cast<std::size_t>(stage_.layers) * layer_size_,
          sizes_[static_cast<int>(Tensor::lnfw)] + sizes_[static_cast<int>(Tensor::lnfb)]};
}

namespace {

// Calls f(our_offset, llmc_offset, count) for every tensor piece.
template <class F>
void for_each_piece(const ParameterLayout& layout, F&& f) {
  std::size_t llmc = 0;
  for (int ti = 0; ti < kTensorCount; ++ti) {
    const auto t = static_cast<Tensor>(ti);
    const int pieces = is_per_layer(t) ? layout.layers() : 1;
    for (int l = 0; l < pieces; ++l) {
      f(layout.offset(t, l), llmc, layout.size(t));
      llmc += layout.size(t);
    }
  }
}

void check(std::size_t a, std::size_t b, std::size_t total, int tp, const Stage& stage) {
  if (tp != 1 || !stage.whole())
    throw std::invalid_argument("llm.c's order is for the whole model, not a tensor- or pipeline-parallel shard");
  if (a != total || b != total) throw std::invalid_argument("parameter buffers must hold exactly total() elements");
}

}  // namespace

void ParameterLayout::to_llmc(std::span<const float> ours, std::span<float> llmc) const {
  check(ours.size(), llmc.size(), total_, tp_, stage_);
  for_each_piece(
      *this, [&](std::size_t o, std::size_t l, std::size_t n) { std::copy_n(ours.data() + o, n, llmc.data() + l); });
}

void ParameterLayout::from_llmc(std::span<const float> llmc, std::span<float> ours) const {
  check(ours.size(), llmc.size(), total_, tp_, stage_);
  for_each_piece(
      *this, [&](std::size_t o, std::size_t l, std::size_t n) { std::copy_n(llmc.data() + l, n, ours.data() + o); });
}

}  // namespace commscope::trainer
