// The registry of algorithms: each lives in src/algorithms/<name>.cpp and exposes one
// accessor; this file lists them.
#include "commscope/collectives/algorithm.hpp"

#include <array>
#include <string>

#include "commscope/collectives/error.hpp"

namespace commscope {

const Algorithm& mpi_algorithm();
const Algorithm& ring_algorithm();
const Algorithm& tree_algorithm();
const Algorithm& rhd_algorithm();
const Algorithm& shm_algorithm();
const Algorithm& hier_algorithm();

std::span<const Algorithm* const> algorithms() {
  static const std::array<const Algorithm*, 6> all = {&mpi_algorithm(), &ring_algorithm(), &tree_algorithm(),
                                                      &rhd_algorithm(), &shm_algorithm(),  &hier_algorithm()};
  return all;
}

const Algorithm& find_algorithm(std::string_view name) {
  std::string valid;
  for (const Algorithm* a : algorithms()) {
    if (a->name() == name) return *a;
    valid += valid.empty() ? "" : ", ";
    valid += a->name();
  }
  throw UnknownName("unknown algorithm '" + std::string(name) + "' (valid: " + valid + ")");
}

}  // namespace commscope
