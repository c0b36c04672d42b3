#include "from_profile.hpp"

#include <algorithm>
#include <map>
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
  std::set<std::tuple<int, Collective, std::string, std::size_t>> seen;
  std::vector<ProfileCall> calls;
  for (const auto& events : p.events)
    for (const profiler::Event& e : events) {
      if (e.kind != profiler::EventKind::kCommunication) continue;
      const profiler::ProfiledCall c = profiler::profiled_call(p, e);
      if (!c.collective() || c.link || c.inter || c.group_size < 1) continue;
      const auto bytes = static_cast<std::size_t>(c.bytes);
      if (seen.insert({c.group_size, c.call->collective, c.algorithm, bytes}).second)
        calls.push_back({c.call->collective, c.algorithm, bytes, c.group_size});
    }
  if (calls.empty()) throw InvalidArgument("--from-profile " + path + ": the profile holds no collective calls");
  std::sort(calls.begin(), calls.end(), [](const ProfileCall& a, const ProfileCall& b) {
    return std::tie(a.group_size, a.coll, a.algo, a.bytes) < std::tie(b.group_size, b.coll, b.algo, b.bytes);
  });
  return calls;
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
