#include "step_communication.hpp"

#include <algorithm>
#include <cmath>
#include <optional>
#include <set>
#include <tuple>
#include <unordered_map>

#include "bench_fits.hpp"
#include "bench_verdicts.hpp"
#include "commscope/common/grid_ranks.hpp"
#include "commscope/common/stats.hpp"
#include "commscope/model/expected_verdicts.hpp"
#include "commscope/model/format.hpp"
#include "commscope/model/row_expectation.hpp"
#include "commscope/profiler/breakdown.hpp"
#include "commscope/profiler/run_description.hpp"
#include "commscope/profiler/vocabulary.hpp"
#include "report_writer.hpp"

namespace commscope::analysis {

bool StepCommunication::identity_holds() const {
  double in_step = 0, wait = 0;
  for (const StepCallRow& r : rows) in_step += r.in_step_ns, wait += r.wait_ns;
  return std::llround(in_step) == std::llround(comm_ns) && std::llround(wait) == std::llround(comm_wait_ns);
}

namespace {

// What a communication event is, from its name, communicator and algorithm.
StepCallKey key_of(const profiler::Profile& p, const profiler::Event& e) {
  const profiler::ProfiledCall c = profiler::profiled_call(p, e);
  StepCallKey k;
  k.group = c.label.empty() ? "world" : c.label;
  k.group_size = c.group_size;
  k.collective = c.collective();
  k.link = c.link;
  k.call = k.collective                ? std::string(collective_name(c.call->collective))
           : e.name < p.strings.size() ? p.strings[e.name]
                                       : "?";
  k.algorithm = c.algorithm;
  k.bytes = c.bytes;
  return k;
}

// The time of the same call alone, from the bench files of its group's rank count: the rows of
// its size (the median of several), else the fitted regime whose measured sizes hold it.
class AloneTimes {
 public:
  AloneTimes(std::span<const BenchFile> files, const std::map<StepCallKey, PerCall>& replayed)
      : files_(files), replayed_(replayed) {
    for (const BenchFile& f : files) data_.push_back(measurements(f));
  }

  PerCall of(const StepCallKey& k) const {
    const PerCall bench = of_bench(k);
    if (bench.us || replayed_.empty()) return bench;
    const auto r = replayed_.find(k);
    if (r != replayed_.end()) return r->second;
    return {std::nullopt, files_.empty() ? "not in the replay" : bench.basis + "; not in the replay"};
  }

 private:
  PerCall of_bench(const StepCallKey& k) const {
    if (files_.empty()) return {std::nullopt, "no bench file"};
    if (!k.collective) return {std::nullopt, "not a collective (the bench times collectives)"};
    if (k.algorithm.empty()) return {std::nullopt, "the profile names no algorithm for it"};
    if (k.group_size < 1) return {std::nullopt, "its communicator's size is not known"};
    // A profile records no datatype: float rows (the trainer's, the bench's default) where there
    // are any, else every type's.
    std::vector<double> times, float_times;
    bool any_file = false;
    // A row of the group's size: a file of that many ranks, or a larger run's row on groups of it
    // (commscope-bench --from-profile's).
    for (const BenchFile& f : files_)
      for (const BenchRow& r : f.rows) {
        if ((r.nranks > 0 ? r.nranks : f.nranks) != k.group_size) continue;
        any_file = true;
        if (!r.in_place && r.collective == k.call && r.algorithm == k.algorithm &&
            r.bytes == static_cast<std::uint64_t>(k.bytes)) {
          times.push_back(typical_time_us(r.time_us, r.p50_us));
          if (r.type == "float") float_times.push_back(times.back());
        }
      }
    for (const BenchFile& f : files_) any_file |= f.nranks == k.group_size;
    if (!float_times.empty()) times = float_times;
    const std::string what = k.call + " " + k.algorithm + " on " + std::to_string(k.group_size) + " ranks";
    if (!any_file) return {std::nullopt, "no bench file of " + std::to_string(k.group_size) + " ranks"};
    if (!times.empty())
      return {stats::percentile(times, 0.5), "measured at " + format_bytes(static_cast<double>(k.bytes))};
    std::string measured;
    for (std::size_t i = 0; i < files_.size(); ++i) {
      if (files_[i].nranks != k.group_size) continue;
      for (const auto& [collective, algos] : data_[i])
        for (const Measured& m : algos) {
          if (collective != k.call || m.algorithm != k.algorithm || m.bytes.empty()) continue;
          measured = " (measured " + format_bytes(m.bytes.front()) + " to " + format_bytes(m.bytes.back()) + ")";
          const auto b = static_cast<double>(k.bytes);
          for (const Regime& r : m.regimes)
            if (r.from_bytes <= b && b <= r.to_bytes && r.quality != FitQuality::poor)
              return {r.fit.predict_us(b), "the fit of " + format_bytes(r.from_bytes) + " to " +
                                               format_bytes(r.to_bytes) + " (between measured sizes, one regime)"};
        }
    }
    return {std::nullopt, "no bench row of " + what + " at " + format_bytes(static_cast<double>(k.bytes)) +
                              (measured.empty() ? "" : measured + ", nor one fitted regime holding it")};
  }

  std::span<const BenchFile> files_;
  const std::map<StepCallKey, PerCall>& replayed_;
  std::vector<BenchData> data_;
};

// A model of the profile's hosts alone (nodes in the order of their first ranks, each with its
// ranks), for a --machine file's figures.
MachineModel hosts_model(const profiler::Profile& p) {
  MachineModel m;
  std::vector<profiler::RankInfo> ranks = p.ranks;
  std::sort(ranks.begin(), ranks.end(), [](const auto& a, const auto& b) { return a.rank < b.rank; });
  for (const profiler::RankInfo& r : ranks) {
    auto node = std::find_if(m.nodes.begin(), m.nodes.end(), [&](const NodeModel& n) { return n.host == r.host; });
    if (node == m.nodes.end()) {
      m.nodes.push_back(NodeModel{});
      m.nodes.back().host = r.host;
      node = m.nodes.end() - 1;
    }
    node->ranks += 1;
    m.node_of_rank.push_back(static_cast<int>(node - m.nodes.begin()));
  }
  return m;
}

// The machine's time for a call: expected_row on the first bench file's model that has one, the
// group's members placed on its nodes by their hosts.
class Expectations {
 public:
  Expectations(const profiler::Profile& p, std::span<const BenchFile> files, const MachineFigures& machine,
               const MachineModel* recorded)
      : profile_(p) {
    for (const BenchFile& f : files) {
      if (!f.machine) continue;
      const std::vector<BenchFile> one{f};
      judgement_ = model_judgement(one, measurements(f));
      if (judgement_) {
        note_ = "expected: " + f.path + "'s machine model" +
                (machine.source.empty() ? "" : ", completed by " + machine.source) + ". " + judgement_->note;
        break;
      }
    }
    if (!judgement_ && recorded != nullptr) {
      judgement_ = ModelJudgement{};
      judgement_->model = *recorded;
      note_ = "expected: the profile's machine model, measured by commscope-train at start-up (--machine-probe)" +
              (machine.source.empty() ? "" : ", completed by " + machine.source) + ". Latency per message: " +
              (recorded->latency_known()
                   ? format_number(recorded->latency_us, 3) + " us" +
                         (recorded->latency_detail.empty() ? "" : " (" + recorded->latency_detail + ")")
                   : std::string("unknown (not in the model): sizes where it matters are not priced")) +
              ".";
    }
    if (!judgement_ && !machine.source.empty()) {
      judgement_ = ModelJudgement{};
      judgement_->model = hosts_model(p);
      note_ = "expected: the figures of " + machine.source +
              " on the profile's hosts (docs/bench.md, \"The machine model\").";
    }
    if (!judgement_) {
      note_ =
          "no bench file given records a machine model, nor does the profile (commscope-train --machine-probe), and "
          "no --machine file gives one: expected is not known";
      return;
    }
    (void)apply_entries(judgement_->model, machine.entries, machine.origins);  // an entry naming no host: no figure
  }
  const std::string& note() const { return note_; }
  const MachineModel* model() const { return judgement_ ? &judgement_->model : nullptr; }

  // The expectation of a call, and its basis or why there is none; `e_out` receives the whole
  // expectation where it has a time.
  PerCall of(const StepCallKey& k, std::optional<Expectation>* e_out = nullptr) const {
    if (!judgement_) return {std::nullopt, "no machine model"};
    if (!k.collective) return {std::nullopt, "not a collective"};
    if (k.algorithm.empty()) return {std::nullopt, "the profile names no algorithm for it"};
    std::vector<int> members;
    if (k.group == "world") {
      for (int r = 0; r < std::max(1, profile_.meta.nranks); ++r) members.push_back(r);
    } else if (const auto parsed = profiler::parse_label(k.group)) {
      members = parsed->members;
    } else {
      return {std::nullopt, "its communicator's members are not known"};
    }
    const MachineModel& model = judgement_->model;
    std::vector<int> nodes;
    for (int m : members) {
      const auto info = std::find_if(profile_.ranks.begin(), profile_.ranks.end(),
                                     [&](const profiler::RankInfo& i) { return i.rank == m; });
      const std::string host = info != profile_.ranks.end() ? info->host : "";
      const auto node =
          std::find_if(model.nodes.begin(), model.nodes.end(), [&](const NodeModel& n) { return n.host == host; });
      if (node != model.nodes.end())
        nodes.push_back(static_cast<int>(node - model.nodes.begin()));
      else if (model.nodes.size() == 1)
        nodes.push_back(0);
      else
        return {std::nullopt, "rank " + std::to_string(m) + "'s host " + host + " is not in the machine model"};
    }
    const Expectation e = expected_row(model, nodes, parse_collective(k.call), k.algorithm,
                                       static_cast<double>(k.bytes), judgement_->nccl_algo, judgement_->options);
    if (!e.time_us) {
      std::string missing;
      for (const std::string& m : e.missing) missing += (missing.empty() ? "" : ", ") + m;
      return {std::nullopt, "the model lacks " + (missing.empty() ? std::string("an input") : missing)};
    }
    if (e_out != nullptr) *e_out = e;
    return {*e.time_us, e.basis};
  }

 private:
  const profiler::Profile& profile_;
  std::optional<ModelJudgement> judgement_;
  std::string note_;
};

// One call on one rank in one window, its shares summed.
struct CallPart {
  std::size_t row = 0;         // its StepCallRow
  std::int64_t instance = -1;  // numbered across communicators, -1: unmatched
  double comm = 0, wait = 0, overlap = 0;
};

// Who arrived last at each numbered instance matched by two members or more (-1: none), and
// when the first one did (rank 0's clock).
struct Arrivals {
  std::vector<int> last;
  std::vector<std::int64_t> first;
};
Arrivals first_and_last(const profiler::MatchedRanks& m) {
  Arrivals a{std::vector<int>(m.latest.size(), -1), std::vector<std::int64_t>(m.latest.size(), 0)};
  for (std::size_t i = 0; i < m.latest.size(); ++i) {
    int members = 0;
    for (std::size_t r = 0; r < m.arrivals.size(); ++r) {
      const std::vector<std::int64_t>& at = m.arrivals[r];
      if (i >= at.size() || at[i] == profiler::kNoArrival) continue;
      if (members++ == 0 || at[i] < a.first[i]) a.first[i] = at[i];
      if (at[i] == m.latest[i] && a.last[i] < 0) a.last[i] = static_cast<int>(r);
    }
    if (members < 2) a.last[i] = -1;
  }
  return a;
}

using Calls = std::map<std::tuple<std::size_t, std::uint32_t, std::int32_t>, CallPart>;

// Every call's shares, by (rank, call event, iteration), each with its row (added to `rows` as
// new keys appear); the call event of a device kernel that carries a collective's id is the
// collective's own event.
Calls collect_calls(const profiler::Profile& p, const profiler::MatchedRanks& m, std::vector<StepCallRow>& rows) {
  std::map<StepCallKey, std::size_t> row_of;
  Calls calls;
  for (std::size_t r = 0; r < m.timelines.size(); ++r) {
    const std::vector<profiler::Event>& events = p.events[r];
    std::unordered_map<std::uint64_t, std::uint32_t> call_event;  // communication id -> its host event
    for (std::size_t i = 0; i < events.size(); ++i)
      if (events[i].kind == profiler::EventKind::kCommunication && events[i].id != 0 &&
          events[i].track_kind == profiler::TrackKind::kHostThread)
        call_event.emplace(events[i].id, static_cast<std::uint32_t>(i));
    std::unordered_map<std::uint32_t, std::int64_t> instance_of;  // event -> numbered instance
    for (const profiler::Activity& a : m.timelines[r].activities)
      if (a.cls == profiler::ActivityClass::kCommunication) instance_of.emplace(a.source, a.seq);
    for (const profiler::CallShare& s : profiler::call_shares(m.timelines[r])) {
      std::uint32_t ev = s.event;
      if (events[ev].kind != profiler::EventKind::kCommunication)
        if (const auto it = call_event.find(events[ev].id); it != call_event.end()) ev = it->second;
      const StepCallKey key = key_of(p, events[ev]);
      const auto [it, fresh] = row_of.try_emplace(key, rows.size());
      if (fresh) {
        StepCallRow row;
        row.key = key;
        rows.push_back(std::move(row));
      }
      CallPart& part = calls[{r, ev, s.iteration}];
      part.row = it->second;
      if (const auto inst = instance_of.find(s.event); inst != instance_of.end()) part.instance = inst->second;
      part.comm += static_cast<double>(s.comm_ns);
      part.wait += static_cast<double>(s.wait_ns);
      part.overlap += static_cast<double>(s.overlap_ns);
    }
  }
  return calls;
}

// Per instance: the members' waiting in it and its row; a message's (a link's instance), the
// member that waited for the other and the row of its call (its first call that waited).
struct InstanceSums {
  std::map<std::int64_t, double> wait;
  std::map<std::int64_t, std::size_t> row;
  std::map<std::int64_t, std::pair<int, std::size_t>> waiter;
};

// Per (last rank, row) the instances it arrived last at while others waited, and what it ran
// between the first member's arrival and its own: its compute by operator (the innermost one,
// else the activity's own name) and its communication by call ("allreduce (communication)"). A
// message's row is the waiting member's call, and its instances those of its link.
std::vector<LateRank> late_ranks(const profiler::Profile& p, const profiler::MatchedRanks& m, const Arrivals& arrivals,
                                 std::span<const std::int64_t> offsets, const InstanceSums& sums,
                                 const std::vector<StepCallRow>& rows) {
  const std::size_t nranks = m.timelines.size();
  // The ranks' pipeline stages where the profile's run has a pipeline (PP outermost in the grid).
  const profiler::RunDescription run = profiler::read_run_description(p.meta.attributes);
  const auto grid = GridShape::of(p.meta.nranks > 0 ? p.meta.nranks : static_cast<int>(nranks), run.tp, run.pp);
  auto stage_of = [&](int rank) { return grid && run.pp > 1 && rank >= 0 ? grid->place(rank).pp_rank : -1; };
  // The (rank, iteration) rows of each rank: a waiting rank's steps.
  std::map<int, double> steps_of;
  for (const profiler::BreakdownRow& b : p.breakdown) steps_of[b.rank] += 1;
  std::vector<std::unordered_map<std::uint64_t, std::uint32_t>> operator_name(nranks);
  std::vector<std::int64_t> longest(nranks, 0);
  for (std::size_t r = 0; r < nranks; ++r) {
    for (const profiler::Event& e : p.events[r])
      if (e.kind == profiler::EventKind::kOperator) operator_name[r].emplace(e.id, e.name);
    for (const profiler::Activity& a : m.timelines[r].activities)
      longest[r] = std::max(longest[r], a.end_ns - a.start_ns);
  }
  auto text = [&](std::uint32_t id) { return id < p.strings.size() ? p.strings[id] : std::string("?"); };
  // An activity's name: its operator's (the innermost), else its own; its own earlier calls still
  // running (a slow link finishing the last one late) as "NAME (communication)".
  auto name_of = [&](std::size_t r, const profiler::Activity& a) {
    if (a.cls == profiler::ActivityClass::kCommunication) return text(p.events[r][a.source].name) + " (communication)";
    const auto op = operator_name[r].find(a.op);
    return text(op != operator_name[r].end() ? op->second : p.events[r][a.source].name);
  };
  std::map<std::pair<int, std::size_t>, LateRank> late;
  std::map<std::size_t, double> instances_of_row;
  std::map<std::string, double> instances_of_link;
  for (std::size_t i = 0; i < m.latest.size(); ++i) {
    const int last = arrivals.last[i];
    const auto found = sums.row.find(static_cast<std::int64_t>(i));
    if (last < 0 || found == sums.row.end()) continue;
    std::size_t row = found->second;
    int waiting = -1;
    if (rows[row].key.link) {
      instances_of_link[rows[row].key.group] += 1;
      if (const auto w = sums.waiter.find(static_cast<std::int64_t>(i)); w != sums.waiter.end())
        waiting = w->second.first, row = w->second.second;
    } else {
      instances_of_row[row] += 1;
    }
    const auto lr = static_cast<std::size_t>(last);
    LateRank& l = late[{last, row}];
    l.rank = last;
    l.key = rows[row].key;
    l.stage = stage_of(last);
    if (waiting >= 0) {
      l.waiting_rank = waiting;
      l.waiting_stage = stage_of(waiting);
      l.waiting_steps = steps_of[waiting];
    }
    l.instances += 1;
    const auto waited = sums.wait.find(static_cast<std::int64_t>(i));
    if (waited == sums.wait.end()) continue;
    l.waited += 1;
    l.caused_ns += waited->second;
    l.late_ns += static_cast<double>(m.latest[i] - arrivals.first[i]);
    const std::int64_t from = arrivals.first[i] - offsets[lr], to = m.latest[i] - offsets[lr];
    const auto& acts = m.timelines[lr].activities;
    auto a = std::lower_bound(acts.begin(), acts.end(), from - longest[lr],
                              [](const profiler::Activity& x, std::int64_t t) { return x.start_ns < t; });
    for (; a != acts.end() && a->start_ns < to; ++a) {
      if (a->end_ns <= from) continue;
      l.doing_ns[name_of(lr, *a)] += static_cast<double>(std::min(a->end_ns, to) - std::max(a->start_ns, from));
    }
  }
  // The compute each late rank ran most of meanwhile (its top name), and each rank's compute by
  // those names in each of its steps (the part of an activity inside each iteration window it
  // overlaps; without windows, the whole run as one step): the late rank's against the others'
  // step by step, so that what runs once (start-up, a checkpoint) does not weigh. Only the names
  // asked: every name of every rank by step is ranks x names x steps.
  std::map<std::pair<int, std::size_t>, std::string> top_of;
  std::map<std::string, std::vector<std::map<std::int32_t, double>>> compute_ns;  // name -> per rank
  for (const auto& [where, l] : late) {
    if (l.waited <= 0) continue;
    std::pair<double, std::string> top{0, ""};
    for (const auto& [name, ns] : l.doing_ns)
      if (ns > top.first && !name.ends_with(" (communication)")) top = {ns, name};
    if (top.second.empty()) continue;
    compute_ns.try_emplace(top.second, nranks);
    top_of[where] = top.second;
  }
  for (std::size_t r = 0; r < nranks && !compute_ns.empty(); ++r) {
    const std::vector<profiler::Window>& windows = m.timelines[r].windows;
    for (const profiler::Activity& a : m.timelines[r].activities) {
      if (a.cls != profiler::ActivityClass::kCompute) continue;
      const auto asked = compute_ns.find(name_of(r, a));
      if (asked == compute_ns.end()) continue;
      std::map<std::int32_t, double>& steps = asked->second[r];
      if (windows.empty()) steps[-1] += static_cast<double>(a.end_ns - a.start_ns);
      // Windows follow one another: from the first that ends after the activity starts.
      auto w = std::partition_point(windows.begin(), windows.end(),
                                    [&](const profiler::Window& x) { return x.end_ns <= a.start_ns; });
      for (; w != windows.end() && w->start_ns < a.end_ns; ++w)
        steps[w->iteration] += static_cast<double>(std::min(a.end_ns, w->end_ns) - std::max(a.start_ns, w->start_ns));
    }
  }
  // The median step's ratio of the rank's time in NAME to the mean of the other ranks that run it
  // in that step; nullopt where no step has another rank running it.
  auto compute_ratio = [&](int rank, const std::string& name) -> std::optional<double> {
    const std::vector<std::map<std::int32_t, double>>& by_rank = compute_ns.at(name);
    const std::map<std::int32_t, double>& own = by_rank[static_cast<std::size_t>(rank)];
    std::map<std::int32_t, std::pair<double, double>> others;  // step: their sum, their count
    for (std::size_t r = 0; r < nranks; ++r) {
      if (static_cast<int>(r) == rank) continue;
      for (const auto& [step, ns] : by_rank[r])
        if (ns > 0) others[step].first += ns, others[step].second += 1;
    }
    std::vector<double> ratios;
    for (const auto& [step, sum] : others) {
      const auto s = own.find(step);
      ratios.push_back((s != own.end() ? s->second : 0.0) / (sum.first / sum.second));
    }
    if (ratios.empty()) return std::nullopt;
    return stats::median(std::move(ratios));
  };
  std::vector<LateRank> out;
  for (auto& [where, l] : late) {
    l.of_instances = l.key.link ? instances_of_link[l.key.group] : instances_of_row[where.second];
    if (l.waited <= 0) continue;
    // The compute it ran most of meanwhile, in the median step against the other ranks that run it.
    if (const auto top = top_of.find(where); top != top_of.end())
      if (const std::optional<double> ratio = compute_ratio(l.rank, top->second)) l.compute = {top->second, *ratio};
    out.push_back(std::move(l));
  }
  std::sort(out.begin(), out.end(), [](const LateRank& a, const LateRank& b) { return a.caused_ns > b.caused_ns; });
  return out;
}

// A profile's calls matched across its ranks (the breakdown's timelines and matching,
// analyze_ranks', each rank on its own timeline), each with its share of the communication.
struct StepCalls {
  std::vector<std::int64_t> offsets;
  profiler::MatchedRanks m;
  Arrivals arrivals;
  Calls calls;
};

StepCalls step_calls(const profiler::Profile& p, std::vector<StepCallRow>& rows) {
  const std::size_t nranks = p.events.size();
  StepCalls s;
  s.offsets.assign(nranks, 0);
  std::vector<profiler::Timeline> kinds(nranks, profiler::Timeline::kHost);
  for (const profiler::RankInfo& info : p.ranks) {
    if (info.rank < 0 || static_cast<std::size_t>(info.rank) >= nranks) continue;
    s.offsets[static_cast<std::size_t>(info.rank)] = info.clock_offset_ns;
    if (info.backend != "host") kinds[static_cast<std::size_t>(info.rank)] = profiler::Timeline::kDevice;
  }
  s.m = profiler::match_ranks(p.events, s.offsets, kinds);
  s.arrivals = first_and_last(s.m);
  s.calls = collect_calls(p, s.m, rows);
  return s;
}

// The replay's calls (--gaps none), its mean call per kind: the time alone where no bench row has
// it. Only the calls' sums: none of the step's attribution is needed of a replay.
std::map<StepCallKey, PerCall> replay_means(const profiler::Profile& replay) {
  std::vector<StepCallRow> rows;
  const StepCalls s = step_calls(replay, rows);
  std::vector<std::pair<double, double>> sums(rows.size());  // per row: ns, calls
  for (const auto& [where, part] : s.calls) sums[part.row].first += part.comm, sums[part.row].second += 1;
  std::map<StepCallKey, PerCall> means;
  for (std::size_t i = 0; i < rows.size(); ++i)
    if (const auto& [ns, calls] = sums[i]; calls > 0)
      means[rows[i].key] = {ns / calls / 1e3, "the replay's mean call (gaps none, " + format_number(calls) + " calls)"};
  return means;
}

}  // namespace

StepCommunication step_communication(const profiler::Profile& p, const AloneSources& sources) {
  StepCommunication out;
  out.steps = static_cast<double>(p.breakdown.size());
  for (const profiler::BreakdownRow& r : p.breakdown)
    out.comm_ns += static_cast<double>(r.comm_ns), out.comm_wait_ns += static_cast<double>(r.comm_wait_ns);
  const StepCalls matched = step_calls(p, out.rows);
  const profiler::MatchedRanks& m = matched.m;
  const Arrivals& arrivals = matched.arrivals;
  const Calls& calls = matched.calls;
  const std::vector<std::int64_t>& offsets = matched.offsets;

  std::map<StepCallKey, PerCall> replayed;
  if (sources.replay != nullptr) replayed = replay_means(*sources.replay);
  const AloneTimes alone_times(sources.bench, replayed);
  const Expectations expectations(p, sources.bench, sources.machine, sources.recorded);
  out.model_note = expectations.note();
  for (StepCallRow& row : out.rows) {
    row.alone = alone_times.of(row.key);
    std::optional<Expectation> e;
    row.expected = expectations.of(row.key, &e);
    // A call on one rank moves nothing between ranks: the model's one copy of the array (0.7 ns at
    // 8 B) against a call's own overhead (17 ns) read "far below", a verdict on no communication.
    if (row.key.group_size == 1) {
      row.expected = {std::nullopt, "one rank: no communication to set against the machine"};
      e.reset();
    }
    // The calls alone judged as the bench judges its rows (its words, the limiting link named).
    if (!e || !row.alone.us || *row.alone.us <= 0 || row.key.group_size < 1) continue;
    const double bytes = static_cast<double>(row.key.bytes), us = *row.alone.us;
    const Collective c = parse_collective(row.key.call);
    const JudgedRow judged{
        {bytes, us, busbw_factor(c, row.key.group_size) * bytes / us / 1e3}, *e, of_expected(*e, us)};
    for (const std::string& line :
         verdict_lines(row.key.call, row.key.algorithm, std::span(&judged, 1), *expectations.model()))
      out.verdicts.push_back(row.key.group + ": " + line);
  }

  // The rows' sums, contention where alone is known, and the waiting by instance.
  InstanceSums sums;
  for (const auto& [where, part] : calls) {
    StepCallRow& row = out.rows[part.row];
    const double transfer = part.comm - part.wait;
    row.calls += 1;
    row.in_step_ns += part.comm;
    row.wait_ns += part.wait;
    row.transfer_ns += transfer;
    if (part.instance >= 0) sums.row.emplace(part.instance, part.row);
    if (part.instance >= 0 && part.wait > 0) {
      sums.wait[part.instance] += part.wait;
      const int last = arrivals.last[static_cast<std::size_t>(part.instance)];
      if (last >= 0) row.waited_for[last] += part.wait;
      // A message's waiting member: the one of its two that is not last (a receive: its sender's).
      if (const int rank = static_cast<int>(std::get<0>(where)); last >= 0 && row.key.link && rank != last)
        sums.waiter.try_emplace(part.instance, rank, part.row);
    }
    if (!row.alone.us || transfer <= 0 || part.overlap < kOverlappedShare * transfer) continue;
    row.overlapped_calls += 1;
    row.overlapped_transfer_ns += transfer;
    row.contention_ns += std::max(0.0, transfer - *row.alone.us * 1e3);
  }
  out.late = late_ranks(p, m, arrivals, offsets, sums, out.rows);
  std::sort(out.rows.begin(), out.rows.end(), [](const StepCallRow& a, const StepCallRow& b) { return a.key < b.key; });
  return out;
}

}  // namespace commscope::analysis
