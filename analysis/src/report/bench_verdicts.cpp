#include "bench_verdicts.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "commscope/model/expected_verdicts.hpp"
#include "commscope/model/format.hpp"
#include "commscope/model/row_expectation.hpp"

namespace commscope::analysis {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// Index of `bytes` in m.bytes, or m.bytes.size().
std::size_t index_of(const Measured& m, double bytes) {
  return static_cast<std::size_t>(std::find(m.bytes.begin(), m.bytes.end(), bytes) - m.bytes.begin());
}

// The fitted time of `m` at `bytes` with its spread (see fitted_verdicts); NaN where the regime
// does not fit or the line is not positive.
Timed fitted(const Measured& m, double bytes) {
  const Regime& r = regime_at(m.regimes, bytes);
  const double f = r.fit.predict_us(bytes);
  if (r.quality == FitQuality::poor || !(f > 0)) return {m.algorithm, kNaN, std::nullopt};
  std::size_t near = r.first;  // the regime's size nearest to `bytes` in log
  for (std::size_t i = r.first; i <= r.last; ++i)
    if (std::fabs(std::log(m.bytes[i] / bytes)) < std::fabs(std::log(m.bytes[near] / bytes))) near = i;
  const double f_near = r.fit.predict_us(m.bytes[near]);
  if (!(f_near > 0)) return {m.algorithm, kNaN, std::nullopt};
  if (!m.spread_us[near]) return {m.algorithm, f, std::nullopt};
  const Interval held = *hull(m.spread_us[near], Interval{f_near, f_near});
  return {m.algorithm, f, Interval{held.lo * f / f_near, held.hi * f / f_near}};
}

}  // namespace

SizeVerdicts measured_verdicts(std::span<const Measured> algos) {
  SizeVerdicts out;
  if (algos.empty()) return out;
  for (double s : algos.front().bytes) {
    std::vector<Timed> candidates;
    for (const Measured& m : algos) {
      const std::size_t i = index_of(m, s);
      if (i == m.bytes.size()) break;
      candidates.push_back({m.algorithm, m.time_us[i], m.spread_us[i]});
    }
    if (candidates.size() < algos.size()) continue;
    out.sizes.push_back(s);
    out.verdicts.push_back(fastest(candidates));
  }
  return out;
}

SizeVerdicts fitted_verdicts(std::span<const Measured> algos, std::span<const double> grid) {
  SizeVerdicts out;
  for (double s : grid) {
    std::vector<Timed> candidates;
    for (const Measured& m : algos)
      if (!m.regimes.empty()) candidates.push_back(fitted(m, s));
    if (candidates.empty()) continue;
    out.sizes.push_back(s);
    out.verdicts.push_back(fastest(candidates));
  }
  return out;
}

std::string describe_regime(const Regime& r) {
  const std::string range = format_bytes(r.from_bytes) + " to " + format_bytes(r.to_bytes) + ": ";
  const std::string r2 = "R^2 " + format_number(r.fit.r_squared, 3);
  switch (r.quality) {
    case FitQuality::fits:
      if (r.fit.no_latency_term)
        return range + "no latency term (a free line's would be below 0), " + format_number(r.fit.bandwidth_gbps) +
               " GB/s, " + r2;
      return range + "alpha " + format_number(r.fit.alpha_us) + " us, " + format_number(r.fit.bandwidth_gbps) +
             " GB/s, " + r2;
    case FitQuality::flat:
      return range + "flat at alpha " + format_number(r.fit.alpha_us) + " us (every size within " +
             format_number(100 * kFlatTolerance) + "%, " + r2 + ": no bandwidth term resolved)";
    case FitQuality::poor:
      break;
  }
  return range + "does not fit (" + r2 + ", off by up to " + format_number(100 * r.fit.max_relative_error, 3) + "%)";
}

std::optional<ModelJudgement> model_judgement(const std::vector<BenchFile>& runs, const BenchData& data) {
  const BenchFile& bench = runs.front();
  if (!bench.machine) return std::nullopt;
  ModelJudgement j{*bench.machine, {}, {}, {}, {}};
  for (const auto& [name, value] : bench.env)
    if (name == "NCCL_ALGO") j.nccl_algo = value;
  auto number = [&](const std::string& key) -> std::optional<double> {
    const std::string v = bench.meta_value(key);
    try {
      return v.empty() ? std::nullopt : std::optional<double>(std::stod(v));
    } catch (const std::exception&) {
      return std::nullopt;
    }
  };
  j.options = run_expectation_options(number("segment_bytes"), number("shm_adapt_bytes"), number("blocking"));
  try {
    j.placement = placement_of(j.model, bench.nranks);
  } catch (const std::invalid_argument& e) {
    j.note = "Machine model: no verdicts, " + std::string(e.what()) + ".";
    return j;
  }
  std::string alpha;
  if (j.model.latency_known()) {
    const FigureSource s = j.model.latency_source;
    alpha = std::string(s == FigureSource::doctor     ? "the doctor's 8 B latency, "
                        : s == FigureSource::measured ? "measured by the bench at start-up, "
                                                      : "given, ") +
            format_number(j.model.latency_us, 3) + " us per message" +
            (j.model.latency_detail.empty() ? "" : " (" + j.model.latency_detail + ")");
  } else {
    std::vector<RowOfRun> rows;
    for (const auto& [collective, algos] : data)
      for (const Measured& m : algos)
        for (std::size_t i = 0; i < m.bytes.size(); ++i)
          rows.push_back({parse_collective(collective), m.algorithm, m.nranks, {m.bytes[i], m.typical_us[i], 0}});
    if (const auto l = fill_latency_from_run(j.model, rows, j.options)) {
      alpha = "the run's own smallest time per message, " + format_number(l->latency_us, 3) + " us (" + l->from +
              "; no doctor file: latency-bound sizes are judged against the run's best, not an independent figure)";
    } else {
      alpha =
          "unknown (not in the model, and the run's smallest size is over 1 KiB): sizes where 20x a generous "
          "latency is under their time are priced without it, the others not judged";
    }
  }
  j.note =
      "Each row is set against the time its algorithm needs on the recorded machine model (docs/verdicts.md): "
      "expected_busbw, and of_expected = expected time / the time of the typical call (the lower of the mean and the "
      "median: a stalled call raises a mean a thousandfold), whose figures the verdicts give: good from " +
      format_number(100 * kGoodOfExpected) + "%, below from " + format_number(100 * kFarBelowOfExpected) +
      "%, far below under it, above the model over " + format_number(100 * kAboveModelOfExpected) +
      "% (a figure of the model is too low). Latency per message: " + alpha + ".";
  return j;
}

}  // namespace commscope::analysis
