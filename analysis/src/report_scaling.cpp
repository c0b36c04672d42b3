// commscope-report scaling: profiles of one workload at different rank counts -> speedup,
// communication efficiency, parallel efficiency, and the speedup predicted from the smallest
// run's compute/communication shares and the measured efficiency, next to the measured one.

#include <algorithm>
#include <cstdlib>
#include <map>
#include <string>
#include <vector>

#include "commscope/analysis/inputs.hpp"
#include "commscope/analysis/model_math.hpp"
#include "report_writer.hpp"

namespace commscope::analysis {

namespace {

// One run, in seconds per iteration. Iterations: all but the first when there are several (the
// first warms caches and connections up); per iteration the slowest rank's step (what training
// waits for), and the mean over ranks of its communication and compute.
struct Run {
  std::string file;
  int ranks = 0;
  double t_iter = 0, t_comm = 0, t_comp = 0, t_other = 0;
  int iterations = 0;
  double global_batch = 0;  // from the trainer's attributes; 0 when unknown
};

Run summarize(const std::string& file) {
  preflight(file, "profile");
  const profiler::Profile p = read_profile_file(file);
  if (p.breakdown.empty()) throw InputError(file + ": the profile holds no iterations");
  Run run;
  run.file = file;
  run.ranks = p.meta.nranks;
  for (const auto& [k, v] : p.meta.attributes)
    if (k == "global_batch") run.global_batch = std::atof(v.c_str());
  std::map<int, std::vector<const profiler::BreakdownRow*>> by_step;
  for (const auto& r : p.breakdown) by_step[r.iteration].push_back(&r);
  if (by_step.size() > 1) by_step.erase(by_step.begin());
  for (const auto& [step, rows] : by_step) {
    double slowest = 0, comm = 0, comp = 0;
    for (const auto* r : rows) {
      slowest = std::max(slowest, static_cast<double>(r->window_ns));
      comm += static_cast<double>(r->comm_ns);
      comp += static_cast<double>(r->kernel_ns);
    }
    run.t_iter += slowest / 1e9;
    run.t_comm += comm / static_cast<double>(rows.size()) / 1e9;
    run.t_comp += comp / static_cast<double>(rows.size()) / 1e9;
  }
  run.iterations = static_cast<int>(by_step.size());
  run.t_iter /= run.iterations;
  run.t_comm /= run.iterations;
  run.t_comp /= run.iterations;
  run.t_other = std::max(0.0, run.t_iter - run.t_comm - run.t_comp);
  return run;
}

std::string pct(double x) {
  return format_number(100 * x, 3) + "%";
}

}  // namespace

void report_scaling(const std::vector<std::string>& files, const ReportOptions& options) {
  std::vector<Run> runs;
  for (const auto& f : files) runs.push_back(summarize(f));
  std::sort(runs.begin(), runs.end(), [](const Run& a, const Run& b) { return a.ranks < b.ranks; });
  for (std::size_t i = 1; i < runs.size(); ++i)
    if (runs[i].ranks == runs[i - 1].ranks)
      throw InputError(runs[i].file + ": the same rank count (" + std::to_string(runs[i].ranks) + ") as " +
                       runs[i - 1].file + "; scaling needs different rank counts");
  const Run& g = runs.front();
  // Strong scaling: the same global batch at every rank count (each rank's work shrinks as 1/n);
  // weak: the same batch per rank. Known from the trainer's global_batch attribute.
  const bool known = std::all_of(runs.begin(), runs.end(), [](const Run& r) { return r.global_batch > 0; });
  const bool strong =
      known && std::all_of(runs.begin(), runs.end(), [&](const Run& r) { return r.global_batch == g.global_batch; });

  ReportWriter w(options, "commscope scaling report");
  w.text(std::string("Baseline: ") + std::to_string(g.ranks) + " ranks (" + g.file + "). Scaling: " +
         (known ? (strong ? "strong (the same global batch)" : "weak or mixed (the global batch changes)")
                : "unknown (no global_batch attribute): efficiencies shown both ways") +
         ". Times are seconds per iteration: the slowest rank's step, and the mean over ranks of communication "
         "and compute, over all iterations but the first.");
  w.text(
      "predicted speedup = (r_comp + r_comm) / (r_comp w + r_comm / eff), with r the shares of the baseline's "
      "step, eff = t_comm(g) / t_comm(n) measured, and w = the per-rank work at n relative to g (g/n for "
      "strong scaling, 1 for weak; docs/design.md's formula is w = 1). Time outside compute and communication "
      "(dispatch) is left out of both sides.");

  Table t({"ranks", "t_iter_ms", "t_comp_ms", "t_comm_ms", "t_other_ms", "speedup", "comm_eff", "parallel_eff",
           "predicted_speedup", "prediction_error", "predicted_w1", "error_w1"});
  LinePlot plot{"Speedup against ranks", "ranks", "speedup", false, false, false, {}};
  Series measured{"measured", {}, {}, true, false}, predicted{"predicted", {}, {}, true, true},
      ideal{"ideal (strong scaling)", {}, {}, false, true};
  const double r_comp = g.t_comp / g.t_iter, r_comm = g.t_comm / g.t_iter;
  for (const Run& n : runs) {
    const double s = speedup(g.t_iter, n.t_iter);
    const double eff = n.t_comm > 0 && g.t_comm > 0 ? comm_efficiency(g.t_comm, n.t_comm) : 1.0;
    const double work = strong || !known ? static_cast<double>(g.ranks) / n.ranks : 1.0;
    const double pred = (r_comp + r_comm) / (r_comp * work + r_comm / eff);
    const double pred_w1 = predicted_speedup(r_comp, r_comm, eff);  // docs/design.md: per-rank compute unchanged
    const double par = strong || !known ? strong_scaling_efficiency(g.t_iter, n.t_iter, g.ranks, n.ranks)
                                        : weak_scaling_efficiency(g.t_iter, n.t_iter);
    t.add({std::to_string(n.ranks), format_number(n.t_iter * 1e3), format_number(n.t_comp * 1e3),
           format_number(n.t_comm * 1e3), format_number(n.t_other * 1e3), format_number(s), format_number(eff),
           pct(par), format_number(pred), n.ranks == g.ranks ? "-" : pct((pred - s) / s), format_number(pred_w1),
           n.ranks == g.ranks ? "-" : pct((pred_w1 - s) / s)});
    measured.x.push_back(n.ranks), measured.y.push_back(s);
    predicted.x.push_back(n.ranks), predicted.y.push_back(pred);
    ideal.x.push_back(n.ranks), ideal.y.push_back(static_cast<double>(n.ranks) / g.ranks);
  }
  w.section("Scaling");
  w.table("scaling", t);
  plot.series = {measured, predicted};
  if (strong || !known) plot.series.push_back(ideal);
  w.plot("speedup", plot);

  StackedBars bars{
      "Iteration time by part", "ranks", "ms per iteration", {}, {"compute", "communication", "other"}, {{}, {}, {}}};
  for (const Run& n : runs) {
    bars.categories.push_back(std::to_string(n.ranks));
    bars.values[0].push_back(n.t_comp * 1e3);
    bars.values[1].push_back(n.t_comm * 1e3);
    bars.values[2].push_back(n.t_other * 1e3);
  }
  w.plot("iteration_parts", bars);
  w.finish();
}

}  // namespace commscope::analysis
