// The cases of one commscope-bench run: every (collective, datatype, op, size, algorithm,
// in-place) combination the options ask for and the device supports, in the order they run
// and print. Out-of-place and in-place of the same (..., size, algorithm) share a table row.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "commscope/bench/options.hpp"
#include "commscope/collectives/algorithm.hpp"
#include "commscope/collectives/check_data.hpp"

namespace commscope::bench {

class Backend;

struct Case {
  int id = 0;   // index in the case list
  int row = 0;  // table row (out-of-place and in-place share one)
  Collective coll = Collective::allreduce;
  std::string algo;
  DataType type = DataType::f32;
  ReduceOp op = ReduceOp::sum;  // meaningless unless is_reducing(coll)
  int root = 0;                 // meaningless unless is_rooted(coll)
  bool in_place = false;
  std::size_t requested_bytes = 0;  // the size asked for (-b .. -e)
  std::size_t count = 0;            // per-call count (CollArgs conventions)
  std::size_t bytes = 0;            // nccl-tests' size of this count: the array measured
  int nranks = 1;
  std::string name;  // Google Benchmark name: coll/algo/type/op/root:r/bytes:n/inplace:b

  check::Spec spec(std::uint64_t seed) const { return {coll, type, op, count, root, nranks, seed}; }
  // nccl-tests prints "none" for the op of non-reducing collectives and -1 for the root of
  // unrooted ones.
  std::string_view op_name() const;
  int root_shown() const { return is_rooted(coll) ? root : -1; }
};

// The per-call count for an array of `bytes` (rounded down to whole elements per rank).
std::size_t count_for_bytes(Collective c, std::size_t bytes, DataType t, int nranks);

// A one-line description of case `c` for error messages: "allreduce algo=ring type=f32 op=sum
// size=1048576 B in-place".
std::string describe(const Case& c);

// Every case of the run. Throws InvalidArgument for an algorithm the device lacks or a root
// out of range; skips (algorithm, collective) pairs the algorithm has no variant for unless
// the algorithm was named explicitly and supports none of the requested collectives. With
// --from-profile and `groups` (a device whose calls can run on groups of the run's ranks), also
// the profile's calls on smaller communicators, each case's nranks its group's size.
std::vector<Case> make_cases(const Options& o, int nranks, const Backend& backend, bool groups = false);

}  // namespace commscope::bench
