// commscope-report doctor: the pair matrices of a commscope-doctor file (as tables per host and as
// heatmaps per rank, grouped by node), the probes and each node's allreduce, and the findings: the
// hosts whose links are slow, the single slow links, the slow nodes and ranks, each named by the
// robust rule of outliers.hpp against the median of its peers.
//
// How links are judged. Every rank pair is measured in both directions; a host pair's value is
// the median over its rank pairs of each direction, and the worse direction counts (a link slow one
// way is a bad link). Links between hosts and links inside a host are judged apart (shared
// memory is no peer of a network). A host whose links are all slow makes every link it is on an
// outlier, and when a quarter or more of the hosts are on the bad side the links alone cannot say
// which: so hosts are judged first, each by the median of its links against the links between the
// other hosts (not against the other hosts' medians: with 3 hosts a good host's median is half
// made of the bad host's links), and a host named slow takes its links with it; the links left
// are then judged among themselves.

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "commscope/analysis/format.hpp"
#include "commscope/analysis/inputs.hpp"
#include "commscope/analysis/outliers.hpp"
#include "report_writer.hpp"

namespace commscope::analysis {

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

std::string num(double v) {
  return std::isfinite(v) ? format_number(v, 3) : std::string("-");
}

// The smallest and the largest finite value of a matrix (NaN, NaN where none is).
std::pair<double, double> finite_range(const std::vector<std::vector<double>>& m) {
  double lo = kNaN, hi = kNaN;
  for (const auto& row : m)
    for (double v : row)
      if (std::isfinite(v)) lo = std::isnan(lo) ? v : std::min(lo, v), hi = std::isnan(hi) ? v : std::max(hi, v);
  return {lo, hi};
}

// "9.2x below the median of 1.02 GB/s"
std::string against(double value, double median, Worse worse, const std::string& unit) {
  const double ratio = worse == Worse::low ? median / value : value / median;
  return format_number(ratio, 2) + "x " + (worse == Worse::low ? "below" : "above") + " the median of " + num(median) +
         " " + unit;
}

struct Finding {
  std::string kind, subject;
  double value = 0, median = 0;
  std::string unit, text;
};

// One metric judged over host links: values[a][b] for hosts a, b (a == b: inside host a).
struct LinkMetric {
  const char* name;  // "bandwidth", "latency"
  const char* unit;
  Worse worse;
};

// Host a's links to the other hosts, and the links between the other hosts (a's peers, whose
// median stands for a good link however many of a's links are bad): link[x][y] for hosts x != y.
std::pair<std::vector<double>, std::vector<double>> host_links(const std::vector<std::vector<double>>& link,
                                                               std::size_t a) {
  std::pair<std::vector<double>, std::vector<double>> out;
  for (std::size_t x = 0; x < link.size(); ++x)
    for (std::size_t y = x + 1; y < link.size(); ++y) (x == a || y == a ? out.first : out.second).push_back(link[x][y]);
  return out;
}

}  // namespace

void report_doctor(const std::string& file, const ReportOptions& options) {
  preflight(file, "doctor");
  const DoctorFile d = read_doctor_file(file);
  const auto p = static_cast<std::size_t>(d.nranks);

  // Every rank's host; hosts numbered in the order their first rank appears.
  std::vector<std::string> host_of(p, "?");
  for (const DoctorPair& r : d.pairs) {
    host_of[static_cast<std::size_t>(r.src)] = r.src_host;
    host_of[static_cast<std::size_t>(r.dst)] = r.dst_host;
  }
  for (const DoctorRank& r : d.ranks) host_of[static_cast<std::size_t>(r.rank)] = r.host;
  std::vector<std::string> hosts;
  std::map<std::string, std::size_t> host_index;
  std::vector<std::size_t> node(p);
  for (std::size_t r = 0; r < p; ++r) {
    auto [it, fresh] = host_index.emplace(host_of[r], hosts.size());
    if (fresh) hosts.push_back(host_of[r]);
    node[r] = it->second;
  }
  const std::size_t nh = hosts.size();
  std::vector<std::size_t> per_host(nh, 0);
  for (std::size_t r = 0; r < p; ++r) ++per_host[node[r]];

  ReportWriter w(options, "commscope doctor report: " + file);
  std::string layout;
  for (std::size_t h = 0; h < nh && h < 16; ++h)
    layout += (h ? ", " : "") + hosts[h] + ":" + std::to_string(per_host[h]);
  if (nh > 16) layout += ", ...";
  const std::string status = d.meta_value("status");
  w.text(std::to_string(p) + " ranks on " + std::to_string(nh) + " hosts (" + layout +
         "). Bandwidth: " + format_bytes(std::strtod(d.meta_value("bandwidth_bytes").c_str(), nullptr)) + " in " +
         d.meta_value("window") + " messages; latency: half an 8 B round trip; " + d.meta_value("passes") +
         " passes over the pairs; probes " + d.meta_value("probes") + ". Run " +
         (status.empty() ? "cut short (no status: the doctor was killed)" : status) + ".");
  if (d.pairs.empty() && d.ranks.empty() && d.nodes.empty()) throw InputError(file + ": the doctor file holds no rows");

  // --- pairs: rank matrices and host matrices (median per direction, the worse direction)
  // A rank pair measured in several passes counts by its best pass: interference (other work,
  // a busy switch) only ever slows a measurement down.
  std::vector<std::vector<double>> bw(p, std::vector<double>(p, kNaN)), lat = bw;
  {
    std::map<std::pair<std::int64_t, std::int64_t>, std::pair<std::vector<double>, std::vector<double>>> passes;
    for (const DoctorPair& r : d.pairs) {
      auto& [b, l] = passes[{r.src, r.dst}];
      b.push_back(r.bandwidth_GBps);
      l.push_back(r.latency_us);
    }
    auto best = [](const std::vector<double>& v, bool highest) {
      double b = kNaN;
      for (double x : v)
        if (std::isfinite(x) && (!std::isfinite(b) || (highest ? x > b : x < b))) b = x;
      return b;
    };
    for (const auto& [at, v] : passes) {
      bw[static_cast<std::size_t>(at.first)][static_cast<std::size_t>(at.second)] = best(v.first, true);
      lat[static_cast<std::size_t>(at.first)][static_cast<std::size_t>(at.second)] = best(v.second, false);
    }
  }
  const LinkMetric metrics[] = {{"bandwidth", "GB/s", Worse::low}, {"latency", "us", Worse::high}};
  // Ranks outnumbering their machine's CPUs wait for one: latency is then the scheduler's.
  const std::string oversubscribed = d.meta_value("oversubscribed");
  // Probes that shared their CPUs with other work measured a share of a CPU, not the node.
  const std::string probes_shared = d.meta_value("probes_shared");
  std::vector<Finding> findings;
  for (const LinkMetric& m : metrics) {
    const auto& ranks_m = m.worse == Worse::low ? bw : lat;
    // dir[a][b]: rank pairs from host a to host b.
    std::vector<std::vector<std::vector<double>>> dir(nh, std::vector<std::vector<double>>(nh));
    for (std::size_t s = 0; s < p; ++s)
      for (std::size_t t = 0; t < p; ++t)
        if (s != t && std::isfinite(ranks_m[s][t])) dir[node[s]][node[t]].push_back(ranks_m[s][t]);
    std::vector<std::vector<double>> link(nh, std::vector<double>(nh, kNaN));
    for (std::size_t a = 0; a < nh; ++a)
      for (std::size_t b = 0; b < nh; ++b) {
        const double ab = finite_median(dir[a][b]), ba = finite_median(dir[b][a]);
        if (!std::isfinite(ab) || !std::isfinite(ba)) {
          link[a][b] = std::isfinite(ab) ? ab : ba;
        } else {
          link[a][b] = m.worse == Worse::low ? std::min(ab, ba) : std::max(ab, ba);
        }
      }
    bool measured = false;
    for (const auto& row : link)
      for (double v : row) measured = measured || std::isfinite(v);
    if (!measured) continue;

    if (nh <= 32) {
      w.section(std::string("Host links: ") + m.name + " (" + m.unit +
                ", median over rank pairs, the worse direction)");
      std::vector<std::string> headers{"host"};
      for (const auto& h : hosts) headers.push_back(h);
      Table t(headers);
      for (std::size_t a = 0; a < nh; ++a) {
        std::vector<std::string> cells{hosts[a]};
        for (std::size_t b = 0; b < nh; ++b) cells.push_back(num(link[a][b]));
        t.add(cells);
      }
      w.text("The diagonal is between ranks of one host (\"-\": one rank there).");
      w.table(std::string("host_") + m.name, t);
    }
    // The rank matrix as a heatmap, ranks ordered by host.
    std::vector<std::size_t> order(p);
    for (std::size_t r = 0; r < p; ++r) order[r] = r;
    std::stable_sort(order.begin(), order.end(), [&](std::size_t x, std::size_t y) { return node[x] < node[y]; });
    Heatmap hm;
    hm.title = std::string("Point-to-point ") + m.name + " (" + m.unit + "), row sends to column";
    hm.xlabel = "to rank";
    hm.ylabel = "from rank";
    hm.cblabel = std::string(m.name) + " (" + m.unit + ")";
    hm.low_is_bad = m.worse == Worse::low;
    hm.from_zero = true;  // colours in proportion: a few percent apart look alike
    const auto [lo, hi] = finite_range(ranks_m);
    hm.title += "; colours from 0, values " + num(lo) + " to " + num(hi);
    for (std::size_t i = 0; i < p; ++i) {
      hm.labels.push_back(host_of[order[i]] + ":" + std::to_string(order[i]));
      if (i > 0 && node[order[i]] != node[order[i - 1]]) hm.groups.push_back(i);
      std::vector<double> row;
      for (std::size_t j = 0; j < p; ++j) row.push_back(ranks_m[order[i]][order[j]]);
      hm.values.push_back(row);
    }
    w.plot(std::string("pairs_") + m.name, hm);
    if (m.worse == Worse::high && !oversubscribed.empty()) {
      w.text(std::string("Not judged: ranks outnumber CPUs (") + oversubscribed +
             "), and a rank waiting for a CPU adds a time slice to its round trips.");
      continue;
    }

    // Hosts first: each by the median of its links, against the links between the other hosts.
    std::vector<double> host_score(nh, kNaN), others_median(nh, kNaN);
    std::vector<std::size_t> bad;
    for (std::size_t a = 0; a < nh && nh >= kOutlierMinValues; ++a) {
      const std::pair<std::vector<double>, std::vector<double>> split = host_links(link, a);
      host_score[a] = finite_median(split.first);
      const RobustSpread others = robust_spread(split.second);
      others_median[a] = others.median;
      if (beyond(host_score[a], others, m.worse)) bad.push_back(a);
    }
    const std::set<std::size_t> bad_hosts(bad.begin(), bad.end());
    // Then the links between the other hosts, among themselves.
    std::vector<double> rest;
    std::vector<std::pair<std::size_t, std::size_t>> rest_at;
    for (std::size_t a = 0; a < nh; ++a)
      for (std::size_t b = a + 1; b < nh; ++b)
        if (!bad_hosts.count(a) && !bad_hosts.count(b)) rest.push_back(link[a][b]), rest_at.emplace_back(a, b);
    const double rest_median = finite_median(rest);
    for (std::size_t a : bad) {
      std::string text = std::string(m.worse == Worse::low ? "slow host links: " : "high-latency host links: ") +
                         hosts[a] + ": median " + num(host_score[a]) + " " + m.unit + ", " +
                         against(host_score[a], others_median[a], m.worse, m.unit) + " between the other hosts";
      for (std::size_t b = 0; b < nh; ++b) {
        if (b == a || !std::isfinite(link[a][b])) continue;
        text += "\n  link " + hosts[a] + " <-> " + hosts[b] + ": " + num(link[a][b]) + " " + m.unit;
        if (std::isfinite(rest_median))
          text += " (" + against(link[a][b], rest_median, m.worse, m.unit) + " between the other hosts)";
      }
      findings.push_back({std::string(m.name) + " host", hosts[a], host_score[a], others_median[a], m.unit, text});
    }
    for (std::size_t i : outliers(rest, m.worse)) {
      const auto [a, b] = rest_at[i];
      findings.push_back({std::string(m.name) + " link", hosts[a] + " <-> " + hosts[b], rest[i], rest_median, m.unit,
                          std::string(m.worse == Worse::low ? "slow link: " : "high-latency link: ") + hosts[a] +
                              " <-> " + hosts[b] + ": " + num(rest[i]) + " " + m.unit + ", " +
                              against(rest[i], rest_median, m.worse, m.unit)});
    }
    // Inside the hosts, among the hosts with two ranks or more.
    std::vector<double> intra(nh, kNaN);
    for (std::size_t a = 0; a < nh; ++a) intra[a] = link[a][a];
    const double intra_median = finite_median(intra);
    for (std::size_t a : outliers(intra, m.worse))
      findings.push_back(
          {std::string(m.name) + " inside node", hosts[a], intra[a], intra_median, m.unit,
           std::string(m.worse == Worse::low ? "slow links inside node: " : "high latency inside node: ") + hosts[a] +
               ": " + num(intra[a]) + " " + m.unit + " between its ranks, " +
               against(intra[a], intra_median, m.worse, m.unit) + " inside the other nodes"});
  }

  // --- probes: per node, then per rank
  std::set<std::size_t> slow_nodes;
  if (!d.ranks.empty()) {
    struct Probe {
      const char* name;
      const char* unit;
      double DoctorRank::*field;
    };
    const Probe probes[] = {{"sgemm", "GFLOP/s", &DoctorRank::sgemm_gflops},
                            {"memcpy", "GB/s", &DoctorRank::memcpy_GBps}};
    w.section("Compute and memory probes (per rank, " + d.meta_value("probes") + ")");
    Table t({"rank", "host", "sgemm GFLOP/s", "memcpy GB/s"});
    for (const DoctorRank& r : d.ranks)
      t.add({std::to_string(r.rank), r.host, num(r.sgemm_gflops), num(r.memcpy_GBps)});
    if (d.ranks.size() <= 64) w.table("ranks", t);
    if (!probes_shared.empty())
      w.text("Not judged: other work shared the probing CPUs in every window (" + probes_shared +
             "), and a rate there is a share of a CPU.");
    for (const Probe& pr : probes) {
      if (!probes_shared.empty()) break;
      std::vector<std::vector<double>> by_node(nh);
      std::vector<double> all(d.ranks.size());
      for (std::size_t i = 0; i < d.ranks.size(); ++i) {
        all[i] = d.ranks[i].*pr.field;
        by_node[node[static_cast<std::size_t>(d.ranks[i].rank)]].push_back(all[i]);
      }
      std::vector<double> score(nh);
      for (std::size_t h = 0; h < nh; ++h) score[h] = finite_median(by_node[h]);
      const double node_median = finite_median(score), rank_median = finite_median(all);
      std::set<std::size_t> named;
      for (std::size_t h : outliers(score, Worse::low)) {
        named.insert(h);
        slow_nodes.insert(h);
        findings.push_back({std::string(pr.name) + " node", hosts[h], score[h], node_median, pr.unit,
                            "slow node: " + hosts[h] + ": " + pr.name + " " + num(score[h]) + " " + pr.unit + ", " +
                                against(score[h], node_median, Worse::low, pr.unit) + " over the nodes"});
      }
      for (std::size_t i : outliers(all, Worse::low)) {
        const std::size_t r = static_cast<std::size_t>(d.ranks[i].rank);
        if (named.count(node[r])) continue;  // said of its node already
        findings.push_back({std::string(pr.name) + " rank", std::to_string(r), all[i], rank_median, pr.unit,
                            "slow rank: " + std::to_string(r) + " (" + host_of[r] + "): " + pr.name + " " +
                                num(all[i]) + " " + pr.unit + ", " + against(all[i], rank_median, Worse::low, pr.unit) +
                                " over the ranks"});
      }
    }
  }

  // --- each node's allreduce
  if (!d.nodes.empty()) {
    w.section("Allreduce inside each node (" + d.meta_value("node_allreduce_algo") + ", the nodes at once)");
    Table t({"host", "ranks", "size", "time us", "busbw GB/s"});
    t.bytes_column(2);  // size_bytes in the CSV
    std::vector<double> busbw;
    for (const DoctorNode& n : d.nodes) {
      t.add({n.host, std::to_string(n.ranks), bytes_cell(static_cast<double>(n.bytes)), num(n.allreduce_us),
             num(n.busbw_GBps)});
      busbw.push_back(n.busbw_GBps);
    }
    w.table("nodes", t);
    const double med = finite_median(busbw);
    for (std::size_t i : outliers(busbw, Worse::low))
      findings.push_back({"allreduce node", d.nodes[i].host, busbw[i], med, "GB/s",
                          "slow node allreduce: " + d.nodes[i].host + ": busbw " + num(busbw[i]) + " GB/s, " +
                              against(busbw[i], med, Worse::low, "GB/s") + " over the nodes"});
  }

  // --- findings
  // The rule names an odd one among 3 or more values of a kind; with fewer it cannot judge.
  std::string unjudged;
  int judged = 0;
  std::set<std::pair<std::int64_t, std::int64_t>> links;  // a link, both directions, every pass
  for (const DoctorPair& pr : d.pairs) links.insert({std::min(pr.src, pr.dst), std::max(pr.src, pr.dst)});
  for (const auto& [kind, n] : {std::pair<const char*, std::size_t>{"links", links.size()},
                                {"ranks' probes", d.ranks.size()},
                                {"nodes' allreduce", d.nodes.size()}}) {
    if (n == 0) continue;
    if (n >= kOutlierMinValues) {
      ++judged;
      continue;
    }
    unjudged += (unjudged.empty() ? "" : ", ") + std::string(kind) + " (" + std::to_string(n) + ")";
  }
  w.section("Findings");
  w.text("Rule: a link, node or rank is named when the logarithm of its value lies more than " +
         format_number(kOutlierSigmas, 2) +
         " robust standard deviations (1.4826 x the median absolute deviation of the logarithms, at least ln " +
         format_number(kOutlierFloorRatio, 2) + ") on the bad side of the median of its peers: at least " +
         format_number(std::pow(kOutlierFloorRatio, kOutlierSigmas), 3) +
         "x from it. Hosts are judged first, each by the median of its links against the links between the other "
         "hosts, then single links; a pair measured in "
         "several passes counts by its best pass (interference only slows a measurement)." +
         (oversubscribed.empty() ? std::string()
                                 : " Latency is not judged: ranks outnumber CPUs (" + oversubscribed + ").") +
         (probes_shared.empty() ? std::string() : " Probes are not judged: other work shared their CPUs.") +
         (unjudged.empty() ? std::string()
                           : " Not judged, fewer than " + std::to_string(kOutlierMinValues) +
                                 " values to tell an odd one from its peers: " + unjudged + "."));
  if (findings.empty()) {
    w.text(judged == 0 ? "cannot judge: no kind of value has the " + std::to_string(kOutlierMinValues) +
                             " or more the rule needs (run on 3 or more ranks, or hosts for the hosts' links)."
                       : "no outlier: every link, node and rank judged is within the rule.");
  } else {
    for (Finding& f : findings) {
      const auto it = host_index.find(f.subject);
      if (f.kind == "bandwidth host" && it != host_index.end() && slow_nodes.count(it->second))
        f.text += "\n  (" + f.subject + " is also slow to compute: a busy or throttled CPU slows its links too)";
      w.text(f.text);
    }
    Table t({"kind", "subject", "value", "unit", "median of peers"});
    for (const Finding& f : findings) t.add({f.kind, f.subject, num(f.value), f.unit, num(f.median)});
    if (options.out_dir) w.table("findings", t);
  }
  w.finish();
}

}  // namespace commscope::analysis
