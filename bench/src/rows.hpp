// A result as the bench prints and writes it: one ResultRow per (case, repetition) and its
// per-iteration samples (the /results and /samples rows of docs/bench-results.md), and the
// statistics that turn a measurement into a row.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "cases.hpp"
#include "commscope/bench/options.hpp"
#include "commscope/formats/bench_results.hpp"

namespace commscope::bench {

struct Measurement;

// The file's rows (/results and /samples), defined with their columns in the bench results format.
using ResultRow = formats::bench::ResultRow;
using SampleRow = formats::bench::SampleRow;

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
