#include "memory_plan.hpp"

#include <mpi.h>

#include <limits>

#include "commscope/common/memory_headroom.hpp"
#include "setup.hpp"

namespace commscope::trainer {

HostMemoryPlan plan_host_memory(const TrainOptions& o, const ModelConfig& config, int model_batch, int seq,
                                const Stage& stage, int slots, int dp_ranks) {
  const std::uint64_t B = static_cast<std::uint64_t>(model_batch), T = static_cast<std::uint64_t>(seq);
  const std::uint64_t N = B * T, C = static_cast<std::uint64_t>(config.channels);
  const std::uint64_t tp = static_cast<std::uint64_t>(o.parallel.tp), Cr = C / tp;
  const std::uint64_t heads = static_cast<std::uint64_t>(config.heads) / tp;
  const std::uint64_t layers = static_cast<std::uint64_t>(stage.layers > 0 ? stage.layers : config.layers);
  // Per layer (model.hpp's table): ln1, ln2 [N, C]; qkv [N, 3C/tp], atty [N, C/tp], fch and
  // fch_gelu [N, 4C/tp]; preatt and att [B, NH/tp, T, T] (not among the gradients); the head's
  // logits and probs [N, Vp/tp] on the last stage. The residual stream's arrays are left out
  // (sequence parallelism splits them).
  const std::uint64_t gradients = layers * (2 * N * C + 12 * N * Cr);
  const std::uint64_t head = stage.count <= 1 || stage.index == stage.count - 1
                                 ? 2 * N * static_cast<std::uint64_t>(config.padded_vocab) / tp
                                 : 0;
  const std::uint64_t slot = gradients + layers * 2 * B * heads * T * T + head;
  HostMemoryPlan plan;
  plan.activations = sizeof(float) * (static_cast<std::uint64_t>(slots) * slot + gradients);
  // Parameters, gradients, m, v: whole under DDP; ZeRO-1 shards m and v, ZeRO-2 the gradients
  // too, ZeRO-3 everything.
  const std::uint64_t P = ParameterLayout(config, o.parallel.tp, stage).total(),
                      d = static_cast<std::uint64_t>(dp_ranks);
  const std::uint64_t whole = o.parallel.dp_mode == DpMode::kDdp     ? 4
                              : o.parallel.dp_mode == DpMode::kZero1 ? 2
                              : o.parallel.dp_mode == DpMode::kZero2 ? 1
                                                                     : 0;
  plan.states = sizeof(float) * (whole * P + (4 - whole) * P / d);
  return plan;
}

std::string describe(const HostMemoryPlan& plan) {
  return "at least " + bytes_text(plan.total()) + " (activations " + bytes_text(plan.activations) +
         ", parameters, gradients and AdamW state " + bytes_text(plan.states) + ")";
}

void check_host_memory(const HostMemoryPlan& plan, const TrainOptions& o, int seq, Communicator& world) {
  const MemoryHeadroom mine = memory_headroom();
  // No limit (-1) as the largest value, so that the minimum over the ranks is the tightest.
  constexpr long long kNone = std::numeric_limits<long long>::max();
  auto limit = [](std::int64_t v) { return v < 0 ? kNone : static_cast<long long>(v); };
  auto back = [](long long v) { return v == kNone ? std::int64_t{-1} : std::int64_t{v}; };
  long long left[4] = {limit(mine.address_space), limit(mine.data), limit(mine.available), limit(mine.cgroup)},
            least[4];
  MPI_Allreduce(left, least, 4, MPI_LONG_LONG, MPI_MIN, world.mpi_comm());
  const MemoryHeadroom h{back(least[0]), back(least[1]), back(least[2]), back(least[3])};
  if (const std::string over = memory_shortfall(h, plan.total(), world.local_size()); !over.empty())
    throw UsageError("--model " + o.model + " --batch " + std::to_string(o.batch) + " --seq " + std::to_string(seq) +
                     ": a rank needs " + describe(plan) + ", " + over);
}

}  // namespace commscope::trainer
