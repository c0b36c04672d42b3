#pragma once
// What bench and compare share: a bench file's measurements grouped per collective and
// algorithm, and their alpha-beta fits.

#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "commscope/analysis/alpha_beta.hpp"
#include "commscope/analysis/inputs.hpp"

namespace commscope::analysis {

// The out-of-place measurements of one (collective, algorithm) at the first (type, op) the file
// has for that collective, by size (repetitions: the median time).
struct Measured {
  std::string collective, algorithm, type, op;
  int nranks = 0;
  std::vector<double> bytes, time_us, busbw_GBps;  // ascending sizes, sizes > 0 only
  std::optional<AlphaBetaFit> fit;                 // when at least 2 sizes
};

// collective -> algorithm -> measurements, in the file's order of first appearance.
using BenchData = std::vector<std::pair<std::string, std::vector<Measured>>>;
BenchData measurements(const BenchFile& file);

}  // namespace commscope::analysis
