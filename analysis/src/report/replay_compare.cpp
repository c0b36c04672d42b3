#include "replay_compare.hpp"

#include <algorithm>
#include <map>
#include <optional>
#include <set>
#include <stdexcept>

#include "commscope/analysis/inputs.hpp"
#include "commscope/profiler/calls.hpp"
#include "commscope/profiler/vocabulary.hpp"

namespace commscope::analysis {
namespace {

namespace prof = commscope::profiler;

// "1,3" -> {1, 3}; "" -> 0..n-1.
std::vector<int> played_ranks(const std::string& text, int replay_ranks, int recorded_ranks) {
  std::vector<int> out;
  if (text.empty()) {
    if (replay_ranks != recorded_ranks)
      throw std::invalid_argument("the replay has " + std::to_string(replay_ranks) + " ranks, the original " +
                                  std::to_string(recorded_ranks) + ", and no replay_ranks attribute says which played");
    for (int r = 0; r < replay_ranks; ++r) out.push_back(r);
    return out;
  }
  std::size_t at = 0;
  while (at < text.size()) {
    const std::size_t comma = std::min(text.find(',', at), text.size());
    const int r = std::atoi(text.substr(at, comma - at).c_str());
    if (r < 0 || r >= recorded_ranks)
      throw std::invalid_argument("replay_ranks names rank " + std::to_string(r) + " of a profile of " +
                                  std::to_string(recorded_ranks));
    out.push_back(r);
    at = comma + 1;
  }
  if (static_cast<int>(out.size()) != replay_ranks)
    throw std::invalid_argument("replay_ranks names " + std::to_string(out.size()) + " ranks for a replay of " +
                                std::to_string(replay_ranks));
  return out;
}

// A rank's calls (profiler/calls.hpp), counted from the file's own events, not from what the
// replay planned: of the compared iterations, and those outside every iteration (-1) when
// `outside` (every recorded iteration compared).
void add_calls(const prof::Profile& p, int rank, bool recorded, const std::set<std::int32_t>& iterations, bool outside,
               std::map<std::pair<std::string, std::string>, ReplayCollectiveRow>& rows,
               std::map<std::int32_t, ReplayIterationRow>& by_iteration) {
  for (const prof::Event* call : prof::communication_calls(p.events.at(static_cast<std::size_t>(rank)))) {
    const prof::Event& e = *call;
    if (!iterations.contains(e.iteration) && !(outside && e.iteration < 0)) continue;
    const std::string name = p.strings.at(e.name), label = p.strings.at(e.communicator);
    const std::string group = label.empty() ? "all" : label;
    ReplayCollectiveRow& row = rows[{group, name}];
    row.name = name, row.group = group;
    const std::int64_t bytes = std::max<std::int64_t>(0, e.bytes);
    (recorded ? row.recorded_calls : row.replayed_calls) += 1;
    (recorded ? row.recorded_bytes : row.replayed_bytes) += bytes;
    (recorded ? row.recorded_ns : row.replayed_ns) += static_cast<double>(e.duration_ns());
    if (e.iteration < 0) continue;  // no row of its own in the per-iteration table
    ReplayIterationRow& it = by_iteration[e.iteration];
    (recorded ? it.recorded_calls : it.replayed_calls) += 1;
    (recorded ? it.recorded_bytes : it.replayed_bytes) += bytes;
  }
}

// The messages of one rank's compared steps, numbered or not.
void add_messages(const prof::Profile& p, int rank, const std::set<std::int32_t>& iterations, MessageSplit& out) {
  std::map<std::uint32_t, bool> link;  // by label id: a link label
  for (const prof::Event& e : p.events.at(static_cast<std::size_t>(rank))) {
    if (e.kind != prof::EventKind::kCommunication || e.communicator == 0 || !iterations.contains(e.iteration)) continue;
    auto [it, added] = link.try_emplace(e.communicator, false);
    if (added) {
      const std::optional<prof::ParsedLabel> label = prof::parse_label(p.strings.at(e.communicator));
      it->second = label && label->link;
    }
    if (it->second) ++(e.seq >= 0 ? out.numbered : out.unnumbered);
  }
}

}  // namespace

ReplayComparison compare_replay(const prof::Profile& original, const prof::Profile& replay) {
  ReplayComparison c;
  c.ranks = played_ranks(value_of(replay.meta.attributes, "replay_ranks"), replay.meta.nranks, original.meta.nranks);
  std::set<std::int32_t> recorded_its, replayed_its, both;
  for (const prof::BreakdownRow& r : original.breakdown) recorded_its.insert(r.iteration);
  for (const prof::BreakdownRow& r : replay.breakdown) replayed_its.insert(r.iteration);
  std::set_intersection(recorded_its.begin(), recorded_its.end(), replayed_its.begin(), replayed_its.end(),
                        std::inserter(both, both.end()));
  if (both.empty()) throw std::invalid_argument("the two profiles have no iteration in common");
  c.iterations.assign(both.begin(), both.end());
  c.recorded_iterations = recorded_its.size();

  // The breakdown rows of (rank, iteration): the original's by recorded rank.
  std::map<std::pair<int, std::int32_t>, const prof::BreakdownRow*> rec, rep;
  for (const prof::BreakdownRow& r : original.breakdown) rec[{r.rank, r.iteration}] = &r;
  for (const prof::BreakdownRow& r : replay.breakdown) rep[{r.rank, r.iteration}] = &r;
  std::map<std::int32_t, ReplayIterationRow> by_iteration;
  for (const std::int32_t it : c.iterations) {
    ReplayIterationRow& row = by_iteration[it];
    row.iteration = it;
    double n = 0;
    for (std::size_t r = 0; r < c.ranks.size(); ++r) {
      const auto a = rec.find({c.ranks[r], it});
      const auto b = rep.find({static_cast<int>(r), it});
      if (a == rec.end() || b == rep.end()) continue;
      const prof::BreakdownRow& o = *a->second;
      const prof::BreakdownRow& p = *b->second;
      const double replayed = static_cast<double>(p.comm_ns);
      row.recorded_comm_ns += static_cast<double>(o.comm_ns);
      row.replayed_comm_ns += replayed;
      row.recorded_wait_ns += static_cast<double>(o.comm_wait_ns);
      row.replayed_wait_ns += static_cast<double>(p.comm_wait_ns);
      row.recorded_transfer_ns += static_cast<double>(o.comm_transfer_ns);
      row.replayed_transfer_ns += static_cast<double>(p.comm_transfer_ns);
      row.recorded_step_ns += static_cast<double>(o.window_ns);
      row.projected_step_ns +=
          static_cast<double>(o.window_ns - o.comm_ns) + std::max(replayed, static_cast<double>(o.overlap_ns));
      n += 1;
    }
    if (n > 0)
      for (double* v :
           {&row.recorded_comm_ns, &row.replayed_comm_ns, &row.recorded_wait_ns, &row.replayed_wait_ns,
            &row.recorded_transfer_ns, &row.replayed_transfer_ns, &row.recorded_step_ns, &row.projected_step_ns})
        *v /= n;
  }
  std::map<std::pair<std::string, std::string>, ReplayCollectiveRow> rows;
  c.outside_iterations = both.size() == recorded_its.size();
  if (!original.events.empty() && !replay.events.empty()) {
    for (std::size_t r = 0; r < c.ranks.size(); ++r) {
      add_calls(original, c.ranks[r], true, both, c.outside_iterations, rows, by_iteration);
      add_calls(replay, static_cast<int>(r), false, both, c.outside_iterations, rows, by_iteration);
      add_messages(original, c.ranks[r], both, c.recorded_messages);
      add_messages(replay, static_cast<int>(r), both, c.replayed_messages);
    }
  }
  const double cells = static_cast<double>(c.ranks.size() * c.iterations.size());
  for (auto& [key, row] : rows) {
    row.recorded_ns /= cells;
    row.replayed_ns /= cells;
    c.by_collective.push_back(row);
  }
  for (auto& [it, row] : by_iteration) c.by_iteration.push_back(row);
  return c;
}

}  // namespace commscope::analysis
