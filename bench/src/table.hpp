// The printed table, nccl-tests' columns plus the algorithm:
//   size(B) count type redop root algo | out-of-place: time algbw busbw #wrong | in-place: same
// with --stats, each side also gets min/p50/p99/max of the per-iteration max-over-ranks times
// and the mean arrival skew. The footer gives the wrong count and average busbw per algorithm.
#pragma once

#include <cstdio>
#include <map>
#include <string>

#include "results.hpp"

namespace commscope::bench {

class Table {
 public:
  Table(std::FILE* out, bool stats) : out_(out), stats_(stats) {}
  // One line; either side may be missing (filtered out): printed as n/a.
  void row(const ResultRow* out_of_place, const ResultRow* in_place);
  // Footer; returns the total wrong count.
  std::uint64_t footer();
  std::uint64_t wrong() const { return wrong_; }

 private:
  void header(const ResultRow& r);
  void side(const ResultRow* r);

  std::FILE* out_;
  bool stats_;
  std::string section_;  // collective of the last header
  std::uint64_t wrong_ = 0;
  std::map<std::string, std::pair<double, int>> busbw_;  // per algorithm: sum, rows
  double busbw_sum_ = 0;
  int busbw_rows_ = 0;
};

}  // namespace commscope::bench
