// The printed table, nccl-tests' columns (nccl-tests 2.19's common.cu widths, its type names):
//   size count type redop root | out-of-place: time algbw busbw #wrong | in-place: the same
// so that scripts reading nccl-tests' fixed columns (busbw: column 8) read ours alike. One
// algorithm is named in the section's header comment; with several (TableStyle::algo_column)
// each line ends with its algorithm, after every column nccl-tests prints, so none moves.
// Optional columns on each side: nccl-tests' per-iteration i_min i_max i_p99 i_cv% (-I 1), our
// min/p50/p99/max of the per-iteration max-over-ranks times and the mean arrival skew
// (--stats); -C 1 shows the host's issue time as "cputime", -S 1 ends each line with the time
// it was printed (before the algorithm). The footer gives the wrong count and average busbw per
// algorithm.
#pragma once

#include <cstdio>
#include <map>
#include <string>
#include <vector>

#include "results.hpp"

namespace commscope::bench {

// nccl-tests' time stamp: local time, "%Y-%m-%d %H:%M:%S".
std::string timestamp_text();

struct TableStyle {
  bool stats = false;        // --stats
  bool per_iter = false;     // -I 1
  bool cputime = false;      // -C 1
  bool timestamps = false;   // -S 1
  bool checked = true;       // -c > 0: results were checked (else the footer says N/A, not "0 OK")
  bool algo_column = false;  // several algorithms: each line ends with its algorithm
  int ranks = 0;             // the run's: a row of another (--from-profile's groups) heads a section of its own
};

class Table {
 public:
  Table(std::FILE* out, TableStyle style);
  // One line; either side may be missing (filtered out): printed as n/a.
  void row(const ResultRow* out_of_place, const ResultRow* in_place);
  // Footer; returns the total wrong count.
  std::uint64_t footer();
  std::uint64_t wrong() const { return wrong_; }
  // Mean busbw over every printed result (0 for none), as the footer says.
  double average_busbw() const { return busbw_rows_ ? busbw_sum_ / busbw_rows_ : 0.0; }

 private:
  struct Column {
    std::string title, unit;
    int width = 0;
    int precision = 0;
    double (*value)(const ResultRow&) = nullptr;
    bool checked = false;  // #wrong: N/A where nothing was checked (-c 0), as nccl-tests prints it
  };
  void header(const ResultRow& r);
  void side(const ResultRow* r);
  int side_width() const;

  std::FILE* out_;
  TableStyle style_;
  std::vector<Column> columns_;  // of one side
  std::string section_;          // collective (and group size, where not the run's) of the last header
  std::uint64_t wrong_ = 0;
  std::map<std::string, std::pair<double, int>> busbw_;  // per algorithm: sum, rows
  double busbw_sum_ = 0;
  int busbw_rows_ = 0;
};

}  // namespace commscope::bench
