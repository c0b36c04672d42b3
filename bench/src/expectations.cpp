#include "expectations.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <utility>

#include "commscope/collectives/types.hpp"
#include "commscope/model/expected_verdicts.hpp"
#include "commscope/model/format.hpp"
#include "commscope/model/row_expectation.hpp"
#include "commscope/model/row_selection.hpp"

namespace commscope::bench {
namespace {

using analysis::MeasuredRow;

// One collective and algorithm's sizes, ascending, each at the lower middle of its repetitions'
// times (the report's rule, row_selection.hpp).
// A repetition: its mean per call (time_us, busbw) and its median iteration.
struct Repetition {
  MeasuredRow mean;
  double median_us = 0;
};
struct Series {
  std::string collective, algorithm;
  int nranks = 0;
  std::map<double, std::vector<Repetition>> reps;  // bytes -> repetitions
};

// The run's out-of-place rows as the report takes them: sizes above 0 with a time, of the first
// (type, op) of each collective, collectives and algorithms in order of first appearance.
std::vector<Series> series_of(const std::vector<ResultRow>& rows) {
  std::vector<Series> out;
  analysis::RowSelection selection;
  for (const ResultRow& r : rows) {
    if (!selection.take(text(r.collective), text(r.type), text(r.op), r.in_place, static_cast<double>(r.bytes),
                        r.time_us))
      continue;
    const std::string coll = text(r.collective), algo = text(r.algorithm);
    auto s = std::find_if(out.begin(), out.end(),
                          [&](const Series& x) { return x.collective == coll && x.algorithm == algo; });
    if (s == out.end()) s = out.insert(out.end(), Series{coll, algo, r.nranks, {}});
    s->reps[static_cast<double>(r.bytes)].push_back(
        {{static_cast<double>(r.bytes), r.time_us, r.busbw_GBps}, r.p50_us});
  }
  return out;
}

// Each size's lower middle repetition by its mean, judged by its typical call (typical_time_us:
// the report's rule), its busbw scaled to that time.
std::vector<MeasuredRow> lower_middles(const Series& s) {
  std::vector<MeasuredRow> out;
  for (auto [bytes, reps] : s.reps) {
    std::sort(reps.begin(), reps.end(),
              [](const Repetition& a, const Repetition& b) { return a.mean.time_us < b.mean.time_us; });
    const Repetition& mid = analysis::lower_middle(reps);
    const double t = typical_time_us(mid.mean.time_us, mid.median_us);
    out.push_back({mid.mean.bytes, t, mid.mean.busbw_GBps * mid.mean.time_us / t});
  }
  return out;
}

}  // namespace

std::string verdict_thresholds() {
  using analysis::format_number;
  return "Verdicts against the machine model (of_expected = expected time / the time of the typical call, the "
         "lower of the mean and the median; the figures are that call's): good from " +
         format_number(100 * analysis::kGoodOfExpected) + "%, below from " +
         format_number(100 * analysis::kFarBelowOfExpected) + "%, far below under it, above the model over " +
         format_number(100 * analysis::kAboveModelOfExpected) + "% (docs/verdicts.md)";
}

RunExpectations::RunExpectations(const std::string& model_text, int nranks, std::string nccl_algo, bool verdicts,
                                 ExpectationOptions options)
    : nccl_algo_(std::move(nccl_algo)), options_(options), verdicts_(verdicts) {
  if (model_text.empty()) return;
  try {
    model_ = from_text(model_text);
    placement_ = placement_of(*model_, nranks);
  } catch (const std::exception& e) {
    problem_ = e.what();
    placement_.clear();
  }
}

void RunExpectations::set_model(const std::string& model_text) {
  if (!model_ || model_text.empty()) return;
  try {
    model_ = from_text(model_text);
  } catch (const std::exception&) {
    // The text this run wrote itself: kept as it was read at the start.
  }
}

void RunExpectations::judge(ResultRow& row) {
  if (!model_ || placement_.empty()) return;
  if (!row.in_place && verdicts_) rows_.push_back(row);
  if (static_cast<std::size_t>(row.nranks) != placement_.size()) return;
  try {
    const Expectation e = expected_row(*model_, placement_, parse_collective(text(row.collective)), text(row.algorithm),
                                       static_cast<double>(row.bytes), nccl_algo_, options_);
    const double nan = std::numeric_limits<double>::quiet_NaN();
    row.expected_time_us = e.time_us.value_or(nan);
    row.expected_busbw_GBps = e.busbw_GBps.value_or(nan);
    row.of_expected = of_expected(e, typical_time_us(row.time_us, row.p50_us)).value_or(nan);
  } catch (const std::exception&) {
    // A row the model cannot price (a collective it does not know): its columns stay NaN.
  }
}

std::vector<std::string> RunExpectations::verdict_lines() const {
  if (!model_ || !verdicts_) return {};
  if (placement_.empty()) return {"no verdicts, " + problem_};
  MachineModel model = *model_;
  const std::vector<Series> series = series_of(rows_);
  if (!model.latency_known()) {  // the report's alpha
    std::vector<analysis::RowOfRun> all;
    for (const Series& s : series)
      for (const MeasuredRow& m : lower_middles(s))
        all.push_back({parse_collective(s.collective), s.algorithm, s.nranks, m});
    analysis::fill_latency_from_run(model, all, options_);
  }
  std::vector<std::string> lines;
  bool any = false;  // a row with a verdict
  for (const Series& s : series) {
    std::vector<analysis::JudgedRow> judged;
    for (const MeasuredRow& m : lower_middles(s)) {
      Expectation e = expected_row(model, placement_, parse_collective(s.collective), s.algorithm, m.bytes, nccl_algo_, options_);
      const std::optional<double> of = of_expected(e, m.time_us);
      any = any || of.has_value();
      judged.push_back({m, std::move(e), of});
    }
    for (std::string& line : analysis::verdict_lines(s.collective, s.algorithm, judged, model))
      lines.push_back(std::move(line));
  }
  if (!any && not_measured_ && !lines.empty())
    return {
        "not judged: the machine's figures are measured at start-up only by a run that records them (--out FILE "
        "or -J FILE), or given in a --machine file (copy=RATE, intra=RATE, machine latency_us=US; "
        "docs/verdicts.md)"};
  return lines;
}

}  // namespace commscope::bench
