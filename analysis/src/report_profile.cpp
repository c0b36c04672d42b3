// commscope-report profile: where the time of every iteration went, how it spreads over steps
// and ranks, the slowest rank against the straggler bound, and the top operators.

#include <algorithm>
#include <cmath>
#include <map>
#include <string>
#include <vector>

#include "commscope/analysis/inputs.hpp"
#include "commscope/analysis/model_math.hpp"
#include "report_writer.hpp"

namespace commscope::analysis {

namespace {

double ms(double ns) {
  return ns / 1e6;
}
std::string fms(double ns) {
  return format_number(ms(ns));
}

struct Component {
  const char* name;
  double (*get)(const profiler::BreakdownRow&);
};
const Component kComponents[] = {
    {"kernel", [](const profiler::BreakdownRow& r) { return static_cast<double>(r.kernel_ns); }},
    {"intra-op", [](const profiler::BreakdownRow& r) { return static_cast<double>(r.intra_ns); }},
    {"inter-op", [](const profiler::BreakdownRow& r) { return static_cast<double>(r.inter_ns); }},
    {"comm wait", [](const profiler::BreakdownRow& r) { return static_cast<double>(r.comm_wait_ns); }},
    {"comm transfer", [](const profiler::BreakdownRow& r) { return static_cast<double>(r.comm_transfer_ns); }},
};

}  // namespace

void report_profile(const std::string& file, const ReportOptions& options) {
  preflight(file, "profile");
  const profiler::Profile p = read_profile_file(file);
  if (p.breakdown.empty()) throw InputError(file + ": the profile holds no iterations");
  const int nranks = std::max(1, p.meta.nranks);

  ReportWriter w(options, "commscope profile report: " + file);
  std::string head = std::to_string(nranks) + " ranks, " + std::to_string(p.breakdown.size()) +
                     " (rank, iteration) rows, clock " + p.meta.clock;
  for (const auto& [k, v] : p.meta.attributes)
    if (k == "model" || k == "dp" || k == "algo" || k == "global_batch" || k == "seq" || k == "job_rank" ||
        k == "job_nranks" || k == "signal")  // the last three: one rank's profile written at a signal
      head += ", " + k + " " + v;
  w.text(head + ". Times in ms; the four parts kernel + intra-op + inter-op + communication sum to the step.");

  // --- per iteration, mean over ranks
  std::map<int, std::vector<const profiler::BreakdownRow*>> by_step;
  for (const auto& r : p.breakdown) by_step[r.iteration].push_back(&r);
  w.section("Per iteration (mean over ranks)");
  Table steps({"step", "ranks", "step_ms", "kernel", "intra-op", "inter-op", "comm_wait", "comm_transfer", "overlap",
               "slowest_rank", "slowest_ms"});
  StackedBars bars{"Iteration breakdown (mean over ranks)", "iteration", "ms", {}, {}, {}};
  for (const auto& c : kComponents) bars.components.push_back(c.name);
  bars.values.assign(std::size(kComponents), {});
  std::vector<double> slowest_ms;
  for (const auto& [step, rows] : by_step) {
    double win = 0, over = 0;
    std::vector<double> comp(std::size(kComponents), 0.0);
    const profiler::BreakdownRow* slowest = rows.front();
    for (const auto* r : rows) {
      win += static_cast<double>(r->window_ns);
      over += static_cast<double>(r->overlap_ns);
      for (std::size_t c = 0; c < std::size(kComponents); ++c) comp[c] += kComponents[c].get(*r);
      if (r->window_ns > slowest->window_ns) slowest = r;
    }
    const auto n = static_cast<double>(rows.size());
    bars.categories.push_back(std::to_string(step));
    for (std::size_t c = 0; c < comp.size(); ++c) bars.values[c].push_back(ms(comp[c] / n));
    slowest_ms.push_back(ms(static_cast<double>(slowest->window_ns)));
    steps.add({std::to_string(step), std::to_string(rows.size()), fms(win / n), fms(comp[0] / n), fms(comp[1] / n),
               fms(comp[2] / n), fms(comp[3] / n), fms(comp[4] / n), fms(over / n), std::to_string(slowest->rank),
               fms(static_cast<double>(slowest->window_ns))});
  }
  w.table("iterations", steps);
  w.plot("iterations", bars);

  // --- spread of each component over all (rank, iteration) rows
  w.section("Components over all ranks and iterations");
  Table spread({"component", "median_ms", "p10_ms", "p90_ms", "min_ms", "max_ms", "share_of_step"});
  double total_window = 0;
  std::vector<double> windows;
  for (const auto& r : p.breakdown) {
    total_window += static_cast<double>(r.window_ns);
    windows.push_back(ms(static_cast<double>(r.window_ns)));
  }
  for (const auto& c : kComponents) {
    std::vector<double> v;
    double sum = 0;
    for (const auto& r : p.breakdown) v.push_back(ms(c.get(r))), sum += c.get(r);
    spread.add({c.name, format_number(percentile(v, 50)), format_number(percentile(v, 10)),
                format_number(percentile(v, 90)), format_number(percentile(v, 0)), format_number(percentile(v, 100)),
                format_number(100 * sum / total_window, 3) + "%"});
  }
  spread.add({"step", format_number(percentile(windows, 50)), format_number(percentile(windows, 10)),
              format_number(percentile(windows, 90)), format_number(percentile(windows, 0)),
              format_number(percentile(windows, 100)), "100%"});
  w.table("components", spread);

  // --- ranks and stragglers
  w.section("Ranks");
  Table ranks({"rank", "host", "mean_step_ms", "mean_kernel_ms", "mean_intra_op_ms", "mean_inter_op_ms",
               "mean_comm_wait_ms", "mean_comm_transfer_ms", "slowest_in_steps", "clock_offset_us", "dropped_events"});
  for (int rank = 0; rank < nranks; ++rank) {
    std::vector<double> win, kern, intra, inter, wait, transfer;
    for (const auto& r : p.breakdown)
      if (r.rank == rank) {
        win.push_back(ms(static_cast<double>(r.window_ns)));
        kern.push_back(ms(static_cast<double>(r.kernel_ns)));
        intra.push_back(ms(static_cast<double>(r.intra_ns)));
        inter.push_back(ms(static_cast<double>(r.inter_ns)));
        wait.push_back(ms(static_cast<double>(r.comm_wait_ns)));
        transfer.push_back(ms(static_cast<double>(r.comm_transfer_ns)));
      }
    int slowest = 0;
    for (const auto& [step, rows] : by_step) {
      const auto* s = *std::max_element(rows.begin(), rows.end(),
                                        [](const auto* a, const auto* b) { return a->window_ns < b->window_ns; });
      slowest += s->rank == rank ? 1 : 0;
    }
    const auto info = std::find_if(p.ranks.begin(), p.ranks.end(), [&](const auto& i) { return i.rank == rank; });
    ranks.add({std::to_string(rank), info != p.ranks.end() ? info->host : "?", format_number(mean(win)),
               format_number(mean(kern)), format_number(mean(intra)), format_number(mean(inter)),
               format_number(mean(wait)), format_number(mean(transfer)), std::to_string(slowest),
               info != p.ranks.end() ? format_number(static_cast<double>(info->clock_offset_ns) / 1e3) : "?",
               info != p.ranks.end() ? std::to_string(info->dropped_events) : "?"});
  }
  w.table("ranks", ranks);
  const double mu = mean(windows), sigma = stddev(windows);
  const double bound = straggler_bound(mu, sigma, nranks);
  w.text("Slowest rank per iteration: mean " + format_number(mean(slowest_ms)) + " ms. Step times over all ranks " +
         "and iterations: mean " + format_number(mu) + " ms, standard deviation " + format_number(sigma) +
         " ms; the expected slowest of " + std::to_string(nranks) + " ranks with such normal step times is " +
         format_number(bound) + " ms (mean + " + format_number(expected_max_std_normal(nranks)) +
         " sigma). A measured slowest well above that bound points at a systematic straggler, not noise.");

  // --- operators
  w.section("Top operators (summed over ranks)");
  std::map<std::uint32_t, profiler::OperatorTotalRow> ops;
  for (const auto& o : p.operators) {
    auto& t = ops[o.name];
    t.name = o.name;
    t.calls += o.calls;
    t.host_ns += o.host_ns;
    t.kernel_ns += o.kernel_ns;
    t.comm_ns += o.comm_ns;
    t.intra_ns += o.intra_ns;
  }
  std::vector<profiler::OperatorTotalRow> sorted;
  for (const auto& [name, t] : ops) sorted.push_back(t);
  std::sort(sorted.begin(), sorted.end(), [](const auto& a, const auto& b) { return a.host_ns > b.host_ns; });
  Table top({"operator", "calls", "host_ms", "kernel_ms", "comm_ms", "intra_op_ms", "host_ms_per_call"});
  for (std::size_t i = 0; i < sorted.size() && i < 20; ++i) {
    const auto& t = sorted[i];
    const std::string name = t.name < p.strings.size() ? p.strings[t.name] : "?";
    top.add({name, std::to_string(t.calls), fms(static_cast<double>(t.host_ns)), fms(static_cast<double>(t.kernel_ns)),
             fms(static_cast<double>(t.comm_ns)), fms(static_cast<double>(t.intra_ns)),
             fms(static_cast<double>(t.host_ns) / std::max<double>(1, static_cast<double>(t.calls)))});
  }
  w.table("operators", top);
  w.finish();
}

}  // namespace commscope::analysis
