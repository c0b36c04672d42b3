#pragma once
// What bench and compare share: bench files' measurements grouped per collective and algorithm,
// their spreads and their alpha-beta fits.

#include <map>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "commscope/analysis/alpha_beta.hpp"
#include "commscope/analysis/fastest.hpp"
#include "commscope/analysis/inputs.hpp"
#include "commscope/analysis/piecewise_fit.hpp"

namespace commscope::analysis {

// The out-of-place measurements of one (collective, algorithm) at the first (type, op) the files
// have for that collective, by size. Repetitions of a case (--benchmark_repetitions) and runs of
// the same configuration (several files) are pooled: the time is their median (the lower middle).
struct Measured {
  std::string collective, algorithm, type, op;
  int nranks = 0;
  std::vector<double> bytes, time_us, busbw_GBps;  // ascending sizes, sizes > 0 only
  // Per size: the p10-p90 of every per-call sample of the case, widened to the p10-p90 of the
  // runs' own times (each file's median) where kMinSpreadValues or more files have the case;
  // nullopt where neither is known (no samples, fewer runs).
  std::vector<std::optional<Interval>> spread_us;
  // Per size: what the piecewise fit fits, the lower of time_us and the median of the per-call
  // samples. A few stalled calls (a preempted rank on a busy node) raise the mean of 20 calls
  // 10-100x, never the median, and one such size would hide every protocol switch from the fit.
  // (On a GPU the samples come from a slower second pass: there time_us is the lower.)
  std::vector<double> typical_us;
  std::optional<AlphaBetaFit> fit;  // one line through every size's time_us (compare, predict), >= 2 sizes
  std::vector<Regime> regimes;      // the piecewise fit of typical_us (bench), >= 2 sizes
};

// collective -> algorithm -> measurements, in the first file's order of first appearance.
using BenchData = std::vector<std::pair<std::string, std::vector<Measured>>>;
// `runs`: one file, or several runs of one configuration. `left_out` (optional) receives what the
// data leave out, one "collective type op" per (collective, type, op) other than the first.
BenchData measurements(std::span<const BenchFile> runs, std::vector<std::string>* left_out = nullptr);
inline BenchData measurements(const BenchFile& file) {
  return measurements(std::span(&file, 1));
}

}  // namespace commscope::analysis
