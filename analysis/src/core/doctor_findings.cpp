#include "commscope/analysis/doctor_findings.hpp"

#include <algorithm>
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
  for (std::size_t i : outliers(rest, worse)) {
    const auto [a, b] = rest_at[i];
    findings.push_back({std::string(m.name) + " link", hosts[a] + " <-> " + hosts[b], rest[i], rest_median, m.unit,
                        std::string(low ? "slow link: " : "high-latency link: ") + hosts[a] + " <-> " + hosts[b] +
                            ": " + num(rest[i]) + " " + m.unit + ", " + against(rest[i], rest_median, worse, m.unit)});
  }
  std::vector<double> intra(nh, kNaN);
  for (std::size_t a = 0; a < nh; ++a) intra[a] = link[a][a];
  const double intra_median = finite_median(intra);
  for (std::size_t a : outliers(intra, worse))
    findings.push_back({std::string(m.name) + " inside node", hosts[a], intra[a], intra_median, m.unit,
                        std::string(low ? "slow links inside node: " : "high latency inside node: ") + hosts[a] + ": " +
                            num(intra[a]) + " " + m.unit + " between its ranks, " +
                            against(intra[a], intra_median, worse, m.unit) + " inside the other nodes"});
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
    const double node_median = finite_median(score), rank_median = finite_median(all);
    std::set<std::size_t> named;
    for (std::size_t h : outliers(score, Worse::low)) {
      named.insert(h);
      slow_nodes.insert(h);
      findings.push_back({std::string(pr.name) + " node", f.hosts[h], score[h], node_median, pr.unit,
                          "slow node: " + f.hosts[h] + ": " + pr.name + " " + num(score[h]) + " " + pr.unit + ", " +
                              against(score[h], node_median, Worse::low, pr.unit) + " over the nodes"});
    }
    for (std::size_t i : outliers(all, Worse::low)) {
      const std::size_t r = static_cast<std::size_t>(v.ranks[i].rank);
      if (named.count(f.node[r])) continue;  // said of its node already
      findings.push_back({std::string(pr.name) + " rank", std::to_string(r), all[i], rank_median, pr.unit,
                          "slow rank: " + std::to_string(r) + " (" + v.host_of[r] + "): " + pr.name + " " +
                              num(all[i]) + " " + pr.unit + ", " + against(all[i], rank_median, Worse::low, pr.unit) +
                              " over the ranks"});
    }
  }
}

// The rule names an odd one among 3 or more values of a kind; with fewer it cannot judge.
void count_judged(const DoctorValues& v, DoctorFindings& f) {
  std::set<std::pair<std::int64_t, std::int64_t>> links;  // a link, both directions, every pass
  for (const DoctorValues::Pair& pr : v.pairs) links.insert({std::min(pr.src, pr.dst), std::max(pr.src, pr.dst)});
  for (const auto& [kind, n] : {std::pair<const char*, std::size_t>{"links", links.size()},
                                {"ranks' probes", v.ranks.size()},
                                {"nodes' allreduce", v.nodes.size()}}) {
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
  const double med = finite_median(busbw);
  for (std::size_t i : outliers(busbw, Worse::low))
    f.findings.push_back({"allreduce node", v.nodes[i].host, busbw[i], med, "GB/s",
                          "slow node allreduce: " + v.nodes[i].host + ": busbw " + num(busbw[i]) + " GB/s, " +
                              against(busbw[i], med, Worse::low, "GB/s") + " over the nodes"});
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
