#include "commscope/analysis/outliers.hpp"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <limits>

namespace commscope::analysis {

double finite_median(const std::vector<double>& values) {
  std::vector<double> v;
  for (double x : values)
    if (std::isfinite(x)) v.push_back(x);
  if (v.empty()) return std::numeric_limits<double>::quiet_NaN();
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

namespace {
bool usable(double x) {
  return std::isfinite(x) && x > 0;
}
}  // namespace

RobustSpread robust_spread(const std::vector<double>& values) {
  std::vector<double> v, logs, dev;
  for (double x : values)
    if (usable(x)) v.push_back(x), logs.push_back(std::log(x));
  if (v.empty()) return RobustSpread{};
  RobustSpread s;
  s.n = v.size();
  s.median = finite_median(v);
  s.log_median = finite_median(logs);
  for (double l : logs) dev.push_back(std::fabs(l - s.log_median));
  s.log_mad = finite_median(dev);
  s.log_sigma = std::max(1.4826 * s.log_mad, std::log(kOutlierFloorRatio));
  return s;
}

double outlier_factor(const RobustSpread& spread) {
  return std::exp(kOutlierSigmas * spread.log_sigma);
}

bool beyond(double value, const RobustSpread& peers, Worse worse) {
  if (!usable(value) || peers.n == 0) return false;
  const double l = std::log(value);
  const double bad = worse == Worse::low ? peers.log_median - l : l - peers.log_median;
  return bad > kOutlierSigmas * peers.log_sigma;
}

std::vector<Outlier> outliers(const std::vector<double>& values, Worse worse) {
  std::vector<Outlier> out;
  if (robust_spread(values).n < kOutlierMinValues) return out;
  std::vector<double> peers;
  for (std::size_t i = 0; i < values.size(); ++i) {
    if (!usable(values[i])) continue;
    peers = values;
    peers.erase(peers.begin() + static_cast<std::ptrdiff_t>(i));
    const RobustSpread s = robust_spread(peers);
    if (beyond(values[i], s, worse)) out.push_back({i, s.median});
  }
  return out;
}

}  // namespace commscope::analysis
