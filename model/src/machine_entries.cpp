// Machine-file entries from the tools' other flags, shared by the bench and the report:
// --link-rate's HOST=RATE and a doctor file's pairs, its hosts' and its GPUs' (machine_model.hpp).
#include <algorithm>
#include <charconv>
#include <cmath>
#include <map>
#include <set>
#include <string>
#include <system_error>
#include <tuple>
#include <utility>

#include "commscope/common/stats.hpp"
#include "commscope/model/machine_model.hpp"

namespace commscope {

std::string doctor_latency_not_taken(std::string_view file_name, std::string_view oversubscribed) {
  if (oversubscribed.empty()) return "";
  return std::string(file_name) + "'s latency is not taken: its ranks outnumbered their CPUs (" +
         std::string(oversubscribed) + "), where a round trip waits for the scheduler";
}

std::vector<MachineEntry> doctor_entries(std::string_view file_name, std::span<const PairMeasurement> pairs,
                                         std::string_view oversubscribed) {
  // The latency: per rank pair its best 8 B half round trip, the largest of those between hosts
  // (a pair inside a host measures that host's memory and scheduler, which the model prices by
  // the node's call), of all pairs where none crosses.
  std::map<std::pair<std::int64_t, std::int64_t>, std::pair<double, std::string>> latency;  // -> us, hosts
  std::map<std::pair<std::string, std::string>, double> best;  // (src, dst) host -> best GB/s
  const bool any_between =
      std::any_of(pairs.begin(), pairs.end(), [](const PairMeasurement& p) { return p.src_host != p.dst_host; });
  for (const PairMeasurement& p : pairs) {
    if (p.latency_us > 0 && std::isfinite(p.latency_us) && oversubscribed.empty() &&
        (!any_between || p.src_host != p.dst_host)) {
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
                               " pair" + (latency.size() > 1 ? "s" : "") + (any_between ? " between hosts" : "") +
                               " (best pass each; " + worst->second.second + ")";
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

namespace {

// One figure of a host's GPU pairs as machine-file fields: `key`, the median of `of` over `rows`, its
// source doctor and a detail naming the slowest pair.
std::vector<std::pair<std::string, std::string>> gpu_pairs_figure(const std::string& file_name, const std::string& key,
                                                                  const std::vector<const GpuPairMeasurement*>& rows,
                                                                  double (*of)(const GpuPairMeasurement&),
                                                                  std::string_view how, std::string_view between) {
  std::vector<double> values;
  for (const GpuPairMeasurement* p : rows) values.push_back(of(*p));
  const GpuPairMeasurement& slowest =
      **std::min_element(rows.begin(), rows.end(), [&](const auto* a, const auto* b) { return of(*a) < of(*b); });
  std::string detail =
      file_name + ": median of " + std::to_string(rows.size()) + " GPU pair" + (rows.size() > 1 ? "s" : "") + ", ";
  detail.append(how).append(" (slowest GPU ").append(std::to_string(slowest.src)).append(between);
  detail.append(std::to_string(slowest.dst)).append(" ").append(rate_text(of(slowest))).append(")");
  return {{key, rate_text(stats::median(values))}, {key + ".source", "doctor"}, {key + ".detail", detail}};
}

}  // namespace

std::vector<MachineEntry> doctor_gpu_entries(std::string_view file_name, std::span<const GpuPairMeasurement> pairs) {
  const auto measured = [](double v) { return v > 0 && std::isfinite(v); };
  // Per host its ordered pairs, and each pair of GPUs once for the both-ways figure (measured once,
  // written in both of its rows).
  std::map<std::string, std::pair<std::vector<const GpuPairMeasurement*>, std::vector<const GpuPairMeasurement*>>>
      per_host;
  std::set<std::tuple<std::string, std::int64_t, std::int64_t>> seen;
  for (const GpuPairMeasurement& p : pairs) {
    if (!measured(p.oneway_GBps) || !measured(p.bidir_GBps)) continue;
    auto& [ordered, unordered] = per_host[p.host];
    ordered.push_back(&p);
    if (seen.insert({p.host, std::min(p.src, p.dst), std::max(p.src, p.dst)}).second) unordered.push_back(&p);
  }
  const std::string name(file_name);
  std::vector<MachineEntry> out;
  for (const auto& [host, rows] : per_host) {
    MachineEntry e{host,
                   gpu_pairs_figure(
                       name, "intra", rows.second, [](const GpuPairMeasurement& p) { return p.bidir_GBps / 2; },
                       "both ways at once, per direction", " <-> "),
                   0};
    for (auto& f : gpu_pairs_figure(
             name, "intra_one", rows.first, [](const GpuPairMeasurement& p) { return p.oneway_GBps; }, "one way alone",
             " -> "))
      e.fields.push_back(std::move(f));
    out.push_back(std::move(e));
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
