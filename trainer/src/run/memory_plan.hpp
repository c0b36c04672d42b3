// The host memory a CPU training run needs, checked before the model allocates it: a run too
// large for the machine (--seq 100000 on the tiny model: std::bad_alloc) ends in one line that
// names the sizes, on every rank alike.
#pragma once

#include <cstdint>
#include <string>

#include "commscope/collectives/communicator.hpp"
#include "commscope/trainer/engine.hpp"
#include "commscope/trainer/layout.hpp"
#include "commscope/trainer/train_options.hpp"

namespace commscope::trainer {

// Bytes one rank's CPU engine holds at least (a lower bound: the large arrays only, so that a
// refusal is certain).
struct HostMemoryPlan {
  std::uint64_t activations = 0;  // the activation slots and one set of activation gradients
  std::uint64_t states = 0;       // parameters, gradients and AdamW's two moments (this rank's)
  std::uint64_t total() const { return activations + states; }
};

// The model holds `slots` micro-batches of [model_batch, seq] tokens of `stage`, split over
// o.parallel.tp ranks, trained in o.parallel's data-parallel mode over `dp_ranks` data-parallel ranks.
HostMemoryPlan plan_host_memory(const TrainOptions& o, const ModelConfig& config, int model_batch, int seq,
                                const Stage& stage, int slots, int dp_ranks);

// "what the plan is": "at least 74.5 GiB (activations 74.5 GiB, parameters, gradients and AdamW
// state 1.2 MiB)".
std::string describe(const HostMemoryPlan& plan);

// Throws UsageError when `plan` (for sequences of `seq` tokens) exceeds what any rank of `world`
// may still take (the least headroom over the ranks: every rank throws alike). Collective.
void check_host_memory(const HostMemoryPlan& plan, const TrainOptions& o, int seq, Communicator& world);

}  // namespace commscope::trainer
