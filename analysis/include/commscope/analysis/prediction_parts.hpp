#pragma once
// A predicted step set against a measured one part by part (`commscope-report scaling --bench`):
// each part's error, and whether the total's error is small only because the parts' misses
// cancel (communication predicted 10x low hidden by compute predicted high and the time outside
// both, which nothing predicts). No I/O: unit tested on made-up parts.

#include <span>
#include <string>

namespace commscope::analysis {

struct PredictedPart {
  std::string name;  // "compute", "tp", "pp", "dp", or the rest of the step
  double measured_s = 0, predicted_s = 0;
  bool communication = false;  // a communication group (tp, pp, dp): described together
  bool unpredicted = false;    // the step's time outside the predicted parts (predicted 0 by design)
};

// predicted / measured - 1; NaN where nothing was measured (measured <= 0).
double part_error(double measured_s, double predicted_s);

// The parts' misses d = predicted - measured add up to the total's (predicted and measured
// totals: the sums of the parts). They cancel when the parts miss by at least twice as much
// together, sum |d|, as the total does, |sum d|, and by at least kCancelShare of the measured
// step: then the words ("" otherwise), "the total is within 5.9% only because the parts' errors
// cancel: communication is predicted 32x low (7.9 against 256 ms: tp 5.2 against 225 ms, dp 2.7
// against 30.6 ms); compute is predicted 1.9x high (477 against 250 ms)", naming every part that
// misses by at least kNamedShare of the measured step, the largest miss first.
inline constexpr double kCancelShare = 0.2;
inline constexpr double kNamedShare = 0.05;
std::string cancelling_parts(std::span<const PredictedPart> parts);

}  // namespace commscope::analysis
