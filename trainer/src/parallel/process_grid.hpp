#pragma once
// The trainer's process groups: the PP x DP x TP grid over the world, TP innermost and PP
// outermost (Megatron-LM's order; the rank formula and the groups' colours are
// common/grid_ranks.hpp's, which the profiler and the report share), so a TP group is tp
// consecutive ranks (one node under a by-slot placement) and a pipeline's stages are dp x tp
// ranks apart; and a rank's place in it for commscope-train (Placement).

#include <memory>

#include "commscope/collectives/communicator.hpp"
#include "commscope/common/grid_ranks.hpp"
#include "commscope/trainer/config.hpp"
#include "commscope/trainer/layout.hpp"
#include "commscope/trainer/parallel_plan.hpp"

namespace commscope::trainer::parallel {

// The PP x DP x TP grid over `world` (whose size tp x pp must divide). Collective over world.
struct ProcessGrid {
  ProcessGrid(const Communicator& world, int tp, int pp = 1);  // std::invalid_argument unless tp pp divides the ranks
  ProcessGrid(const Communicator& world, const GridShape& shape);
  int tp_size = 1, tp_rank = 0, dp_size = 1, dp_rank = 0, pp_size = 1, pp_rank = 0;
  Communicator tp, dp, pp;
  Communicator mp;                          // model parallel: the tp x pp ranks of one DP replica
  std::unique_ptr<Communicator> embedding;  // pp > 1, first and last stage: the tied wte's two holders

  // A CPU engine's groups besides dp: tp when tp_size > 1, pp and embedding when pp_size > 1.
  ParallelGroups groups() noexcept;

 private:
  ProcessGrid(const Communicator& world, const GridShape& shape, const GridPlace& place);
};

// This rank's place in the parallel layout: the DP group carries data parallelism, the TP group
// the layers' split, the PP group the stages (no grid without tensor or pipeline parallelism).
struct Placement {
  std::unique_ptr<ProcessGrid> grid;
  Communicator* dp_comm = nullptr;
  int tp_rank = 0;
  Stage stage;
};

// The placement of `plan`'s tp and pp over `world`. Collective over world.
Placement place(const ParallelPlan& plan, const ModelConfig& config, Communicator& world);

// The flight recorder's rings (commscope/profiler/flight_watch.hpp) for the placement's groups,
// labelled as the profile labels them ("dp[0:4]", "tp[0,1]", ...), and world's.
void watch_groups(const Placement& placement, Communicator& world);

}  // namespace commscope::trainer::parallel
