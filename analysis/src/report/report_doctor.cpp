// commscope-report doctor: the pair matrices of a commscope-doctor file (as tables per host and as
// heatmaps per rank, grouped by node), the probes and each node's allreduce, and the findings of
// find_doctor_outliers (doctor_findings.hpp: the rule and how links are judged), printed.

#include <algorithm>
#include <cctype>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "commscope/analysis/doctor_findings.hpp"
#include "commscope/analysis/inputs.hpp"
#include "commscope/analysis/outliers.hpp"
#include "commscope/model/format.hpp"
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

// The file's rows as the rule's values: every rank's host from its pair rows, then its probe row.
DoctorValues values_of(const DoctorFile& d) {
  DoctorValues v;
  v.host_of.assign(static_cast<std::size_t>(d.nranks), "?");
  for (const DoctorPair& r : d.pairs) {
    v.host_of[static_cast<std::size_t>(r.src)] = r.src_host;
    v.host_of[static_cast<std::size_t>(r.dst)] = r.dst_host;
    v.pairs.push_back({r.src, r.dst, r.bandwidth_GBps, r.latency_us});
  }
  for (const DoctorRank& r : d.ranks) {
    v.host_of[static_cast<std::size_t>(r.rank)] = r.host;
    v.ranks.push_back({r.rank, r.sgemm_gflops, r.memcpy_GBps});
  }
  for (const DoctorNode& n : d.nodes) v.nodes.push_back({n.host, n.busbw_GBps});
  for (const DoctorGpu& g : d.gpus) v.host_of[static_cast<std::size_t>(g.rank)] = g.host;
  v.gpus = d.gpus;
  v.peers = d.peers;
  v.judge_latency = d.meta_value("oversubscribed").empty();
  v.judge_probes = d.meta_value("probes_shared").empty();
  return v;
}

// One metric's host table (up to 32 hosts) and rank heatmap, ranks ordered by host.
void print_links(ReportWriter& w, const DoctorLinks& m, const DoctorFindings& f,
                 const std::vector<std::string>& host_of) {
  const std::size_t nh = f.hosts.size(), p = f.node.size();
  if (nh <= 32) {
    w.section(std::string("Host links: ") + m.name + " (" + m.unit + ", median over rank pairs, the worse direction)");
    std::vector<std::string> headers{"host"};
    for (const auto& h : f.hosts) headers.push_back(h);
    Table t(headers);
    for (std::size_t a = 0; a < nh; ++a) {
      std::vector<std::string> cells{f.hosts[a]};
      for (std::size_t b = 0; b < nh; ++b) cells.push_back(num(m.hosts[a][b]));
      t.add(cells);
    }
    w.text("The diagonal is between ranks of one host (\"-\": one rank there).");
    w.table(std::string("host_") + m.name, t);
  }
  std::vector<std::size_t> order(p);
  for (std::size_t r = 0; r < p; ++r) order[r] = r;
  std::stable_sort(order.begin(), order.end(), [&](std::size_t x, std::size_t y) { return f.node[x] < f.node[y]; });
  Heatmap hm;
  hm.title = std::string("Point-to-point ") + m.name + " (" + m.unit + "), row sends to column";
  hm.xlabel = "to rank";
  hm.ylabel = "from rank";
  hm.cblabel = std::string(m.name) + " (" + m.unit + ")";
  hm.low_is_bad = m.low_is_bad;
  hm.from_zero = true;  // colours in proportion: a few percent apart look alike
  const auto [lo, hi] = finite_range(m.ranks);
  hm.title += "; colours from 0, values " + num(lo) + " to " + num(hi);
  for (std::size_t i = 0; i < p; ++i) {
    hm.labels.push_back(host_of[order[i]] + ":" + std::to_string(order[i]));
    if (i > 0 && f.node[order[i]] != f.node[order[i - 1]]) hm.groups.push_back(i);
    std::vector<double> row;
    for (std::size_t j = 0; j < p; ++j) row.push_back(m.ranks[order[i]][order[j]]);
    hm.values.push_back(row);
  }
  w.plot(std::string("pairs_") + m.name, hm);
}

// "0.71" of a peak, "-" where either is not known.
std::string share(double value, double peak) {
  return std::isfinite(value) && peak > 0 ? format_number(value / peak, 2) : std::string("-");
}

// The GPUs' rates and what each is of its peak, and each node's peer copies as a matrix.
void print_gpus(ReportWriter& w, const DoctorFile& d) {
  w.section(
      "GPUs (per rank and device, with its PCI bus id; each rate against its peak: the architecture's GEMM rate x SMs "
      "x "
      "clock, bus width x memory clock, the host link's PCIe rate)");
  Table t({"host", "rank", "GPU", "bf16 GEMM TFLOP/s", "of peak", "fp32 GEMM TFLOP/s", "of peak", "device copy GB/s",
           "of peak", "host to device GB/s", "device to host GB/s", "of link", "link"});
  for (const DoctorGpu& g : d.gpus)
    t.add({g.host, std::to_string(g.rank), std::to_string(g.device) + (g.bus_id.empty() ? "" : " " + g.bus_id),
           num(g.gemm_bf16_gflops / 1e3), share(g.gemm_bf16_gflops, g.gemm_bf16_peak_gflops),
           num(g.gemm_fp32_gflops / 1e3), share(g.gemm_fp32_gflops, g.gemm_fp32_peak_gflops), num(g.d2d_GBps),
           share(g.d2d_GBps, g.d2d_peak_GBps), num(g.h2d_GBps), num(g.d2h_GBps),
           share(std::min(g.h2d_GBps, g.d2h_GBps), g.host_link_GBps),
           g.host_link.empty() ? std::string("-") : g.host_link});
  if (d.gpus.size() <= 128) w.table("gpus", t);
  std::vector<std::string> hosts;
  for (const DoctorPeer& p : d.peers)
    if (std::find(hosts.begin(), hosts.end(), p.host) == hosts.end()) hosts.push_back(p.host);
  for (const std::string& h : hosts) {
    std::int64_t n = 0;
    for (const DoctorPeer& p : d.peers)
      if (p.host == h) n = std::max({n, p.src + 1, p.dst + 1});
    if (n > 16) continue;
    std::vector<std::vector<std::string>> oneway(static_cast<std::size_t>(n), std::vector<std::string>(n, "-"));
    auto bidir = oneway;
    for (const DoctorPeer& p : d.peers)
      if (p.host == h) {
        oneway[static_cast<std::size_t>(p.src)][static_cast<std::size_t>(p.dst)] = num(p.oneway_GBps);
        bidir[static_cast<std::size_t>(p.src)][static_cast<std::size_t>(p.dst)] = num(p.bidir_GBps);
      }
    for (const auto& [what, m] :
         {std::pair<const char*, const std::vector<std::vector<std::string>>*>{"one way", &oneway},
          {"both ways at once", &bidir}}) {
      w.section("Peer copies on " + h + ": " + what + " (GB/s, row GPU to column GPU)");
      std::vector<std::string> headers{"GPU"};
      for (std::int64_t j = 0; j < n; ++j) headers.push_back(std::to_string(j));
      Table pt(headers);
      for (std::int64_t i = 0; i < n; ++i) {
        std::vector<std::string> cells{std::to_string(i)};
        for (const std::string& c : (*m)[static_cast<std::size_t>(i)]) cells.push_back(c);
        pt.add(cells);
      }
      std::string file_host = h;
      for (char& c : file_host)
        if (!std::isalnum(static_cast<unsigned char>(c)) && c != '-' && c != '.') c = '_';
      w.table(std::string("peers_") + (what[0] == 'o' ? "oneway_" : "bidir_") + file_host, pt);
    }
  }
}

// The rule in words, and the findings (or why there are none).
void print_findings(ReportWriter& w, const DoctorFindings& f, const std::string& oversubscribed,
                    const std::string& probes_shared, bool gpus, const ReportOptions& options) {
  w.section("Findings");
  w.text("Rule: a link, node or rank is named when the logarithm of its value lies more than " +
         format_number(kOutlierSigmas, 2) +
         " robust standard deviations (1.4826 x the median absolute deviation of the logarithms, at least ln " +
         format_number(kOutlierFloorRatio, 2) + ") on the bad side of the median of its peers: at least " +
         format_number(std::pow(kOutlierFloorRatio, kOutlierSigmas), 3) +
         "x from it. Hosts are judged first, each by the median of its links against the links between the other "
         "hosts, then single links; a pair measured in "
         "several passes counts by its best pass (interference only slows a measurement)." +
         (gpus ? std::string(" GPUs are judged per node (the median of its GPUs), then each over all GPUs; peer "
                             "links per node, then each pair (its worse direction) among its node's pairs.")
               : std::string()) +
         (oversubscribed.empty() ? std::string()
                                 : " Latency is not judged: ranks outnumber CPUs (" + oversubscribed + ").") +
         (probes_shared.empty() ? std::string() : " Probes are not judged: other work shared their CPUs.") +
         (f.unjudged.empty() ? std::string()
                             : " Not judged, fewer than " + std::to_string(kOutlierMinValues) +
                                   " values to tell an odd one from its peers: " + f.unjudged + "."));
  if (f.findings.empty()) {
    w.text(f.judged_kinds == 0 ? "cannot judge: no kind of value has the " + std::to_string(kOutlierMinValues) +
                                     " or more the rule needs (run on 3 or more ranks, or hosts for the hosts' links)."
                               : "no outlier: every link, node and rank judged is within the rule.");
    return;
  }
  for (const DoctorFinding& finding : f.findings) w.text(finding.text);
  Table t({"kind", "subject", "value", "unit", "median of peers"});
  for (const DoctorFinding& finding : f.findings)
    t.add({finding.kind, finding.subject, num(finding.value), finding.unit, num(finding.median)});
  if (options.out_dir) w.table("findings", t);
}

}  // namespace

void report_doctor(const std::string& file, const ReportOptions& options) {
  preflight(file, "doctor");
  const DoctorFile d = read_doctor_file(file);
  const DoctorValues values = values_of(d);
  const DoctorFindings f = find_doctor_outliers(values);
  const std::size_t nh = f.hosts.size();

  ReportWriter w(options, "commscope doctor report: " + file);
  std::string layout;
  for (std::size_t h = 0; h < nh && h < 16; ++h)
    layout += (h ? ", " : "") + f.hosts[h] + ":" + std::to_string(f.ranks_on[h]);
  if (nh > 16) layout += ", ...";
  const std::string status = d.meta_value("status");
  // Files before pairs_buffers measured from host buffers over MPI, as a --device cpu run does.
  const std::string buffers = d.meta_value("pairs_buffers");
  w.text(std::to_string(d.nranks) + " ranks on " + std::to_string(nh) + " hosts (" + layout + "). Pairs from " +
         (buffers.empty() ? std::string("host buffers, MPI") : buffers) +
         ". Bandwidth: " + format_bytes(std::strtod(d.meta_value("bandwidth_bytes").c_str(), nullptr)) + " in " +
         d.meta_value("window") + " messages; latency: half an 8 B round trip; " + d.meta_value("passes") +
         " passes over the pairs; probes " + d.meta_value("probes") + ". Run " +
         (status.empty() ? "cut short (no status: the doctor was killed)" : status) + ".");
  if (d.pairs.empty() && d.ranks.empty() && d.nodes.empty() && d.gpus.empty() && d.peers.empty())
    throw InputError(file + ": the doctor file holds no rows");

  // Ranks outnumbering their machine's CPUs wait for one: latency is then the scheduler's.
  const std::string oversubscribed = d.meta_value("oversubscribed");
  // Probes that shared their CPUs with other work measured a share of a CPU, not the node.
  const std::string probes_shared = d.meta_value("probes_shared");
  for (const DoctorLinks* m : {&f.bandwidth, &f.latency}) {
    if (!m->measured) continue;
    print_links(w, *m, f, values.host_of);
    if (!m->low_is_bad && !oversubscribed.empty())
      w.text(std::string("Not judged: ranks outnumber CPUs (") + oversubscribed +
             "), and a rank waiting for a CPU adds a time slice to its round trips.");
  }
  if (!d.ranks.empty()) {
    w.section("Compute and memory probes (per rank, " + d.meta_value("probes") + ")");
    Table t({"rank", "host", "sgemm GFLOP/s", "memcpy GB/s"});
    for (const DoctorRank& r : d.ranks)
      t.add({std::to_string(r.rank), r.host, num(r.sgemm_gflops), num(r.memcpy_GBps)});
    if (d.ranks.size() <= 64) w.table("ranks", t);
    if (!probes_shared.empty())
      w.text("Not judged: other work shared the probing CPUs in every window (" + probes_shared +
             "), and a rate there is a share of a CPU.");
  }
  if (!d.nodes.empty()) {
    w.section("Allreduce inside each node (" + d.meta_value("node_allreduce_algo") + ", the nodes at once)");
    Table t({"host", "ranks", "size", "time us", "busbw GB/s"});
    t.bytes_column(2);  // size_bytes in the CSV
    for (const DoctorNode& n : d.nodes)
      t.add({n.host, std::to_string(n.ranks), bytes_cell(static_cast<double>(n.bytes)), num(n.allreduce_us),
             num(n.busbw_GBps)});
    w.table("nodes", t);
  }
  if (!d.gpus.empty() || !d.peers.empty()) print_gpus(w, d);
  print_findings(w, f, oversubscribed, probes_shared, !d.gpus.empty() || !d.peers.empty(), options);
  w.finish();
}

}  // namespace commscope::analysis
