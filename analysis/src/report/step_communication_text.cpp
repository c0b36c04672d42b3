// The step's communication in words and tables (step_communication.hpp): the summary paragraph,
// each row's cause, who the waiting was for, and the section "Communication in the step".
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <string>
#include <vector>

#include "commscope/model/expected_verdicts.hpp"
#include "commscope/model/format.hpp"
#include "report_writer.hpp"
#include "step_communication.hpp"

namespace commscope::analysis {

namespace {

// Sums of fractional ns (alone's us x calls) leave residues like 1e-14 ms: under half a ns is 0.
std::string ms_of(double ns) {
  return format_number(std::abs(ns) < 0.5 ? 0.0 : ns / 1e6);
}

// "rank 1" or "ranks 1 (70%), 3 (30%)": who the row's waiting was for.
std::string waited_for(const StepCallRow& row) {
  std::vector<std::pair<double, int>> by;
  for (const auto& [rank, ns] : row.waited_for) by.push_back({ns, rank});
  std::sort(by.rbegin(), by.rend());
  if (by.empty()) return "";
  if (by.size() == 1) return "rank " + std::to_string(by[0].second);
  std::string out = "ranks ";
  for (std::size_t i = 0; i < by.size() && i < 3; ++i)
    out += (i ? ", " : "") + std::to_string(by[i].second) + " (" + format_number(100 * by[i].first / row.wait_ns, 2) +
           "%)";
  return out;
}

// "; in the median step its compute takes 5.01x the others'" (where other ranks run it too).
std::string compared(const LateRank& l) {
  if (l.compute.first.empty()) return "";
  const double x = l.compute.second;
  return "; in the median step its " + l.compute.first + " takes " +
         (x >= 1.1 || x <= 0.9 ? format_number(x, 3) + "x"
          : x >= 1             ? format_number(100 * (x - 1), 2) + "% more than"
                               : format_number(100 * (1 - x), 2) + "% less than") +
         " the others'";
}

// "allreduce 1 MiB calls on world"
std::string describe(const StepCallKey& k) {
  return k.call + " " + format_bytes(static_cast<double>(k.bytes)) + " calls on " + k.group;
}

// What a late rank ran meanwhile, per call: "compute 20.1 ms a call, ..." (its `n` largest).
std::string top_doing(const LateRank& l, std::size_t n) {
  std::vector<std::pair<double, std::string>> doing;
  for (const auto& [name, ns] : l.doing_ns) doing.push_back({ns, name});
  std::sort(doing.rbegin(), doing.rend());
  std::string d;
  for (std::size_t i = 0; i < doing.size() && i < n; ++i)
    d += (i ? ", " : "") + doing[i].second + " " + ms_of(doing[i].first / std::max(1.0, l.waited)) + " ms a call";
  return d;
}

// "rank 1 (stage 1)", or "rank 1" where no pipeline gives its stage.
std::string rank_name(int rank, int stage) {
  return "rank " + std::to_string(rank) + (stage >= 0 ? " (stage " + std::to_string(stage) + ")" : "");
}

// What a late rank ran meanwhile as shares of its lateness, its `n` largest: "block0.mlp.fwd 85%,
// block0.attn.fwd 12%"; where the trainer's operator names (".fwd", ".bwd") cover half of it or
// more, the passes first: "its backward 58% and forward 30% (block1.mlp.bwd 34%, head.fwd 28%, ...)".
std::string doing_shares(const LateRank& l, std::size_t n) {
  if (l.late_ns <= 0) return "";
  std::vector<std::pair<double, std::string>> doing;
  double forward = 0, backward = 0;
  for (const auto& [name, ns] : l.doing_ns) {
    doing.push_back({ns, name});
    if (name.ends_with(".fwd")) forward += ns;
    if (name.ends_with(".bwd")) backward += ns;
  }
  std::sort(doing.rbegin(), doing.rend());
  auto share = [&](double ns) { return format_number(100 * ns / l.late_ns, 2) + "%"; };
  std::string d;
  for (std::size_t i = 0; i < doing.size() && i < n; ++i)
    d += (i ? ", " : "") + doing[i].second + " " + share(doing[i].first);
  if (forward + backward < 0.5 * l.late_ns) return d;
  std::vector<std::pair<double, std::string>> passes{{backward, "backward"}, {forward, "forward"}};
  std::sort(passes.rbegin(), passes.rend());
  std::string p = "its " + passes[0].second + " " + share(passes[0].first);
  if (passes[1].first >= 0.05 * l.late_ns) p += " and " + passes[1].second + " " + share(passes[1].first);
  return p + " (" + d + ")";
}

// The messages' waiting in words, largest first (those of 1% of all the waiting or more, at most
// 4): "rank 1 (stage 1) waits 0.043 ms a step in pp.recv on pp[0>1] for rank 0 (stage 0) (11% of
// all the waiting; at 3 of the 6 messages, 0.086 ms a message), which ran its forward (...) meanwhile".
std::string messages_waiting(const StepCommunication& s, double wait) {
  std::string out;
  int said = 0;
  for (const LateRank& l : s.late) {
    if (l.waiting_rank < 0 || l.caused_ns < 0.01 * wait || said == 4) continue;
    const std::string doing = doing_shares(l, 3);
    out += std::string(said++ ? "; " : "") + rank_name(l.waiting_rank, l.waiting_stage) + " waits " +
           ms_of(l.caused_ns / std::max(1.0, l.waiting_steps)) + " ms a step in " + l.key.call + " on " + l.key.group +
           " for " + rank_name(l.rank, l.stage) + " (" + format_number(100 * l.caused_ns / wait, 3) +
           "% of all the waiting; at " + format_number(l.waited) + " of the " + format_number(l.of_instances) +
           " messages, " + ms_of(l.caused_ns / std::max(1.0, l.waited)) + " ms a message)" +
           (doing.empty() ? "" : ", which ran " + doing + " meanwhile");
  }
  return out.empty() ? "" : " In the messages a receive waits for its sender and a send for its receiver: " + out + ".";
}

// The row's excess over alone in words: its parts of at least 5% of the time in the step.
std::string cause(const StepCallRow& row) {
  if (!row.alone.us) return row.wait_ns >= 0.05 * row.in_step_ns ? "waiting for " + waited_for(row) : "";
  const double alone = row.alone_ns();
  const double ratio = alone > 0 ? row.in_step_ns / alone : 0;
  std::vector<std::pair<double, std::string>> parts;
  if (row.wait_ns >= 0.05 * row.in_step_ns) parts.push_back({row.wait_ns, "waiting for " + waited_for(row)});
  if (row.contention_ns >= 0.05 * row.in_step_ns)
    parts.push_back(
        {row.contention_ns,
         "contention with compute (x" +
             format_number(row.overlapped_transfer_ns / std::max(1.0, *row.alone.us * 1e3 * row.overlapped_calls), 3) +
             " of alone over " + format_number(row.overlapped_calls / row.calls * 100, 2) + "% of calls)"});
  if (std::abs(row.rest_ns()) >= 0.05 * row.in_step_ns)
    parts.push_back({std::abs(row.rest_ns()), row.rest_ns() > 0
                                                  ? "the rest (launch, dispatch, protocol)"
                                                  : "faster than alone by " + ms_of(-row.rest_ns()) + " ms"});
  if (parts.empty()) return ratio >= 0.9 && ratio <= 1.1 ? "none: as alone" : "";
  std::sort(parts.rbegin(), parts.rend());
  std::string out;
  for (const auto& [ns, what] : parts) out += (out.empty() ? "" : "; ") + what;
  return out;
}

// The calls with a bench row: alone, against the machine, and what the step adds to them.
std::string alone_and_step(double covered, double in_step, double alone, double alone_priced, double expected,
                           double covered_wait, double contention, double rest, double wait, double steps) {
  std::string out;
  out += covered < in_step
             ? " Its calls with a bench row (" + ms_of(covered / steps) + " ms, " +
                   format_number(100 * covered / in_step, 3) + "% of it) take " + ms_of(alone / steps) + " ms alone"
             : " Alone it takes " + ms_of(alone / steps) + " ms";
  if (alone_priced > 0 && expected > 0) {
    // The bench's of_expected: past 1.05 the calls beat the model (one of its figures is too low),
    // said as how many times faster, not as a share of it.
    const double of = expected / alone_priced;
    out += ", " + format_of_expected(of) +
           (of > 1.05 ? " times faster than the machine model allows: " : " of what the machine allows: ") +
           std::string(verdict_class_name(classify_of_expected(of)));
  }
  out += ".";
  const double excess = covered - alone;
  if (std::abs(excess) < 0.1 * alone && covered_wait < 0.1 * alone) {
    // Two decimals always: within 10% a ratio of 1.001 printed as "1" read as a count.
    char times[32];
    std::snprintf(times, sizeof times, "%.2f", covered / std::max(1.0, alone));
    out += std::string(" Inside the step they take ") + times +
           " times as long as alone: the step adds nothing measurable to them.";
  } else {
    // The rest in words where it is below 0: the step's transfer beat alone (never a negative time).
    out += " Inside the step they take " + ms_of(std::abs(excess) / steps) + (excess >= 0 ? " ms more" : " ms less") +
           ": " + ms_of(covered_wait / steps) + " ms waiting, " + ms_of(contention / steps) +
           " ms more transfer while compute overlapped" +
           (rest >= 0 ? ", " + ms_of(rest / steps) + " ms the rest."
                      : "; the rest of their transfer took " + ms_of(-rest / steps) + " ms less than alone.");
  }
  if (covered < in_step)
    out += " The other " + ms_of((in_step - covered) / steps) +
           " ms are calls without a bench row (messages, completions, calls of other sizes: alone_basis says why), " +
           ms_of((wait - covered_wait) / steps) + " ms of it waiting.";
  return out;
}

}  // namespace

std::string step_communication_summary(const StepCommunication& s) {
  const double steps = std::max(1.0, s.steps);
  double in_step = 0, wait = 0, contention = 0, alone = 0, covered = 0, covered_wait = 0, expected = 0,
         alone_priced = 0, rest = 0;
  for (const StepCallRow& r : s.rows) {
    in_step += r.in_step_ns;
    wait += r.wait_ns;
    if (!r.alone.us) continue;
    covered += r.in_step_ns;
    covered_wait += r.wait_ns;
    alone += r.alone_ns();
    contention += r.contention_ns;
    rest += r.rest_ns();
    if (r.expected.us) expected += *r.expected.us * 1e3 * r.calls, alone_priced += r.alone_ns();
  }
  std::string out = "The step's communication: " + ms_of(in_step / steps) + " ms.";
  // Without a bench row for any call, still who the waiting is for (measured in the profile alone).
  if (covered <= 0)
    out +=
        " No call has a bench row to set it against (see alone_basis): commscope-bench --from-profile at each "
        "of the profile's communicator sizes measures exactly its calls.";
  else
    out += alone_and_step(covered, in_step, alone, alone_priced, expected, covered_wait, contention, rest, wait, steps);
  if (s.late.empty() || wait <= 0) return out;
  // The collective most waited for, and the messages' waiting (a receive's for its sender), the
  // larger first.
  std::string collective;
  const auto top = std::find_if(s.late.begin(), s.late.end(), [](const LateRank& l) { return l.waiting_rank < 0; });
  if (top != s.late.end()) {
    const LateRank& l = *top;
    const std::string doing = top_doing(l, 1);
    collective = " Of all the waiting (" + ms_of(wait / steps) + " ms), " + format_number(100 * l.caused_ns / wait, 3) +
                 "% is for rank " + std::to_string(l.rank) + ": it arrives last at " + format_number(l.waited) +
                 " of the " + format_number(l.of_instances) + " " + describe(l.key) + ", " +
                 ms_of(l.late_ns / std::max(1.0, l.waited)) + " ms after the first member" +
                 (doing.empty() ? "" : " (running " + doing + ")") + compared(l) + ".";
  }
  const std::string messages = messages_waiting(s, wait);
  return out + (s.late.front().waiting_rank < 0 ? collective + messages : messages + collective);
}

void write_step_communication(ReportWriter& w, const StepCommunication& s) {
  w.section("Communication in the step");
  const double steps = std::max(1.0, s.steps);
  double in_step = 0;
  for (const StepCallRow& r : s.rows) in_step += r.in_step_ns;
  std::string text =
      "Every call of the step against the same call alone (the bench file's rows of its collective, "
      "algorithm, size and group size) and the machine's limit (expected, on the machine model the note below "
      "names), per rank and step (means over the profile's " +
      format_number(s.steps) +
      " (rank, iteration) rows). in_step is the call's part of the step's communication (concurrent "
      "calls counted once, the earlier-started first) = alone + wait + contention + rest: wait is the "
      "time before the last member arrived, contention the transfer beyond alone of calls during "
      "which the rank's own compute ran (" +
      format_number(100 * kOverlappedShare) +
      "% of their transfer or more), rest the remainder (launch, dispatch, protocol; below 0 where "
      "the step's call ran faster than alone). " +
      std::string(s.identity_holds() ? "The rows add up to the breakdown's communication exactly."
                                     : "WARNING: the rows do not add up to the breakdown's "
                                       "communication (" +
                                           ms_of(in_step / steps) + " against " + ms_of(s.comm_ns / steps) +
                                           " ms): a bug; please report it.");
  w.text(text);
  if (!s.model_note.empty()) w.text(s.model_note);

  w.text(step_communication_summary(s));

  Table t({"group", "call", "algorithm", "size", "ranks", "calls", "expected_ms", "alone_ms", "in_step_ms", "wait_ms",
           "transfer_ms", "contention_ms", "rest_ms", "alone_of_expected", "verdict", "in_step_over_alone", "cause",
           "alone_basis", "expected_basis"});
  t.bytes_column(3);
  StackedBars bars{"Communication in the step by group (per rank and step)",
                   "group",
                   "time (ms)",
                   {},
                   {"expected", "alone beyond expected", "contention", "waiting", "rest"},
                   {}};
  std::map<std::string, std::vector<double>> by_group;
  for (const StepCallRow& r : s.rows) {
    const double alone_ns = r.alone_ns();
    const bool priced = r.expected.us.has_value(), timed = r.alone.us.has_value();
    const double exp_ns = priced ? *r.expected.us * 1e3 * r.calls : 0;
    const bool judged = priced && timed && alone_ns > 0;
    const double of = judged ? exp_ns / alone_ns : 0;
    auto opt = [&](bool known, double ns) { return known ? ms_of(ns / steps) : std::string("-"); };
    t.add({r.key.group, r.key.call, r.key.algorithm.empty() ? "-" : r.key.algorithm, std::to_string(r.key.bytes),
           r.key.group_size > 0 ? std::to_string(r.key.group_size) : "-", format_number(r.calls / steps),
           opt(priced, exp_ns), opt(timed, alone_ns), ms_of(r.in_step_ns / steps), ms_of(r.wait_ns / steps),
           ms_of(r.transfer_ns / steps), opt(timed, r.contention_ns), opt(timed, r.rest_ns()),
           judged ? format_number(of, 3) : "-",
           judged ? std::string(verdict_class_name(classify_of_expected(of))) : "-",
           timed && alone_ns > 0 ? format_number(r.in_step_ns / alone_ns, 3) : "-", cause(r), r.alone.basis,
           r.expected.basis});
    std::vector<double>& g = by_group[r.key.group];
    g.resize(5, 0.0);
    const double e = std::min(exp_ns, alone_ns);
    g[0] += e / steps / 1e6;
    g[1] += (alone_ns - e) / steps / 1e6;
    g[2] += r.contention_ns / steps / 1e6;
    g[3] += r.wait_ns / steps / 1e6;
    g[4] += std::max(0.0, r.alone.us ? r.rest_ns() : r.transfer_ns) / steps / 1e6;
  }
  w.table("step_communication", t);
  if (!s.verdicts.empty())
    w.text("The calls alone against the machine, as the bench judges its rows (docs/verdicts.md):");
  for (const std::string& v : s.verdicts) w.text("Verdict: " + v);

  if (!s.late.empty()) {
    Table lt({"rank", "group", "call", "size", "last_at_calls", "of_calls", "caused_wait_ms", "wait_per_call_ms",
              "mean_late_ms", "running_meanwhile", "its_compute_over_others", "waiting_rank",
              "waiting_rank_wait_per_step_ms", "stage", "waiting_stage"});
    lt.bytes_column(3);
    for (const LateRank& l : s.late) {
      const std::string d = top_doing(l, 3);
      lt.add({std::to_string(l.rank), l.key.group, l.key.call, std::to_string(l.key.bytes), format_number(l.waited),
              format_number(l.of_instances), ms_of(l.caused_ns / steps), ms_of(l.caused_ns / std::max(1.0, l.waited)),
              ms_of(l.late_ns / std::max(1.0, l.waited)), d.empty() ? "-" : d,
              l.compute.first.empty() ? "-" : l.compute.first + " " + format_number(l.compute.second, 3),
              l.waiting_rank >= 0 ? std::to_string(l.waiting_rank) : "-",
              l.waiting_rank >= 0 ? ms_of(l.caused_ns / std::max(1.0, l.waiting_steps)) : "-",
              l.stage >= 0 ? std::to_string(l.stage) : "-",
              l.waiting_stage >= 0 ? std::to_string(l.waiting_stage) : "-"});
    }
    w.text(
        "Who the waiting was for: per rank and call, the calls it arrived last at while other members waited, "
        "their waiting (caused_wait_ms per rank and step, wait_per_call_ms summed over the waiting members), how "
        "late it arrived after the first member, and what it ran meanwhile (its compute by operator, its own "
        "earlier calls still running, per call). A message has one other member: the row is the waiting "
        "member's call (a receive's waiting is for its sender, a send's for its receiver), waiting_rank that "
        "member, waiting_rank_wait_per_step_ms its waiting per step of its own; stage and waiting_stage are "
        "the two ranks' pipeline stages.");
    w.table("waiting_for", lt);
  }
  for (auto& [group, v] : by_group) {
    bars.categories.push_back(group);
    if (bars.values.empty()) bars.values.assign(5, {});
    for (std::size_t c = 0; c < 5; ++c) bars.values[c].push_back(v[c]);
  }
  if (!bars.categories.empty()) w.plot("step_communication", bars);
}

}  // namespace commscope::analysis
