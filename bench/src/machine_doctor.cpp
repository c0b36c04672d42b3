// --doctor FILE: each host's measured link rate from a doctor file's pairs (machine_detect.hpp).
#include <algorithm>
#include <cmath>
#include <filesystem>
#include <map>
#include <set>
#include <utility>

#include "commscope/collectives/error.hpp"
#include "commscope/common/schemas.hpp"
#include "commscope/common/stats.hpp"
#include "commscope/formats/doctor_file.hpp"
#include "commscope/h5/h5.hpp"
#include "machine_detect.hpp"

namespace commscope::bench {

std::vector<MachineEntry> doctor_link_entries(const std::string& path) {
  std::map<std::pair<std::string, std::string>, double> best;  // (src, dst) host -> best GB/s
  try {
    if (!std::filesystem::is_regular_file(path)) throw InvalidArgument("no such file");
    const h5::File file = h5::File::open(path);
    if (!file.exists("meta") || !file.open_group("meta").has_attr("schema") ||
        !schemas::is_doctor(file.open_group("meta").attr_string("schema")) || !file.exists("pairs"))
      throw InvalidArgument("not a commscope doctor file with pairs");
    for (const formats::doctor::PairRow& r :
         formats::doctor::read_pairs(file, std::filesystem::file_size(path))) {  // the doctor file's reader
      const std::string a(h5::get_fixed(r.src_host)), b(h5::get_fixed(r.dst_host));
      if (a == b || !(r.bandwidth_GBps > 0) || !std::isfinite(r.bandwidth_GBps)) continue;  // inside a node
      double& kept = best[{a, b}];
      kept = std::max(kept, r.bandwidth_GBps);
    }
  } catch (const std::exception& e) {
    throw InvalidArgument("--doctor '" + path + "': " + e.what());
  }
  // A host pair's figure is its slower direction; a host's is the median over its partners (one
  // slow host then shows in its own figure, and in each other host's only once).
  std::map<std::string, std::vector<double>> per_host;
  for (const auto& [hosts, gbps] : best) {
    const auto back = best.find({hosts.second, hosts.first});
    const double pair = back == best.end() ? gbps : std::min(gbps, back->second);
    if (hosts.first < hosts.second || back == best.end()) {
      per_host[hosts.first].push_back(pair);
      per_host[hosts.second].push_back(pair);
    }
  }
  std::vector<MachineEntry> out;
  for (const auto& [host, pairs] : per_host) {
    const std::string detail = std::filesystem::path(path).filename().string() + ": median of " +
                               std::to_string(pairs.size()) + " host pair" + (pairs.size() > 1 ? "s" : "") +
                               " (best pass, slower direction)";
    out.push_back({host,
                   {{"nic_measured", rate_text(stats::median(pairs))},
                    {"nic_measured.source", "doctor"},
                    {"nic_measured.detail", detail}},
                   0});
  }
  return out;
}

}  // namespace commscope::bench
