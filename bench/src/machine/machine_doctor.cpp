// --doctor FILE: each host's measured link rate and the latency from a doctor file's pairs
// (machine_detect.hpp).
#include <algorithm>
#include <charconv>
#include <cmath>
#include <filesystem>
#include <map>
#include <optional>
#include <set>
#include <utility>

#include "commscope/collectives/error.hpp"
#include "commscope/common/schemas.hpp"
#include "commscope/common/stats.hpp"
#include "commscope/formats/doctor_file.hpp"
#include "commscope/h5/h5.hpp"
#include "machine/machine_detect.hpp"

namespace commscope::bench {

namespace {

// The machine line of a doctor file: alpha = the largest over its rank pairs of the pair's 8 B
// half round trip (its best pass); none where no pair measured one.
std::optional<MachineEntry> doctor_latency_entry(const std::string& path,
                                                 const std::vector<formats::doctor::PairRow>& rows) {
  std::map<std::pair<std::int64_t, std::int64_t>, std::pair<double, std::string>> best;  // rank pair -> us, hosts
  for (const formats::doctor::PairRow& r : rows) {
    if (!(r.latency_us > 0) || !std::isfinite(r.latency_us)) continue;
    const std::string hosts = std::string(h5::get_fixed(r.src_host)) + "-" + std::string(h5::get_fixed(r.dst_host));
    auto [it, fresh] = best.try_emplace({std::min(r.src, r.dst), std::max(r.src, r.dst)}, r.latency_us, hosts);
    if (!fresh && r.latency_us < it->second.first) it->second = {r.latency_us, hosts};
  }
  if (best.empty()) return std::nullopt;
  const auto worst = std::max_element(best.begin(), best.end(),
                                      [](const auto& a, const auto& b) { return a.second.first < b.second.first; });
  const std::string detail = std::filesystem::path(path).filename().string() +
                             ": 8 B half round trip, the largest of " + std::to_string(best.size()) + " pair" +
                             (best.size() > 1 ? "s" : "") + " (best pass each; " + worst->second.second + ")";
  char us[64];
  const auto [end, ec] = std::to_chars(us, us + sizeof us, worst->second.first);
  MachineEntry e{"",
                 {{"latency_us", std::string(us, ec == std::errc() ? end : us)},
                  {"latency.source", "doctor"},
                  {"latency.detail", detail}},
                 0,
                 true};
  return e;
}

}  // namespace

std::vector<MachineEntry> doctor_link_entries(const std::string& path) {
  std::map<std::pair<std::string, std::string>, double> best;  // (src, dst) host -> best GB/s
  std::optional<MachineEntry> latency;
  try {
    if (!std::filesystem::is_regular_file(path)) throw InvalidArgument("no such file");
    const h5::File file = h5::File::open(path);
    if (!file.exists("meta") || !file.open_group("meta").has_attr("schema") ||
        !schemas::is_doctor(file.open_group("meta").attr_string("schema")) || !file.exists("pairs"))
      throw InvalidArgument("not a commscope doctor file with pairs");
    const std::vector<formats::doctor::PairRow> rows =
        formats::doctor::read_pairs(file, std::filesystem::file_size(path));  // the doctor file's reader
    latency = doctor_latency_entry(path, rows);
    for (const formats::doctor::PairRow& r : rows) {
      const std::string a(h5::get_fixed(r.src_host)), b(h5::get_fixed(r.dst_host));
      if (a == b || !(r.bandwidth_GBps > 0) || !std::isfinite(r.bandwidth_GBps)) continue;  // inside a node
      double& kept = best[{a, b}];
      kept = std::max(kept, r.bandwidth_GBps);
    }
  } catch (const std::exception& e) {
    throw InvalidArgument("--doctor '" + path + "': " + e.what());
  }
  // A host pair's figure is its slower direction; a host's is its fastest pair: a pair crosses
  // both hosts' links, so each is at least that fast, and a slow host's link slows all its pairs
  // while the others keep their fast ones (with 3 hosts and host2 at 100mbit, the median of two
  // partners put host1 and host3 at 0.0533 GB/s, half way to host2's 0.011; the fastest: 0.095).
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
    const std::string detail = std::filesystem::path(path).filename().string() + ": fastest of " +
                               std::to_string(pairs.size()) + " host pair" + (pairs.size() > 1 ? "s" : "") +
                               " (best pass, slower direction)";
    out.push_back({host,
                   {{"nic_measured", rate_text(*std::max_element(pairs.begin(), pairs.end()))},
                    {"nic_measured.source", "doctor"},
                    {"nic_measured.detail", detail}},
                   0});
  }
  if (latency) out.push_back(std::move(*latency));
  return out;
}

}  // namespace commscope::bench
