// A result as the bench prints and writes it: one ResultRow per (case, repetition) and its
// per-iteration samples (the /results and /samples rows of docs/bench-results.md), and the
// statistics that turn a measurement into a row.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "cases.hpp"
#include "commscope/bench/options.hpp"

namespace commscope::bench {

struct Measurement;

// One row of /results. Strings are fixed-length, NUL-padded (h5py reads them as bytes).
struct ResultRow {
  std::int64_t row = 0;  // table row: the out-of-place and in-place results of one line share it
  char collective[16] = {};
  char algorithm[16] = {};
  char device[8] = {};
  char type[8] = {};
  char op[8] = {};         // "none" for collectives that do not reduce
  std::int32_t root = -1;  // -1 for collectives without a root
  std::uint8_t in_place = 0;
  std::int32_t nranks = 0;
  std::uint64_t bytes = 0;  // nccl-tests' size (the array measured)
  std::uint64_t count = 0;  // per-call element count (NCCL conventions)
  std::int64_t iterations = 0;
  std::int32_t warmup = 0;
  double time_us = 0;      // per call, ranks combined as /meta combine says (max by default)
  double cpu_time_us = 0;  // per call, the host's time to issue the calls (-C), combined alike
  double algbw_GBps = 0;
  double busbw_GBps = 0;
  std::uint64_t nwrong = 0;  // wrong elements, summed over ranks and check iterations
  std::int32_t check_iters = 0;
  // Of the per-iteration max over ranks, the first /meta per_iter_skip iterations left out.
  double min_us = 0, p50_us = 0, p99_us = 0, max_us = 0;
  double mean_us = 0, stdev_us = 0;  // population standard deviation
  double skew_us = 0;                // mean over iterations of (latest - earliest arrival); NaN if unknown
  std::int32_t slowest_rank = 0;     // the rank with the longest total time
  std::uint64_t sample_offset = 0;   // first row of this result in /samples
  std::uint64_t sample_count = 0;
};

// One row of /samples: iteration i of result `result` (a /results row index).
struct SampleRow {
  std::uint64_t result = 0;
  std::int64_t iteration = 0;
  double time_us = 0;  // max over ranks of call i's duration
  double skew_us = 0;  // latest minus earliest rank arrival at call i; NaN if unknown
};

// The per-iteration values a result carries before it is written.
struct Samples {
  std::vector<double> time_us;
  std::vector<double> skew_us;  // empty if unknown
  // -I 1 only: every rank's own iteration times, [rank][iteration] flat (nccl-tests' JSON
  // per_process_max_times_us); empty otherwise.
  std::vector<double> rank_time_us;
};

void set_text(char* dst, std::size_t n, std::string_view s);
template <std::size_t N>
void set_text(char (&dst)[N], std::string_view s) {
  set_text(dst, N, s);
}
template <std::size_t N>
std::string text(const char (&src)[N]) {
  std::size_t n = 0;
  while (n < N && src[n]) ++n;
  return std::string(src, n);
}

// Summary of per-iteration samples after leaving out the first `skip` (-K); NaN for none.
struct IterStats {
  std::size_t n = 0;
  double min = 0, max = 0, mean = 0, p50 = 0, p95 = 0, p99 = 0;
  double stdev = 0;  // population standard deviation, as nccl-tests
};
IterStats iter_stats(const std::vector<double>& samples, std::size_t skip);

// The table/file row of a measurement.
ResultRow make_row(const Case& c, const Measurement& m, const Options& o, const std::string& device);

}  // namespace commscope::bench
