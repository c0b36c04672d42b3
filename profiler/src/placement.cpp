#include "commscope/profiler/placement.hpp"

#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <map>

#include "commscope/common/counted.hpp"

namespace commscope::profiler {

std::string cpu_list(const std::vector<int>& cpus) {
  std::string out;
  for (std::size_t i = 0; i < cpus.size();) {
    std::size_t j = i;
    while (j + 1 < cpus.size() && cpus[j + 1] == cpus[j] + 1) ++j;
    if (!out.empty()) out += ',';
    out += std::to_string(cpus[i]);
    if (j > i) out.append("-").append(std::to_string(cpus[j]));
    i = j + 1;
  }
  return out;
}

CpuPlacement this_process_cpus() {
  CpuPlacement p;
  const long online = sysconf(_SC_NPROCESSORS_ONLN);
  p.node_cpus = online > 0 ? static_cast<int>(online) : 0;
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof set, &set) != 0) return p;
  std::vector<int> cpus;
  for (int c = 0; c < CPU_SETSIZE; ++c)
    if (CPU_ISSET(c, &set)) cpus.push_back(c);
  p.cpus = cpu_list(cpus);
  p.cpu_count = static_cast<int>(cpus.size());
  return p;
}

PlacementSummary summarize_placement(const std::vector<RankInfo>& ranks) {
  PlacementSummary s;
  if (ranks.empty() ||
      std::any_of(ranks.begin(), ranks.end(), [](const RankInfo& r) { return r.cpu_count <= 0 || r.node_cpus <= 0; })) {
    s.text = "not recorded (a file from before it was)";
    return s;
  }
  s.known = true;
  std::map<std::string, int> per_host;
  int least_cpus = ranks.front().node_cpus, most_cpus = least_cpus, bound = 0;
  for (const RankInfo& r : ranks) {
    ++per_host[r.host];
    least_cpus = std::min(least_cpus, r.node_cpus), most_cpus = std::max(most_cpus, r.node_cpus);
    if (r.cpu_count < r.node_cpus) ++bound;
  }
  for (const RankInfo& r : ranks)
    if (per_host[r.host] > r.node_cpus && r.cpu_count >= r.node_cpus) s.shared_unbound = true;
  s.text = counted(ranks.size(), "rank") + " on " + counted(per_host.size(), "host") + " of " +
           (least_cpus == most_cpus ? std::to_string(least_cpus)
                                    : std::to_string(least_cpus) + "-" + std::to_string(most_cpus)) +
           " CPUs, ";
  if (bound == 0) {
    s.text += "unbound";
  } else {
    constexpr std::size_t kListed = 8;
    std::string cpus;
    for (std::size_t i = 0; i < std::min(ranks.size(), kListed); ++i) {
      if (i > 0) cpus += " | ";
      cpus += ranks[i].cpus;
    }
    if (ranks.size() > kListed) cpus += " | ...";
    s.text += (bound == static_cast<int>(ranks.size()) ? "bound" : "partly bound") + std::string(" (CPUs ") + cpus + ")";
  }
  return s;
}

}  // namespace commscope::profiler
