#include "parallel/process_grid.hpp"

#include <mpi.h>

#include <optional>
#include <stdexcept>
#include <string>

#include "commscope/profiler/flight_watch.hpp"
#include "commscope/profiler/session.hpp"
#include "commscope/profiler/vocabulary.hpp"

namespace commscope::trainer::parallel {

namespace {

Communicator split(const Communicator& world, int color, int key) {
  MPI_Comm c = MPI_COMM_NULL;
  MPI_Comm_split(world.mpi_comm(), color, key, &c);
  Communicator out(c, world.options());  // a duplicate
  MPI_Comm_free(&c);
  return out;
}

GridShape checked(const Communicator& world, int tp, int pp) {
  const std::optional<GridShape> shape = GridShape::of(world.size(), tp, pp);
  if (!shape)
    throw std::invalid_argument("tensor x pipeline parallelism of " + std::to_string(tp) + " x " + std::to_string(pp) +
                                " needs a multiple of " + std::to_string(tp * pp) + " ranks; the communicator has " +
                                std::to_string(world.size()));
  return *shape;
}

}  // namespace

ProcessGrid::ProcessGrid(const Communicator& world, int tp_ranks, int pp_ranks)
    : ProcessGrid(world, checked(world, tp_ranks, pp_ranks)) {}

ProcessGrid::ProcessGrid(const Communicator& world, const GridShape& shape)
    : ProcessGrid(world, shape, shape.place(world.rank())) {}

ProcessGrid::ProcessGrid(const Communicator& world, const GridShape& shape, const GridPlace& place)
    : tp_size(shape.tp),
      tp_rank(place.tp_rank),
      dp_size(shape.dp),
      dp_rank(place.dp_rank),
      pp_size(shape.pp),
      pp_rank(place.pp_rank),
      tp(split(world, shape.tp_color(place), tp_rank)),
      dp(split(world, shape.dp_color(place), dp_rank)),
      pp(split(world, shape.pp_color(place), pp_rank)),
      mp(split(world, shape.mp_color(place), shape.mp_key(place))) {
  if (pp_size > 1) {
    const bool ends = pp_rank == 0 || pp_rank == pp_size - 1;
    MPI_Comm c = MPI_COMM_NULL;
    MPI_Comm_split(world.mpi_comm(), ends ? shape.pp_color(place) : MPI_UNDEFINED, pp_rank, &c);
    if (c != MPI_COMM_NULL) {
      embedding = std::make_unique<Communicator>(c, world.options());
      MPI_Comm_free(&c);
    }
  }
}

ParallelGroups ProcessGrid::groups() noexcept {
  ParallelGroups g;
  if (tp_size > 1) g.tp = &tp;
  if (pp_size > 1) g.pp = &pp, g.embedding = embedding.get();
  return g;
}

Placement place(const ParallelPlan& plan, const ModelConfig& config, Communicator& world) {
  Placement p;
  if (plan.tp > 1 || plan.pp > 1) p.grid = std::make_unique<ProcessGrid>(world, plan.tp, plan.pp);
  p.dp_comm = p.grid ? &p.grid->dp : &world;
  p.tp_rank = p.grid ? p.grid->tp_rank : 0;
  p.stage = pipeline_stage(config, plan.pp, p.grid ? p.grid->pp_rank : 0);
  return p;
}

void watch_groups(const Placement& placement, Communicator& world) {
  namespace prof = commscope::profiler;
  const auto watch = [](Communicator& c, std::string_view kind) {
    prof::flight::watch(c, prof::communicator_label(kind, prof::world_ranks(c.mpi_comm())));
  };
  if (!placement.grid) return watch(world, "dp");  // world is the data-parallel group
  ProcessGrid& g = *placement.grid;
  prof::flight::watch(world, "");
  if (g.tp_size > 1) watch(g.tp, "tp");
  watch(g.dp, "dp");
  if (g.pp_size > 1) watch(g.pp, "pp");
  if (g.embedding) watch(*g.embedding, "embedding");
}

}  // namespace commscope::trainer::parallel
