#include "commscope/common/stats.hpp"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <limits>
#include <numeric>

namespace commscope::stats {

double nearest_rank(std::span<const double> sorted, double q) {
  if (sorted.empty()) return std::numeric_limits<double>::quiet_NaN();
  const double n = static_cast<double>(sorted.size());
  const auto rank = static_cast<std::size_t>(std::ceil(std::clamp(q, 0.0, 1.0) * n));
  return sorted[std::clamp<std::size_t>(rank, 1, sorted.size()) - 1];
}

double percentile(std::vector<double> values, double q) {
  std::sort(values.begin(), values.end());
  return nearest_rank(values, q);
}

double median(std::vector<double> values) {
  if (values.empty()) return std::numeric_limits<double>::quiet_NaN();
  std::sort(values.begin(), values.end());
  const std::size_t n = values.size();
  return n % 2 ? values[n / 2] : 0.5 * (values[n / 2 - 1] + values[n / 2]);
}

double mean(std::span<const double> values) {
  if (values.empty()) return std::numeric_limits<double>::quiet_NaN();
  return std::accumulate(values.begin(), values.end(), 0.0) / static_cast<double>(values.size());
}

double spread_of(std::vector<double> times) {
  std::erase_if(times, [](double t) { return !(t > 0) || !std::isfinite(t); });
  if (times.size() < 2) return 0;
  const double fastest = *std::min_element(times.begin(), times.end());
  return 1 - fastest / median(std::move(times));
}

}  // namespace commscope::stats
