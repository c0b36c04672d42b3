#pragma once
// Tensor parallelism (--tp N), Megatron-LM's split of a transformer block over N ranks: the
// attention's heads and the MLP's hidden units are divided among the ranks (qkv and fc
// column-parallel, attproj and fcproj row-parallel); embeddings, layernorms, the row-parallel
// biases and the tied output head are replicated (layout.hpp lists the split tensors, model.hpp
// the four allreduces per block and step).
//
// The groups are ProcessGrid's (process_grid.hpp). Data parallelism (engine.hpp, any mode) runs
// over the DP group on the rank's shard unchanged: DP ranks of one (TP rank, stage) hold the same
// shard and average its gradients. The TP ranks and stages of a DP replica read the same batch.

#include <cstddef>
#include <functional>
#include <span>
#include <string>
#include <vector>

#include "commscope/collectives/communicator.hpp"
#include "commscope/trainer/config.hpp"
#include "commscope/trainer/layout.hpp"
#include "commscope/trainer/model.hpp"

namespace commscope::trainer::parallel {

// TP rank `rank`'s shard (ParameterLayout(config, tp)) of a whole-model buffer
// (ParameterLayout(config)); std::invalid_argument for a wrong size, rank or tp.
template <class T>
std::vector<T> tp_shard(const ModelConfig& config, int tp, int rank, std::span<const T> full);
// The same for pipeline stage `stage`'s layers (ParameterLayout(config, tp, stage)).
template <class T>
std::vector<T> model_shard(const ModelConfig& config, int tp, int rank, const Stage& stage, std::span<const T> full);
// The whole-model buffer from the tp ranks' shards, laid one after another in rank order.
template <class T>
std::vector<T> tp_unshard(const ModelConfig& config, int tp, std::span<const T> shards);

// The model's TP operations over `tp`: the in-place sum with the named algorithm (any of the
// library's), marked as the collective in progress ("allreduce (ring, ..., tensor-parallel
// activations)") and profiled as communication "tp.allreduce"; the maximum (the cross-entropy's
// row maxima, "tp.allreduce_max").
template <class T>
typename Gpt2<T>::TensorParallel tensor_parallel_ops(Communicator& tp, const std::string& algo);

// The model-parallel gradient norm, one rule for the CPU's CpuEngine and the CUDA engine (the
// sums: StepSums, profiled_group.hpp). norm_pieces: the parts of the layout's elements [begin,
// begin + count) that the norm counts on this rank, one per tensor (and layer) in the layout's order:
// offset from begin, length, and whether tensor parallelism splits the tensor (its squares summed
// over the TP ranks) or replicates it (counted once). Segment 0 counts on the first stage only
// (the last stage's copy of the tied wte holds the same summed gradients).
struct NormPiece {
  std::size_t offset = 0, count = 0;
  bool split = false;
};
std::vector<NormPiece> norm_pieces(const ParameterLayout& layout, std::size_t begin, std::size_t count);

// Every model-parallel rank's shard (TP rank tp_rank of `tp`, pipeline stage `stage`) -> the
// whole-model buffer on every rank of mp (the tp x pp ranks of one replica; over MPI).
// Collective over mp.
// (Segment 0 is taken from the first stage: sum gradients of the tied wte between the first and
// last stage before.)
template <class T>
std::vector<T> gather_model(Communicator& mp, const ModelConfig& config, int tp, int tp_rank, const Stage& stage,
                            std::span<const T> mine);

}  // namespace commscope::trainer::parallel
