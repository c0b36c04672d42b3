#include "commscope/analysis/piecewise_fit.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>

namespace commscope::analysis {
namespace {

// Weighted least-squares line through samples added one by one, with centred (Welford) sums:
// sizes span 8 B .. GiB and raw sums of x^2 would lose the small sizes. Weights 1/t^2, so the
// residual is the sum of squared relative errors.
class RunningLine {
 public:
  void add(const Sample& s) {
    const double w = 1.0 / (s.time_us * s.time_us);
    w_ += w;
    const double dx = s.bytes - mx_, dy = s.time_us - my_;
    mx_ += w / w_ * dx;
    my_ += w / w_ * dy;
    cxx_ += w * dx * (s.bytes - mx_);
    cxy_ += w * dx * (s.time_us - my_);
    cyy_ += w * dy * (s.time_us - my_);
  }
  // sum w (t - line)^2 of the best line so far
  double residual() const { return std::max(0.0, cxx_ > 0 ? cyy_ - cxy_ * cxy_ / cxx_ : cyy_); }

 private:
  double w_ = 0, mx_ = 0, my_ = 0, cxx_ = 0, cxy_ = 0, cyy_ = 0;
};

void check(std::span<const Sample> samples, const PiecewiseOptions& options) {
  if (options.min_points < 2 || options.max_regimes < 1)
    throw std::invalid_argument("fit_piecewise: need min_points >= 2 and max_regimes >= 1");
  if (samples.size() < 2)
    throw std::invalid_argument("fit_piecewise: need 2 or more sizes, got " + std::to_string(samples.size()));
  for (std::size_t i = 0; i < samples.size(); ++i) {
    const Sample& s = samples[i];
    if (!std::isfinite(s.bytes) || s.bytes < 0 || !std::isfinite(s.time_us) || !(s.time_us > 0))
      throw std::invalid_argument("fit_piecewise: sizes must be finite and >= 0, times finite and > 0");
    if (i > 0 && !(s.bytes > samples[i - 1].bytes))
      throw std::invalid_argument("fit_piecewise: sizes must be strictly ascending");
  }
}

}  // namespace

FitQuality fit_quality(const AlphaBetaFit& fit, std::span<const Sample> samples) {
  if (fit.r_squared >= kMinRSquared) return FitQuality::fits;
  const bool flat = std::all_of(samples.begin(), samples.end(), [&](const Sample& s) {
    return std::fabs(s.time_us - fit.alpha_us) <= kFlatTolerance * s.time_us;
  });
  return flat ? FitQuality::flat : FitQuality::poor;
}

std::string_view fit_quality_name(FitQuality q) {
  switch (q) {
    case FitQuality::fits:
      return "fits";
    case FitQuality::flat:
      return "flat";
    case FitQuality::poor:
      return "does not fit";
  }
  return "?";
}

std::vector<Regime> fit_piecewise(std::span<const Sample> samples, const PiecewiseOptions& options) {
  check(samples, options);
  // Fewer sizes than a regime needs: one line through them all.
  const std::size_t n = samples.size(), m = std::min(options.min_points, n);
  constexpr double kInf = std::numeric_limits<double>::infinity();
  // cost[i][j]: relative RSS of one line through samples i..j (at least m of them).
  std::vector<std::vector<double>> cost(n, std::vector<double>(n, kInf));
  for (std::size_t i = 0; i < n; ++i) {
    RunningLine line;
    for (std::size_t j = i; j < n; ++j) {
      line.add(samples[j]);
      if (j + 1 - i >= m) cost[i][j] = line.residual();
    }
  }
  // best[k][j]: least RSS of samples 0..j cut into k + 1 regimes; start[k][j]: where the last begins.
  const std::size_t kmax = std::max<std::size_t>(1, std::min(options.max_regimes, n / m));
  std::vector<std::vector<double>> best(kmax, std::vector<double>(n, kInf));
  std::vector<std::vector<std::size_t>> start(kmax, std::vector<std::size_t>(n, 0));
  best[0] = cost[0];
  for (std::size_t k = 1; k < kmax; ++k)
    for (std::size_t j = 0; j < n; ++j)
      for (std::size_t i = 1; i <= j; ++i) {
        const double total = best[k - 1][i - 1] + cost[i][j];
        if (total < best[k][j]) best[k][j] = total, start[k][j] = i;
      }
  // The number of regimes by the penalised score (fewer on equal scores).
  const double nd = static_cast<double>(n), floor2 = options.noise_floor * options.noise_floor;
  std::size_t chosen = 0;
  double chosen_score = kInf;
  for (std::size_t k = 0; k < kmax; ++k) {
    if (!std::isfinite(best[k][n - 1])) continue;
    const double score =
        nd * std::log(std::max(best[k][n - 1] / nd, floor2)) + options.penalty * static_cast<double>(k);
    if (score < chosen_score) chosen = k, chosen_score = score;
  }
  std::vector<Regime> regimes(chosen + 1);
  std::size_t end = n;
  for (std::size_t k = chosen + 1; k-- > 0;) {
    const std::size_t first = k == 0 ? 0 : start[k][end - 1];
    Regime& r = regimes[k];
    r.first = first, r.last = end - 1;
    r.from_bytes = samples[r.first].bytes, r.to_bytes = samples[r.last].bytes;
    r.fit = fit_alpha_beta(samples.subspan(first, end - first));
    r.quality = fit_quality(r.fit, samples.subspan(first, end - first));
    end = first;
  }
  return regimes;
}

const Regime& regime_at(std::span<const Regime> regimes, double bytes) {
  if (regimes.empty()) throw std::invalid_argument("regime_at: no regimes");
  for (std::size_t r = 0; r < regimes.size(); ++r) {
    if (bytes <= regimes[r].to_bytes) return regimes[r];
    // In the gap before the next regime: the nearer of the two in log size.
    if (r + 1 < regimes.size() && bytes < regimes[r + 1].from_bytes)
      return bytes * bytes <= regimes[r].to_bytes * regimes[r + 1].from_bytes ? regimes[r] : regimes[r + 1];
  }
  return regimes.back();
}

}  // namespace commscope::analysis
