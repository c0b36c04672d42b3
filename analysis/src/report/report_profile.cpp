// commscope-report profile: where the time of every iteration went, how it spreads over steps
// and ranks, the slowest rank against the straggler bound, and the top operators.

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "commscope/analysis/inputs.hpp"
#include "commscope/analysis/model_math.hpp"
#include "commscope/common/stats.hpp"
#include "commscope/model/format.hpp"
#include "commscope/profiler/run_description.hpp"
#include "commscope/profiler/vocabulary.hpp"
#include "replay_compare.hpp"
#include "report_writer.hpp"
#include "step_communication.hpp"

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

// The group a communication's name says (profiler::communication_group), as the table names it;
// an imported PyTorch collective's process group where the import recorded one (its detail,
// "process group NAME DESCRIPTION").
std::string comm_group(const std::string& name, const std::string& detail) {
  if (detail.starts_with("process group ")) return detail;
  const std::string_view g = profiler::communication_group(name);
  if (g == "tp") return "tp (tensor parallel)";
  if (g == "pp") return "pp (pipeline)";
  if (g == "embedding") return "embedding (first and last stage)";
  return "dp and others";
}

// An operator's kind: its name with each dot-separated part that ends in a number (a layer's index:
// "block3", or "3") given "*" for the number: "block3.attn.fwd" -> "block*.attn.fwd".
std::string operator_kind(const std::string& name) {
  std::string kind;
  std::size_t start = 0;
  while (start <= name.size()) {
    const std::size_t end = std::min(name.find('.', start), name.size());
    std::size_t digits = end;
    while (digits > start && name[digits - 1] >= '0' && name[digits - 1] <= '9') --digits;
    if (!kind.empty() || start > 0) kind.push_back('.');
    kind.append(name, start, digits - start);
    if (digits < end) kind.push_back('*');
    start = end + 1;
  }
  return kind;
}

// Every operator, its layers folded together (operator_kind), per step: what a layer's kind of
// work costs a step, all of it (the top operators above are single layers' and only 20). Left out
// where no name folds. `steps`: the profile's iterations (report_profile's by_step).
void operator_kinds(ReportWriter& w, const profiler::Profile& p, const std::vector<profiler::OperatorTotalRow>& ops,
                    std::size_t steps) {
  struct Kind {
    std::set<std::string> names;
    profiler::OperatorTotalRow t;
  };
  std::map<std::string, Kind> kinds;
  for (const auto& o : ops) {
    const std::string name = o.name < p.strings.size() ? p.strings[o.name] : "?";
    Kind& k = kinds[operator_kind(name)];
    k.names.insert(name);
    profiler::add_totals(k.t, o);
  }
  if (kinds.size() == ops.size()) return;
  const double per = static_cast<double>(std::max<std::size_t>(1, steps)) * std::max(1, p.meta.nranks);
  std::vector<std::pair<std::string, const Kind*>> sorted;
  for (const auto& [name, k] : kinds) sorted.emplace_back(name, &k);
  std::sort(sorted.begin(), sorted.end(),
            [](const auto& a, const auto& b) { return a.second->t.total_ns > b.second->t.total_ns; });
  w.section("Operators by kind (each layer's of a kind together; per step and rank)");
  w.text(
      "Every operator, those that differ only in a layer's number summed (block3.attn.fwd and block7.attn.fwd "
      "are block*.attn.fwd), divided by the " +
      std::to_string(steps) + " steps and " + std::to_string(std::max(1, p.meta.nranks)) +
      " ranks: the columns of the table above, per step.");
  Table table({"operator", "operators", "calls_per_step", "total_ms", "kernel_ms", "comm_ms", "intra_op_ms"});
  for (const auto& [name, k] : sorted)
    table.add({name, std::to_string(k->names.size()), format_number(static_cast<double>(k->t.calls) / per),
               fms(static_cast<double>(k->t.total_ns) / per), fms(static_cast<double>(k->t.kernel_ns) / per),
               fms(static_cast<double>(k->t.comm_ns) / per), fms(static_cast<double>(k->t.intra_ns) / per)});
  w.table("operator_kinds", table);
}

// Communication per group and name (per rank and step), and for a pipeline each stage's time
// waiting for its neighbours against the bubble (p - 1)/(m + p - 1). Needs the events.
void communication_by_group(ReportWriter& w, const profiler::Profile& p) {
  if (p.events.empty()) return;
  struct Sum {
    double ns = 0, bytes = 0, calls = 0;
  };
  std::map<std::pair<std::string, std::string>, Sum> by_name;
  std::map<std::string, Sum> by_group;
  std::vector<double> recv_ns(p.events.size(), 0), embedding_ns(p.events.size(), 0);
  double total = 0;
  auto text = [&](std::uint32_t id) { return id < p.strings.size() ? p.strings[id] : std::string(); };
  for (std::size_t r = 0; r < p.events.size(); ++r) {
    // An imported collective's call carries its process group; its device kernels carry the
    // call's id (and their own name as the detail).
    std::map<std::uint64_t, std::string> group_of_call;
    for (const profiler::Event& e : p.events[r])
      if (e.kind == profiler::EventKind::kCommunication && text(e.detail).starts_with("process group "))
        group_of_call[e.id] = text(e.detail);
    for (const profiler::Event& e : p.events[r]) {
      if (e.kind != profiler::EventKind::kCommunication || e.iteration < 0) continue;
      const std::string name = e.name < p.strings.size() ? p.strings[e.name] : "?";
      const auto call = group_of_call.find(e.id);
      const std::string group = comm_group(name, call != group_of_call.end() ? call->second : "");
      const double ns = static_cast<double>(e.end_ns - e.start_ns);
      for (Sum* sum : {&by_name[{group, name}], &by_group[group]}) {
        sum->ns += ns;
        sum->bytes += static_cast<double>(std::max<std::int64_t>(0, e.bytes));
        sum->calls += 1;
      }
      total += ns;
      if (name == "pp.recv") recv_ns[r] += ns;
      if (name == "embedding.allreduce") embedding_ns[r] += ns;
    }
  }
  if (by_name.empty()) return;
  const double rows = static_cast<double>(p.breakdown.size());
  w.section("Communication by group (per rank and step)");
  w.text(
      "Each communication's group from its name: tp.* inside a tensor-parallel group, pp.* between pipeline "
      "stages, embedding.* between the first and last stage, the rest (gradients, the loss) over the data-parallel "
      "group; an imported PyTorch collective's group is the process group its trace recorded. Means over the " +
      format_number(rows) + " (rank, iteration) rows.");
  Table t({"group", "communication", "calls", "MiB", "ms", "share_of_comm"});
  for (const auto& [key, sum] : by_name)
    t.add({key.first, key.second, format_number(sum.calls / rows), format_number(sum.bytes / rows / 1048576.0),
           fms(sum.ns / rows), format_number(100.0 * sum.ns / std::max(total, 1.0)) + "%"});
  for (const auto& [group, sum] : by_group)
    t.add({group, "(all)", format_number(sum.calls / rows), format_number(sum.bytes / rows / 1048576.0),
           fms(sum.ns / rows), format_number(100.0 * sum.ns / std::max(total, 1.0)) + "%"});
  w.table("communication_groups", t);

  const profiler::RunDescription run = profiler::read_run_description(p.meta.attributes);
  const int pp = run.pp, m = run.micro_batches;
  const int nranks = std::max(1, p.meta.nranks);
  if (pp < 2 || m < 1 || nranks % pp != 0) return;
  const double bubble = static_cast<double>(pp - 1) / (m + pp - 1);
  w.section("Pipeline stages");
  w.text("A stage waits in pp.recv for its neighbours: in the pipeline's fill and drain (the bubble, predicted " +
         std::to_string(pp - 1) + "/" + std::to_string(m + pp - 1) + " = " + format_number(100 * bubble) +
         "% of the step for " + std::to_string(pp) + " stages and " + std::to_string(m) +
         " micro-batches), and while the neighbour's messages are in flight; the first and last stage then wait for "
         "each other in embedding.allreduce (the drain of the stage that finishes first). Ranks are stages in blocks "
         "of " +
         std::to_string(nranks / pp) + " (PP outermost).");
  Table st({"stage", "ranks", "step_ms", "pp_recv_ms", "embedding_ms", "pipeline_wait_share", "predicted_bubble"});
  for (int s = 0; s < pp; ++s) {
    double step = 0, recv = 0, emb = 0, n = 0;
    const int lo = s * (nranks / pp), hi = lo + nranks / pp;
    for (const auto& row : p.breakdown)
      if (row.rank >= lo && row.rank < hi) step += static_cast<double>(row.window_ns), n += 1;
    for (int r = lo; r < hi && r < static_cast<int>(recv_ns.size()); ++r)
      recv += recv_ns[static_cast<std::size_t>(r)], emb += embedding_ns[static_cast<std::size_t>(r)];
    if (n == 0) continue;
    st.add({std::to_string(s), std::to_string(lo) + "-" + std::to_string(hi - 1), fms(step / n), fms(recv / n),
            fms(emb / n), format_number(100.0 * (recv + emb) / std::max(step, 1.0)) + "%",
            format_number(100 * bubble) + "%"});
  }
  w.table("pipeline_stages", st);
}

// The bench files that time the profile's calls alone: each one's rank count must be a group
// size of the profile and its device the profile's (std::invalid_argument: one line, exit 2).
std::vector<BenchFile> alone_files(const profiler::Profile& p, const std::string& file,
                                   const std::vector<std::string>& paths) {
  if (p.events.empty()) throw InputError(file + ": the profile holds no events to set against --bench");
  std::set<int> sizes;
  for (const auto& events : p.events)
    for (const profiler::Event& e : events) {
      if (e.kind != profiler::EventKind::kCommunication) continue;
      const profiler::ProfiledCall c = profiler::profiled_call(p, e);
      if (!c.link && c.group_size > 0) sizes.insert(c.group_size);
    }
  std::string have;
  for (int n : sizes) have += (have.empty() ? "" : ", ") + std::to_string(n);
  const std::string device = profiler::read_run_description(p.meta.attributes).device;
  std::vector<BenchFile> files = read_bench_files(paths);
  for (const BenchFile& b : files) {
    // Its run's size, or a row's on groups of a smaller size (commscope-bench --from-profile's).
    const bool fits = sizes.contains(b.nranks) || std::any_of(b.rows.begin(), b.rows.end(), [&](const BenchRow& r) {
                        return sizes.contains(r.nranks);
                      });
    if (!fits)
      throw std::invalid_argument(b.path + ": a bench of " + std::to_string(b.nranks) +
                                  " ranks, but the collectives of " + file + " run on groups of " +
                                  (have.empty() ? "no" : have) +
                                  " ranks: bench the profile's group sizes (commscope-bench -np N --from-profile)");
    if (!device.empty() && !b.device.empty() && b.device != device)
      throw std::invalid_argument(b.path + ": a bench on " + b.device + ", but " + file + " ran on " + device);
  }
  return files;
}

// What --bench, --alone, --doctor, --machine and --link-rate give: the bench files, the replay
// (checked to be one of this profile, with --gaps none), the doctor file's, the machine file's and
// the link rates' entries (in that order, as the bench applies them: a figure given wins). std::invalid_argument (one
// line, exit 2) for a replay of another profile or with gaps, a bad machine file or link rate, or --alone with no
// machine model to price the calls.
struct Alone {
  bool wanted = false;
  std::vector<BenchFile> bench;
  std::optional<profiler::Profile> replay;
  MachineFigures machine;
  std::optional<MachineModel> recorded;  // the profile's own (commscope-train --machine-probe)
};
Alone alone_sources(const profiler::Profile& p, const std::string& file, const ProfileOptions& o) {
  Alone a;
  a.wanted = !o.bench.empty() || !o.alone.empty() || !o.machine.empty() || !o.link_rates.empty() || !o.doctor.empty();
  if (!a.wanted) return a;
  if (!o.bench.empty()) a.bench = alone_files(p, file, o.bench);
  a.recorded = machine_model_of(p, file);
  if (!o.doctor.empty()) {
    preflight(o.doctor, "doctor");
    const DoctorFile d = read_doctor_file(o.doctor);
    const std::string name = std::filesystem::path(o.doctor).filename().string();
    a.machine.entries = doctor_entries(name, d.pairs, d.meta_value("oversubscribed"));
    if (profiler::read_run_description(p.meta.attributes).device == "cuda")
      for (MachineEntry& e : doctor_gpu_entries(name, d.peers)) a.machine.entries.push_back(std::move(e));
    a.machine.origins.assign(a.machine.entries.size(), "--doctor " + o.doctor);
    if (!a.machine.entries.empty()) a.machine.source = "--doctor " + o.doctor;
  }
  if (!o.machine.empty()) {
    std::ifstream in(o.machine);
    if (!in) throw std::invalid_argument("--machine " + o.machine + ": cannot read it");
    const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    std::vector<MachineEntry> entries;
    try {
      entries = parse_machine_entries(text);
    } catch (const MachineModelError& e) {
      throw std::invalid_argument("--machine " + o.machine + ": " + e.what());
    }
    for (MachineEntry& e : entries) {
      a.machine.origins.push_back(o.machine + " line " + std::to_string(e.line));
      a.machine.entries.push_back(std::move(e));
    }
    a.machine.source += (a.machine.source.empty() ? "" : ", ") + o.machine;
  }
  for (const std::string& l : o.link_rates) {
    try {
      a.machine.entries.push_back(link_rate_entry(l));
    } catch (const MachineModelError& e) {
      throw std::invalid_argument("--link-rate '" + l + "': " + e.what());
    }
    a.machine.origins.push_back("--link-rate " + l);
    a.machine.source += (a.machine.source.empty() ? "" : ", ") + a.machine.origins.back();
  }
  if (!o.alone.empty()) {
    preflight(o.alone, "profile");
    a.replay = read_profile_file(o.alone, true);
    const std::string gaps = value_of(a.replay->meta.attributes, "replay_gaps");
    if (value_of(a.replay->meta.attributes, "replay_of").empty())
      throw std::invalid_argument("--alone " + o.alone + ": not a replay (commscope-replay " + file +
                                  " --gaps none writes one)");
    if (gaps != "none")
      throw std::invalid_argument("--alone " + o.alone + ": replayed with --gaps " + gaps +
                                  ", so its calls did not run alone: replay with --gaps none");
    ReplayComparison c;
    try {
      c = compare_replay(p, *a.replay);
    } catch (const std::invalid_argument& e) {
      throw std::invalid_argument("--alone " + o.alone + " is not a replay of " + file + ": " + e.what());
    }
    // Its calls and bytes must be the profile's, communicator by communicator.
    for (const ReplayCollectiveRow& r : c.by_collective)
      if (r.recorded_calls != r.replayed_calls || r.recorded_bytes != r.replayed_bytes)
        throw std::invalid_argument(
            "--alone " + o.alone + " is not a replay of " + file + ": " + r.name + " on " + r.group +
            " in the steps both hold, " + std::to_string(r.recorded_calls) + " calls moving " +
            format_bytes(static_cast<double>(r.recorded_bytes)) + " in all recorded, " +
            std::to_string(r.replayed_calls) + " moving " + format_bytes(static_cast<double>(r.replayed_bytes)) +
            " replayed");
    const bool model = std::any_of(a.bench.begin(), a.bench.end(), [](const BenchFile& b) { return b.machine; });
    if (!model && !a.recorded && a.machine.entries.empty())
      throw std::invalid_argument(file +
                                  ": no machine model to price its calls against: the profile records none "
                                  "(commscope-train --machine-probe records one) and no --bench file gives one; give "
                                  "--machine FILE, --link-rate HOST=RATE or --doctor FILE (docs/bench.md, \"The "
                                  "machine model\")");
  }
  return a;
}

}  // namespace

void report_profile(const std::string& file, const ProfileOptions& profile, const ReportOptions& options) {
  preflight(file, "profile");
  const profiler::Profile p = read_profile_file(file, true);
  if (p.breakdown.empty()) throw InputError(file + ": the profile holds no iterations");
  const int nranks = std::max(1, p.meta.nranks);
  const Alone alone = alone_sources(p, file, profile);

  ReportWriter w(options, "commscope profile report: " + file);
  std::string head = std::to_string(nranks) + " ranks, " + std::to_string(p.breakdown.size()) +
                     " (rank, iteration) rows, clock " + p.meta.clock;
  for (const auto& [k, v] : p.meta.attributes)
    if (k == "model" || k == "dp" || k == "algo" || k == "global_batch" || k == "seq" || k == "job_rank" ||
        k == "job_nranks" || k == "signal")  // the last three: one rank's profile written at a signal
      head += ", " + k + " " + v;
  w.text(head + ". Times in ms; the four parts kernel + intra-op + inter-op + communication sum to the step.");
  if (file.ends_with(".partial"))
    w.text("WARNING: " + file +
           ": an incomplete profile, never published (its run was stopped before it could rename it: rank 0 "
           "killed?); it holds the steps appended before.");

  // --- per iteration, mean over ranks
  std::map<int, std::vector<const profiler::BreakdownRow*>> by_step;
  for (const auto& r : p.breakdown) by_step[r.iteration].push_back(&r);
  w.section("Per iteration (mean over ranks)");
  // kernels, communications: the activities a rank's step ran (kernels, memcpy and memset; the
  // communication's), mean over ranks: on a GPU, the launches a step costs.
  Table steps({"step", "ranks", "step_ms", "kernel", "intra-op", "inter-op", "comm_wait", "comm_transfer", "overlap",
               "slowest_rank", "slowest_ms", "kernels", "communications"});
  StackedBars bars{"Iteration breakdown (mean over ranks)", "iteration", "time (ms)", {}, {}, {}};
  for (const auto& c : kComponents) bars.components.push_back(c.name);
  bars.values.assign(std::size(kComponents), {});
  std::vector<double> slowest_ms;
  for (const auto& [step, rows] : by_step) {
    double win = 0, over = 0, kernels = 0, communications = 0;
    std::vector<double> comp(std::size(kComponents), 0.0);
    const profiler::BreakdownRow* slowest = rows.front();
    for (const auto* r : rows) {
      win += static_cast<double>(r->window_ns);
      over += static_cast<double>(r->overlap_ns);
      kernels += r->kernels, communications += r->communications;
      for (std::size_t c = 0; c < std::size(kComponents); ++c) comp[c] += kComponents[c].get(*r);
      if (r->window_ns > slowest->window_ns) slowest = r;
    }
    const auto n = static_cast<double>(rows.size());
    bars.categories.push_back(std::to_string(step));
    for (std::size_t c = 0; c < comp.size(); ++c) bars.values[c].push_back(ms(comp[c] / n));
    slowest_ms.push_back(ms(static_cast<double>(slowest->window_ns)));
    steps.add({std::to_string(step), std::to_string(rows.size()), fms(win / n), fms(comp[0] / n), fms(comp[1] / n),
               fms(comp[2] / n), fms(comp[3] / n), fms(comp[4] / n), fms(over / n), std::to_string(slowest->rank),
               fms(static_cast<double>(slowest->window_ns)), format_number(kernels / n),
               format_number(communications / n)});
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
    spread.add({c.name, format_number(stats::percentile(v, 0.5)), format_number(stats::percentile(v, 0.1)),
                format_number(stats::percentile(v, 0.9)), format_number(stats::percentile(v, 0)),
                format_number(stats::percentile(v, 1)), format_number(100 * sum / total_window, 3) + "%"});
  }
  spread.add({"step", format_number(stats::percentile(windows, 0.5)), format_number(stats::percentile(windows, 0.1)),
              format_number(stats::percentile(windows, 0.9)), format_number(stats::percentile(windows, 0)),
              format_number(stats::percentile(windows, 1)), "100%"});
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
    ranks.add({std::to_string(rank), info != p.ranks.end() ? info->host : "?", format_number(stats::mean(win)),
               format_number(stats::mean(kern)), format_number(stats::mean(intra)), format_number(stats::mean(inter)),
               format_number(stats::mean(wait)), format_number(stats::mean(transfer)), std::to_string(slowest),
               info != p.ranks.end() ? format_number(static_cast<double>(info->clock_offset_ns) / 1e3) : "?",
               info != p.ranks.end() ? std::to_string(info->dropped_events) : "?"});
  }
  w.table("ranks", ranks);
  const double mu = stats::mean(windows), sigma = stddev(windows);
  const double bound = straggler_bound(mu, sigma, nranks);
  w.text("Slowest rank per iteration: mean " + format_number(stats::mean(slowest_ms)) +
         " ms. Step times over all ranks " + "and iterations: mean " + format_number(mu) + " ms, standard deviation " +
         format_number(sigma) + " ms; the expected slowest of " + std::to_string(nranks) +
         " ranks with such normal step times is " + format_number(bound) + " ms (mean + " +
         format_number(expected_max_std_normal(nranks)) +
         " sigma). A measured slowest well above that bound points at a systematic straggler, not noise.");

  // --- operators
  w.section("Top operators (summed over ranks)");
  std::map<std::uint32_t, profiler::OperatorTotalRow> ops;
  bool known_total = true;
  for (const auto& o : p.operators) {
    auto& t = ops[o.name];
    t.name = o.name;
    profiler::add_totals(t, o);
    known_total = known_total && o.total_ns != profiler::kUnknownTotal;
  }
  std::vector<profiler::OperatorTotalRow> sorted;
  for (auto [name, t] : ops) {
    if (!known_total) t.total_ns = t.host_ns;  // a file from before total_ns: the scope alone
    sorted.push_back(t);
  }
  std::sort(sorted.begin(), sorted.end(), [](const auto& a, const auto& b) { return a.total_ns > b.total_ns; });
  w.text(
      "total_ms is an operator's time: per call its scope on the host together with the work it launched itself "
      "(their union). host_ms is inclusive: the scope from begin to end, the operators nested in it included "
      "(their time counts in each enclosing operator too). kernel_ms, comm_ms and intra_op_ms are its own work: "
      "the kernels and communication it launched itself (concurrent ones counted once, communication first where "
      "the two overlap) and the dispatch gaps attributed to it; on a GPU they run after the scope has ended (a "
      "launch takes microseconds, its kernel may run for milliseconds), so total_ms may exceed host_ms. other_ms "
      "is the rest, total_ms minus the three: the scope's time outside its own work (nested operators, launching, "
      "host code), never below 0, so that the columns add up." +
      std::string(known_total ? ""
                              : " This file predates total_ms: total_ms is host_ms here, and other_ms falls below 0 "
                                "where an operator's own work lies outside its scope (write the profile again)."));
  Table top({"operator", "calls", "total_ms", "host_ms", "kernel_ms", "comm_ms", "intra_op_ms", "other_ms",
             "host_ms_per_call"});
  for (std::size_t i = 0; i < sorted.size() && i < 20; ++i) {
    const auto& t = sorted[i];
    const std::string name = t.name < p.strings.size() ? p.strings[t.name] : "?";
    top.add({name, std::to_string(t.calls), fms(static_cast<double>(t.total_ns)), fms(static_cast<double>(t.host_ns)),
             fms(static_cast<double>(t.kernel_ns)), fms(static_cast<double>(t.comm_ns)),
             fms(static_cast<double>(t.intra_ns)),
             fms(static_cast<double>(t.total_ns - t.kernel_ns - t.comm_ns - t.intra_ns)),
             fms(static_cast<double>(t.host_ns) / std::max<double>(1, static_cast<double>(t.calls)))});
  }
  w.table("operators", top);
  operator_kinds(w, p, sorted, by_step.size());
  communication_by_group(w, p);
  if (alone.wanted)
    write_step_communication(w, step_communication(p, {alone.bench, alone.replay ? &*alone.replay : nullptr,
                                                       alone.machine, alone.recorded ? &*alone.recorded : nullptr}));
  w.finish();
}

}  // namespace commscope::analysis
