// Machine-file entries from the tools' other flags, shared by the bench and the report:
// --link-rate's HOST=RATE and a doctor file's pairs (machine_model.hpp).
#include <algorithm>
#include <charconv>
#include <cmath>
#include <map>
#include <string>
#include <system_error>
#include <utility>

#include "commscope/model/machine_model.hpp"

namespace commscope {

std::vector<MachineEntry> doctor_entries(std::string_view file_name, std::span<const PairMeasurement> pairs) {
  // The latency: per rank pair its best 8 B half round trip, the largest of those.
  std::map<std::pair<std::int64_t, std::int64_t>, std::pair<double, std::string>> latency;  // -> us, hosts
  std::map<std::pair<std::string, std::string>, double> best;  // (src, dst) host -> best GB/s
  for (const PairMeasurement& p : pairs) {
    if (p.latency_us > 0 && std::isfinite(p.latency_us)) {
      auto [it, fresh] = latency.try_emplace({std::min(p.src, p.dst), std::max(p.src, p.dst)}, p.latency_us,
                                             p.src_host + "-" + p.dst_host);
      if (!fresh && p.latency_us < it->second.first) it->second = {p.latency_us, p.src_host + "-" + p.dst_host};
    }
    if (p.src_host == p.dst_host || !(p.bandwidth_GBps > 0) || !std::isfinite(p.bandwidth_GBps)) continue;
    double& kept = best[{p.src_host, p.dst_host}];
    kept = std::max(kept, p.bandwidth_GBps);
  }
  std::map<std::string, std::vector<double>> per_host;
  for (const auto& [hosts, gbps] : best) {
    const auto back = best.find({hosts.second, hosts.first});
    const double pair = back == best.end() ? gbps : std::min(gbps, back->second);
    if (hosts.first < hosts.second || back == best.end()) {
      per_host[hosts.first].push_back(pair);
      per_host[hosts.second].push_back(pair);
    }
  }
  const std::string name(file_name);
  std::vector<MachineEntry> out;
  for (const auto& [host, rates] : per_host) {
    const std::string detail = name + ": fastest of " + std::to_string(rates.size()) + " host pair" +
                               (rates.size() > 1 ? "s" : "") + " (best pass, slower direction)";
    out.push_back({host,
                   {{"nic_measured", rate_text(*std::max_element(rates.begin(), rates.end()))},
                    {"nic_measured.source", "doctor"},
                    {"nic_measured.detail", detail}},
                   0});
  }
  if (!latency.empty()) {
    const auto worst = std::max_element(latency.begin(), latency.end(),
                                        [](const auto& a, const auto& b) { return a.second.first < b.second.first; });
    const std::string detail = name + ": 8 B half round trip, the largest of " + std::to_string(latency.size()) +
                               " pair" + (latency.size() > 1 ? "s" : "") + " (best pass each; " + worst->second.second +
                               ")";
    char us[64];
    const auto [end, ec] = std::to_chars(us, us + sizeof us, worst->second.first);
    out.push_back({"",
                   {{"latency_us", std::string(us, ec == std::errc() ? end : us)},
                    {"latency.source", "doctor"},
                    {"latency.detail", detail}},
                   0,
                   true});
  }
  return out;
}

MachineEntry link_rate_entry(std::string_view text) {
  const std::size_t eq = text.find('=');
  if (eq == std::string_view::npos || eq == 0)
    throw MachineModelError("expected HOST=RATE (HOST or *; RATE like 1gbit or 12.5GB/s)");
  MachineEntry e{std::string(text.substr(0, eq)), {{"nic", std::string(text.substr(eq + 1))}}, 0};
  (void)parse_rate(e.fields[0].second);
  return e;
}

}  // namespace commscope
