#include "completion.hpp"

#include <algorithm>
#include <cstdint>
#include <limits>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

namespace commscope::replay {
namespace {

// By op: when its other side had begun (ns, rank 0's clock): a message's matched send or receive
// (the n-th send from a rank to another with the n-th receive, as pair_messages left them), a
// collective's last member to post its call of the same number on the group. Absent: unknown.
std::map<const ReplayOp*, std::int64_t> ready_times(const ReplayPlan& plan) {
  struct Pair {
    std::vector<const ReplayOp*> sends, receives;
  };
  std::map<std::pair<int, int>, Pair> pairs;                                 // (from, to)
  std::map<std::string, std::map<int, std::vector<const ReplayOp*>>> calls;  // group -> rank -> calls
  for (int r = 0; r < plan.recorded_ranks; ++r)
    for (const ReplayIteration& it : plan.ranks[static_cast<std::size_t>(r)].iterations)
      for (const ReplayOp& op : it.ops) {
        if (op.kind == OpKind::kSend) pairs[{r, op.peer}].sends.push_back(&op);
        if (op.kind == OpKind::kRecv) pairs[{op.peer, r}].receives.push_back(&op);
        if (op.kind == OpKind::kCollective || op.kind == OpKind::kBarrier) calls[op.group][r].push_back(&op);
      }
  std::map<const ReplayOp*, std::int64_t> ready;
  for (const auto& [key, pair] : pairs)
    for (std::size_t i = 0; i < std::min(pair.sends.size(), pair.receives.size()); ++i) {
      ready[pair.sends[i]] = pair.receives[i]->start_ns;
      ready[pair.receives[i]] = pair.sends[i]->start_ns;
    }
  for (const auto& [label, by_rank] : calls) {
    const std::vector<int>& members = plan.groups.at(label).members;
    std::size_t n = members.empty() ? 0 : std::numeric_limits<std::size_t>::max();
    for (const int m : members) {
      const auto it = by_rank.find(m);
      n = std::min(n, it == by_rank.end() ? 0 : it->second.size());
    }
    for (std::size_t k = 0; k < n; ++k) {
      std::int64_t last = std::numeric_limits<std::int64_t>::min();
      for (const int m : members) last = std::max(last, by_rank.at(m)[k]->start_ns);
      for (const int m : members) ready[by_rank.at(m)[k]] = last;
    }
  }
  return ready;
}

}  // namespace

void assign_completions(ReplayPlan& plan) {
  const std::map<const ReplayOp*, std::int64_t> ready = ready_times(plan);
  for (RankPlan& rank : plan.ranks) {
    bool completions = false;
    std::set<std::int64_t> by_receive;  // an MPI_Sendrecv's send, completed by its receive
    for (const ReplayIteration& it : rank.iterations)
      for (const ReplayOp& op : it.ops) {
        completions |= op.kind == OpKind::kWait;
        if (op.kind != OpKind::kWait) by_receive.insert(op.completes.begin(), op.completes.end());
      }
    if (!completions) {
      for (ReplayIteration& it : rank.iterations)
        for (const ReplayOp& op : it.ops)
          if (op.posted && !by_receive.contains(op.request)) it.completes_at_end.push_back(op.request);
      continue;
    }
    std::vector<const ReplayOp*> open;  // posted, not yet given a completion; in order
    for (ReplayIteration& it : rank.iterations)
      for (ReplayOp& op : it.ops) {
        if (op.posted && !by_receive.contains(op.request)) open.push_back(&op);
        if (op.kind != OpKind::kWait) continue;
        std::erase_if(open, [&](const ReplayOp* posted) {
          const auto r = ready.find(posted);
          if ((r == ready.end() ? posted->start_ns : r->second) > op.end_ns) return false;
          op.completes.push_back(posted->request);
          return true;
        });
      }
  }
}

}  // namespace commscope::replay
