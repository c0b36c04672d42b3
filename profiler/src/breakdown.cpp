#include "commscope/profiler/breakdown.hpp"

#include <algorithm>
#include <map>
#include <set>
#include <unordered_set>

namespace commscope::profiler {

void OperatorTree::add(std::uint64_t id, std::uint64_t parent) {
  if (id != 0) parent_[id] = parent;
}

bool OperatorTree::related(std::uint64_t a, std::uint64_t b) const {
  if (a == 0 || b == 0) return false;
  if (a == b) return true;
  // Walk up from the deeper one: operator trees are shallow (nesting depth, not size).
  const int da = depth(a), db = depth(b);
  std::uint64_t deep = da >= db ? a : b;
  const std::uint64_t shallow = da >= db ? b : a;
  for (int d = std::max(da, db); d > std::min(da, db); --d) {
    auto it = parent_.find(deep);
    if (it == parent_.end()) return false;
    deep = it->second;
  }
  return deep == shallow;
}

int OperatorTree::depth(std::uint64_t id) const {
  int d = 0;
  for (int guard = 0; id != 0 && guard < 1 << 16; ++guard) {
    ++d;
    auto it = parent_.find(id);
    if (it == parent_.end()) break;
    id = it->second;
  }
  return d;
}

std::int64_t union_ns(std::vector<Interval> intervals) {
  std::sort(intervals.begin(), intervals.end(),
            [](const Interval& a, const Interval& b) { return a.start_ns < b.start_ns; });
  std::int64_t total = 0, lo = 0, hi = 0;
  bool open = false;
  for (const Interval& i : intervals) {
    if (i.end_ns <= i.start_ns) continue;
    if (open && i.start_ns <= hi) {
      hi = std::max(hi, i.end_ns);
      continue;
    }
    if (open) total += hi - lo;
    lo = i.start_ns, hi = i.end_ns, open = true;
  }
  return open ? total + hi - lo : total;
}

namespace {

// A change of the counts at one instant of the sweep.
struct Step {
  std::int64_t t;
  int compute, comm, wait;
};

}  // namespace

Components breakdown_window(std::int64_t start_ns, std::int64_t end_ns, std::span<const Activity> activities,
                            std::span<const Marker> markers, const OperatorTree& tree, IntraGaps* intra_by_op) {
  Components c;
  if (end_ns <= start_ns) return c;
  c.window_ns = end_ns - start_ns;

  // The things on either side of an instant: an idle piece [x, y) lies between left_of[x] and
  // right_of[y]. Markers win over activities at the same instant (a scope's end is recorded
  // after the work inside it ended, its begin before the work started); among markers at one
  // instant the last (left) or first (right) in order; among activities the latest-started
  // (left) or the first listed (right). Missing means "nothing": inter-op.
  std::unordered_map<std::int64_t, std::uint64_t> left_of, right_of;
  std::unordered_map<std::int64_t, std::int64_t> left_start;  // start of the activity chosen for left_of
  std::unordered_set<std::int64_t> marker_times;
  std::vector<Step> steps;
  steps.reserve(activities.size() * 3 + markers.size() + 2);
  steps.push_back({start_ns, 0, 0, 0});
  steps.push_back({end_ns, 0, 0, 0});

  for (const Activity& a : activities) {
    const std::int64_t s = std::max(a.start_ns, start_ns), e = std::min(a.end_ns, end_ns);
    if (s >= e) continue;
    const bool comm = a.cls == ActivityClass::kCommunication;
    steps.push_back({s, comm ? 0 : 1, comm ? 1 : 0, 0});
    steps.push_back({e, comm ? 0 : -1, comm ? -1 : 0, 0});
    if (comm && a.wait_until_ns != kNoArrival) {
      const std::int64_t we = std::min(e, a.wait_until_ns);
      if (s < we) {
        steps.push_back({s, 0, 0, 1});
        steps.push_back({we, 0, 0, -1});
      }
    }
    auto [it, fresh] = left_start.try_emplace(e, a.start_ns);
    if (fresh || a.start_ns >= it->second) {
      it->second = a.start_ns;
      left_of[e] = a.op;
    }
    right_of.try_emplace(s, a.op);
  }
  // Markers override activities at the same instant; within one instant the left side takes the
  // last marker, the right side the first.
  std::unordered_set<std::int64_t> right_from_marker;
  for (const Marker& m : markers) {
    if (m.t_ns < start_ns || m.t_ns > end_ns) continue;
    marker_times.insert(m.t_ns);
    left_of[m.t_ns] = m.op;
    if (right_from_marker.insert(m.t_ns).second) right_of[m.t_ns] = m.op;
    steps.push_back({m.t_ns, 0, 0, 0});
  }

  std::sort(steps.begin(), steps.end(), [](const Step& a, const Step& b) { return a.t < b.t; });
  int compute = 0, comm = 0, wait = 0;
  for (std::size_t i = 0; i < steps.size();) {
    const std::int64_t x = steps[i].t;
    for (; i < steps.size() && steps[i].t == x; ++i) {
      compute += steps[i].compute;
      comm += steps[i].comm;
      wait += steps[i].wait;
    }
    if (i == steps.size()) break;
    const std::int64_t y = steps[i].t, len = y - x;
    if (x >= end_ns) break;
    if (len == 0) continue;
    if (comm > 0) {
      c.comm_ns += len;
      if (wait > 0) c.comm_wait_ns += len;
      if (compute > 0) c.overlap_ns += len;
    } else if (compute > 0) {
      c.kernel_ns += len;
    } else {
      const auto l = left_of.find(x), r = right_of.find(y);
      const std::uint64_t p = l == left_of.end() ? 0 : l->second;
      const std::uint64_t q = r == right_of.end() ? 0 : r->second;
      if (tree.related(p, q)) {
        c.intra_ns += len;
        if (intra_by_op != nullptr) (*intra_by_op)[tree.depth(q) > tree.depth(p) ? q : p].push_back({x, y});
      } else {
        c.inter_ns += len;
      }
    }
  }
  c.comm_transfer_ns = c.comm_ns - c.comm_wait_ns;
  return c;
}

std::vector<CommShare> communication_shares(std::int64_t start_ns, std::int64_t end_ns,
                                            std::span<const Activity> activities) {
  // The sweep of breakdown_window over the same changes, with the communications in progress
  // held by (start, index): the first of them takes each piece.
  struct Change {
    std::int64_t t;
    int compute, wait;
    std::size_t comm;  // index + 1 of a communication beginning (> 0) or ending (set below), 0: none
    bool begins;
  };
  std::vector<Change> changes;
  changes.reserve(activities.size() * 3);
  for (std::size_t i = 0; i < activities.size(); ++i) {
    const Activity& a = activities[i];
    const std::int64_t s = std::max(a.start_ns, start_ns), e = std::min(a.end_ns, end_ns);
    if (s >= e) continue;
    if (a.cls != ActivityClass::kCommunication) {
      changes.push_back({s, 1, 0, 0, false});
      changes.push_back({e, -1, 0, 0, false});
      continue;
    }
    changes.push_back({s, 0, 0, i + 1, true});
    changes.push_back({e, 0, 0, i + 1, false});
    if (a.wait_until_ns != kNoArrival && s < std::min(e, a.wait_until_ns)) {
      changes.push_back({s, 0, 1, 0, false});
      changes.push_back({std::min(e, a.wait_until_ns), 0, -1, 0, false});
    }
  }
  std::sort(changes.begin(), changes.end(), [](const Change& a, const Change& b) { return a.t < b.t; });
  std::vector<CommShare> by_activity(activities.size());
  std::set<std::pair<std::int64_t, std::size_t>> open;  // (clipped start, index)
  int compute = 0, wait = 0;
  for (std::size_t i = 0; i < changes.size();) {
    const std::int64_t x = changes[i].t;
    for (; i < changes.size() && changes[i].t == x; ++i) {
      const Change& c = changes[i];
      compute += c.compute;
      wait += c.wait;
      if (c.comm == 0) continue;
      const std::size_t k = c.comm - 1;
      const std::pair<std::int64_t, std::size_t> key{std::max(activities[k].start_ns, start_ns), k};
      if (c.begins)
        open.insert(key);
      else
        open.erase(key);
    }
    if (i == changes.size() || open.empty()) continue;
    const std::int64_t len = changes[i].t - x;
    CommShare& share = by_activity[open.begin()->second];
    share.comm_ns += len;
    if (wait > 0) share.wait_ns += len;
    if (compute > 0) share.overlap_ns += len;
  }
  std::vector<CommShare> shares;
  for (std::size_t k = 0; k < by_activity.size(); ++k)
    if (by_activity[k].comm_ns > 0) {
      by_activity[k].activity = k;
      shares.push_back(by_activity[k]);
    }
  return shares;
}

RankTimeline build_timeline(std::span<const Event> events, Timeline timeline) {
  RankTimeline t;
  // Collectives that NCCL's kernels carry out: on the device timeline their kernels are the
  // communication and the host scope (the launch) is not counted again.
  std::unordered_set<std::uint64_t> device_comm_ids;
  if (timeline == Timeline::kDevice)
    for (const Event& e : events)
      if (e.kind == EventKind::kCommunication && e.track_kind == TrackKind::kDeviceStream && e.id != 0)
        device_comm_ids.insert(e.id);

  struct Mark {
    Marker m;
    bool begin;
    int depth;
  };
  std::vector<Mark> marks;
  for (const Event& e : events)
    if (e.kind == EventKind::kOperator) t.tree.add(e.id, e.parent);

  for (std::size_t index = 0; index < events.size(); ++index) {
    const Event& e = events[index];
    const bool on_device = e.track_kind == TrackKind::kDeviceStream;
    const std::size_t before = t.activities.size();
    switch (e.kind) {
      case EventKind::kIteration:
        t.windows.push_back({e.iteration, e.start_ns, e.end_ns});
        break;
      case EventKind::kOperator:
        if (timeline == Timeline::kHost) {
          const int d = t.tree.depth(e.id);
          marks.push_back({{e.start_ns, e.id}, true, d});
          marks.push_back({{e.end_ns, e.id}, false, d});
        }
        break;
      case EventKind::kKernel:
      case EventKind::kMemcpy:
      case EventKind::kMemset:
        // A device kernel, copy or set with a collective's id is that collective's work (a
        // reduction kernel or staging copy of a collective the host drives): communication.
        if (on_device && e.id != 0 && timeline == Timeline::kDevice)
          t.activities.push_back(
              {e.start_ns, e.end_ns, ActivityClass::kCommunication, e.parent, e.communicator, e.seq, kNoArrival});
        else if (on_device == (timeline == Timeline::kDevice))
          t.activities.push_back({e.start_ns, e.end_ns, ActivityClass::kCompute, e.parent, 0, -1, kNoArrival});
        break;
      case EventKind::kCommunication:
        if (timeline == Timeline::kHost ? !on_device : (on_device || !device_comm_ids.contains(e.id)))
          t.activities.push_back(
              {e.start_ns, e.end_ns, ActivityClass::kCommunication, e.parent, e.communicator, e.seq, kNoArrival});
        break;
      case EventKind::kRuntime:
      case EventKind::kSync:
        break;
    }
    if (t.activities.size() > before) t.activities.back().source = static_cast<std::uint32_t>(index);
  }
  std::stable_sort(t.windows.begin(), t.windows.end(),
                   [](const Window& a, const Window& b) { return a.start_ns < b.start_ns; });
  std::stable_sort(t.activities.begin(), t.activities.end(),
                   [](const Activity& a, const Activity& b) { return a.start_ns < b.start_ns; });
  // At one instant on one thread the true order is: ends before begins, inner ends before outer
  // ends, outer begins before inner begins.
  std::stable_sort(marks.begin(), marks.end(), [](const Mark& a, const Mark& b) {
    if (a.m.t_ns != b.m.t_ns) return a.m.t_ns < b.m.t_ns;
    if (a.begin != b.begin) return !a.begin;
    return a.begin ? a.depth < b.depth : a.depth > b.depth;
  });
  t.markers.reserve(marks.size());
  for (const Mark& m : marks) t.markers.push_back(m.m);
  return t;
}

std::vector<std::int64_t> instance_counts(const RankTimeline& timeline) {
  std::vector<std::int64_t> counts;
  for (const Activity& a : timeline.activities) {
    if (a.cls != ActivityClass::kCommunication || a.seq < 0) continue;
    if (a.communicator >= counts.size()) counts.resize(a.communicator + std::size_t{1}, 0);
    counts[a.communicator] = std::max(counts[a.communicator], a.seq + 1);
  }
  return counts;
}

void number_instances(RankTimeline& timeline, std::span<const std::int64_t> counts) {
  std::vector<std::int64_t> first(counts.size(), 0);
  for (std::size_t c = 1; c < counts.size(); ++c) first[c] = first[c - 1] + std::max<std::int64_t>(counts[c - 1], 0);
  for (Activity& a : timeline.activities) {
    if (a.cls != ActivityClass::kCommunication || a.seq < 0) continue;
    a.seq = a.communicator < first.size() && a.seq < counts[a.communicator] ? first[a.communicator] + a.seq : -1;
  }
}

std::vector<std::int64_t> collective_arrivals(const RankTimeline& timeline, std::int64_t clock_offset_ns,
                                              std::size_t min_size) {
  std::vector<std::int64_t> arrivals(min_size, kNoArrival);
  for (const Activity& a : timeline.activities) {
    if (a.cls != ActivityClass::kCommunication || a.seq < 0) continue;
    const auto seq = static_cast<std::size_t>(a.seq);
    if (seq >= arrivals.size()) arrivals.resize(seq + 1, kNoArrival);
    const std::int64_t at = a.start_ns + clock_offset_ns;
    if (arrivals[seq] == kNoArrival || at < arrivals[seq]) arrivals[seq] = at;
  }
  return arrivals;
}

void merge_latest_arrivals(std::vector<std::int64_t>& into, std::span<const std::int64_t> other) {
  if (into.size() < other.size()) into.resize(other.size(), kNoArrival);
  for (std::size_t i = 0; i < other.size(); ++i) into[i] = std::max(into[i], other[i]);
}

void apply_latest_arrivals(RankTimeline& timeline, std::span<const std::int64_t> latest, std::int64_t clock_offset_ns) {
  for (Activity& a : timeline.activities) {
    if (a.cls != ActivityClass::kCommunication || a.seq < 0) continue;
    const auto seq = static_cast<std::size_t>(a.seq);
    a.wait_until_ns = seq < latest.size() && latest[seq] != kNoArrival ? latest[seq] - clock_offset_ns : kNoArrival;
  }
}

namespace {

// Per-operator totals by name (breakdown.hpp, analyze_rank): per instance its own activities'
// unions, its intra-op gaps and its scope together with them.
std::vector<OperatorTotalRow> operator_totals(std::int32_t rank, std::span<const Event> events,
                                              const RankTimeline& timeline, const IntraGaps& intra_by_op) {
  struct Own {
    std::vector<Interval> compute, comm;
  };
  std::unordered_map<std::uint64_t, Own> own;
  for (const Activity& a : timeline.activities)
    if (a.op != 0)
      (a.cls == ActivityClass::kCommunication ? own[a.op].comm : own[a.op].compute).push_back({a.start_ns, a.end_ns});
  std::map<std::uint32_t, OperatorTotalRow> totals;
  for (const Event& e : events) {
    if (e.kind != EventKind::kOperator) continue;
    OperatorTotalRow& r = totals[e.name];
    r.rank = rank;
    r.name = e.name;
    r.calls += 1;
    r.host_ns += e.end_ns - e.start_ns;
    std::vector<Interval> all{{e.start_ns, e.end_ns}};
    if (const auto it = own.find(e.id); it != own.end()) {
      const std::int64_t comm = union_ns(it->second.comm);
      std::vector<Interval> work = it->second.compute;
      work.insert(work.end(), it->second.comm.begin(), it->second.comm.end());
      r.comm_ns += comm;
      r.kernel_ns += union_ns(work) - comm;
      all.insert(all.end(), work.begin(), work.end());
    }
    if (const auto it = intra_by_op.find(e.id); it != intra_by_op.end()) {
      for (const Interval& gap : it->second) r.intra_ns += gap.end_ns - gap.start_ns;
      all.insert(all.end(), it->second.begin(), it->second.end());
    }
    r.total_ns += union_ns(std::move(all));
  }
  std::vector<OperatorTotalRow> rows;
  rows.reserve(totals.size());
  for (auto& [name, r] : totals) rows.push_back(r);
  return rows;
}

}  // namespace

namespace {

std::int64_t longest_activity(const RankTimeline& timeline) {
  std::int64_t longest = 0;
  for (const Activity& a : timeline.activities) longest = std::max(longest, a.end_ns - a.start_ns);
  return longest;
}

// The activities a window needs: activities are sorted by start, and a window needs those with
// start < end_ns and end > start_ns, i.e. starting at or after start_ns - (longest activity).
std::span<const Activity> window_activities(const RankTimeline& timeline, const Window& w, std::int64_t longest) {
  const auto first = std::lower_bound(timeline.activities.begin(), timeline.activities.end(), w.start_ns - longest,
                                      [](const Activity& a, std::int64_t t) { return a.start_ns < t; });
  const auto last = std::lower_bound(first, timeline.activities.end(), w.end_ns,
                                     [](const Activity& a, std::int64_t t) { return a.start_ns < t; });
  return {first, last};
}

}  // namespace

std::vector<CallShare> call_shares(const RankTimeline& timeline) {
  std::vector<CallShare> out;
  const std::int64_t longest = longest_activity(timeline);
  for (const Window& w : timeline.windows) {
    const std::span<const Activity> acts = window_activities(timeline, w, longest);
    for (const CommShare& s : communication_shares(w.start_ns, w.end_ns, acts))
      out.push_back({w.iteration, acts[s.activity].source, s.comm_ns, s.wait_ns, s.overlap_ns});
  }
  return out;
}

RankBreakdown analyze_rank(std::int32_t rank, std::span<const Event> events, const RankTimeline& timeline,
                           std::int64_t clock_offset_ns) {
  RankBreakdown out;
  const std::int64_t longest = longest_activity(timeline);
  struct Span {
    std::int64_t start, end;
  };
  std::vector<Span> ops;
  std::int64_t longest_op = 0;
  for (const Event& e : events)
    if (e.kind == EventKind::kOperator) {
      ops.push_back({e.start_ns, e.end_ns});
      longest_op = std::max(longest_op, e.end_ns - e.start_ns);
    }
  std::sort(ops.begin(), ops.end(), [](const Span& a, const Span& b) { return a.start < b.start; });

  IntraGaps intra_by_op;
  for (const Window& w : timeline.windows) {
    const std::span<const Activity> acts = window_activities(timeline, w, longest);
    const auto m_first = std::lower_bound(timeline.markers.begin(), timeline.markers.end(), w.start_ns,
                                          [](const Marker& m, std::int64_t t) { return m.t_ns < t; });
    const auto m_last = std::upper_bound(m_first, timeline.markers.end(), w.end_ns,
                                         [](std::int64_t t, const Marker& m) { return t < m.t_ns; });
    const Components c = breakdown_window(w.start_ns, w.end_ns, acts, std::span<const Marker>(m_first, m_last),
                                          timeline.tree, &intra_by_op);
    BreakdownRow row;
    row.rank = rank;
    row.iteration = w.iteration;
    row.start_ns = w.start_ns + clock_offset_ns;
    row.window_ns = c.window_ns;
    row.kernel_ns = c.kernel_ns;
    row.intra_ns = c.intra_ns;
    row.inter_ns = c.inter_ns;
    row.comm_ns = c.comm_ns;
    row.comm_wait_ns = c.comm_wait_ns;
    row.comm_transfer_ns = c.comm_transfer_ns;
    row.overlap_ns = c.overlap_ns;
    for (const Activity& a : acts) {
      if (std::min(a.end_ns, w.end_ns) <= std::max(a.start_ns, w.start_ns)) continue;
      ++(a.cls == ActivityClass::kCommunication ? row.communications : row.kernels);
    }
    const auto o_first = std::lower_bound(ops.begin(), ops.end(), w.start_ns - longest_op,
                                          [](const Span& s, std::int64_t t) { return s.start < t; });
    for (auto o = o_first; o != ops.end() && o->start < w.end_ns; ++o)
      if (std::min(o->end, w.end_ns) > std::max(o->start, w.start_ns) || (o->start == o->end && o->start >= w.start_ns))
        ++row.operators;
    row.identity_ok = c.identity_holds() ? 1 : 0;
    out.rows.push_back(row);
  }

  out.operators = operator_totals(rank, events, timeline, intra_by_op);
  return out;
}

MatchedRanks match_ranks(std::span<const std::vector<Event>> events, std::span<const std::int64_t> clock_offsets_ns,
                         std::span<const Timeline> timelines) {
  MatchedRanks m;
  m.timelines.reserve(events.size());
  std::vector<std::int64_t> counts;
  for (std::size_t r = 0; r < events.size(); ++r) {
    m.timelines.push_back(build_timeline(events[r], timelines[r]));
    merge_latest_arrivals(counts, instance_counts(m.timelines.back()));
  }
  for (std::size_t r = 0; r < events.size(); ++r) {
    number_instances(m.timelines[r], counts);
    m.arrivals.push_back(collective_arrivals(m.timelines[r], clock_offsets_ns[r]));
    merge_latest_arrivals(m.latest, m.arrivals.back());
  }
  for (std::size_t r = 0; r < events.size(); ++r) apply_latest_arrivals(m.timelines[r], m.latest, clock_offsets_ns[r]);
  return m;
}

std::vector<RankBreakdown> analyze_ranks(std::span<const std::vector<Event>> events,
                                         std::span<const std::int64_t> clock_offsets_ns, Timeline timeline) {
  const std::vector<Timeline> kinds(events.size(), timeline);
  const MatchedRanks m = match_ranks(events, clock_offsets_ns, kinds);
  std::vector<RankBreakdown> out;
  out.reserve(events.size());
  for (std::size_t r = 0; r < events.size(); ++r)
    out.push_back(analyze_rank(static_cast<std::int32_t>(r), events[r], m.timelines[r], clock_offsets_ns[r]));
  return out;
}

StepSummary summarize(const Profile& profile) {
  StepSummary s;
  s.rows = profile.breakdown.size();
  if (s.rows == 0) return s;
  for (const BreakdownRow& r : profile.breakdown) {
    s.window_ms += static_cast<double>(r.window_ns);
    s.kernel_ms += static_cast<double>(r.kernel_ns);
    s.intra_ms += static_cast<double>(r.intra_ns);
    s.inter_ms += static_cast<double>(r.inter_ns);
    s.comm_ms += static_cast<double>(r.comm_ns);
    s.comm_wait_ms += static_cast<double>(r.comm_wait_ns);
  }
  const double per = static_cast<double>(s.rows) * 1e6;  // ns to ms, per row
  for (double* v : {&s.window_ms, &s.kernel_ms, &s.intra_ms, &s.inter_ms, &s.comm_ms, &s.comm_wait_ms}) *v /= per;
  return s;
}

}  // namespace commscope::profiler
