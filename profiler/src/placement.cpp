#include "commscope/profiler/placement.hpp"

#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <limits>
#include <map>
#include <set>

#include "commscope/common/counted.hpp"
#include "commscope/common/cpu_list.hpp"

namespace commscope::profiler {

CpuPlacement this_process_cpus() {
  CpuPlacement p;
  const long online = sysconf(_SC_NPROCESSORS_ONLN);
  p.node_cpus = online > 0 ? static_cast<int>(online) : 0;
  if (std::ifstream boot("/proc/sys/kernel/random/boot_id"); boot) std::getline(boot, p.machine);
  const std::vector<int> cpus = affinity_cpus();
  if (cpus.empty()) return p;
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
    s.text +=
        (bound == static_cast<int>(ranks.size()) ? "bound" : "partly bound") + std::string(" (CPUs ") + cpus + ")";
  }
  return s;
}

CoreCount count_cores(const std::vector<RankInfo>& ranks, int threads) {
  CoreCount c;
  if (ranks.empty() ||
      std::any_of(ranks.begin(), ranks.end(), [](const RankInfo& r) { return r.cpu_count <= 0 || r.node_cpus <= 0; }))
    return c;
  c.known = true;
  c.by_host = std::all_of(ranks.begin(), ranks.end(), [](const RankInfo& r) { return r.machine.empty(); });
  struct Machine {
    int ranks = 0, node_cpus = 0, listed = 0;  // listed: the CPUs of ranks whose list was cut (counted)
    std::set<int> cpus;
  };
  std::map<std::string, Machine> machines;
  std::set<std::string> hosts;
  for (const RankInfo& r : ranks) {
    hosts.insert(r.host);
    Machine& m = machines[c.by_host || r.machine.empty() ? "host " + r.host : r.machine];
    ++m.ranks;
    m.node_cpus = std::max(m.node_cpus, r.node_cpus);
    const std::vector<int> cpus = parse_cpu_list(r.cpus);
    if (static_cast<int>(cpus.size()) == r.cpu_count)
      m.cpus.insert(cpus.begin(), cpus.end());
    else
      m.listed += r.cpu_count;
  }
  c.machines = static_cast<int>(machines.size());
  c.hosts = static_cast<int>(hosts.size());
  c.cpus_per_rank = std::numeric_limits<double>::infinity();
  for (const auto& [id, m] : machines) {
    const int cpus = std::min(m.node_cpus, static_cast<int>(m.cpus.size()) + m.listed);
    const double cores = std::min<double>(cpus, static_cast<double>(m.ranks) * std::max(1, threads));
    c.cores += cores;
    c.cpus_per_rank = std::min(c.cpus_per_rank, cores / m.ranks);
  }
  return c;
}

}  // namespace commscope::profiler
