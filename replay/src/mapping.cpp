#include <algorithm>
#include <sstream>

#include "commscope/replay/plan.hpp"

namespace commscope::replay {

bool RankMapping::identity() const {
  if (static_cast<int>(recorded.size()) != recorded_ranks) return false;
  for (std::size_t i = 0; i < recorded.size(); ++i)
    if (recorded[i] != static_cast<int>(i)) return false;
  return true;
}

int RankMapping::replay_rank(int recorded_rank) const {
  const auto it = std::find(recorded.begin(), recorded.end(), recorded_rank);
  return it == recorded.end() ? -1 : static_cast<int>(it - recorded.begin());
}

std::string RankMapping::describe() const {
  std::ostringstream out;
  if (identity()) {
    out << (recorded_ranks == 1
                ? "the recorded rank by replay rank 0"
                : "each of the " + std::to_string(recorded_ranks) + " recorded ranks by the replay rank of its number");
    return out.str();
  }
  out << recorded.size() << " of " << recorded_ranks << " recorded ranks played (replay rank <- recorded rank:";
  for (std::size_t i = 0; i < recorded.size(); ++i) out << (i == 0 ? " " : ", ") << i << "<-" << recorded[i];
  out << "); each group keeps its played members and their bytes per rank; messages to or from the other ranks "
         "dropped";
  return out.str();
}

RankMapping map_ranks(int recorded_ranks, int given, const std::vector<int>& chosen) {
  if (given < 1) throw PlanError("no ranks to replay on");
  if (given > recorded_ranks)
    throw PlanError("the replay runs on " + std::to_string(given) + " ranks, but the profile has " +
                    std::to_string(recorded_ranks) + ": run it on at most " + std::to_string(recorded_ranks));
  RankMapping m;
  m.recorded_ranks = recorded_ranks;
  if (chosen.empty()) {
    for (int r = 0; r < given; ++r) m.recorded.push_back(r);
    return m;
  }
  if (static_cast<int>(chosen.size()) != given)
    throw PlanError("--ranks names " + std::to_string(chosen.size()) + " recorded ranks for " + std::to_string(given) +
                    " replay ranks");
  for (const int r : chosen) {
    if (r < 0 || r >= recorded_ranks)
      throw PlanError("--ranks: recorded rank " + std::to_string(r) + " is not one of the profile's 0.." +
                      std::to_string(recorded_ranks - 1));
    if (std::count(chosen.begin(), chosen.end(), r) > 1)
      throw PlanError("--ranks: recorded rank " + std::to_string(r) + " named twice");
  }
  m.recorded = chosen;
  return m;
}

std::vector<std::int64_t> iteration_leads(const ReplayPlan& plan, const RankMapping& mapping, int recorded_rank) {
  // A rank's iterations (numbers >= 0) by their place in its plan; the runs outside every
  // iteration (-1) between them are not started together.
  const auto numbered = [&](int r) {
    std::vector<const ReplayIteration*> out;
    for (const ReplayIteration& it : plan.ranks[static_cast<std::size_t>(r)].iterations)
      if (it.number >= 0) out.push_back(&it);
    return out;
  };
  const auto numbers = [](const std::vector<const ReplayIteration*>& its) {
    std::vector<std::int32_t> out;
    for (const ReplayIteration* it : its) out.push_back(it->number);
    return out;
  };
  const std::vector<const ReplayIteration*> mine = numbered(recorded_rank);
  if (mine.empty()) return {};
  std::vector<std::int64_t> earliest;
  for (const ReplayIteration* it : mine) earliest.push_back(it->start_ns);
  for (const int r : mapping.recorded) {
    const std::vector<const ReplayIteration*> theirs = numbered(r);
    if (numbers(theirs) != numbers(mine)) return {};
    for (std::size_t i = 0; i < theirs.size(); ++i) earliest[i] = std::min(earliest[i], theirs[i]->start_ns);
  }
  std::vector<std::int64_t> leads;  // by plan iteration
  std::size_t i = 0;
  for (const ReplayIteration& it : plan.ranks[static_cast<std::size_t>(recorded_rank)].iterations) {
    if (it.number < 0) {
      leads.push_back(0);
      continue;
    }
    leads.push_back(it.start_ns - earliest[i++]);
  }
  return leads;
}

std::vector<int> played_members(const GroupLabel& group, const RankMapping& mapping) {
  std::vector<int> out;
  for (const int r : group.members)
    if (mapping.replay_rank(r) >= 0) out.push_back(r);
  return out;
}

}  // namespace commscope::replay
