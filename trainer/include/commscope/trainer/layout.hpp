#pragma once
// Where each parameter lives in the one parameter buffer (the gradient buffer and the optimizer
// state use the same layout).
//
// Our layout is segment-major, so that one layer's parameters are contiguous (ZeRO-3 gathers a
// layer at a time, DDP buckets follow backward's order):
//   segment 0        embeddings: wte [Vp, C], wpe [maxT, C]
//   segment 1 + l    layer l: ln1w [C], ln1b [C], qkvw [3C, C], qkvb [3C], attprojw [C, C],
//                    attprojb [C], ln2w [C], ln2b [C], fcw [4C, C], fcb [4C], fcprojw [C, 4C],
//                    fcprojb [C]
//   segment L + 1    final layernorm: lnfw [C], lnfb [C]
// llm.c's checkpoint order is tensor-major (all layers' ln1w, then all layers' ln1b, ...);
// to_llmc / from_llmc convert. Matrices are row-major [out, in] (y = x W^T + b).
//
// Tensor parallelism (tp > 1 ranks, Megatron's split): a rank's layout holds its rows of the
// vocabulary-parallel wte [Vp/tp, C] (rows [r Vp/tp, (r+1) Vp/tp)), its shard of the
// column-parallel qkvw [3C/tp, C], qkvb [3C/tp] (its heads' q, k and v rows), fcw [4C/tp, C],
// fcb [4C/tp], and of the row-parallel attprojw [C, C/tp], fcprojw [C, 4C/tp] (the matching input
// columns); every other tensor (wpe, layernorms, attprojb, fcprojb) is whole on every rank.
// src/parallel/tensor_parallel.hpp converts between the whole layout and a rank's.
//
// Pipeline parallelism (a Stage of several): a stage's layout holds its layers only (segments
// 1..layers() in the stage's order, global layer first_layer() + l). The first and the last stage
// hold segment 0 (wte and wpe: the last stage's head is tied to wte, and keeping the whole segment
// on both makes their data-parallel shards of it line up, so its gradient is summed between them
// shard by shard; the last stage's wpe is an unused copy, maxT x C); the last stage holds the
// final layernorm. Absent segments have no elements (middle stages: segment 0 and L+1).

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>

#include "commscope/trainer/config.hpp"

namespace commscope::trainer {

// The 16 tensors, in llm.c's order.
enum class Tensor : int {
  wte,
  wpe,
  ln1w,
  ln1b,
  qkvw,
  qkvb,
  attprojw,
  attprojb,
  ln2w,
  ln2b,
  fcw,
  fcb,
  fcprojw,
  fcprojb,
  lnfw,
  lnfb
};
inline constexpr int kTensorCount = 16;
std::string_view tensor_name(Tensor t);
// Per-layer tensors are ln1w .. fcprojb.
constexpr bool is_per_layer(Tensor t) {
  return t >= Tensor::ln1w && t <= Tensor::fcprojb;
}
// Tensors that tensor parallelism splits across its ranks (the others are replicated).
constexpr bool is_tp_sharded(Tensor t) {
  return t == Tensor::wte || t == Tensor::qkvw || t == Tensor::qkvb || t == Tensor::attprojw || t == Tensor::fcw ||
         t == Tensor::fcb || t == Tensor::fcprojw;
}

// One pipeline stage: stage `index` of `count`, global layers [first_layer, first_layer + layers).
// Layers are dealt as evenly as possible, the first stages taking one more when they do not divide.
struct Stage {
  int index = 0, count = 1, first_layer = 0, layers = 0;
  bool first() const noexcept { return index == 0; }
  bool last() const noexcept { return index == count - 1; }
  bool whole() const noexcept { return count == 1; }
};
// Stage `index` of `count` over config.layers; std::invalid_argument unless 1 <= count <= layers.
Stage pipeline_stage(const ModelConfig& config, int count, int index);

struct Segment {
  std::size_t offset = 0;  // first element in the parameter buffer
  std::size_t count = 0;
};

class ParameterLayout {
 public:
  // tp: the tensor-parallel ranks this layout is one rank's shard of (1: the whole model);
  // std::invalid_argument unless tp >= 1 divides the heads. stage: the pipeline stage (layers 0:
  // the whole model).
  explicit ParameterLayout(const ModelConfig& config, int tp = 1, Stage stage = {});

  const ModelConfig& config() const noexcept { return config_; }
  int tp() const noexcept { return tp_; }
  const Stage& stage() const noexcept { return stage_; }
  int layers() const noexcept { return stage_.layers; }  // this layout's layers (offset(t, l): l < layers())
  std::size_t total() const noexcept { return total_; }
  // Elements of one tensor for one layer (or the whole tensor when not per layer).
  std::size_t size(Tensor t) const noexcept { return sizes_[static_cast<int>(t)]; }
  // Offset of tensor t (of layer `layer` for per-layer tensors; layer ignored otherwise).
  std::size_t offset(Tensor t, int layer = 0) const noexcept;
  // Segments: 0 = embeddings, 1..layers() = layers, layers()+1 = final layernorm.
  int segment_count() const noexcept { return stage_.layers + 2; }
  Segment segment(int s) const noexcept;

  // Reorder a whole buffer between our layout and llm.c's (both of total() elements; tp() == 1,
  // the whole model).
  void to_llmc(std::span<const float> ours, std::span<float> llmc) const;
  void from_llmc(std::span<const float> llmc, std::span<float> ours) const;

 private:
  ModelConfig config_;
  int tp_ = 1;
  Stage stage_;
  std::array<std::size_t, kTensorCount> sizes_{};
  std::array<std::size_t, kTensorCount>
      layer_offset_{};  // offset of tensor t inside a layer segment (per-layer tensors)
  std::size_t layer_size_ = 0;
  std::size_t total_ = 0;
};

}  // namespace commscope::trainer
