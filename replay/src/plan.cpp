#include "commscope/replay/plan.hpp"

#include <algorithm>
#include <iterator>
#include <limits>
#include <optional>
#include <set>
#include <string_view>
#include <utility>

#include "commscope/profiler/calls.hpp"
#include "commscope/profiler/vocabulary.hpp"
#include "completion.hpp"

namespace commscope::replay {
namespace {

namespace prof = commscope::profiler;

// The events of one rank an iteration at a time: its communication in start order, and the
// windows of its iterations.
struct RankEvents {
  std::map<std::int32_t, std::pair<std::int64_t, std::int64_t>> windows;  // iteration -> [start, end]
  std::vector<const prof::Event*> comms;
};

// An instance recorded twice is taken once (profiler/calls.hpp): a host call and its device
// kernel, a posted send and its recorded completion.
RankEvents collect(const std::vector<prof::Event>& events) {
  RankEvents out;
  for (const prof::Event& e : events)
    if (e.kind == prof::EventKind::kIteration) out.windows[e.iteration] = {e.start_ns, e.end_ns};
  out.comms = prof::communication_calls(events);
  std::stable_sort(out.comms.begin(), out.comms.end(),
                   [](const prof::Event* a, const prof::Event* b) { return a->start_ns < b->start_ns; });
  return out;
}

// The other side of a message on a link label, or -1. A message on a group of two (a receive
// from MPI_ANY_SOURCE, labelled by its communicator) can only be with the other member.
int peer_of(const GroupLabel& link, OpKind kind, int rank) {
  if (!link.link) {
    const std::vector<int>& m = link.members;
    if (m.size() == 2 && (m[0] == rank || m[1] == rank)) return m[0] == rank ? m[1] : m[0];
    return -1;
  }
  const int from = link.members[0], to = link.members[1];
  if (kind == OpKind::kSend && from == rank) return to;
  if (kind == OpKind::kRecv && to == rank) return from;
  return -1;
}

// Whether the rank recorded completions (MPI_Wait*, MPI_Test*): an MPI program's, whose posted
// calls are then completed where those completed them (completion.cpp).
bool records_completions(const prof::Profile& profile, const RankEvents& ev) {
  for (const prof::Event* e : ev.comms) {
    const std::optional<prof::CallName> call = replayed_call(profile.strings.at(e->name));
    if (call && call->kind == OpKind::kWait) return true;
  }
  return false;
}

// Whether two events of a rank are parts of one call: the same operator, thread and times.
bool same_call(const prof::Event& a, const prof::Event& b) {
  return a.parent == b.parent && a.track_kind == b.track_kind && a.track == b.track && a.start_ns == b.start_ns &&
         a.end_ns == b.end_ns;
}

RankPlan plan_rank(const prof::Profile& profile, int rank, int max_iterations,
                   std::map<std::string, GroupLabel>& groups) {
  RankPlan plan;
  const RankEvents ev = collect(profile.events[static_cast<std::size_t>(rank)]);
  std::int64_t offset = 0;  // to rank 0's clock
  for (const prof::RankInfo& info : profile.ranks)
    if (info.rank == rank) offset = info.clock_offset_ns;
  const bool completions = records_completions(profile, ev);
  std::map<std::int32_t, std::size_t> index;  // iteration number -> plan.iterations
  std::int64_t last_end = 0, requests = 0;
  std::int32_t last_iteration = -2;
  ReplayOp* last_op = nullptr;  // the op added last, and its event
  const prof::Event* last_event = nullptr;
  // With max_iterations, the calls outside the iterations after the last one kept are left out too.
  std::int64_t cutoff = std::numeric_limits<std::int64_t>::max();
  if (max_iterations > 0 && static_cast<std::size_t>(max_iterations) < ev.windows.size())
    cutoff = std::next(ev.windows.begin(), max_iterations - 1)->second.second;
  for (const prof::Event* e : ev.comms) {
    const std::string name = profile.strings.at(e->name);
    if (max_iterations > 0 && e->iteration >= 0 && !ev.windows.empty() &&
        std::distance(ev.windows.begin(), ev.windows.find(e->iteration)) >= max_iterations)
      continue;
    if (e->iteration < 0 && e->start_ns > cutoff) continue;
    ReplayOp op;
    op.name = name;
    op.group = profile.strings.at(e->communicator);
    op.bytes = e->bytes;
    op.recorded_ns = e->duration_ns();
    op.start_ns = e->start_ns + offset;
    op.end_ns = e->end_ns + offset;
    const std::optional<prof::CallName> call = replayed_call(name);
    if (!call) {
      ++plan.skipped[name];
      continue;
    }
    op.kind = call->kind;
    op.collective = call->collective;
    auto g = groups.find(op.group);
    if (g == groups.end()) {
      GroupLabel parsed = parse_group_label(op.group, profile.meta.nranks);
      if (parsed.inter) {  // its two groups' semantics are not rebuilt
        ++plan.skipped[name + " (on an intercommunicator)"];
        continue;
      }
      g = groups.emplace(op.group, std::move(parsed)).first;
    }
    if (op.kind == OpKind::kSend || op.kind == OpKind::kRecv) {
      op.peer = peer_of(g->second, op.kind, rank);
      if (op.peer < 0) {
        ++plan.skipped[name + " (no peer recorded)"];
        continue;
      }
    } else if (op.kind != OpKind::kWait && g->second.link) {
      throw PlanError("communicator '" + op.group + "' is a link, but '" + name + "' is a collective");
    } else if (op.kind != OpKind::kWait &&
               !std::binary_search(g->second.members.begin(), g->second.members.end(), rank)) {
      throw PlanError("rank " + std::to_string(rank) + " ran '" + name + "' on '" + op.group + "', which it is not in");
    }
    // Posted: nonblocking calls (collectives only where the rank recorded their completions) and
    // every send of a rank that recorded none (the trainer posts its sends and completes them
    // later, unrecorded).
    const bool nonblocking = call->nonblocking;
    op.posted = op.kind == OpKind::kSend   ? !completions || nonblocking
                : op.kind == OpKind::kRecv ? nonblocking
                                           : op.kind != OpKind::kWait && completions && nonblocking;
    if (op.posted) op.request = requests++;
    // An MPI_Sendrecv's receive: its send just before it, spanning the same call (the PMPI
    // library's two parts). The send is posted and the receive completes it, as the call does:
    // both ranks of a pair send before they receive, which blocking sends would deadlock on.
    if (op.kind == OpKind::kRecv && !op.posted && last_op != nullptr && last_op->kind == OpKind::kSend &&
        same_call(*last_event, *e)) {
      if (!last_op->posted) last_op->posted = true, last_op->request = requests++;
      op.completes.push_back(last_op->request);
    }
    // Iteration -1: each run of calls outside the iterations is one of its own, in its place.
    std::size_t at = plan.iterations.size();
    bool added = true;
    if (e->iteration < 0) {
      added = e->iteration != last_iteration;
      if (!added) at = plan.iterations.size() - 1;
      if (const auto w = ev.windows.find(last_iteration); added && w != ev.windows.end())
        last_end = std::max(last_end, w->second.second);  // after that iteration's tail
    } else {
      const auto [found, fresh] = index.try_emplace(e->iteration, plan.iterations.size());
      at = found->second, added = fresh;
    }
    if (added) {
      ReplayIteration iteration;
      iteration.number = e->iteration;
      if (const auto w = ev.windows.find(e->iteration); w != ev.windows.end()) {
        iteration.window_ns = w->second.second - w->second.first;
        iteration.start_ns = w->second.first + offset;
        last_end = w->second.first;
      }
      plan.iterations.push_back(iteration);
    } else if (e->iteration != last_iteration) {
      last_end = e->start_ns;  // an iteration met again after another: no gap across them
    }
    last_iteration = e->iteration;
    op.gap_before_ns = std::max<std::int64_t>(0, e->start_ns - last_end);
    last_end = std::max(last_end, e->end_ns);
    ReplayIteration& iteration = plan.iterations[at];
    iteration.ops.push_back(std::move(op));
    last_op = &iteration.ops.back(), last_event = e;  // valid until the next op is added
    if (const auto w = ev.windows.find(e->iteration); w != ev.windows.end())
      iteration.tail_ns = std::max<std::int64_t>(0, w->second.second - last_end);
  }
  return plan;
}

// Every message needs its other side, or the replay's send waits forever for a receive that is
// not there, or its receive takes a message meant for a later one (and a blocking receive then
// waits for a send its peer makes only after a collective it waits in). Per ordered pair (from,
// to): a blocking receive completed, so its sender had started as many sends by its end; where
// the receives before it outnumber those, the latest posted receive before it is left out (one
// the program never completed, or that its tags kept for a later message), else the receive
// itself; then the receives or sends beyond the other side's count, the last ones. The left-out
// ops are counted by name and their recorded time added to the next gap. A receive from
// MPI_ANY_SOURCE has no recorded peer (the PMPI library's posts), so the send it matched is
// left out too, unless its communicator has two ranks (peer_of). Times on rank 0's clock are
// uncertain by each rank's clock error (`clock_error_ns`, by recorded rank): a send counts as
// started by a receive's end within the two ranks' errors (the receive of a sendrecv whose
// partner came late ends microseconds after the partner's send started).
void pair_messages(ReplayPlan& plan, const std::vector<std::int64_t>& clock_error_ns) {
  struct Pair {
    std::vector<const ReplayOp*> sends, receives;  // in order
  };
  std::map<std::pair<int, int>, Pair> pairs;  // (from, to), recorded ranks
  for (int r = 0; r < plan.recorded_ranks; ++r)
    for (const ReplayIteration& it : plan.ranks[static_cast<std::size_t>(r)].iterations)
      for (const ReplayOp& op : it.ops) {
        if (op.kind == OpKind::kSend) pairs[{r, op.peer}].sends.push_back(&op);
        if (op.kind == OpKind::kRecv) pairs[{op.peer, r}].receives.push_back(&op);
      }
  std::set<const ReplayOp*> left_out;
  const auto error = [&](int r) {
    return r >= 0 && static_cast<std::size_t>(r) < clock_error_ns.size() ? clock_error_ns[static_cast<std::size_t>(r)]
                                                                         : 0;
  };
  for (const auto& [key, pair] : pairs) {
    std::vector<const ReplayOp*> kept;  // receives
    std::size_t sent = 0;               // sends started by the current receive's end
    const std::int64_t slack = error(key.first) + error(key.second);
    for (const ReplayOp* receive : pair.receives) {
      if (posted_receive(*receive)) {
        kept.push_back(receive);
        continue;
      }
      while (sent < pair.sends.size() && pair.sends[sent]->start_ns <= receive->end_ns + slack) ++sent;
      while (kept.size() + 1 > sent) {
        const auto latest =
            std::find_if(kept.rbegin(), kept.rend(), [](const ReplayOp* o) { return posted_receive(*o); });
        if (latest == kept.rend()) break;
        left_out.insert(*latest);
        kept.erase(std::next(latest).base());
      }
      if (kept.size() + 1 > sent) {
        left_out.insert(receive);
        continue;
      }
      kept.push_back(receive);
    }
    for (std::size_t i = pair.sends.size(); i < kept.size(); ++i) left_out.insert(kept[i]);
    for (std::size_t i = kept.size(); i < pair.sends.size(); ++i) left_out.insert(pair.sends[i]);
  }
  for (RankPlan& rank : plan.ranks)
    for (ReplayIteration& it : rank.iterations) {
      std::vector<ReplayOp> ops;
      std::int64_t carry = 0;  // the left-out ops' recorded gaps and calls
      for (ReplayOp& op : it.ops) {
        op.gap_before_ns += carry;
        carry = 0;
        if (left_out.contains(&op)) {
          ++rank.skipped[op.name +
                         (op.kind == OpKind::kSend ? " (no receive recorded for it)" : " (no send recorded for it)")];
          carry = op.gap_before_ns + op.recorded_ns;
          continue;
        }
        ops.push_back(std::move(op));
      }
      it.tail_ns += carry;
      it.ops = std::move(ops);
    }
}

}  // namespace

GroupLabel parse_group_label(const std::string& label, int nranks) {
  GroupLabel out;
  if (label.empty()) {
    for (int r = 0; r < nranks; ++r) out.members.push_back(r);
    return out;
  }
  std::string why;
  std::optional<prof::ParsedLabel> parsed = prof::parse_label(label, &why);
  if (!parsed) throw PlanError("communicator '" + label + "': " + why);
  out.kind = std::move(parsed->kind);
  out.members = std::move(parsed->members);
  out.link = parsed->link;
  out.inter = parsed->inter;
  for (const int r : out.members)
    if (r >= nranks)
      throw PlanError("communicator '" + label + "' names rank " + std::to_string(r) + ", but the profile has " +
                      std::to_string(nranks) + " ranks: its group cannot be rebuilt");
  return out;
}

std::optional<prof::CallName> replayed_call(std::string_view name) {
  std::optional<prof::CallName> call = prof::classify_call(name);
  if (call && !call->exact) call.reset();  // a name that only mentions a call: not what it is
  return call;
}

std::int64_t ReplayPlan::ops() const {
  std::int64_t n = 0;
  for (const RankPlan& r : ranks)
    for (const ReplayIteration& it : r.iterations) n += static_cast<std::int64_t>(it.ops.size());
  return n;
}

ReplayPlan make_plan(const prof::Profile& profile, int max_iterations) {
  ReplayPlan plan;
  plan.recorded_ranks = profile.meta.nranks;
  if (profile.events.size() < static_cast<std::size_t>(plan.recorded_ranks))
    throw PlanError("the profile holds the events of " + std::to_string(profile.events.size()) + " of its " +
                    std::to_string(plan.recorded_ranks) + " ranks");
  for (int r = 0; r < plan.recorded_ranks; ++r)
    plan.ranks.push_back(plan_rank(profile, r, max_iterations, plan.groups));
  std::vector<std::int64_t> clock_error_ns(static_cast<std::size_t>(plan.recorded_ranks), 0);
  for (const prof::RankInfo& info : profile.ranks) {
    if (info.dropped_events > 0) plan.lost_events[info.rank] = info.dropped_events;
    if (info.rank >= 0 && info.rank < plan.recorded_ranks && info.clock_error_ns > 0)
      clock_error_ns[static_cast<std::size_t>(info.rank)] = info.clock_error_ns;  // kUnknownClockError: none
  }
  pair_messages(plan, clock_error_ns);
  assign_completions(plan);
  std::int64_t moving = 0;  // ops that communicate (completions alone do not)
  for (const RankPlan& r : plan.ranks)
    for (const ReplayIteration& it : r.iterations)
      moving +=
          std::count_if(it.ops.begin(), it.ops.end(), [](const ReplayOp& op) { return op.kind != OpKind::kWait; });
  if (moving == 0) {
    std::string skipped;
    for (const RankPlan& r : plan.ranks)
      for (const auto& [name, n] : r.skipped) skipped += (skipped.empty() ? " (only " : ", ") + name;
    throw PlanError("the profile holds no communication to replay" + (skipped.empty() ? "" : skipped + ")"));
  }
  return plan;
}

Elements elements_of(Collective c, std::int64_t bytes, int recorded_members) {
  std::int64_t per_rank = std::max<std::int64_t>(0, bytes);
  switch (c) {
    case Collective::allgather:
    case Collective::gather:
    case Collective::reducescatter:
    case Collective::scatter:
    case Collective::alltoall:
    case Collective::alltoallv:
      per_rank /= std::max(1, recorded_members);
      break;
    default:
      break;
  }
  if (per_rank % 4 == 0) return {static_cast<std::size_t>(per_rank / 4), DataType::f32};
  return {static_cast<std::size_t>(per_rank), DataType::u8};
}

namespace {

// Every played member of a group must run its collectives in the same order with the same count:
// where the recorded bytes differ (an imported trace's uneven all_to_all), the largest is
// replayed and the ops counted; where the calls themselves differ, the group cannot be replayed.
void harmonize_groups(ReplayPlan& plan, const RankMapping& mapping) {
  for (const auto& [label, group] : plan.groups) {
    if (group.link) continue;
    std::vector<std::vector<ReplayOp*>> calls;  // by member, in order
    std::vector<int> members;                   // the played ones
    for (const int m : group.members) {
      if (mapping.replay_rank(m) < 0) continue;
      members.push_back(m);
      calls.emplace_back();
      for (ReplayIteration& it : plan.ranks[static_cast<std::size_t>(m)].iterations)
        for (ReplayOp& op : it.ops)
          if (op.group == label && (op.kind == OpKind::kCollective || op.kind == OpKind::kBarrier))
            calls.back().push_back(&op);
    }
    const std::string where = "'" + (label.empty() ? std::string("all ranks") : label) + "'";
    for (std::size_t i = 1; i < calls.size(); ++i)
      if (calls[i].size() != calls[0].size())
        throw PlanError("ranks " + std::to_string(members[0]) + " and " + std::to_string(members[i]) + " ran " +
                        std::to_string(calls[0].size()) + " and " + std::to_string(calls[i].size()) +
                        " collectives on " + where + ": they cannot be replayed together");
    for (std::size_t k = 0; k < (calls.empty() ? 0 : calls[0].size()); ++k) {
      std::int64_t most = 0;
      for (std::size_t i = 0; i < calls.size(); ++i) {
        const ReplayOp& a = *calls[0][k];
        const ReplayOp& b = *calls[i][k];
        if (a.kind != b.kind || (a.kind == OpKind::kCollective && a.collective != b.collective))
          throw PlanError("call " + std::to_string(k) + " on " + where + " is " + a.name + " on rank " +
                          std::to_string(members[0]) + " but " + b.name + " on rank " + std::to_string(members[i]) +
                          ": the ranks cannot be replayed together");
        most = std::max(most, b.bytes);
      }
      for (auto& member : calls)
        if (member[k]->bytes != most) member[k]->bytes = most, ++plan.resized;
    }
  }
}

}  // namespace

void harmonize(ReplayPlan& plan, const RankMapping& mapping) {
  try {
    harmonize_groups(plan, mapping);
  } catch (const PlanError& e) {
    if (plan.lost_events.empty()) throw;
    std::string lost;
    for (const auto& [rank, n] : plan.lost_events)
      lost += (lost.empty() ? "" : ", ") + std::string("rank ") + std::to_string(rank) + " lost " + std::to_string(n);
    throw PlanError(std::string(e.what()) + " (the profile is incomplete: " + lost +
                    " events, its buffers full; record a shorter run)");
  }
}

}  // namespace commscope::replay
