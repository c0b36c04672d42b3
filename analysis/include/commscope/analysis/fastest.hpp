#pragma once
// Which algorithm is fastest at a size, stated only where the data support it: an algorithm is
// named when its advantage exceeds the measured spread, otherwise the size is a tie between the
// algorithms it cannot be told from. Times in microseconds, sizes in bytes.

#include <cstddef>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace commscope::analysis {

// The p10..p90 range of one measurement's times (us).
struct Interval {
  double lo = 0, hi = 0;
};

// Fewer values than this say nothing about a spread: p10-p90 of one or two values is the values.
inline constexpr std::size_t kMinSpreadValues = 3;
// Where a spread is unknown (no per-call samples, a single run), an algorithm is named fastest
// only when the other takes at least this many times as long: noise on a busy CPU node moves a
// small message's time by tens of percent, rarely by 2x at its median.
inline constexpr double kUnknownSpreadFactor = 2.0;

// p10..p90 (nearest rank, commscope/common/stats.hpp) of `values`; nullopt below
// kMinSpreadValues values.
std::optional<Interval> p10_p90(std::vector<double> values);
// The smallest interval holding both (either may be absent).
std::optional<Interval> hull(const std::optional<Interval>& a, const std::optional<Interval>& b);

// One algorithm's time at one size, with its spread when known.
struct Timed {
  std::string name;
  double time_us = 0;              // NaN: no usable time (a fit that does not hold there)
  std::optional<Interval> spread;  // nullopt: unknown
};

// True when `a` is faster than `b` by more than the spread: with both spreads known, a's p90 lies
// below b's p10 (the intervals do not overlap); otherwise b takes at least kUnknownSpreadFactor
// times as long as a.
bool clearly_faster(const Timed& a, const Timed& b);

struct Verdict {
  enum class Kind { winner, tie, unknown };
  Kind kind = Kind::winner;
  // winner: the algorithm; tie: the fastest by time and every algorithm it is not clearly faster
  // than, in the candidates' order (so that neighbouring sizes with the same tie merge whichever
  // of them is ahead by a hair); unknown: the algorithms without a usable time.
  std::vector<std::string> names;
  // winner or tie: the candidates without a usable time (no fit there), judged without them.
  std::vector<std::string> left_out = {};
  bool operator==(const Verdict&) const = default;
};

// The verdict over `candidates` (at least one; std::invalid_argument otherwise) among those with a
// time (not NaN): the fastest by time, tied with every candidate it is not clearly faster than; the
// others are left out. Unknown where fewer than two candidates have a time and some have none
// (one left is no comparison).
Verdict fastest(std::span<const Timed> candidates);
// "ring", "tie (ring, tree)", "ring (rhd not judged: no fit)", "unknown (no fit for mpi)".
std::string verdict_text(const Verdict& v);
// Consecutive sizes with the same verdict merged into ranges: "ring below 32 B, tie (ring, tree)
// from 32 B to 128 B, rhd from 128 B (to 512 B, the largest size)", or "..., rhd at 512 B, the
// largest size" where only the largest has it; one verdict: "ring fastest at all sizes",
// "tie (ring, tree) at all sizes". `sizes` ascending, as many as verdicts (std::invalid_argument otherwise).
std::string describe_verdicts(std::span<const double> sizes, std::span<const Verdict> verdicts);

}  // namespace commscope::analysis
