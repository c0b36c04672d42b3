#include "commscope/analysis/doctor_findings.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <map>
#include <set>
#include <utility>

#include "commscope/analysis/outliers.hpp"
#include "commscope/model/format.hpp"

namespace commscope::analysis {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
using Matrix = std::vector<std::vector<double>>;

std::string num(double v) {
  return std::isfinite(v) ? format_number(v, 3) : std::string("-");
}

// "9.2x below the median of 1.02 GB/s"
std::string against(double value, double median, Worse worse, const std::string& unit) {
  const double ratio = worse == Worse::low ? median / value : value / median;
  return format_number(ratio, 2) + "x " + (worse == Worse::low ? "below" : "above") + " the median of " + num(median) +
         " " + unit;
}

// Host a's links to the other hosts, and the links between the other hosts (a's peers, whose
// median stands for a good link however many of a's links are bad): link[x][y] for hosts x != y.
std::pair<std::vector<double>, std::vector<double>> host_links(const Matrix& link, std::size_t a) {
  std::pair<std::vector<double>, std::vector<double>> out;
  for (std::size_t x = 0; x < link.size(); ++x)
    for (std::size_t y = x + 1; y < link.size(); ++y) (x == a || y == a ? out.first : out.second).push_back(link[x][y]);
  return out;
}

// The rank matrices of both metrics, each pair by its best pass.
void rank_matrices(const DoctorValues& v, Matrix& bw, Matrix& lat) {
  const std::size_t p = v.host_of.size();
  bw.assign(p, std::vector<double>(p, kNaN));
  lat = bw;
  std::map<std::pair<std::int64_t, std::int64_t>, std::pair<std::vector<double>, std::vector<double>>> passes;
  for (const DoctorValues::Pair& r : v.pairs) {
    auto& [b, l] = passes[{r.src, r.dst}];
    b.push_back(r.bandwidth_GBps);
    l.push_back(r.latency_us);
  }
  auto best = [](const std::vector<double>& values, bool highest) {
    double b = kNaN;
    for (double x : values)
      if (std::isfinite(x) && (!std::isfinite(b) || (highest ? x > b : x < b))) b = x;
    return b;
  };
  for (const auto& [at, m] : passes) {
    bw[static_cast<std::size_t>(at.first)][static_cast<std::size_t>(at.second)] = best(m.first, true);
    lat[static_cast<std::size_t>(at.first)][static_cast<std::size_t>(at.second)] = best(m.second, false);
  }
}

// Host links of one metric: the median over rank pairs of each direction, the worse direction.
void host_matrix(DoctorLinks& m, const std::vector<std::size_t>& node, std::size_t nh) {
  const std::size_t p = node.size();
  std::vector<std::vector<std::vector<double>>> dir(nh, std::vector<std::vector<double>>(nh));
  for (std::size_t s = 0; s < p; ++s)
    for (std::size_t t = 0; t < p; ++t)
      if (s != t && std::isfinite(m.ranks[s][t])) dir[node[s]][node[t]].push_back(m.ranks[s][t]);
  m.hosts.assign(nh, std::vector<double>(nh, kNaN));
  for (std::size_t a = 0; a < nh; ++a)
    for (std::size_t b = 0; b < nh; ++b) {
      const double ab = finite_median(dir[a][b]), ba = finite_median(dir[b][a]);
      if (!std::isfinite(ab) || !std::isfinite(ba)) {
        m.hosts[a][b] = std::isfinite(ab) ? ab : ba;
      } else {
        m.hosts[a][b] = m.low_is_bad ? std::min(ab, ba) : std::max(ab, ba);
      }
      m.measured = m.measured || std::isfinite(m.hosts[a][b]);
    }
}

// The findings of one link metric: slow hosts first, then the other links among themselves, then
// the links inside hosts.
void judge_links(const DoctorLinks& m, const std::vector<std::string>& hosts, std::vector<DoctorFinding>& findings) {
  const Worse worse = m.low_is_bad ? Worse::low : Worse::high;
  const Matrix& link = m.hosts;
  const std::size_t nh = hosts.size();
  std::vector<double> host_score(nh, kNaN), others_median(nh, kNaN);
  std::vector<std::size_t> bad;
  for (std::size_t a = 0; a < nh && nh >= kOutlierMinValues; ++a) {
    const std::pair<std::vector<double>, std::vector<double>> split = host_links(link, a);
    host_score[a] = finite_median(split.first);
    const RobustSpread others = robust_spread(split.second);
    others_median[a] = others.median;
    if (beyond(host_score[a], others, worse)) bad.push_back(a);
  }
  const std::set<std::size_t> bad_hosts(bad.begin(), bad.end());
  std::vector<double> rest;
  std::vector<std::pair<std::size_t, std::size_t>> rest_at;
  for (std::size_t a = 0; a < nh; ++a)
    for (std::size_t b = a + 1; b < nh; ++b)
      if (!bad_hosts.count(a) && !bad_hosts.count(b)) rest.push_back(link[a][b]), rest_at.emplace_back(a, b);
  const double rest_median = finite_median(rest);
  const bool low = worse == Worse::low;
  for (std::size_t a : bad) {
    std::string text = std::string(low ? "slow host links: " : "high-latency host links: ") + hosts[a] + ": median " +
                       num(host_score[a]) + " " + m.unit + ", " +
                       against(host_score[a], others_median[a], worse, m.unit) + " between the other hosts";
    for (std::size_t b = 0; b < nh; ++b) {
      if (b == a || !std::isfinite(link[a][b])) continue;
      text += "\n  link " + hosts[a] + " <-> " + hosts[b] + ": " + num(link[a][b]) + " " + m.unit;
      if (std::isfinite(rest_median))
        text += " (" + against(link[a][b], rest_median, worse, m.unit) + " between the other hosts)";
    }
    findings.push_back({std::string(m.name) + " host", hosts[a], host_score[a], others_median[a], m.unit, text});
  }
  for (const Outlier& o : outliers(rest, worse)) {
    const auto [a, b] = rest_at[o.index];
    const double x = rest[o.index];
    findings.push_back({std::string(m.name) + " link", hosts[a] + " <-> " + hosts[b], x, o.peers_median, m.unit,
                        std::string(low ? "slow link: " : "high-latency link: ") + hosts[a] + " <-> " + hosts[b] +
                            ": " + num(x) + " " + m.unit + ", " + against(x, o.peers_median, worse, m.unit) +
                            " over the other links"});
  }
  std::vector<double> intra(nh, kNaN);
  for (std::size_t a = 0; a < nh; ++a) intra[a] = link[a][a];
  for (const Outlier& o : outliers(intra, worse))
    findings.push_back({std::string(m.name) + " inside node", hosts[o.index], intra[o.index], o.peers_median, m.unit,
                        std::string(low ? "slow links inside node: " : "high latency inside node: ") + hosts[o.index] +
                            ": " + num(intra[o.index]) + " " + m.unit + " between its ranks, " +
                            against(intra[o.index], o.peers_median, worse, m.unit) + " inside the other nodes"});
}

// The probes: slow nodes (the median of their ranks), then slow ranks not on a node named.
void judge_probes(const DoctorValues& v, const DoctorFindings& f, std::set<std::size_t>& slow_nodes,
                  std::vector<DoctorFinding>& findings) {
  struct Probe {
    const char* name;
    const char* unit;
    double DoctorValues::Rank::*field;
  };
  const Probe probes[] = {{"sgemm", "GFLOP/s", &DoctorValues::Rank::sgemm_gflops},
                          {"memcpy", "GB/s", &DoctorValues::Rank::memcpy_GBps}};
  const std::size_t nh = f.hosts.size();
  for (const Probe& pr : probes) {
    std::vector<std::vector<double>> by_node(nh);
    std::vector<double> all(v.ranks.size());
    for (std::size_t i = 0; i < v.ranks.size(); ++i) {
      all[i] = v.ranks[i].*pr.field;
      by_node[f.node[static_cast<std::size_t>(v.ranks[i].rank)]].push_back(all[i]);
    }
    std::vector<double> score(nh);
    for (std::size_t h = 0; h < nh; ++h) score[h] = finite_median(by_node[h]);
    std::set<std::size_t> named;
    for (const Outlier& o : outliers(score, Worse::low)) {
      const std::size_t h = o.index;
      named.insert(h);
      slow_nodes.insert(h);
      findings.push_back({std::string(pr.name) + " node", f.hosts[h], score[h], o.peers_median, pr.unit,
                          "slow node: " + f.hosts[h] + ": " + pr.name + " " + num(score[h]) + " " + pr.unit + ", " +
                              against(score[h], o.peers_median, Worse::low, pr.unit) + " over the other nodes"});
    }
    for (const Outlier& o : outliers(all, Worse::low)) {
      const std::size_t i = o.index, r = static_cast<std::size_t>(v.ranks[i].rank);
      if (named.count(f.node[r])) continue;  // said of its node already
      findings.push_back({std::string(pr.name) + " rank", std::to_string(r), all[i], o.peers_median, pr.unit,
                          "slow rank: " + std::to_string(r) + " (" + v.host_of[r] + "): " + pr.name + " " +
                              num(all[i]) + " " + pr.unit + ", " +
                              against(all[i], o.peers_median, Worse::low, pr.unit) + " over the other ranks"});
    }
  }
}

// "host2 rank 13 GPU 5 (0000:1B:00.0)": the bus id names the GPU on the machine where each rank sees
// its own as GPU 0 (srun --gpus-per-task); "host2 rank 13 GPU 5" in files before it.
std::string gpu_name(const DoctorGpu& g) {
  return g.host + " rank " + std::to_string(g.rank) + " GPU " + std::to_string(g.device) +
         (g.bus_id.empty() ? "" : " (" + g.bus_id + ")");
}

// " (0.48 of its peak 989 TFLOP/s)", " (0.43 of its link's 63 GB/s, PCIe gen 5 x16 (...))"; "" where
// the peak is not known.
std::string of_peak(double value, double peak, double scale, const std::string& unit, const std::string& whose,
                    const std::string& detail) {
  if (!(peak > 0) || !std::isfinite(value)) return "";
  return " (" + format_number(value / peak, 2) + " of " + whose + " " + num(peak * scale) + " " + unit +
         (detail.empty() ? "" : ", " + detail) + ")";
}

// The GPUs' probes: per node (the median of its GPUs, over the nodes), then per GPU over all the
// run's GPUs, those of a node named left out; one finding per GPU for its compute (GEMM, device
// copy) and one for its host link (both directions), each listing every probe found slow.
void judge_gpus(const DoctorValues& v, std::vector<DoctorFinding>& findings) {
  struct Probe {
    const char* kind;   // "gemm_bf16"
    const char* label;  // "bf16 GEMM"
    const char* unit;
    double scale;  // the file's unit to the text's (GFLOP/s to TFLOP/s)
    double DoctorGpu::*field;
    double DoctorGpu::*peak;
    bool host_link;
  };
  const Probe probes[] = {
      {"gemm_bf16", "bf16 GEMM", "TFLOP/s", 1e-3, &DoctorGpu::gemm_bf16_gflops, &DoctorGpu::gemm_bf16_peak_gflops,
       false},
      {"gemm_fp32", "fp32 GEMM", "TFLOP/s", 1e-3, &DoctorGpu::gemm_fp32_gflops, &DoctorGpu::gemm_fp32_peak_gflops,
       false},
      {"d2d", "device copy", "GB/s", 1, &DoctorGpu::d2d_GBps, &DoctorGpu::d2d_peak_GBps, false},
      {"h2d", "host to device", "GB/s", 1, &DoctorGpu::h2d_GBps, &DoctorGpu::host_link_GBps, true},
      {"d2h", "device to host", "GB/s", 1, &DoctorGpu::d2h_GBps, &DoctorGpu::host_link_GBps, true},
  };
  std::map<std::string, std::size_t> node_of;
  std::vector<std::string> hosts;
  std::vector<std::size_t> node(v.gpus.size());
  for (std::size_t i = 0; i < v.gpus.size(); ++i) {
    auto [it, fresh] = node_of.emplace(v.gpus[i].host, hosts.size());
    if (fresh) hosts.push_back(v.gpus[i].host);
    node[i] = it->second;
  }
  // Per GPU, the slow probes' words: [0] compute, [1] host link.
  std::vector<std::array<std::vector<std::string>, 2>> slow(v.gpus.size());
  std::vector<std::array<std::pair<double, double>, 2>> first(v.gpus.size());  // value, median of the first
  std::vector<std::array<std::string, 2>> first_unit(v.gpus.size());
  for (const Probe& pr : probes) {
    std::vector<double> all(v.gpus.size());
    std::vector<std::vector<double>> by_node(hosts.size());
    for (std::size_t i = 0; i < v.gpus.size(); ++i) {
      all[i] = v.gpus[i].*pr.field * pr.scale;
      by_node[node[i]].push_back(all[i]);
    }
    std::vector<double> score(hosts.size());
    for (std::size_t h = 0; h < hosts.size(); ++h) score[h] = finite_median(by_node[h]);
    std::set<std::size_t> named;
    for (const Outlier& o : outliers(score, Worse::low)) {
      const std::size_t h = o.index;
      named.insert(h);
      findings.push_back({std::string(pr.kind) + " gpu node", hosts[h], score[h], o.peers_median, pr.unit,
                          std::string(pr.host_link ? "slow GPU host links on node: " : "slow GPU node: ") + hosts[h] +
                              ": " + pr.label + " " + num(score[h]) + " " + pr.unit + " (the median of its GPUs), " +
                              against(score[h], o.peers_median, Worse::low, pr.unit) + " over the other nodes"});
    }
    for (const Outlier& o : outliers(all, Worse::low)) {
      const std::size_t i = o.index;
      if (named.count(node[i])) continue;  // said of its node already
      const DoctorGpu& g = v.gpus[i];
      const int part = pr.host_link ? 1 : 0;
      if (slow[i][part].empty()) first[i][part] = {all[i], o.peers_median}, first_unit[i][part] = pr.unit;
      slow[i][part].push_back(std::string(pr.label) + " " + num(all[i]) + " " + pr.unit +
                              of_peak(all[i] / pr.scale, g.*pr.peak, pr.scale, pr.unit,
                                      pr.host_link ? "its link's" : "its peak", pr.host_link ? g.host_link : "") +
                              ", " + against(all[i], o.peers_median, Worse::low, pr.unit) + " over the other GPUs");
    }
  }
  for (int part = 0; part < 2; ++part)
    for (std::size_t i = 0; i < v.gpus.size(); ++i) {
      if (slow[i][part].empty()) continue;
      std::string text =
          std::string(part ? "slow GPU host link: " : "slow GPU: ") + gpu_name(v.gpus[i]) + ": " + slow[i][part][0];
      for (std::size_t k = 1; k < slow[i][part].size(); ++k) text += "\n  " + slow[i][part][k];
      findings.push_back({part ? "gpu host link" : "gpu", gpu_name(v.gpus[i]), first[i][part].first,
                          first[i][part].second, first_unit[i][part], text});
    }
}

// A node's GPU pairs, each unordered pair by the worse direction of its one-way copies and the
// worse of its both-ways figures.
struct PeerPair {
  std::int64_t a = 0, b = 0;
  double oneway = kNaN, bidir = kNaN;
};
std::map<std::string, std::vector<PeerPair>> peer_pairs(const DoctorValues& v, std::vector<std::string>& hosts) {
  std::map<std::string, std::map<std::pair<std::int64_t, std::int64_t>, PeerPair>> by;
  auto worse = [](double x, double y) { return std::isfinite(x) && (!std::isfinite(y) || x < y) ? x : y; };
  for (const DoctorPeer& p : v.peers) {
    if (!by.count(p.host)) hosts.push_back(p.host);
    PeerPair& pp = by[p.host][{std::min(p.src, p.dst), std::max(p.src, p.dst)}];
    pp.a = std::min(p.src, p.dst), pp.b = std::max(p.src, p.dst);
    pp.oneway = worse(p.oneway_GBps, pp.oneway);
    pp.bidir = worse(p.bidir_GBps, pp.bidir);
  }
  std::map<std::string, std::vector<PeerPair>> out;
  for (const auto& [host, pairs] : by)
    for (const auto& [at, pp] : pairs) out[host].push_back(pp);
  return out;
}

// Peer links: per node (the median of its pairs one way, over the nodes), then each pair one way
// among its node's pairs, its both-ways figure with it; a pair slow only both ways at once apart.
void judge_peers(const DoctorValues& v, std::vector<DoctorFinding>& findings) {
  std::vector<std::string> hosts;
  const std::map<std::string, std::vector<PeerPair>> pairs = peer_pairs(v, hosts);
  std::vector<double> score;
  for (const std::string& h : hosts) {
    std::vector<double> x;
    for (const PeerPair& p : pairs.at(h)) x.push_back(p.oneway);
    score.push_back(finite_median(x));
  }
  std::set<std::string> named;
  for (const Outlier& o : outliers(score, Worse::low)) {
    const std::size_t h = o.index;
    named.insert(hosts[h]);
    findings.push_back({"peer node", hosts[h], score[h], o.peers_median, "GB/s",
                        "slow peer links on node: " + hosts[h] + ": median " + num(score[h]) +
                            " GB/s one way between its GPUs, " + against(score[h], o.peers_median, Worse::low, "GB/s") +
                            " over the other nodes"});
  }
  for (const std::string& h : hosts) {
    if (named.count(h)) continue;
    const std::vector<PeerPair>& ps = pairs.at(h);
    std::vector<double> oneway, bidir;
    for (const PeerPair& p : ps) oneway.push_back(p.oneway), bidir.push_back(p.bidir);
    std::map<std::size_t, double> both;  // pair, its peers' median both ways
    for (const Outlier& o : outliers(bidir, Worse::low)) both[o.index] = o.peers_median;
    auto subject = [&](const PeerPair& p) {
      return h + " GPU " + std::to_string(p.a) + " <-> GPU " + std::to_string(p.b);
    };
    std::set<std::size_t> said;
    for (const Outlier& o : outliers(oneway, Worse::low)) {
      const std::size_t i = o.index;
      said.insert(i);
      std::string text = "slow peer link: " + subject(ps[i]) + ": " + num(oneway[i]) + " GB/s one way, " +
                         against(oneway[i], o.peers_median, Worse::low, "GB/s") + " over " + h + "'s other GPU pairs";
      if (both.count(i))
        text += "\n  both ways at once: " + num(bidir[i]) + " GB/s, " + against(bidir[i], both[i], Worse::low, "GB/s");
      findings.push_back({"peer link", subject(ps[i]), oneway[i], o.peers_median, "GB/s", text});
    }
    for (const auto& [i, bm] : both)
      if (!said.count(i))
        findings.push_back({"peer link both ways", subject(ps[i]), bidir[i], bm, "GB/s",
                            "slow peer link both ways: " + subject(ps[i]) + ": " + num(bidir[i]) +
                                " GB/s both ways at once, " + against(bidir[i], bm, Worse::low, "GB/s") + " over " + h +
                                "'s other GPU pairs (" + num(oneway[i]) + " GB/s one way)"});
  }
}

// The most unordered GPU pairs on one node (the peer links are judged per node).
std::size_t most_peer_pairs(const DoctorValues& v) {
  std::vector<std::string> hosts;
  std::size_t most = 0;
  for (const auto& [host, pairs] : peer_pairs(v, hosts)) most = std::max(most, pairs.size());
  return most;
}

// The rule names an odd one among 3 or more values of a kind; with fewer it cannot judge.
void count_judged(const DoctorValues& v, DoctorFindings& f) {
  std::set<std::pair<std::int64_t, std::int64_t>> links;  // a link, both directions, every pass
  for (const DoctorValues::Pair& pr : v.pairs) links.insert({std::min(pr.src, pr.dst), std::max(pr.src, pr.dst)});
  for (const auto& [kind, n] : {std::pair<const char*, std::size_t>{"links", links.size()},
                                {"ranks' probes", v.ranks.size()},
                                {"nodes' allreduce", v.nodes.size()},
                                {"GPUs", v.gpus.size()},
                                {"GPU pairs of a node", most_peer_pairs(v)}}) {
    if (n == 0) continue;
    if (n >= kOutlierMinValues) {
      ++f.judged_kinds;
      continue;
    }
    f.unjudged += (f.unjudged.empty() ? "" : ", ") + std::string(kind) + " (" + std::to_string(n) + ")";
  }
}

}  // namespace

DoctorFindings find_doctor_outliers(const DoctorValues& v) {
  DoctorFindings f;
  const std::size_t p = v.host_of.size();
  std::map<std::string, std::size_t> host_index;
  f.node.resize(p);
  for (std::size_t r = 0; r < p; ++r) {
    auto [it, fresh] = host_index.emplace(v.host_of[r], f.hosts.size());
    if (fresh) f.hosts.push_back(v.host_of[r]);
    f.node[r] = it->second;
  }
  const std::size_t nh = f.hosts.size();
  f.ranks_on.assign(nh, 0);
  for (std::size_t r = 0; r < p; ++r) ++f.ranks_on[f.node[r]];

  f.bandwidth = {"bandwidth", "GB/s", true, {}, {}, false};
  f.latency = {"latency", "us", false, {}, {}, false};
  rank_matrices(v, f.bandwidth.ranks, f.latency.ranks);
  for (DoctorLinks* m : {&f.bandwidth, &f.latency}) {
    host_matrix(*m, f.node, nh);
    if (m->measured && (m->low_is_bad || v.judge_latency)) judge_links(*m, f.hosts, f.findings);
  }
  std::set<std::size_t> slow_nodes;
  if (!v.ranks.empty() && v.judge_probes) judge_probes(v, f, slow_nodes, f.findings);
  std::vector<double> busbw;
  for (const DoctorValues::Node& n : v.nodes) busbw.push_back(n.busbw_GBps);
  for (const Outlier& o : outliers(busbw, Worse::low))
    f.findings.push_back({"allreduce node", v.nodes[o.index].host, busbw[o.index], o.peers_median, "GB/s",
                          "slow node allreduce: " + v.nodes[o.index].host + ": busbw " + num(busbw[o.index]) +
                              " GB/s, " + against(busbw[o.index], o.peers_median, Worse::low, "GB/s") +
                              " over the other nodes"});
  if (!v.gpus.empty()) judge_gpus(v, f.findings);
  if (!v.peers.empty()) judge_peers(v, f.findings);
  // A host whose links are slow and that is slow to compute too.
  for (DoctorFinding& finding : f.findings) {
    const auto it = host_index.find(finding.subject);
    if (finding.kind == "bandwidth host" && it != host_index.end() && slow_nodes.count(it->second))
      finding.text +=
          "\n  (" + finding.subject + " is also slow to compute: a busy or throttled CPU slows its links too)";
  }
  count_judged(v, f);
  return f;
}

}  // namespace commscope::analysis
