// The hier algorithm's options, set on AlgoOptions (`algo.set(HierOptions{...})`) and read by
// hier alone.
#pragma once

#include <string_view>

namespace commscope {

struct HierOptions {
  static constexpr std::string_view kAlgorithm = "hier";  // AlgoOptions' key
  // Test aid: > 0 puts rank r on node r % test_nodes (round robin, uneven where the rank count
  // is not a multiple) instead of the nodes MPI reports, so that one machine runs the multi-node
  // paths. A communicator keeps the layout of its first hier call.
  int test_nodes = 0;
};

}  // namespace commscope
