#pragma once
// Tensor parallelism (--tp N), Megatron-LM's split of a transformer block over N ranks: the
// attention's heads and the MLP's hidden units are divided among the ranks (qkv and fc
// column-parallel, attproj and fcproj row-parallel); embeddings, layernorms, the row-parallel
// biases and the tied output head are replicated (layout.hpp lists the split tensors, model.hpp
// the four allreduces per block and step).
//
// The process grid is DP x TP with TP innermost: world rank w is TP rank w % tp of TP group
// w / tp, and DP rank w / tp of DP group w % tp; so a TP group is tp consecutive ranks (one node
// under a by-slot placement). Data parallelism (data_parallel.hpp, any mode) runs over the DP
// group on the rank's shard unchanged: DP ranks of one TP rank hold the same shard and average its
// gradients. The TP ranks of a DP group read the same batch.

#include <cstddef>
#include <functional>
#include <span>
#include <string>
#include <vector>

#include "commscope/collectives/communicator.hpp"
#include "commscope/trainer/config.hpp"
#include "commscope/trainer/model.hpp"

namespace commscope::trainer {

// TP rank `rank`'s shard (ParameterLayout(config, tp)) of a whole-model buffer
// (ParameterLayout(config)); std::invalid_argument for a wrong size, rank or tp.
template <class T>
std::vector<T> tp_shard(const ModelConfig& config, int tp, int rank, std::span<const T> full);
// The whole-model buffer from the tp ranks' shards, laid one after another in rank order.
template <class T>
std::vector<T> tp_unshard(const ModelConfig& config, int tp, std::span<const T> shards);

// The DP x TP grid over `world` (whose size tp must divide). Collective over world.
struct ProcessGrid {
  ProcessGrid(const Communicator& world, int tp);
  int tp_size = 1, tp_rank = 0, dp_size = 1, dp_rank = 0;
  Communicator tp, dp;
};

// The model's TP allreduce: an in-place sum over `tp` with the named algorithm (any of the
// library's), marked as the collective in progress ("allreduce (ring, ..., tensor-parallel
// activations)") and profiled as communication "tp.allreduce".
template <class T>
std::function<void(T*, std::size_t)> tp_allreduce(Communicator& tp, const std::string& algo);

// Every TP rank's shard -> the whole-model buffer on every rank (over MPI). Collective over tp.
std::vector<float> gather_tp(Communicator& tp, const ModelConfig& config, std::span<const float> mine);

}  // namespace commscope::trainer
