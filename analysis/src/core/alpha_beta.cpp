#include "commscope/analysis/alpha_beta.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <limits>
#include <set>
#include <stdexcept>
#include <utility>

#include "commscope/analysis/fastest.hpp"

namespace commscope::analysis {
namespace {

void check_ranks(int p) {
  if (p < 1) throw std::invalid_argument("commscope::analysis: rank count must be >= 1, got " + std::to_string(p));
}

}  // namespace

std::optional<CostTerms> textbook_cost(Collective c, TextbookAlgorithm a, int p) {
  check_ranks(p);
  return textbook_cost_terms(c, a, p);
}

std::optional<TextbookAlgorithm> textbook_algorithm_for(Collective c, std::string_view algorithm) {
  static constexpr std::array<std::string_view, 7> kKnown = {"mpi", "nccl", "ring", "tree", "rhd", "shm", "hier"};
  if (std::find(kKnown.begin(), kKnown.end(), algorithm) == kKnown.end())
    throw std::invalid_argument("unknown algorithm '" + std::string(algorithm) +
                                "' (known: mpi, nccl, ring, tree, rhd, shm, hier)");
  // The library's table (collective_model.hpp): mpi and nccl choose inside, shm's and hier's costs
  // are their own (a node's memory; two levels), none a network textbook's curve over p ranks.
  return textbook_algorithm_of(c, algorithm);
}

std::optional<double> textbook_time_us(Collective c, std::string_view algorithm, int p, double bytes,
                                       const CostParams& params) {
  const auto a = textbook_algorithm_for(c, algorithm);
  if (!a) return std::nullopt;
  const auto terms = textbook_cost(c, *a, p);
  if (!terms) return std::nullopt;
  return terms->time(params.alpha_us, params.beta_us_per_byte, params.gamma_us_per_byte, bytes);
}

AlphaBetaFit fit_alpha_beta(std::span<const Sample> samples, FitWeighting weighting) {
  const bool relative = weighting == FitWeighting::relative;
  std::set<double> sizes;
  for (const auto& s : samples) {
    if (!std::isfinite(s.bytes) || s.bytes < 0 || !std::isfinite(s.time_us) || s.time_us < 0) {
      throw std::invalid_argument("fit_alpha_beta: sizes and times must be finite and >= 0");
    }
    if (relative && s.time_us <= 0) {
      throw std::invalid_argument("fit_alpha_beta: relative weighting needs every time > 0");
    }
    sizes.insert(s.bytes);
  }
  if (sizes.size() < 2) {
    throw std::invalid_argument("fit_alpha_beta: need samples at 2 or more distinct sizes, got " +
                                std::to_string(sizes.size()));
  }
  auto weight = [relative](const Sample& s) { return relative ? 1.0 / (s.time_us * s.time_us) : 1.0; };
  // Centred sums (well conditioned although sizes span 8 B .. GiB).
  double w_sum = 0, x_mean = 0, y_mean = 0;
  for (const auto& s : samples) {
    const double w = weight(s);
    w_sum += w, x_mean += w * s.bytes, y_mean += w * s.time_us;
  }
  x_mean /= w_sum, y_mean /= w_sum;
  double sxx = 0, sxy = 0;
  for (const auto& s : samples) {
    const double w = weight(s), dx = s.bytes - x_mean;
    sxx += w * dx * dx, sxy += w * dx * (s.time_us - y_mean);
  }
  AlphaBetaFit fit;
  fit.weighting = weighting;
  fit.samples = samples.size();
  fit.beta_us_per_byte = sxy / sxx;
  fit.alpha_us = y_mean - fit.beta_us_per_byte * x_mean;
  if (fit.alpha_us < 0) {
    // A latency is never negative: the best line with alpha >= 0 then has alpha = 0, the weighted
    // line through the origin (the regime resolves no latency term; its sizes' times are their bytes).
    double sxt = 0, sx2 = 0;
    for (const auto& s : samples) sxt += weight(s) * s.bytes * s.time_us, sx2 += weight(s) * s.bytes * s.bytes;
    fit.alpha_us = 0;
    fit.beta_us_per_byte = sx2 > 0 ? sxt / sx2 : 0;
    fit.no_latency_term = true;
  }
  fit.bandwidth_gbps = fit.beta_us_per_byte > 0 ? 1e-3 / fit.beta_us_per_byte : std::numeric_limits<double>::infinity();
  // R^2 and relative errors on the unweighted data.
  double t_mean = 0;
  for (const auto& s : samples) t_mean += s.time_us;
  t_mean /= static_cast<double>(samples.size());
  double ss_res = 0, ss_tot = 0;
  for (const auto& s : samples) {
    const double r = s.time_us - fit.predict_us(s.bytes);
    ss_res += r * r, ss_tot += (s.time_us - t_mean) * (s.time_us - t_mean);
    if (s.time_us > 0) fit.max_relative_error = std::max(fit.max_relative_error, std::abs(r) / s.time_us);
  }
  fit.r_squared = ss_tot > 0 ? 1.0 - ss_res / ss_tot : (ss_res == 0 ? 1.0 : 0.0);
  return fit;
}

CostCurve curve_from_fit(std::string name, const AlphaBetaFit& fit, std::span<const double> sizes) {
  CostCurve curve{std::move(name), {}};
  curve.time_us.reserve(sizes.size());
  for (double n : sizes) curve.time_us.push_back(fit.predict_us(n));
  return curve;
}

std::vector<double> pow2_sizes(double lo, double hi) {
  if (!(lo > 0) || !(hi >= lo) || !std::isfinite(hi)) {
    throw std::invalid_argument("pow2_sizes: need 0 < lo <= hi, finite");
  }
  std::vector<double> sizes;
  for (double n = std::exp2(std::ceil(std::log2(lo))); n <= hi; n *= 2) sizes.push_back(n);
  return sizes;
}

namespace {

void check_grid(std::span<const double> sizes, std::span<const CostCurve> curves) {
  if (curves.empty()) throw std::invalid_argument("find_crossovers: no curves");
  if (sizes.empty()) throw std::invalid_argument("find_crossovers: empty size grid");
  for (std::size_t i = 1; i < sizes.size(); ++i) {
    if (!(sizes[i] > sizes[i - 1])) throw std::invalid_argument("find_crossovers: sizes must be ascending");
  }
  for (const auto& c : curves) {
    if (c.time_us.size() != sizes.size()) {
      throw std::invalid_argument("find_crossovers: curve '" + c.name + "' has " + std::to_string(c.time_us.size()) +
                                  " points, the grid " + std::to_string(sizes.size()));
    }
  }
}

// Index of the fastest curve at grid point i (ties: the earlier curve).
std::size_t fastest(std::span<const CostCurve> curves, std::size_t i) {
  std::size_t best = 0;
  for (std::size_t k = 1; k < curves.size(); ++k) {
    if (curves[k].time_us[i] < curves[best].time_us[i]) best = k;
  }
  return best;
}

}  // namespace

std::vector<Crossover> find_crossovers(std::span<const double> sizes, std::span<const CostCurve> curves) {
  check_grid(sizes, curves);
  std::vector<Crossover> out;
  std::size_t prev = fastest(curves, 0);
  for (std::size_t i = 1; i < sizes.size(); ++i) {
    const std::size_t now = fastest(curves, i);
    if (now == prev) continue;
    // d = t_from - t_to: <= 0 at i-1 (from was fastest), > 0 at i.
    const double d0 = curves[prev].time_us[i - 1] - curves[now].time_us[i - 1];
    const double d1 = curves[prev].time_us[i] - curves[now].time_us[i];
    const double frac = d1 - d0 > 0 ? -d0 / (d1 - d0) : 1.0;
    out.push_back({sizes[i], sizes[i - 1] + frac * (sizes[i] - sizes[i - 1]), curves[prev].name, curves[now].name});
    prev = now;
  }
  return out;
}

std::string describe_crossovers(std::span<const double> sizes, std::span<const CostCurve> curves) {
  check_grid(sizes, curves);
  std::vector<Verdict> winners;
  for (std::size_t i = 0; i < sizes.size(); ++i)
    winners.push_back({Verdict::Kind::winner, {curves[fastest(curves, i)].name}});
  return describe_verdicts(sizes, winners);
}

double carry_fit_us(const AlphaBetaFit& fit, Collective c, std::string_view algorithm, int from, int to, double bytes,
                    std::string* carried_as) {
  std::optional<TextbookAlgorithm> a;
  try {
    a = textbook_algorithm_for(c, algorithm);
  } catch (const std::invalid_argument&) {
    a = std::nullopt;  // a name this version does not know: carried as a ring
  }
  auto carry = [&](TextbookAlgorithm t) -> std::optional<double> {
    const auto at_to = textbook_cost(c, t, to), at_from = textbook_cost(c, t, from);
    if (!at_to || !at_from || at_from->alpha_count <= 0 || at_from->beta_factor <= 0) return std::nullopt;
    return fit.alpha_us * at_to->alpha_count / at_from->alpha_count +
           fit.beta_us_per_byte * bytes * at_to->beta_factor / at_from->beta_factor;
  };
  if (a)
    if (const auto t = carry(*a)) {
      if (carried_as) *carried_as = std::string(algorithm);
      return *t;
    }
  if (const auto t = carry(TextbookAlgorithm::ring)) {
    if (carried_as) *carried_as = "ring";
    return *t;
  }
  if (carried_as) *carried_as = "none";
  return fit.predict_us(bytes);
}

}  // namespace commscope::analysis
