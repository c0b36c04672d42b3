// commscope-report scaling: profiles of one workload at different rank counts or (dp, tp, pp)
// layouts -> speedup, communication efficiency, parallel efficiency, and the speedup predicted
// from the smallest run's compute/communication shares and the measured efficiency, next to the
// measured one; with --bench, each run's step predicted as `predict` prices its layout, part by
// part against the measured step.

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <tuple>
#include <vector>

#include "commscope/analysis/inputs.hpp"
#include "commscope/analysis/model_math.hpp"
#include "commscope/analysis/prediction_parts.hpp"
#include "commscope/common/counted.hpp"
#include "commscope/formats/events.hpp"
#include "commscope/profiler/placement.hpp"
#include "commscope/profiler/run_description.hpp"
#include "report_writer.hpp"
#include "step_prediction.hpp"

namespace commscope::analysis {

namespace {

// One run, in seconds per iteration. Iterations: all but the first when there are several (the
// first warms caches and connections up); per iteration the slowest rank's step (what training
// waits for), and the mean over ranks of its communication and compute, and of the communication
// of each group (tp.*, pp.* and embedding.*, the rest: profiler::communication_group).
struct Run {
  std::string file;
  int ranks = 0;
  double t_iter = 0, t_comm = 0, t_comp = 0, t_other = 0;
  double t_tp = 0, t_pp = 0, t_dp = 0;  // t_pp: pp.* and embedding.* (the pipeline's waits are in them)
  int iterations = 0;
  double global_batch = 0;  // from the trainer's attributes; 0 when unknown
  // The trainer's layout and model (attributes); tp = pp = micro_batches = 1 when absent.
  int tp = 1, pp = 1, micro_batches = 1, zero = 0, bytes_per_param = 4, threads = 1;
  bool sp = false;  // sequence parallelism
  int layers = 0, channels = 0, heads = 0, seq = 0, vocab = 0, padded_vocab = 0;
  int context = 0;  // wpe's rows (the model's context); 0 where the profile predates the attribute: seq
  // The CPUs its ranks computed on (cores_of): the fewest a rank had, and all of them together
  // (0: unknown). From the profile's placement (/ranks), else from the attributes.
  double cpus_per_rank = 1;
  double cores_used = 0;
  bool placed = false;   // counted from the recorded placement
  bool by_host = false;  // placed, but no machine recorded: each host counted as one machine
  int hosts = 0, machines = 0;
  std::string workload;  // what ran (workload_of): runs of one workload scale against each other
  int dp() const { return ranks / std::max(1, tp * pp); }
  double cores() const { return placed ? cores_used : ranks * cpus_per_rank; }  // the CPUs its ranks compute on
  std::string layout() const {
    std::string s = layout_name(dp(), tp, pp);
    if (micro_batches > 1) s.append(" x").append(std::to_string(micro_batches));
    if (sp) s.append(" sp");
    return s;
  }
  bool same_layout(const Run& o) const {
    return ranks == o.ranks && tp == o.tp && pp == o.pp && micro_batches == o.micro_batches && sp == o.sp;
  }
};

// The CPUs a run's ranks had. From where they ran (/ranks: per machine the CPUs its ranks could
// run on, at most their threads; profiler::count_cores); in files without it from the attributes:
// per host min(node_cpus, ranks x threads), and per rank min(threads, node_cpus / the most ranks
// on a host), or the threads where node_cpus is unknown.
void cores_of(const profiler::Profile& p, int node_cpus, Run& run) {
  const profiler::CoreCount placed = profiler::count_cores(p.ranks, run.threads);
  run.hosts = placed.hosts;
  if (placed.known) {
    run.placed = true, run.by_host = placed.by_host, run.machines = placed.machines;
    run.cpus_per_rank = placed.cpus_per_rank, run.cores_used = placed.cores;
    return;
  }
  run.cpus_per_rank = run.threads;
  if (node_cpus <= 0) return;
  std::map<std::string, int> per_host;
  for (const auto& r : p.ranks) ++per_host[r.host];
  int most = 1;
  for (const auto& [host, n] : per_host) {
    most = std::max(most, n);
    run.cores_used += std::min(node_cpus, n * run.threads);
  }
  run.hosts = static_cast<int>(per_host.size());
  run.cpus_per_rank = std::min<double>(run.threads, static_cast<double>(node_cpus) / most);
}

Run summarize(const std::string& file) {
  preflight(file, "profile");
  const profiler::Profile p = read_profile_file(file, true);
  if (p.breakdown.empty()) throw InputError(file + ": the profile holds no iterations");
  Run run;
  run.file = file;
  run.ranks = p.meta.nranks;
  const profiler::RunDescription d = profiler::read_run_description(p.meta.attributes);
  run.global_batch = d.global_batch;
  run.tp = std::max(1, d.tp), run.pp = std::max(1, d.pp), run.micro_batches = std::max(1, d.micro_batches);
  run.sp = d.sp;
  run.zero = d.zero_stage();
  run.bytes_per_param = d.precision == "bf16" ? 2 : 4;
  run.threads = std::max(1, d.threads);
  run.layers = d.layers, run.channels = d.channels, run.heads = d.heads, run.seq = d.seq;
  run.vocab = d.vocab, run.padded_vocab = d.padded_vocab, run.context = d.context;
  run.workload = d.workload();
  cores_of(p, d.node_cpus, run);
  std::map<int, std::vector<const profiler::BreakdownRow*>> by_step;
  for (const auto& r : p.breakdown) by_step[r.iteration].push_back(&r);
  if (by_step.size() > 1) by_step.erase(by_step.begin());
  std::size_t rows = 0;
  for (const auto& [step, rs] : by_step) {
    double slowest = 0, comm = 0, comp = 0;
    for (const auto* r : rs) {
      slowest = std::max(slowest, static_cast<double>(r->window_ns));
      comm += static_cast<double>(r->comm_ns);
      comp += static_cast<double>(r->kernel_ns);
    }
    run.t_iter += slowest / 1e9;
    run.t_comm += comm / static_cast<double>(rs.size()) / 1e9;
    run.t_comp += comp / static_cast<double>(rs.size()) / 1e9;
    rows += rs.size();
  }
  run.iterations = static_cast<int>(by_step.size());
  run.t_iter /= run.iterations;
  run.t_comm /= run.iterations;
  run.t_comp /= run.iterations;
  run.t_other = std::max(0.0, run.t_iter - run.t_comm - run.t_comp);
  // Communication by group over the same iterations, per (rank, iteration) row.
  for (const auto& events : p.events)
    for (const profiler::Event& e : events) {
      if (e.kind != profiler::EventKind::kCommunication || !by_step.contains(e.iteration)) continue;
      // the name kept in a variable: a view into the ternary's temporary string would dangle
      const std::string name = e.name < p.strings.size() ? p.strings[e.name] : std::string();
      const std::string_view g = profiler::communication_group(name);
      const double s = static_cast<double>(e.end_ns - e.start_ns) / 1e9;
      (g == "tp" ? run.t_tp : g == "pp" || g == "embedding" ? run.t_pp : run.t_dp) += s;
    }
  const double n = std::max<double>(1, static_cast<double>(rows));
  run.t_tp /= n, run.t_pp /= n, run.t_dp /= n;
  return run;
}

// How the cores were counted, and for which runs otherwise.
std::string cores_text(const std::vector<Run>& runs) {
  std::string text =
      "cores: the CPUs a run's ranks had, from where they ran (the profile's /ranks): per machine the CPUs its "
      "ranks could run on together (their affinity), at most its ranks x threads; ranks of one machine (one "
      "boot id) share its CPUs whatever their host names.";
  for (const Run& r : runs) {
    if (r.placed && r.machines < r.hosts)
      text += " " + r.file + ": " + counted(r.hosts, "host") + " on " + counted(r.machines, "machine") +
              " (an emulated cluster's or containers' hosts), counted once.";
    else if (r.placed && r.by_host && r.hosts > 1)
      text += " " + r.file + " records no machine: each of its " + counted(r.hosts, "host") + " counted as one.";
    else if (!r.placed)
      text += " " + r.file + " records no placement (written before it was): its cores are ranks x " +
              (r.cores_used > 0 ? "min(threads, node_cpus / the most ranks on a host), from its attributes."
                                : "threads (its attributes; the node's CPUs unknown).");
  }
  return text;
}

// The speedup plot: measured and predicted speedup per layout shape, a line joining only runs
// of one shape ((n,1,1), (n,2,2) x2, ...) at their rank counts, so two layouts of one rank count
// are two points, never a vertical segment; the ideal line, by the cores the runs compute on,
// only for strong scaling where more ranks had more cores to run on.
class SpeedupPlot {
 public:
  SpeedupPlot(const std::vector<Run>& runs, bool strong, bool same_cores, const Run& g) {
    for (const Run& r : runs)
      if (std::find(shapes_.begin(), shapes_.end(), shape(r)) == shapes_.end()) shapes_.push_back(shape(r));
    plot_.x_integers = true;
    for (const std::string& sh : shapes_) {
      const std::string of = shapes_.size() > 1 ? " (" + sh + ")" : "";
      measured_.push_back({"measured" + of, {}, {}, true, false, sh});
      predicted_.push_back({"predicted" + of, {}, {}, true, true, sh});
    }
    if (same_cores) {
      plot_.note = "the runs share the baseline's " + std::to_string(g.cores_used) + " cores: no speedup is possible";
    } else if (strong) {
      std::map<int, double> most;  // the ideal per rank count: its runs' cores over the baseline's
      for (const Run& r : runs) most[r.ranks] = std::max(most[r.ranks], r.cores() / g.cores());
      for (const auto& [ranks, ideal] : most) ideal_.x.push_back(ranks), ideal_.y.push_back(ideal);
    }
  }
  void measured(const Run& r, double s) { add(measured_, r, s); }
  void predicted(const Run& r, double s) { add(predicted_, r, s); }
  LinePlot finish() {
    for (std::size_t i = 0; i < shapes_.size(); ++i) plot_.series.push_back(measured_[i]);
    for (const Series& p : predicted_)
      if (!p.x.empty()) plot_.series.push_back(p);
    if (!ideal_.x.empty()) plot_.series.push_back(ideal_);
    return plot_;
  }

 private:
  // A run's layout without its dp: "data parallel", or its tp, pp, micro-batches and sp.
  static std::string shape(const Run& r) {
    std::string s;
    auto part = [&](const std::string& p) { s += (s.empty() ? "" : ", ") + p; };
    if (r.tp > 1) part("tp " + std::to_string(r.tp));
    if (r.pp > 1) part("pp " + std::to_string(r.pp));
    if (r.micro_batches > 1) part(std::to_string(r.micro_batches) + " micro-batches");
    if (r.sp) part("sp");
    return s.empty() ? "data parallel" : s;
  }
  void add(std::vector<Series>& series, const Run& r, double s) {
    const auto i = static_cast<std::size_t>(std::find(shapes_.begin(), shapes_.end(), shape(r)) - shapes_.begin());
    series[i].x.push_back(r.ranks), series[i].y.push_back(s);
  }
  LinePlot plot_{
      "Speedup against ranks", "ranks", "speedup (the baseline's step time / the run's)", false, false, false, {}};
  std::vector<std::string> shapes_;
  std::vector<Series> measured_, predicted_;
  Series ideal_{"ideal (strong scaling, by cores)", {}, {}, false, true};
};

std::string pct(double x) {
  return format_number(100 * x, 3) + "%";
}

// Each run's step as predict prices its layout (step_prediction.hpp), part by part against the
// measured one. The compute rate: --flops per rank, or the baseline's measured rate (its FLOPs
// per rank over its compute time) per CPU a rank has, times the CPUs each run's ranks have.
// Made before the report is written, so that a bad bench file or a profile without the
// trainer's attributes ends the command with one line and no partial report.
struct PredictedSection {
  std::string text;
  Table table;
  std::string cancelling;  // the runs whose step is right only because its parts' misses cancel
};
PredictedSection predicted_against_measured(const std::vector<Run>& runs, const ScalingOptions& o) {
  const PricingBench bench = read_pricing_bench(o.bench, "pricing collectives");
  auto inputs = [](const Run& r) {
    if (r.layers < 1 || r.channels < 1 || r.heads < 1 || r.seq < 1 || r.global_batch <= 0)
      throw InputError(r.file + ": no model or batch attributes (a commscope-train profile has them)");
    StepInputs in;
    in.shape.name = "run";
    in.shape.layers = r.layers, in.shape.d_model = r.channels, in.shape.heads = r.heads, in.shape.seq = r.seq;
    in.shape.vocab = r.vocab, in.shape.padded_vocab = r.padded_vocab, in.shape.context = r.context;
    in.layout = {r.tp, r.pp, r.micro_batches, r.sp};
    in.dp = r.dp();
    in.batch = r.global_batch / (in.dp * r.micro_batches);
    in.zero = r.zero;
    in.bytes_per_param = r.bytes_per_param;
    in.flops = 1;  // FLOPs per rank and step, priced below
    return in;
  };
  const Run& g = runs.front();
  const double base_flops = step_flops_per_rank(inputs(g));  // the baseline's stages may be uneven
  if (o.flops <= 0 && g.t_comp <= 0)
    throw InputError(g.file + ": the baseline run has no compute time to rate the others by; give --flops");
  const double per_cpu = o.flops > 0 ? 0 : base_flops / g.t_comp / g.cpus_per_rank;
  std::string rate = o.flops > 0 ? format_number(o.flops / 1e9) + " GFLOP/s per rank (--flops)"
                                 : format_number(per_cpu / 1e9) + " GFLOP/s per CPU, the baseline's measured rate (" +
                                       format_number(base_flops / 1e9) + " GFLOP per rank and step in " +
                                       format_number(g.t_comp * 1e3) + " ms of compute on " +
                                       format_number(g.cpus_per_rank) + " CPU per rank)";
  std::string text =
      "Each run's step as `commscope-report predict` prices its layout: compute = its FLOPs per rank at " + rate +
      " (a rank gets its run's fewest CPUs per rank: the cores counted above over its ranks on the most crowded "
      "machine); tp = 4 allreduces per layer and micro-batch, pp = the sends, each priced with the fastest "
      "fit of " +
      o.bench + " (" + std::to_string(bench.nranks) +
      " ranks) carried to its group's size; the pipeline stretches compute + tp + pp by (M + pp - 1)/M with "
      "equal stages (pp_ms includes that bubble); dp = the ZeRO stage's collectives, not overlapped. Measured: "
      "the slowest rank's step, compute and each group's communication as means over ranks (pp_ms: pp.* and "
      "embedding.*, where the pipeline's waits fall), and rest_ms = the step less those parts: dispatch and the "
      "slowest rank's lead, which nothing predicts. The predicted step is the sum of its parts and the measured one "
      "of its parts and rest_ms, so the step's error is the parts' misses added up. error = predicted / measured - "
      "1, for the step and each part (\"-\" where nothing was measured).";
  Table t({"ranks", "layout", "zero", "measured_ms", "predicted_ms", "error", "compute_ms", "predicted_compute_ms",
           "compute_error", "tp_ms", "predicted_tp_ms", "tp_error", "pp_ms", "predicted_pp_ms", "pp_error", "dp_ms",
           "predicted_dp_ms", "dp_error", "rest_ms"});
  std::string cancelling;
  for (const Run& r : runs) {
    StepInputs in = inputs(r);
    in.flops = o.flops > 0 ? o.flops : per_cpu * r.cpus_per_rank;
    const double rest = r.t_iter - r.t_comp - r.t_tp - r.t_pp - r.t_dp;
    std::vector<std::string> row{std::to_string(r.ranks), r.layout(), std::to_string(r.zero),
                                 format_number(r.t_iter * 1e3)};
    if (r.heads % r.tp != 0 || r.layers % r.pp != 0) {
      row.insert(row.end(), {"- (stages or heads not equal)", "-"});
      for (const double m : {r.t_comp, r.t_tp, r.t_pp, r.t_dp})
        row.insert(row.end(), {format_number(m * 1e3), "-", "-"});
      row.push_back(format_number(rest * 1e3));
      t.add(std::move(row));
      continue;
    }
    const StepPrediction p = predict_step(&bench, in);
    const double pp_pred = p.p2p_s + (p.pipe_s - p.work_s) + p.embedding_s;
    const PredictedPart parts[] = {{"compute", r.t_comp, p.compute_s, false, false},
                                   {"tp", r.t_tp, p.tp_s, true, false},
                                   {"pp", r.t_pp, pp_pred, true, false},
                                   {"dp", r.t_dp, p.dp_s, true, false},
                                   {"the step outside compute and communication", rest, 0, false, true}};
    row.insert(row.end(), {format_number(p.iteration_s() * 1e3), pct(p.iteration_s() / r.t_iter - 1)});
    for (const PredictedPart& part : std::span(parts).first(4)) {
      const double e = part_error(part.measured_s, part.predicted_s);
      row.insert(row.end(), {format_number(part.measured_s * 1e3), format_number(part.predicted_s * 1e3),
                             std::isnan(e) ? "-" : pct(std::abs(e) < 1e-9 ? 0.0 : e)});  // not 2.22e-14%
    }
    row.push_back(format_number(rest * 1e3));
    t.add(std::move(row));
    if (const std::string c = cancelling_parts(parts); !c.empty())
      cancelling += (cancelling.empty() ? "" : " ") + std::to_string(r.ranks) + " ranks " + r.layout() + ": " + c + ".";
  }
  return {std::move(text), std::move(t), std::move(cancelling)};
}

}  // namespace

void report_scaling(const std::vector<std::string>& files, const ScalingOptions& scaling,
                    const ReportOptions& options) {
  std::vector<Run> runs;
  for (const auto& f : files) runs.push_back(summarize(f));
  std::stable_sort(runs.begin(), runs.end(), [](const Run& a, const Run& b) {
    return std::tie(a.ranks, a.tp, a.pp, a.micro_batches, a.sp) < std::tie(b.ranks, b.tp, b.pp, b.micro_batches, b.sp);
  });
  for (std::size_t i = 1; i < runs.size(); ++i)
    if (runs[i].same_layout(runs[i - 1]))
      throw InputError(runs[i].file + ": the same rank count (" + std::to_string(runs[i].ranks) + ") and layout " +
                       runs[i].layout() + " as " + runs[i - 1].file +
                       "; scaling needs different rank counts or layouts");
  const Run& g = runs.front();
  std::string mixed;
  for (const Run& r : runs) {
    if (r.workload == g.workload) continue;
    if (!scaling.allow_mixed)
      throw InputError(r.file + ": another workload than " + g.file + " (" + r.workload + " against " + g.workload +
                       "); scaling compares one workload at different rank counts (--allow-mixed to compare anyway)");
    mixed += " " + r.file + ": " + r.workload + ";";
  }
  std::optional<PredictedSection> vs_measured;
  if (!scaling.bench.empty()) vs_measured = predicted_against_measured(runs, scaling);
  // Strong scaling: the same global batch at every rank count (each rank's work shrinks as 1/n);
  // weak: the same batch per rank. Known from the trainer's global_batch attribute.
  const bool known = std::all_of(runs.begin(), runs.end(), [](const Run& r) { return r.global_batch > 0; });
  const bool strong =
      known && std::all_of(runs.begin(), runs.end(), [&](const Run& r) { return r.global_batch == g.global_batch; });

  // A baseline on one rank communicates with no one: its "communication" (the loss's sum over
  // one rank) says nothing of what n ranks exchange, so no efficiency or prediction is drawn
  // from it.
  const bool base_communicates = g.ranks > 1 && g.t_comm > 0;
  // Ranks that share the baseline's CPUs cannot go faster: more ranks only split the same cores.
  const bool same_cores = std::any_of(runs.begin(), runs.end(), [&](const Run& r) {
    return &r != &g && r.cores_used > 0 && g.cores_used > 0 && r.cores_used <= g.cores_used;
  });

  ReportWriter w(options, "commscope scaling report");
  w.text(std::string("Baseline: ") + std::to_string(g.ranks) + " ranks (" + g.file + "). Workload: " + g.workload +
         "." + (mixed.empty() ? "" : " MIXED WORKLOADS (--allow-mixed), so speedups compare different work:" + mixed) +
         " Scaling: " +
         (known ? (strong ? "strong (the same global batch)" : "weak or mixed (the global batch changes)")
                : "unknown (no global_batch attribute): efficiencies shown both ways") +
         ". Times are milliseconds per iteration (the _ms columns): the slowest rank's step, and the mean over "
         "ranks of communication and compute, over all iterations but the first.");
  w.text(cores_text(runs));
  if (same_cores)
    w.text("The runs share the same " + format_number(g.cores_used) +
           " cores: more ranks only split them, so no speedup is possible; the speedup shows what the parallel "
           "decomposition costs, not what more hardware gives.");
  w.text(base_communicates
             ? "predicted speedup = (r_comp + r_comm) / (r_comp w + r_comm / eff), with r the shares of the "
               "baseline's step, eff = t_comm(g) / t_comm(n) measured, and w = the per-rank compute time at n "
               "relative to g: (g/n for strong scaling, 1 for weak) x the baseline's CPUs per rank / the run's. Time "
               "outside compute and communication (dispatch) is left out of both sides. parallel_eff is per core: "
               "speedup x the baseline's cores / the run's for strong scaling, t_iter(g) / t_iter(n) for weak."
             : "The baseline runs on one rank: it communicates with no other rank, so its communication says nothing "
               "of the runs' and no communication efficiency or predicted speedup is given (\"-\"); take a "
               "baseline of 2 or more ranks for them. parallel_eff is per core: speedup x the baseline's cores / "
               "the run's for strong scaling, t_iter(g) / t_iter(n) for weak.");

  Table t({"ranks", "layout", "cores", "t_iter_ms", "t_comp_ms", "t_comm_ms", "t_other_ms", "speedup", "comm_eff",
           "parallel_eff", "predicted_speedup", "prediction_error"});
  SpeedupPlot plot(runs, strong || !known, same_cores, g);
  const double r_comp = g.t_comp / g.t_iter, r_comm = g.t_comm / g.t_iter;
  for (const Run& n : runs) {
    const double s = speedup(g.t_iter, n.t_iter);
    const bool by_rank = strong || !known;
    const double cpus = g.cpus_per_rank / n.cpus_per_rank;  // per-rank compute time from the CPUs a rank has
    const double par = by_rank ? s * g.cores() / n.cores() : weak_scaling_efficiency(g.t_iter, n.t_iter);
    std::string eff_text = "-", pred_text = "-", error_text = "-";
    if (base_communicates && n.t_comm > 0) {
      const double eff = comm_efficiency(g.t_comm, n.t_comm);
      const double work = (by_rank ? static_cast<double>(g.ranks) / n.ranks : 1.0) * cpus;
      const double pred = predicted_speedup(r_comp, r_comm, eff, work);
      eff_text = format_number(eff), pred_text = format_number(pred);
      if (&n != &g) error_text = pct((pred - s) / s);
      plot.predicted(n, pred);
    }
    t.add({std::to_string(n.ranks), n.layout(), format_number(n.cores()), format_number(n.t_iter * 1e3),
           format_number(n.t_comp * 1e3), format_number(n.t_comm * 1e3), format_number(n.t_other * 1e3),
           format_number(s), eff_text, pct(par), pred_text, error_text});
    plot.measured(n, s);
  }
  w.section("Scaling");
  w.table("scaling", t);
  w.plot("speedup", plot.finish());

  // Where a run has another layout than data parallel, every bar names its layout ("4" beside
  // "4 (1,2,2) x2" read as the same 4 ranks with none).
  const bool layouts =
      std::any_of(runs.begin(), runs.end(), [](const Run& r) { return r.tp * r.pp * r.micro_batches > 1 || r.sp; });
  StackedBars bars{"Iteration time by part",
                   layouts ? "ranks (dp,tp,pp) x micro-batches" : "ranks",
                   "time per iteration (ms)",
                   {},
                   {"compute", "communication", "other"},
                   {{}, {}, {}}};
  for (const Run& n : runs) {
    bars.categories.push_back(std::to_string(n.ranks) + (layouts ? " " + n.layout() : ""));
    bars.values[0].push_back(n.t_comp * 1e3);
    bars.values[1].push_back(n.t_comm * 1e3);
    bars.values[2].push_back(n.t_other * 1e3);
  }
  w.plot("iteration_parts", bars);
  if (vs_measured) {
    w.section("Predicted against measured (per rank and step)");
    w.text(vs_measured->text);
    w.table("predicted_vs_measured", vs_measured->table);
    if (!vs_measured->cancelling.empty()) w.text(vs_measured->cancelling);
  }
  w.finish();
}

}  // namespace commscope::analysis
