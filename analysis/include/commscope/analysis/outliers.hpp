#pragma once
// The robust rule by which commscope-report doctor names a slow link or node. Rates and times
// spread by factors (a node at half speed is as odd whether the others run at 10 or at 100), so
// the rule works on their logarithms: a value is an outlier when its log lies more than
// kOutlierSigmas robust standard deviations on the bad side of the median log of its peers, where
// the robust standard deviation is 1.4826 x the median absolute deviation (MAD) of the logs, but
// never less than ln(kOutlierFloorRatio). With the floor a value must be at least
// kOutlierFloorRatio^kOutlierSigmas = 1.89x below the median (or above, for latencies) to be
// named, however alike its peers are; a spread-out set needs a proportionally larger factor. A
// value's peers are the others of its set, never itself: with 3 or 4 values, a slow one counted in
// its own median and MAD would pull both towards itself and hide (1.1, 0.9 and 0.4 would need 3.1x).
// At least 3 positive finite values are needed to say which one is odd; with fewer, none is named.

#include <cstddef>
#include <vector>

namespace commscope::analysis {

inline constexpr double kOutlierSigmas = 3.5;      // Iglewicz and Hoaglin's cut-off for modified z-scores
inline constexpr double kOutlierFloorRatio = 1.2;  // the least robust standard deviation: a factor of 1.2
inline constexpr std::size_t kOutlierMinValues = 3;

// Which side is bad: low (bandwidth, flop rates) or high (latency, time).
enum class Worse { low, high };

struct RobustSpread {
  double median = 0;      // of the values themselves
  double log_median = 0;  // of their natural logarithms
  double log_mad = 0;     // median absolute deviation of the logs
  double log_sigma = 0;   // max(1.4826 log_mad, ln kOutlierFloorRatio)
  std::size_t n = 0;      // positive finite values used
};

// Over the positive finite values of `values`; n = 0 (and zeros) when there are none.
RobustSpread robust_spread(const std::vector<double>& values);

// The least factor from the median that the rule names, for this spread (>= 1.89).
double outlier_factor(const RobustSpread& spread);

// Whether `value` lies beyond the rule on the bad side of `peers` (false when it is not positive
// and finite, or when there are no peers): for judging a value against peers it is not among.
bool beyond(double value, const RobustSpread& peers, Worse worse);

struct Outlier {
  std::size_t index = 0;    // in the values given
  double peers_median = 0;  // the median of the others, against which it was judged
};

// The outliers of `values`, each judged against the others (values that are not positive and
// finite are never outliers and do not count), in the order of `values`.
std::vector<Outlier> outliers(const std::vector<double>& values, Worse worse);

// Exact median of the finite values (NaN when there are none).
double finite_median(const std::vector<double>& values);

}  // namespace commscope::analysis
