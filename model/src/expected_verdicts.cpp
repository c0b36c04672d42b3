#include "commscope/model/expected_verdicts.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <limits>

#include "commscope/model/format.hpp"

namespace commscope::analysis {
namespace {

std::string gbps(double v) {
  return format_number(v, 3) + " GB/s";
}
std::string percent(double fraction) {
  return format_of_expected(fraction, 100) + "%";
}

std::string_view source_name(FigureSource s) {
  switch (s) {
    case FigureSource::none:
      return "unknown";
    case FigureSource::measured:
      return "measured";
    case FigureSource::system:
      return "system";
    case FigureSource::user:
      return "given";
    case FigureSource::doctor:
      return "doctor";
  }
  return "unknown";
}

// "host1's link (0.125 GB/s, system: eth0 1000 Mb/s; 2 flows at once)"
std::string describe_limit(const LimitingLink& l) {
  std::string what;
  switch (l.level) {
    case LinkLevel::inter:
      what = l.host + "'s link";
      break;
    case LinkLevel::intra:
      what = "the link between " + l.host + "'s ranks";
      break;
    case LinkLevel::memory:
      what = l.host + "'s memory";
      break;
    case LinkLevel::none:
      return "the model";
  }
  what += " (" + gbps(l.link_GBps) + ", " + std::string(source_name(l.source));
  if (!l.detail.empty()) what += ": " + l.detail;
  if (l.sharing > 1) what += "; " + std::to_string(l.sharing) + " flows at once";
  return what + ")";
}

// Where the doctor measured the nodes' links: the slowest by name and the others' range, when
// it is clearly (below kGoodOfExpected of) the next slowest; else the range alone.
std::string doctor_links(const MachineModel& model) {
  std::vector<const NodeModel*> measured;
  for (const NodeModel& n : model.nodes)
    if (n.nic_measured.known()) measured.push_back(&n);
  if (measured.empty()) return "";
  std::sort(measured.begin(), measured.end(), [](const NodeModel* a, const NodeModel* b) {
    return a->nic_measured.gbytes_per_s < b->nic_measured.gbytes_per_s;
  });
  auto range = [](double lo, double hi) {  // one figure where both ends print the same
    const std::string a = format_number(lo, 3), b = format_number(hi, 3);
    return a == b ? a : a + "-" + b;
  };
  const double slowest = measured.front()->nic_measured.gbytes_per_s, top = measured.back()->nic_measured.gbytes_per_s;
  if (measured.size() > 1 && slowest < kGoodOfExpected * measured[1]->nic_measured.gbytes_per_s)
    return measured.front()->host + "'s link measured " + gbps(slowest) + " (" +
           std::string(source_name(measured.front()->nic_measured.source)) + "), the others " +
           range(measured[1]->nic_measured.gbytes_per_s, top);
  return "the links measured " + range(slowest, top) + " GB/s (" +
         std::string(source_name(measured.front()->nic_measured.source)) + "): none stands out";
}

// Above the model at latency-bound sizes (or sizes that took less than the model's messages alone)
// because the model's cost per message (its latency or a rank's call of a message alone, and a
// message's least time on the curve of the rate between ranks where one priced it) is over what
// this run took per message (a probe disturbed by load reads a scheduler's slice, not the network;
// shared memory's steps are a flag and a copy, not an MPI message; a probe taken in a slower
// moment of the machine): that said, with the run's own figure; "" where the range is not such a
// case.
std::string latency_too_high(std::span<const JudgedRow* const> range, const MachineModel& model) {
  // Latency-bound, or a size the run took less time for than the model's messages alone (a probe
  // that read 2000 us per message over TCP on loopback priced a 4 GB/s run at 0.41).
  const JudgedRow& last = *range.back();
  const Expectation& e = last.expected;
  if (!(e.alpha_us > 0) || !(e.messages > 0) ||
      !(e.latency_bound() || (last.measured.time_us > 0 && last.measured.time_us < e.latency_us)))
    return "";
  double own = std::numeric_limits<double>::infinity();
  for (const JudgedRow* x : range)
    if (x->expected.messages > 0 && x->measured.time_us > 0)
      own = std::min(own, x->measured.time_us / x->expected.messages);
  const double priced = e.latency_us / e.messages;  // the model's cost per message
  if (!(own < priced)) return "";
  const std::string source = std::string(source_name(model.latency_source)) +
                             (model.latency_detail.empty() ? "" : ": " + model.latency_detail);
  const double floor = priced - e.alpha_us;  // a message's least time on a curve
  const bool floored = floor > 1e-9 * priced;
  // More than the model's latency alone: its parts named.
  const bool mixed = e.latency_share < 1;  // the latency on the messages that cross nodes, calls on the others
  const bool parts = floored || e.call_priced || mixed;
  const std::string alpha =
      e.call_priced ? "a call's own " + format_number(e.alpha_us, 3) + " us (" + e.call_detail + ")"
      : mixed       ? "its latency " + format_number(e.crossing_alpha_us, 3) + " us, " + source + ", on the " +
                    percent(e.latency_share) + " of its messages that cross nodes, and a call's own " +
                    format_number(e.call_us, 3) + " us (" + e.call_detail + ") on the others"
                    : "its latency " + format_number(e.alpha_us, 3) + " us, " + source;
  const std::string what = !parts ? source
                                  : alpha + (floored ? ", and a message's least time on the curve between ranks, " +
                                                           format_number(floor, 3) + " us"
                                                     : "");
  // What may have made it too high, and the machine file's keys that set it.
  const std::string why = e.call_priced ? "the call or the curve's smallest sizes measured at a busy moment; a machine "
                                          "file's self_exchange and intra curves set them"
                          : mixed ? "a latency, a call or the curve's smallest sizes measured at a busy moment; a machine "
                                    "file's latency_us, self_exchange and intra curves set them"
                                  : "a latency measured on a busy machine, or steps that cost less than an MPI "
                                    "message, as shared memory's; a machine file's latency_us sets it";
  return "above the model: its " + std::string(parts ? "cost per message, " : "latency, ") + format_number(priced, 3) +
         " us per message (" + what + "), is over this run's own " + format_number(own, 3) +
         " us per message: too high for these steps (" + why + ")";
}

// What the allowance's words say about a band: the figure's movement and the busy nodes.
std::string allowance_words(const Allowance& a) {
  std::vector<std::string> parts;
  const std::string repeats = a.spread > 0 ? percent(a.spread) + " over its probe's repeats" : "";
  const std::string moments = a.moved > 0 ? percent(a.moved) + " between the start and the end of the run" : "";
  if (!repeats.empty() || !moments.empty())
    parts.push_back(a.figure + " moved " + repeats + (repeats.empty() || moments.empty() ? "" : " and ") + moments);
  if (!a.busy.empty()) parts.push_back(a.busy);
  std::string out;
  for (const std::string& p : parts) out += (out.empty() ? "" : "; ") + p;
  return out;
}

// The verdict of a range whose rows share one decided class: its name, or for rows not decided
// the band their figures allow and why.
std::string verdict_words(VerdictClass v, std::span<const JudgedRow* const> range, const MachineModel& model) {
  const Allowance a = allowance_of(model, range.back()->expected);
  // A range's largest share that its calls may hide, where a row of it beat one call alone.
  double hidden = 0;
  for (const JudgedRow* x : range)
    if (*x->of_expected > kAboveModelOfExpected) hidden = std::max(hidden, x->expected.hidden_share());
  if (v == VerdictClass::good && hidden > 0)
    return "good: faster than one call alone, as calls timed back to back overlap (a rooted collective's root "
           "returns before the others receive, which may hide its messages' latency, up to " +
           percent(hidden) + " of the expected time; -z 3 times each call alone)";
  if (v != VerdictClass::not_decided) {
    const std::string too_high = v == VerdictClass::above_model ? latency_too_high(range, model) : "";
    return too_high.empty() ? std::string(verdict_class_name(v)) : too_high;
  }
  if (a.oversubscribed)
    return "not decided: " + a.busy +
           ", oversubscribed (a rank waiting for one that has no CPU loses a scheduler's time slice per message; "
           "run a rank per CPU)";
  double lo = std::numeric_limits<double>::infinity(), hi = 0;
  for (const JudgedRow* x : range) {
    const OfBand b = band_of(*x->of_expected, allowance_of(model, x->expected));
    lo = std::min(lo, b.lo), hi = std::max(hi, b.hi);
  }
  // A band over two decades says no more than that anything could be (a busy machine's probed
  // latency 1000x a message's, sizes from far below to far above the model).
  if (!(lo > 0) || !std::isfinite(hi) || hi / lo > 100)
    return "not decided: on a quiet machine at its figures' best this could read anything from far below to above "
           "the model (" +
           allowance_words(a) + ")";
  return "not decided: on a quiet machine at its figures' best this would read " + percent(lo) + " to " + percent(hi) +
         " (" + allowance_words(a) + ")";
}

// The line of one range of rows, all of one verdict `v`: its figures at the last (its largest
// size), the median and spread of its of_expected.
std::string range_line(std::string_view head, std::span<const JudgedRow* const> range, VerdictClass v,
                       const MachineModel& model) {
  const JudgedRow& r = *range.back();
  const Expectation& e = r.expected;
  const double of = *r.of_expected;
  std::vector<double> ofs;
  for (const JudgedRow* x : range) ofs.push_back(*x->of_expected);
  std::sort(ofs.begin(), ofs.end());
  const std::size_t k = ofs.size();
  const double median = k % 2 ? ofs[k / 2] : (ofs[k / 2 - 1] + ofs[k / 2]) / 2;
  std::string line(head);
  if (e.latency_bound()) {
    line += "latency-bound, " + format_number(r.measured.time_us, 3) + " us = " + percent(of) +
            " of the speed of the expected " + format_number(*e.time_us, 3) + " us (latency " +
            format_number(e.latency_us, 3) + " us)";
  } else if (e.busbw_GBps) {
    line += "busbw " + gbps(r.measured.busbw_GBps) + " = " + percent(of) + " of the " + gbps(*e.busbw_GBps) + " that " +
            describe_limit(e.limit) + " allows";
  } else {
    line += format_number(r.measured.time_us, 3) + " us = " + percent(of) + " of the speed of the expected " +
            format_number(*e.time_us, 3) + " us that " + describe_limit(e.limit) + " allows";
  }
  if (k > 1)
    line += percent(ofs.front()) == percent(ofs.back())
                ? " [" + std::to_string(k) + " sizes, all " + percent(median) + "]"
                : " [" + std::to_string(k) + " sizes: median " + percent(median) + ", " + percent(ofs.front()) +
                      " to " + percent(ofs.back()) + "]";
  if (e.latency_left_out) line += " (latency not in the model: priced without it)";
  line += ": " + verdict_words(v, range, model);
  if ((v == VerdictClass::below || v == VerdictClass::far_below) && e.limit.level == LinkLevel::inter) {
    const std::string doctor = doctor_links(model);
    line += doctor.empty() ? " (no doctor file: its pairs would measure each host's link)" : "; " + doctor;
  }
  // A decided verdict of a busy run holds whatever the load (decide), and says the load was there.
  if (const Allowance a = allowance_of(model, e); v != VerdictClass::not_decided && !a.busy.empty())
    line += " (on a busy machine: " + a.busy + ")";
  return line;
}

// Rows of one range: the same regime (latency-bound or not), limiting link and verdict.
bool same_range(const JudgedRow& a, VerdictClass va, const JudgedRow& b, VerdictClass vb) {
  return va == vb && a.expected.latency_bound() == b.expected.latency_bound() &&
         a.expected.limit.level == b.expected.limit.level && a.expected.limit.host == b.expected.limit.host;
}

// The fewest messages any algorithm the name stands for sends for c on p ranks (0: none known):
// its own terms (cost_terms_of), or for the vendor's choice the fewest of the textbook algorithms'.
double alpha_count(Collective c, std::string_view algorithm, int p) {
  std::optional<CostTerms> t = cost_terms_of(algorithm, c, p);
  if (library_chooses(algorithm))
    for (const TextbookAlgorithm a : kAllTextbookAlgorithms)
      if (const auto x = textbook_cost_terms(c, a, p); x && (!t || x->alpha_count < t->alpha_count)) t = x;
  return t ? t->alpha_count : 0;
}

}  // namespace

std::string_view verdict_class_name(VerdictClass v) {
  switch (v) {
    case VerdictClass::good:
      return "good";
    case VerdictClass::below:
      return "below";
    case VerdictClass::far_below:
      return "far below";
    case VerdictClass::above_model:
      return "above the model (a figure of the model is too low)";
    case VerdictClass::not_decided:
      return "not decided";
  }
  return "";
}

std::string format_of_expected(double of, double scale, int significant) {
  std::string text = format_number(scale * of, significant);
  if (!std::isfinite(of)) return text;
  for (int digits = significant + 1; digits <= std::max(significant, 6); ++digits) {
    if (classify_of_expected(std::strtod(text.c_str(), nullptr) / scale) == classify_of_expected(of)) break;
    text = format_number(scale * of, digits);
  }
  return text;
}

VerdictClass classify_of_expected(double of) {
  if (of > kAboveModelOfExpected) return VerdictClass::above_model;
  if (of >= kGoodOfExpected) return VerdictClass::good;
  if (of >= kFarBelowOfExpected) return VerdictClass::below;
  return VerdictClass::far_below;
}

Allowance allowance_of(const MachineModel& model, const Expectation& e) {
  Allowance a;
  a.hidden_share = e.hidden_share();
  if (e.latency_bound() && !e.call_priced) {  // a call's own and the curve's: the rate's figures below
    a.spread = model.latency_spread;
    a.moved = model.latency_moved;
    a.figure_probed = model.latency_source == FigureSource::measured;
    a.figure = "the latency per message";
  } else {
    a.spread = e.limit.spread;
    a.moved = e.limit.moved;
    a.figure_probed = e.limit.source == FigureSource::measured;
    a.figure = e.limit.level == LinkLevel::memory  ? "the copy rate of " + e.limit.host
               : e.limit.level == LinkLevel::intra ? "the rate between " + e.limit.host + "'s ranks"
                                                   : e.limit.host + "'s link";
  }
  a.spread = std::clamp(a.spread, 0.0, 0.99);
  a.moved = std::clamp(a.moved, 0.0, 0.99);
  const NodeModel* busiest = nullptr;
  for (const NodeModel& n : model.nodes) {
    if (n.cpus > 0 && n.ranks > n.cpus && !a.oversubscribed) a.oversubscribed = true, busiest = &n;
    if (!a.oversubscribed && contention(n) >= kBusyContention && contention(n) > a.contention)
      a.contention = contention(n), busiest = &n;
  }
  // A busy node's ping-pong waits for a CPU (a scheduler's time slice, 1000x a message): the
  // probed latency may be that instead of the network's, so the latency's part of the expectation
  // may be all artefact (a 2-core VM at load 9 read 5063 us per message).
  if (busiest && model.latency_source == FigureSource::measured && e.time_us && *e.time_us > 0)
    a.latency_share = std::clamp(e.latency_us / *e.time_us, 0.0, 1.0);
  if (busiest) {
    const std::string load = describe_load(*busiest);
    a.busy =
        busiest->host + ": " +
        (load.empty() ? std::to_string(busiest->ranks) + " ranks on " + std::to_string(busiest->cpus) + " CPUs" : load);
  }
  return a;
}

OfBand band_of(double of, const Allowance& a) {
  if (a.oversubscribed) return {a.figure_probed ? 0.0 : of, std::numeric_limits<double>::infinity()};
  return {of * (1 - a.latency_share) / (a.figure_probed ? a.contention : 1),
          of * a.contention / ((1 - a.spread) * (1 - a.moved))};
}

VerdictClass decide(double of, const Allowance& a) {
  const OfBand b = band_of(of, a);
  if (b.lo * (1 - a.hidden_share) > kAboveModelOfExpected) return VerdictClass::above_model;
  if (b.lo >= kGoodOfExpected) return VerdictClass::good;
  if (b.hi < kFarBelowOfExpected) return VerdictClass::far_below;
  if (b.lo >= kFarBelowOfExpected && b.hi < kGoodOfExpected) return VerdictClass::below;
  return VerdictClass::not_decided;
}

std::vector<JudgedRow> judge_rows(const MachineModel& model, std::span<const int> node_of_rank, Collective c,
                                  std::string_view algorithm, std::span<const MeasuredRow> rows,
                                  const ExpectationOptions& options) {
  std::vector<JudgedRow> out;
  for (const MeasuredRow& m : rows) {
    JudgedRow j{m, expected_time(model, node_of_rank, c, algorithm, m.bytes, options), std::nullopt};
    if (j.expected.time_us && *j.expected.time_us > 0 && m.time_us > 0) j.of_expected = *j.expected.time_us / m.time_us;
    out.push_back(std::move(j));
  }
  return out;
}

std::vector<std::string> verdict_lines(std::string_view collective, std::string_view algorithm,
                                       std::span<const JudgedRow> rows, const MachineModel& model) {
  std::vector<std::string> lines;
  std::vector<std::string> missing;
  std::vector<const JudgedRow*> judged;
  for (const JudgedRow& r : rows) {
    if (r.of_expected) judged.push_back(&r);
    for (const std::string& m : r.expected.missing)
      if (std::find(missing.begin(), missing.end(), m) == missing.end()) missing.push_back(m);
  }
  const std::string name = std::string(collective) + " " + std::string(algorithm);
  if (!missing.empty()) {
    std::string list;
    for (const std::string& m : missing) list += (list.empty() ? "" : "; ") + m;
    lines.push_back(name + ": not judged" + (judged.empty() ? "" : " at some sizes") + ", the model lacks " + list);
  }
  if (judged.empty()) return lines;
  const double largest = judged.back()->measured.bytes;
  std::vector<VerdictClass> v;
  for (const JudgedRow* r : judged) v.push_back(decide(*r->of_expected, allowance_of(model, r->expected)));
  for (std::size_t i = 0; i < judged.size();) {
    std::size_t j = i;
    while (j + 1 < judged.size() && same_range(*judged[i], v[i], *judged[j + 1], v[j + 1])) ++j;
    const std::string head =
        name + " " + format_size_range(judged[i]->measured.bytes, judged[j]->measured.bytes, largest) + ": ";
    lines.push_back(range_line(head, std::span(judged).subspan(i, j - i + 1), v[i], model));
    i = j + 1;
  }
  return lines;
}

std::optional<RunLatency> latency_of_run(std::span<const RowOfRun> rows, const MachineModel& model,
                                         const ExpectationOptions& options) {
  std::optional<RunLatency> best;
  double smallest = std::numeric_limits<double>::infinity();
  for (const RowOfRun& r : rows) smallest = std::min(smallest, r.measured.bytes);
  // Only a small array's time is a message's latency: a sweep from 1 MiB would call a megabyte's
  // transfer "latency" and judge every size latency-bound against it.
  if (smallest > kLatencySizeBytes) return std::nullopt;
  for (const RowOfRun& r : rows) {
    if (r.measured.bytes != smallest || !(r.measured.time_us > 0)) continue;
    // A rooted call timed back to back may hide its latency behind the next (calls_overlap).
    if (options.calls_overlap && is_rooted(r.collective)) continue;
    const double k = alpha_count(r.collective, r.algorithm, r.nranks);
    if (!(k > 0)) continue;
    // What the model's rates price of the row (its messages' least time on the curve between ranks
    // above all): not latency, or the expectation would count it twice.
    double rates_us = 0;
    try {
      ExpectationOptions none = options;
      none.latency_us = 0;
      const Expectation e =
          expected_time(model, placement_of(model, r.nranks), r.collective, r.algorithm, r.measured.bytes, none);
      rates_us = e.time_us.value_or(0);
    } catch (const std::invalid_argument&) {
      // A row the model does not place: its whole time per message.
    }
    const double a = (r.measured.time_us - rates_us) / k;
    if (!(a > 0)) continue;
    if (!best || a < best->latency_us)
      best = RunLatency{
          a, std::string(collective_name(r.collective)) + " " + r.algorithm + " at " + format_bytes(smallest)};
  }
  return best;
}

std::optional<RunLatency> fill_latency_from_run(MachineModel& model, std::span<const RowOfRun> rows,
                                                const ExpectationOptions& options) {
  if (model.latency_known()) return std::nullopt;
  std::optional<RunLatency> l = latency_of_run(rows, model, options);
  if (l) {
    model.latency_us = l->latency_us;
    model.latency_source = FigureSource::measured;
  }
  return l;
}

}  // namespace commscope::analysis
