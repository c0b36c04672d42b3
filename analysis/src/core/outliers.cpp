#include "commscope/analysis/outliers.hpp"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <limits>
#include <utility>

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
// The robust standard deviation of logs whose MAD is `log_mad`, never under the floor.
double robust_sigma(double log_mad) {
  return std::max(1.4826 * log_mad, std::log(kOutlierFloorRatio));
}
// The median of sorted `s` without its element at `j` (s.size() >= 2): finite_median of the rest.
double median_without(const std::vector<double>& s, std::size_t j) {
  const std::size_t n = s.size() - 1;
  auto at = [&](std::size_t k) { return s[k < j ? k : k + 1]; };  // the k-th of the rest
  return n % 2 ? at(n / 2) : 0.5 * (at(n / 2 - 1) + at(n / 2));
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
  s.log_sigma = robust_sigma(s.log_mad);
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

// Each value against robust_spread of the others, in O(n log n) rather than a spread per value
// (O(n^2 log n): 3.6 s for the 4096 ranks' probes, 65 s for 16384, and a cluster's host pairs
// are more): without one element a sorted list's median is one of its two or three middle
// elements' (median_without), so the others' log median takes at most 3 values; for each, the
// deviations of all the logs are sorted once, and a value's MAD is theirs without its own
// deviation (any of equal ones: the rest is the same).
std::vector<Outlier> outliers(const std::vector<double>& values, Worse worse) {
  std::vector<Outlier> out;
  std::vector<std::size_t> order;  // the usable values' indices, by value
  for (std::size_t i = 0; i < values.size(); ++i)
    if (usable(values[i])) order.push_back(i);
  if (order.size() < kOutlierMinValues) return out;
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return values[a] < values[b]; });
  std::vector<double> sorted, logs;
  for (std::size_t i : order) sorted.push_back(values[i]), logs.push_back(std::log(values[i]));
  std::vector<std::pair<double, std::vector<double>>> deviations;  // a log median, the sorted deviations from it
  auto deviations_from = [&](double median) -> const std::vector<double>& {
    for (const auto& [m, d] : deviations)
      if (m == median) return d;
    std::vector<double> d;
    for (double l : logs) d.push_back(std::fabs(l - median));
    std::sort(d.begin(), d.end());
    return deviations.emplace_back(median, std::move(d)).second;
  };
  for (std::size_t j = 0; j < order.size(); ++j) {
    RobustSpread peers;
    peers.n = order.size() - 1;
    peers.median = median_without(sorted, j);
    peers.log_median = median_without(logs, j);
    const std::vector<double>& d = deviations_from(peers.log_median);
    const double own = std::fabs(logs[j] - peers.log_median);
    peers.log_mad = median_without(d, static_cast<std::size_t>(std::lower_bound(d.begin(), d.end(), own) - d.begin()));
    peers.log_sigma = robust_sigma(peers.log_mad);
    if (beyond(values[order[j]], peers, worse)) out.push_back({order[j], peers.median});
  }
  std::sort(out.begin(), out.end(), [](const Outlier& a, const Outlier& b) { return a.index < b.index; });
  return out;
}

}  // namespace commscope::analysis
