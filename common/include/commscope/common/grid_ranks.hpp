// The process grid of the trainer's 3D parallelism, in one header that depends on nothing: the
// trainer builds its groups from it, the profiler places a profile's ranks with it and the report
// reads a run's shape through it.
//
// The grid is PP x DP x TP, tensor parallelism innermost (its ranks are neighbours, on one node
// as often as possible) and pipeline parallelism outermost:
//   rank = tp_rank + tp (dp_rank + dp pp_rank),  dp = ranks / (tp pp).
#pragma once

#include <optional>

namespace commscope {

// One rank's coordinates in the grid.
struct GridPlace {
  int tp_rank = 0, dp_rank = 0, pp_rank = 0;
  friend constexpr bool operator==(const GridPlace&, const GridPlace&) = default;
};

// The grid's sizes.
struct GridShape {
  int tp = 1, dp = 1, pp = 1;

  // `ranks` split into tp x pp model-parallel ranks per data-parallel replica; nullopt unless
  // tp, pp >= 1 and tp pp divides ranks >= 1.
  static constexpr std::optional<GridShape> of(int ranks, int tp, int pp) {
    if (tp < 1 || pp < 1 || ranks < 1 || ranks % (tp * pp) != 0) return std::nullopt;
    return GridShape{tp, ranks / (tp * pp), pp};
  }

  constexpr int ranks() const noexcept { return tp * dp * pp; }
  constexpr GridPlace place(int rank) const noexcept { return {rank % tp, rank / tp % dp, rank / (tp * dp)}; }
  constexpr int rank(const GridPlace& p) const noexcept { return p.tp_rank + tp * (p.dp_rank + dp * p.pp_rank); }

  // The colours that split the world into each kind of group (the ranks of one colour form one
  // group, ordered by their rank in the world unless a key says): a TP group holds one (dp, pp)
  // place's tp ranks, a DP group one (tp, pp) place's, a PP group one (tp, dp) place's (the
  // pipeline's first and last stage of it also form the embedding group), and a model-parallel
  // group, the tp x pp ranks of one data-parallel replica, is keyed by mp_key.
  constexpr int tp_color(const GridPlace& p) const noexcept { return p.dp_rank + dp * p.pp_rank; }
  constexpr int dp_color(const GridPlace& p) const noexcept { return p.tp_rank + tp * p.pp_rank; }
  constexpr int pp_color(const GridPlace& p) const noexcept { return p.tp_rank + tp * p.dp_rank; }
  constexpr int mp_color(const GridPlace& p) const noexcept { return p.dp_rank; }
  constexpr int mp_key(const GridPlace& p) const noexcept { return p.tp_rank + tp * p.pp_rank; }
};

}  // namespace commscope
