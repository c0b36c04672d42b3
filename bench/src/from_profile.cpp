#include "from_profile.hpp"

#include <algorithm>
#include <map>
#include <optional>
#include <set>
#include <tuple>

#include "commscope/collectives/error.hpp"
#include "commscope/formats/profile_file.hpp"
#include "commscope/model/format.hpp"
#include "commscope/profiler/vocabulary.hpp"

namespace commscope::bench {

std::vector<ProfileCall> profile_calls_of(const std::string& path) {
  profiler::Profile p;
  try {
    p = profiler::read_profile(path, true);
  } catch (const std::exception& e) {
    throw InvalidArgument("--from-profile " + path + ": " + e.what());
  }
  std::map<std::tuple<int, Collective, std::string, std::size_t>, std::set<std::vector<int>>> seen;
  for (const auto& events : p.events)
    for (const profiler::Event& e : events) {
      if (e.kind != profiler::EventKind::kCommunication) continue;
      const profiler::ProfiledCall c = profiler::profiled_call(p, e);
      if (!c.collective() || c.link || c.inter || c.group_size < 1) continue;
      std::set<std::vector<int>>& groups =
          seen[{c.group_size, c.call->collective, c.algorithm, static_cast<std::size_t>(c.bytes)}];
      if (const auto label = profiler::parse_label(c.label); label && !label->members.empty())
        groups.insert(label->members);
    }
  std::vector<ProfileCall> calls;
  for (auto& [key, groups] : seen) {
    const auto& [size, coll, algo, bytes] = key;
    calls.push_back({coll, algo, bytes, size, {groups.begin(), groups.end()}});
  }
  if (calls.empty()) throw InvalidArgument("--from-profile " + path + ": the profile holds no collective calls");
  std::sort(calls.begin(), calls.end(), [](const ProfileCall& a, const ProfileCall& b) {
    return std::tie(a.group_size, a.coll, a.algo, a.bytes) < std::tie(b.group_size, b.coll, b.algo, b.bytes);
  });
  return calls;
}

std::optional<std::vector<int>> group_colors(const std::vector<ProfileCall>& calls, int group_size, int nranks) {
  if (group_size < 1 || group_size > nranks) return std::nullopt;
  // The profile's groups of this size where they are nranks / group_size disjoint sets covering
  // every rank of the run (a grid's tp, dp or pp groups, at the profile's own size).
  std::vector<int> colors(static_cast<std::size_t>(nranks), -1);
  for (const ProfileCall& c : calls) {
    if (c.group_size != group_size) continue;
    std::fill(colors.begin(), colors.end(), -1);
    bool ok = static_cast<int>(c.groups.size()) * group_size == nranks;
    for (std::size_t i = 0; ok && i < c.groups.size(); ++i)
      for (const int r : c.groups[i]) {
        ok = r >= 0 && r < nranks && colors[static_cast<std::size_t>(r)] < 0;
        if (!ok) break;
        colors[static_cast<std::size_t>(r)] = static_cast<int>(i);
      }
    if (ok) return colors;
  }
  // Else consecutive blocks, where the size divides the run's.
  if (nranks % group_size != 0) return std::nullopt;
  for (int r = 0; r < nranks; ++r) colors[static_cast<std::size_t>(r)] = r / group_size;
  return colors;
}

std::string describe_profile_calls(const std::vector<ProfileCall>& calls) {
  std::map<int, std::map<std::string, std::vector<std::size_t>>> by;
  for (const ProfileCall& c : calls)
    by[c.group_size][std::string(to_string(c.coll)) + (c.algo.empty() ? "" : " " + c.algo)].push_back(c.bytes);
  std::string out;
  for (const auto& [size, kinds] : by) {
    out += (out.empty() ? "" : "; ") + std::to_string(size) + (size == 1 ? " rank:" : " ranks:");
    bool first = true;
    for (const auto& [kind, sizes] : kinds) {
      out += std::string(first ? " " : ", ") + kind;
      for (std::size_t i = 0; i < sizes.size(); ++i)
        out += (i ? ", " : " ") + analysis::format_bytes(static_cast<double>(sizes[i]));
      first = false;
    }
  }
  return out;
}

}  // namespace commscope::bench
