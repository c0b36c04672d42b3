// Stage 2 of the Kineto import (link.hpp): one rank's events linked and windowed.

#include "link.hpp"

#include <algorithm>
#include <limits>
#include <unordered_map>

#include "commscope/profiler/breakdown.hpp"
#include "commscope/profiler/vocabulary.hpp"

namespace commscope::profiler::kineto {

namespace {

constexpr std::int64_t kUnixUsThreshold = 1'000'000'000'000'000;  // 2001-09-09 in us: earlier is not a Unix time

// The fields `into` lacks, from `from`.
void fill_missing(CommInfo& into, const CommInfo& from) {
  if (into.collective.empty()) into.collective = from.collective;
  if (into.pg.empty()) into.pg = from.pg;
  if (into.pg_ranks.empty()) into.pg_ranks = from.pg_ranks;
  if (into.bytes < 0) into.bytes = from.bytes;
  if (into.seq < 0) into.seq = from.seq;
}

// A collective's communicator label from its process group's global ranks ("pg[0,1]"; groups of
// the same members share it, and the group's name stays in the event's detail), 0 where the trace
// does not name them.
std::uint32_t group_label(const CommInfo& info, StringTable& strings) {
  return info.pg_ranks.empty() ? 0 : strings.intern(communicator_label("pg", info.pg_ranks));
}

}  // namespace

bool has_wall_clock(const RankTrace& r) {
  return r.has_base || (r.min_ts != std::numeric_limits<std::int64_t>::max() && r.min_ts / 1000 > kUnixUsThreshold);
}

void link_rank(RankTrace& r, StringTable& strings) {
  std::vector<Event>& ev = r.events;
  const std::size_t n = ev.size();
  // Operators and runtime calls per host thread, swept in start order (an enclosing operator
  // first: longer first at one start, operators before calls).
  std::vector<std::size_t> host;
  for (std::size_t i = 0; i < n; ++i)
    if (ev[i].track_kind == TrackKind::kHostThread &&
        (ev[i].kind == EventKind::kOperator || ev[i].kind == EventKind::kRuntime))
      host.push_back(i);
  std::stable_sort(host.begin(), host.end(), [&](std::size_t a, std::size_t b) {
    const Event& x = ev[a];
    const Event& y = ev[b];
    if (x.track != y.track) return x.track < y.track;
    if (x.start_ns != y.start_ns) return x.start_ns < y.start_ns;
    if (x.end_ns != y.end_ns) return x.end_ns > y.end_ns;
    return (x.kind == EventKind::kOperator) > (y.kind == EventKind::kOperator);
  });
  std::unordered_map<std::uint64_t, std::size_t> op_index;  // operator id -> event index
  std::unordered_map<std::uint64_t, std::uint64_t> op_of_correlation;
  std::unordered_map<std::int64_t, std::uint64_t> op_of_external;
  std::vector<std::size_t> stack;
  std::uint32_t track = UINT32_MAX;
  for (const std::size_t i : host) {
    Event& e = ev[i];
    if (e.track != track) stack.clear(), track = e.track;
    while (!stack.empty() && ev[stack.back()].end_ns <= e.start_ns) stack.pop_back();
    e.parent = stack.empty() ? 0 : ev[stack.back()].id;
    if (e.kind == EventKind::kOperator) {
      op_index.emplace(e.id, i);
      if (r.external[i] >= 0) op_of_external.try_emplace(r.external[i], e.id);
      stack.push_back(i);
    } else if (e.correlation != 0) {
      op_of_correlation.try_emplace(e.correlation, e.parent);
    }
  }
  // Runtime calls with an External id but outside any operator (rare) keep the External link.
  OperatorTree tree;
  for (const auto& [id, i] : op_index) tree.add(id, ev[i].parent);

  // Collective calls: the outermost record_param_comms / nccl:* operator of a nest.
  auto comm_of = [&](std::size_t i) -> const CommInfo* {
    auto it = r.comm.find(i);
    return it == r.comm.end() ? nullptr : &it->second;
  };
  auto call_for = [&](std::uint64_t op) -> std::uint64_t {
    std::uint64_t call = 0;
    for (int guard = 0; op != 0 && guard < 4096; ++guard) {
      auto it = op_index.find(op);
      if (it == op_index.end()) break;
      if (comm_of(it->second) != nullptr) call = op;
      op = ev[it->second].parent;
    }
    return call;
  };
  // Merged arguments of a call (its own, then its nested comm operators').
  std::unordered_map<std::uint64_t, CommInfo> call_info;
  std::unordered_map<std::uint64_t, std::uint64_t> comm_id_of_call;
  for (std::size_t i = 0; i < n; ++i) {
    if (ev[i].kind != EventKind::kOperator || comm_of(i) == nullptr) continue;
    const std::uint64_t call = call_for(ev[i].id);
    CommInfo& c = call_info[call];
    // The first non-empty value of each field in trace order (the same choice on every rank).
    fill_missing(c, *comm_of(i));
  }
  // One host communication event per call.
  for (auto& [call, info] : call_info) {
    const Event& op = ev[op_index[call]];
    Event c;
    c.start_ns = op.start_ns;
    c.end_ns = op.end_ns;
    c.id = r.next_id++;
    c.parent = call;
    c.bytes = std::max<std::int64_t>(info.bytes, 0);
    c.name = strings.intern(info.collective.empty() ? std::string("collective") : info.collective);
    c.detail = info.pg.empty() ? 0 : strings.intern("process group " + info.pg);
    c.communicator = group_label(info, strings);
    c.kind = EventKind::kCommunication;
    c.track_kind = TrackKind::kHostThread;
    c.track = op.track;
    comm_id_of_call[call] = c.id;
    ev.push_back(c);
    r.external.push_back(-1);
  }

  // Device activities: the launching operator, and for NCCL kernels the collective call.
  std::unordered_map<std::uint64_t, int> kernels_of_comm;
  for (std::size_t i = 0; i < n; ++i) {
    Event& e = ev[i];
    if (e.track_kind != TrackKind::kDeviceStream) continue;
    std::uint64_t op = 0;
    bool linked = false;
    if (e.correlation != 0)
      if (auto it = op_of_correlation.find(e.correlation); it != op_of_correlation.end())
        op = it->second, linked = true;
    if (!linked && r.external[i] >= 0)
      if (auto it = op_of_external.find(r.external[i]); it != op_of_external.end()) op = it->second, linked = true;
    if (!linked && e.kind != EventKind::kSync) ++r.report.unlinked_device;
    e.parent = op;
    if (e.kind != EventKind::kCommunication) continue;
    const std::uint64_t call = op != 0 ? call_for(op) : 0;
    CommInfo info;
    if (const CommInfo* own = comm_of(i)) info = *own;
    if (call != 0) {
      const CommInfo& ci = call_info[call];
      fill_missing(info, ci);
      e.id = comm_id_of_call[call];
      ++kernels_of_comm[e.id];
    } else {
      e.id = r.next_id++;
    }
    e.bytes = std::max<std::int64_t>(info.bytes, 0);
    e.communicator = group_label(info, strings);
    e.seq = info.seq;  // the trace's own number; replaced by the cross-rank instance below
    if (!info.collective.empty()) {
      e.name = strings.intern(info.collective);
    } else {
      e.name = strings.intern("nccl");
    }
    // Remember the process group and own sequence number for matching.
    r.comm[i] = info;
  }
  // A call that launched no NCCL kernel in a trace with device activity is no transfer of its
  // own (c10d's "wait", a kernel outside the trace): it stays an operator. Without any device
  // activity (a CPU job, gloo) the host calls are the communication.
  bool any_device = false;
  for (std::size_t i = 0; i < n; ++i)
    any_device |= ev[i].track_kind == TrackKind::kDeviceStream && ev[i].kind != EventKind::kSync;
  std::unordered_map<std::uint64_t, const CommInfo*> info_of_comm;
  for (auto& [call, info] : call_info) info_of_comm[comm_id_of_call[call]] = &info;
  std::vector<Event> calls(ev.begin() + static_cast<std::ptrdiff_t>(n), ev.end());
  ev.resize(n);
  r.external.resize(n);
  for (const Event& c : calls) {
    if (!kernels_of_comm.contains(c.id)) {
      ++r.report.host_comm_without_kernel;
      if (any_device) continue;
    }
    r.comm[ev.size()] = *info_of_comm[c.id];  // the call's arguments, for matching
    ev.push_back(c);
    r.external.push_back(-1);
  }
}

void make_windows(RankTrace& r, KinetoWindow window, StringTable& strings) {
  std::vector<Event>& ev = r.events;
  bool have_steps = false;
  for (const Event& e : ev) have_steps |= e.kind == EventKind::kIteration;
  if (window == KinetoWindow::kTrace || !have_steps) {
    r.report.steps_fallback = window == KinetoWindow::kSteps;
    std::int64_t lo = std::numeric_limits<std::int64_t>::max(), hi = std::numeric_limits<std::int64_t>::min();
    bool device = false;
    for (const Event& e : ev) {
      const bool act = e.track_kind == TrackKind::kDeviceStream && e.kind != EventKind::kSync;
      if (act && !device) {
        device = true;
        lo = std::numeric_limits<std::int64_t>::max(), hi = std::numeric_limits<std::int64_t>::min();
      }
      if (act || !device) lo = std::min(lo, e.start_ns), hi = std::max(hi, e.end_ns);
    }
    std::erase_if(ev, [](const Event& e) { return e.kind == EventKind::kIteration; });
    if (lo <= hi) {
      Event w;
      w.start_ns = lo;
      w.end_ns = hi;
      w.iteration = 0;
      w.kind = EventKind::kIteration;
      w.name = strings.intern("trace");
      ev.push_back(w);
    }
  }
  // Each event's step: the window its start (device activities: their launch) falls in.
  std::vector<const Event*> wins;
  for (const Event& e : ev)
    if (e.kind == EventKind::kIteration) wins.push_back(&e);
  std::sort(wins.begin(), wins.end(), [](const Event* a, const Event* b) { return a->start_ns < b->start_ns; });
  std::vector<std::pair<std::int64_t, std::pair<std::int64_t, std::int32_t>>> spans;
  for (const Event* w : wins) spans.push_back({w->start_ns, {w->end_ns, w->iteration}});
  for (Event& e : ev) {
    if (e.kind == EventKind::kIteration) continue;
    auto it = std::upper_bound(spans.begin(), spans.end(), e.start_ns,
                               [](std::int64_t t, const auto& s) { return t < s.first; });
    e.iteration = -1;
    if (it != spans.begin() && e.start_ns < std::prev(it)->second.first) e.iteration = std::prev(it)->second.second;
  }
}

}  // namespace commscope::profiler::kineto
