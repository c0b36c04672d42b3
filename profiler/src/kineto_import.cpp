// Kineto trace import (kineto_import.hpp): the three stages in kineto/, each tested on its own,
// run in turn, then the breakdown as the live profiler computes it:
//   1. read (kineto/read.hpp): each file streamed into one rank's events, absolute ns;
//   2. link (kineto/link.hpp), per rank: operators nested, device activities linked to their
//      operator, collective calls made communication events, windows made;
//   3. match (kineto/match.hpp): collective instances across ranks, clock offsets.

#include "commscope/profiler/kineto_import.hpp"

#include <algorithm>
#include <filesystem>

#include "commscope/profiler/breakdown.hpp"
#include "kineto/link.hpp"
#include "kineto/match.hpp"
#include "kineto/read.hpp"

namespace commscope::profiler {

namespace {

using kineto::RankTrace;

void write_attribute(Profile& p, const std::string& key, const std::string& value) {
  p.meta.attributes.emplace_back(key, value);
}

std::string counts_text(const std::map<std::string, std::int64_t>& m) {
  std::string s;
  for (const auto& [k, v] : m) s += (s.empty() ? "" : "; ") + k + " " + std::to_string(v);
  return s.empty() ? "none" : s;
}

// The two unions HtaView needs beyond the breakdown, over the rank's windows.
void measure_hta_unions(const std::vector<Event>& ev, HtaView& v) {
  struct Iv {
    std::int64_t s, e;
    int cls;  // 0 compute kernel, 1 communication, 2 memcpy/memset
  };
  std::vector<std::pair<std::int64_t, std::int64_t>> windows;
  for (const Event& e : ev)
    if (e.kind == EventKind::kIteration && e.end_ns > e.start_ns) windows.push_back({e.start_ns, e.end_ns});
  std::vector<Iv> all;
  for (const Event& e : ev) {
    if (e.track_kind != TrackKind::kDeviceStream || e.end_ns <= e.start_ns) continue;
    int cls = -1;
    if (e.kind == EventKind::kKernel) cls = 0;
    if (e.kind == EventKind::kCommunication) cls = 1;
    if (e.kind == EventKind::kMemcpy || e.kind == EventKind::kMemset) cls = 2;
    if (cls >= 0) all.push_back({e.start_ns, e.end_ns, cls});
  }
  for (const auto& [ws, we] : windows) {
    std::vector<std::pair<std::int64_t, int>> steps;  // (t, cls: begin; cls + 3: end)
    for (const Iv& i : all) {
      const std::int64_t s = std::max(i.s, ws), e = std::min(i.e, we);
      if (s >= e) continue;
      steps.push_back({s, i.cls});
      steps.push_back({e, i.cls + 3});
    }
    std::sort(steps.begin(), steps.end());
    int count[3] = {0, 0, 0};
    for (std::size_t k = 0; k < steps.size();) {
      const std::int64_t t = steps[k].first;
      for (; k < steps.size() && steps[k].first == t; ++k) count[steps[k].second % 3] += steps[k].second < 3 ? 1 : -1;
      if (k == steps.size()) break;
      const std::int64_t len = steps[k].first - t;
      if (count[0] > 0 && count[1] > 0) v.compute_comm_ns += len;
      if (count[2] > 0 && count[0] == 0 && count[1] == 0) v.memory_only_ns += len;
    }
  }
}

// Stage 1 for every file, the ranks then ordered by distributedInfo.rank (a file without it is
// rank 0 of 1, alone) and their times made absolute (baseTimeNanoseconds + ts when the trace
// gives a base).
std::vector<RankTrace> read_ranks(const KinetoImportOptions& options, StringTable& strings) {
  std::vector<RankTrace> ranks(options.files.size());
  for (std::size_t f = 0; f < options.files.size(); ++f) {
    ranks[f].report.path = options.files[f];
    kineto::read_trace(options.files[f], strings, ranks[f], options.hta_rounding);
  }
  for (const RankTrace& r : ranks)
    if (!r.has_rank && ranks.size() > 1)
      throw KinetoImportError(r.report.path +
                              ": no distributedInfo.rank (with several files every file must name its rank)");
  std::sort(ranks.begin(), ranks.end(),
            [](const RankTrace& a, const RankTrace& b) { return a.report.original_rank < b.report.original_rank; });
  for (std::size_t i = 1; i < ranks.size(); ++i)
    if (ranks[i].report.original_rank == ranks[i - 1].report.original_rank)
      throw KinetoImportError(ranks[i].report.path + ": rank " + std::to_string(ranks[i].report.original_rank) +
                              " again (also " + ranks[i - 1].report.path + ")");
  for (RankTrace& r : ranks) {
    if (!r.has_base) continue;
    for (Event& e : r.events) e.start_ns += r.base_ns, e.end_ns += r.base_ns;
    if (r.min_ts != std::numeric_limits<std::int64_t>::max()) r.min_ts += r.base_ns;
  }
  return ranks;
}

// Rank-local times; communication events get their instance's global seq; the reports' counts.
void to_local_times(std::vector<RankTrace>& ranks, const std::vector<std::vector<kineto::Instance>>& inst,
                    const kineto::Matching& m) {
  for (std::size_t r = 0; r < ranks.size(); ++r) {
    RankTrace& d = ranks[r];
    d.report.collectives = static_cast<std::int64_t>(inst[r].size());
    for (Event& e : d.events) {
      e.start_ns -= d.epoch_ns, e.end_ns -= d.epoch_ns;
      if (e.kind == EventKind::kCommunication) {
        const auto it = m.seq_of[r].find(e.id);
        e.seq = it == m.seq_of[r].end() ? -1 : it->second;
      }
    }
  }
  const std::vector<std::int64_t> matched = kineto::matched_counts(m.seq_of);
  for (std::size_t r = 0; r < ranks.size(); ++r) ranks[r].report.collectives_matched = matched[r];
}

// The profile's meta and attributes: what was imported and how.
void describe_import(KinetoImport& out, const KinetoImportOptions& options, bool shared, const RankTrace& rank0,
                     std::size_t nranks) {
  Profile& p = out.profile;
  ProfileMeta& meta = p.meta;
  meta.version = COMMSCOPE_VERSION;
  meta.command_line = options.command_line;
  meta.clock = shared ? "kineto (shared)" : "kineto (aligned)";
  meta.epoch_unix_ns = kineto::has_wall_clock(rank0) ? rank0.epoch_ns : 0;
  meta.nranks = static_cast<std::int32_t>(nranks);
  meta.events_layout = "single";
  write_attribute(p, "source", "commscope-import kineto");
  write_attribute(p, "kineto.window", options.window == KinetoWindow::kTrace ? "trace" : "steps");
  write_attribute(p, "kineto.clock", out.clock_method);
  write_attribute(p, "kineto.matching", out.matching);
  write_attribute(p, "kineto.time_rounding", options.hta_rounding ? "hta (device activities to whole us)" : "none");
}

// Rank r's report (its HTA figures from its breakdown rows), attributes and RankInfo.
void add_rank(KinetoImport& out, std::size_t r, RankTrace& d, const RankBreakdown& bd, const std::vector<Event>& ev) {
  Profile& p = out.profile;
  KinetoRankReport& rep = d.report;
  HtaView& h = rep.hta;
  for (const BreakdownRow& row : bd.rows) {
    h.window_ns += row.window_ns, h.kernel_ns += row.kernel_ns, h.intra_ns += row.intra_ns;
    h.inter_ns += row.inter_ns, h.comm_ns += row.comm_ns;
  }
  measure_hta_unions(ev, h);
  const std::string k = "kineto.rank" + std::to_string(r) + ".";
  write_attribute(p, k + "file", std::filesystem::path(rep.path).filename().string());
  write_attribute(p, k + "original_rank", std::to_string(rep.original_rank));
  write_attribute(p, k + "world_size", std::to_string(rep.world_size));
  write_attribute(p, k + "imported", counts_text(rep.imported));
  write_attribute(p, k + "skipped", counts_text(rep.skipped));
  write_attribute(p, k + "unknown", counts_text(rep.unknown));
  write_attribute(p, k + "unlinked_device_activities", std::to_string(rep.unlinked_device));
  write_attribute(p, k + "collectives", std::to_string(rep.collectives));
  write_attribute(p, k + "collectives_matched", std::to_string(rep.collectives_matched));
  write_attribute(p, k + "hta_compute_comm_ns", std::to_string(h.compute_comm_ns));
  write_attribute(p, k + "hta_memory_only_ns", std::to_string(h.memory_only_ns));
  RankInfo info;
  info.rank = static_cast<std::int32_t>(r);
  info.host = std::filesystem::path(rep.path).filename().string().substr(0, 63);
  info.clock_offset_ns = d.offset_ns;
  info.clock_error_ns = d.error_ns;
  info.backend = "cupti";
  info.events = static_cast<std::int64_t>(ev.size());
  info.dropped_events = 0;
  p.ranks.push_back(info);
  out.ranks.push_back(rep);
}

}  // namespace

std::vector<std::string> kineto_files_in(const std::string& dir) {
  std::vector<std::string> out;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(dir, ec)) {
    const std::string name = entry.path().filename().string();
    if (entry.is_regular_file(ec) && (name.ends_with(".json") || name.ends_with(".json.gz")))
      out.push_back(entry.path().string());
  }
  if (ec) throw KinetoImportError(dir + ": " + ec.message());
  std::sort(out.begin(), out.end());
  return out;
}

KinetoImport import_kineto(const KinetoImportOptions& options) {
  if (options.files.empty()) throw KinetoImportError("no trace files given");
  StringTable strings;
  std::vector<RankTrace> ranks = read_ranks(options, strings);
  for (RankTrace& r : ranks) {
    kineto::link_rank(r, strings);
    kineto::make_windows(r, options.window, strings);
  }

  KinetoImport out;
  // Clocks: shared (one epoch, offsets 0) or aligned from matched collective ends.
  bool shared = options.clock == KinetoClock::kShared;
  if (options.clock == KinetoClock::kAuto)
    shared = ranks.size() == 1 || std::all_of(ranks.begin(), ranks.end(), kineto::has_wall_clock);
  std::vector<std::vector<kineto::Instance>> inst(ranks.size());
  for (std::size_t r = 0; r < ranks.size(); ++r) inst[r] = kineto::instances_of(ranks[r]);
  const kineto::Matching matching = kineto::match_collectives(inst, shared);
  out.matching = matching.method;
  out.clock_method = kineto::set_clocks(ranks, shared, matching, out.warnings);
  to_local_times(ranks, inst, matching);

  // The breakdown, as the live profiler computes it.
  Profile& p = out.profile;
  std::vector<std::vector<Event>> events(ranks.size());
  std::vector<std::int64_t> offsets(ranks.size());
  for (std::size_t r = 0; r < ranks.size(); ++r) {
    events[r] = std::move(ranks[r].events);
    offsets[r] = ranks[r].offset_ns;
  }
  const std::vector<RankBreakdown> bd = analyze_ranks(events, offsets, Timeline::kDevice);
  for (const RankBreakdown& b : bd) {
    p.breakdown.insert(p.breakdown.end(), b.rows.begin(), b.rows.end());
    p.operators.insert(p.operators.end(), b.operators.begin(), b.operators.end());
  }
  describe_import(out, options, shared, ranks[0], ranks.size());
  for (std::size_t r = 0; r < ranks.size(); ++r) add_rank(out, r, ranks[r], bd[r], events[r]);
  p.strings = strings.strings();
  p.events = std::move(events);
  return out;
}

}  // namespace commscope::profiler
