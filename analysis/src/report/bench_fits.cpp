#include "bench_fits.hpp"

#include "commscope/model/row_selection.hpp"

#include <algorithm>
#include <cmath>
#include <iterator>
#include <stdexcept>

namespace commscope::analysis {
namespace {

// One row of a case: its time and busbw, the run (file) it came from.
struct Repetition {
  double time_us = 0, busbw_GBps = 0;
  std::size_t run = 0;
};
struct Case {
  std::vector<Repetition> reps;
  std::vector<double> samples;  // per-call times of every repetition and run (us)
};

// The spread of a case: samples widened by the runs' own medians (see Measured::spread_us).
std::optional<Interval> case_spread(const Case& c) {
  std::map<std::size_t, std::vector<double>> by_run;
  for (const Repetition& r : c.reps) by_run[r.run].push_back(r.time_us);  // reps sorted by time
  std::vector<double> run_times;
  for (const auto& [run, times] : by_run) run_times.push_back(lower_middle(times));
  return hull(p10_p90(c.samples), p10_p90(run_times));
}

// The lower of a case's time and the median of its per-call samples (see Measured::typical_us).
double typical(double time_us, std::vector<double> samples) {
  if (samples.empty()) return time_us;
  const auto mid = samples.begin() + static_cast<std::ptrdiff_t>((samples.size() - 1) / 2);
  std::nth_element(samples.begin(), mid, samples.end());
  return *mid > 0 ? std::min(time_us, *mid) : time_us;
}

void fit(Measured& m) {
  if (m.bytes.size() < 2) return;
  std::vector<Sample> samples, typical_samples;
  for (std::size_t i = 0; i < m.bytes.size(); ++i) {
    samples.push_back({m.bytes[i], m.time_us[i]});
    typical_samples.push_back({m.bytes[i], m.typical_us[i]});
  }
  try {
    m.fit = fit_alpha_beta(samples);
    m.regimes = fit_piecewise(typical_samples);
  } catch (const std::invalid_argument&) {
    m.fit.reset();  // degenerate data: reported without a fit
    m.regimes.clear();
  }
}

}  // namespace

BenchData measurements(std::span<const BenchFile> runs, std::vector<std::string>* left_out) {
  BenchData data;
  RowSelection selection;
  // (collective, algorithm) -> bytes -> case
  std::map<std::pair<std::string, std::string>, std::map<double, Case>> by_size;
  for (std::size_t run = 0; run < runs.size(); ++run) {
    const BenchFile& file = runs[run];
    for (const BenchRow& r : file.rows) {
      if (!selection.take(r.collective, r.type, r.op, r.in_place, static_cast<double>(r.bytes), r.time_us, left_out))
        continue;
      auto coll = std::find_if(data.begin(), data.end(), [&](const auto& c) { return c.first == r.collective; });
      if (coll == data.end()) coll = data.insert(data.end(), {r.collective, {}});
      auto algo = std::find_if(coll->second.begin(), coll->second.end(),
                               [&](const Measured& m) { return m.algorithm == r.algorithm; });
      if (algo == coll->second.end()) {
        Measured m;
        m.collective = r.collective;
        m.algorithm = r.algorithm;
        m.type = r.type;
        m.op = r.op;
        m.nranks = r.nranks;
        algo = coll->second.insert(coll->second.end(), m);
      }
      Case& c = by_size[{r.collective, r.algorithm}][static_cast<double>(r.bytes)];
      c.reps.push_back({r.time_us, r.busbw_GBps, run});
      const auto first = file.sample_time_us.begin() + static_cast<std::ptrdiff_t>(r.sample_offset);
      std::copy_if(first, first + static_cast<std::ptrdiff_t>(r.sample_count), std::back_inserter(c.samples),
                   [](double t) { return std::isfinite(t); });  // a damaged file's NaN would break the sort
    }
  }
  for (auto& [collective, algos] : data) {
    for (Measured& m : algos) {
      for (auto& [bytes, c] : by_size[{collective, m.algorithm}]) {
        std::sort(c.reps.begin(), c.reps.end(),
                  [](const Repetition& a, const Repetition& b) { return a.time_us < b.time_us; });
        const Repetition& mid = lower_middle(c.reps);
        m.bytes.push_back(bytes);
        m.time_us.push_back(mid.time_us);
        m.busbw_GBps.push_back(mid.busbw_GBps);
        m.spread_us.push_back(case_spread(c));
        m.typical_us.push_back(typical(mid.time_us, c.samples));
      }
      fit(m);
    }
  }
  return data;
}

}  // namespace commscope::analysis
