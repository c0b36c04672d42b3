// Statistics of samples, one definition for the whole suite (the bench's per-iteration columns,
// the doctor's round trips, the report's spreads and tie rule).
//
// Percentiles are nearest-rank, as nccl-tests and the report's tables state them: for q in
// [0, 1] the value at rank ceil(q n) of n ascending values (rank 1 at q = 0), so every
// percentile is a measured value. No values give NaN, never 0: an empty column must not read as
// a measurement.
#pragma once

#include <span>
#include <vector>

namespace commscope::stats {

// Nearest-rank percentile of ascending `sorted`; q is clamped to [0, 1]. NaN when empty.
double nearest_rank(std::span<const double> sorted, double q);
// The same of unsorted values (a copy is sorted).
double percentile(std::vector<double> values, double q);
// Exact median (the mean of the middle two for an even count); NaN when empty.
double median(std::vector<double> values);
// Arithmetic mean; NaN when empty.
double mean(std::span<const double> values);
// How far repeated timings of one probe moved: 1 - fastest / median over the positive, finite
// times (0 for fewer than 2 of them). The probes keep the fastest, the machine's capability; this
// says how far from it a typical moment was (0.1: the median repeat took 1/0.9 of the fastest).
double spread_of(std::vector<double> times);

}  // namespace commscope::stats
