// Stage 3 of the Kineto import (match.hpp): collectives across ranks, clocks.

#include "match.hpp"

#include <algorithm>
#include <cstdlib>
#include <limits>
#include <map>
#include <tuple>
#include <unordered_set>

namespace commscope::profiler::kineto {

namespace {

std::int64_t median(std::vector<std::int64_t> v) {
  if (v.empty()) return 0;
  std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(v.size() / 2), v.end());
  return v[v.size() / 2];
}

}  // namespace

std::vector<Instance> instances_of(const RankTrace& r) {
  std::unordered_map<std::uint64_t, Instance> by_id;
  for (std::size_t i = 0; i < r.events.size(); ++i) {
    const Event& e = r.events[i];
    if (e.kind != EventKind::kCommunication || e.id == 0) continue;
    const bool dev = e.track_kind == TrackKind::kDeviceStream;
    auto [it, fresh] = by_id.try_emplace(e.id);
    Instance& in = it->second;
    const auto c = r.comm.find(i);
    if (fresh || (dev && !in.device)) {
      in.id = e.id;
      in.start = e.start_ns, in.end = e.end_ns, in.device = dev;
    } else if (dev == in.device) {
      in.start = std::min(in.start, e.start_ns), in.end = std::max(in.end, e.end_ns);
    }
    if (c != r.comm.end()) {
      if (in.key.empty()) in.key = c->second.pg + "/" + c->second.collective;
      if (in.seq < 0) in.seq = c->second.seq;
    }
  }
  std::vector<Instance> out;
  for (auto& [id, in] : by_id) out.push_back(std::move(in));
  std::sort(out.begin(), out.end(), [](const Instance& a, const Instance& b) {
    return std::tie(a.start, a.end, a.id) < std::tie(b.start, b.end, b.id);
  });
  return out;
}

void align_clock(RankTrace& d, std::int64_t epoch0, const std::vector<std::pair<std::int64_t, std::int64_t>>& ends) {
  if (ends.empty()) {
    d.offset_ns = 0, d.error_ns = kUnknownClockError;
    return;
  }
  std::vector<std::int64_t> diffs;
  for (const auto& [e0, ed] : ends) diffs.push_back((e0 - epoch0) - (ed - d.epoch_ns));
  d.offset_ns = median(diffs);
  std::vector<std::int64_t> dev;
  for (const std::int64_t x : diffs) dev.push_back(std::abs(x - d.offset_ns));
  d.error_ns = median(dev);
}

std::vector<std::int64_t> matched_counts(const std::vector<std::unordered_map<std::uint64_t, std::int64_t>>& seq_of) {
  std::unordered_map<std::int64_t, int> ranks_holding;
  for (const auto& rank_seqs : seq_of) {
    std::unordered_set<std::int64_t> mine;
    for (const auto& [id, s] : rank_seqs) mine.insert(s);
    for (const std::int64_t s : mine) ++ranks_holding[s];
  }
  std::vector<std::int64_t> out;
  for (const auto& rank_seqs : seq_of)
    out.push_back(std::count_if(rank_seqs.begin(), rank_seqs.end(),
                                [&](const auto& is) { return ranks_holding[is.second] > 1; }));
  return out;
}

Matching match_collectives(const std::vector<std::vector<Instance>>& inst, bool shared) {
  bool all_seq = true;
  std::size_t total = 0;
  for (const auto& rank_inst : inst) {
    total += rank_inst.size();
    for (const Instance& i : rank_inst) all_seq &= i.seq >= 0;
  }
  all_seq &= total > 0;
  Matching m;
  m.seq_of.resize(inst.size());
  m.ends.resize(inst.size());
  if (all_seq) {
    m.method = "by process group and sequence number";
    std::map<std::pair<std::string, std::int64_t>, std::int64_t> global;
    for (auto& rank_inst : inst)
      for (const Instance& i : rank_inst) global.try_emplace({i.key, i.seq}, 0);
    std::int64_t k = 0;
    for (auto& [key, g] : global) g = k++;
    std::map<std::pair<std::string, std::int64_t>, std::int64_t> end0;
    for (const Instance& i : inst[0]) end0[{i.key, i.seq}] = i.end;
    for (std::size_t r = 0; r < inst.size(); ++r)
      for (const Instance& i : inst[r]) {
        m.seq_of[r][i.id] = global[{i.key, i.seq}];
        if (auto it = end0.find({i.key, i.seq}); it != end0.end()) m.ends[r].push_back({it->second, i.end});
      }
  } else {
    m.method = shared ? "by collective and process group, overlapping device intervals on the shared clock"
                      : "by collective and process group, in order";
    std::map<std::string, std::vector<const Instance*>> ref;
    for (std::size_t k = 0; k < inst[0].size(); ++k) {
      m.seq_of[0][inst[0][k].id] = static_cast<std::int64_t>(k);
      ref[inst[0][k].key].push_back(&inst[0][k]);
    }
    for (std::size_t r = 1; r < inst.size(); ++r) {
      std::map<std::string, std::vector<const Instance*>> mine;
      for (const Instance& i : inst[r]) mine[i.key].push_back(&i);
      for (auto& [key, list] : mine) {
        const auto rit = ref.find(key);
        if (rit == ref.end()) continue;
        const auto& rl = rit->second;
        if (!shared) {
          for (std::size_t k = 0; k < list.size() && k < rl.size(); ++k) {
            m.seq_of[r][list[k]->id] = m.seq_of[0][rl[k]->id];
            m.ends[r].push_back({rl[k]->end, list[k]->end});
          }
          continue;
        }
        // Two sorted lists: pair overlapping intervals, skip the earlier-ending one otherwise.
        std::size_t a = 0, b = 0;
        while (a < rl.size() && b < list.size()) {
          const Instance& x = *rl[a];
          const Instance& y = *list[b];
          if (x.start < y.end && y.start < x.end) {
            m.seq_of[r][y.id] = m.seq_of[0][x.id];
            m.ends[r].push_back({x.end, y.end});
            ++a, ++b;
          } else if (x.end <= y.end) {
            ++a;
          } else {
            ++b;
          }
        }
      }
    }
  }
  return m;
}

std::string set_clocks(std::vector<RankTrace>& ranks, bool shared, const Matching& matching,
                       std::vector<std::string>& warnings) {
  std::int64_t common = std::numeric_limits<std::int64_t>::max();
  for (const RankTrace& r : ranks) common = std::min(common, r.min_ts);
  if (common == std::numeric_limits<std::int64_t>::max()) common = 0;
  std::int64_t aligned_from = 0;
  for (std::size_t r = 0; r < ranks.size(); ++r) {
    RankTrace& d = ranks[r];
    if (shared || r == 0) {
      d.epoch_ns = shared ? common : (d.min_ts == std::numeric_limits<std::int64_t>::max() ? 0 : d.min_ts);
      d.offset_ns = 0;
      continue;
    }
    d.epoch_ns = d.min_ts == std::numeric_limits<std::int64_t>::max() ? 0 : d.min_ts;
    align_clock(d, ranks[0].epoch_ns, matching.ends[r]);
    if (matching.ends[r].empty())
      warnings.push_back("rank " + std::to_string(r) + " (" + d.report.path +
                         ") shares no collective with rank 0: its clock offset is unknown (0 stored, error -1)");
    aligned_from += static_cast<std::int64_t>(matching.ends[r].size());
  }
  return shared ? (ranks.size() == 1 ? "one rank" : "shared (the traces' wall-clock times)")
                : "aligned from " + std::to_string(aligned_from) +
                      " matched collective ends (offset = median of end differences, error = their "
                      "median absolute deviation)";
}

}  // namespace commscope::profiler::kineto
