// Doctor files with known answers for commscope-report doctor's tests, written through the
// doctor's own writer: 6 hosts x 2 ranks (3 hosts where the name says so), every value spread by
// up to +-15% (+-1% on 3 hosts: the figures), a fixed pseudo-random sequence, and one
// fault per file:
//   clean.h5       none
//   slow_host.h5   every link of host3 at a tenth of the bandwidth
//   slow_link.h5   the link host2 <-> host5 at a tenth (both directions)
//   one_way.h5     host1 -> host4 only at a fifth
//   slow_node.h5   host4's ranks at a tenth of the sgemm rate
//   high_latency.h5  host6's links at 4x the latency
//   cut_short.h5   the run stopped after its first pass of pairs (no status, no probes)
//   oversubscribed.h5  host3's links at a tenth of the bandwidth and host6's at 4x the latency,
//                  the ranks marked as outnumbering their CPUs (latency not judged)
//   probes_shared.h5  host4's ranks at a tenth of the sgemm rate, the probes marked as sharing
//                  their CPUs with other work (probes not judged)
//   three_hosts_slow_host.h5  3 hosts, host1's links at half (links 5, 5 and 10: host1 named)
//   three_hosts_slow_link.h5  3 hosts, the link host2 <-> host3 at half (that link named)
//   one_host.h5    1 host of 2 ranks: 1 link, 2 ranks' probes, 1 node (nothing can be judged)
//   usage: test_analysis_synthetic_doctor DIR
#include <cstdio>
#include <filesystem>
#include <random>
#include <string>
#include <vector>

#include "commscope/formats/doctor_file.hpp"

namespace {

using commscope::formats::doctor::File;
using commscope::formats::doctor::NodeRow;
using commscope::formats::doctor::PairRow;
using commscope::formats::doctor::RankRow;

constexpr int kPerHost = 2;

std::string host(int rank) {
  return "host" + std::to_string(rank / kPerHost + 1);
}

struct Fault {
  std::string name;
  double (*bandwidth)(int src_host, int dst_host);  // factor
  double (*latency)(int a, int b);
  double (*sgemm)(int h);
  bool cut_short = false;
  bool oversubscribed = false;
  bool probes_shared = false;
  int hosts = 6;
  double spread = 0.15;
};

double one(int, int) {
  return 1;
}
double one_h(int) {
  return 1;
}

void write(const std::filesystem::path& dir, const Fault& f) {
  std::mt19937 rng(7);
  std::uniform_real_distribution<double> spread(1 - f.spread, 1 + f.spread);
  const int nranks = f.hosts * kPerHost;
  File file((dir / (f.name + ".h5")).string(), nranks, f.hosts);
  auto meta = file.meta();
  meta.set_attr("bandwidth_bytes", std::uint64_t{1} << 20);
  meta.set_attr("window", 8);
  meta.set_attr("passes", 2);
  meta.set_attr("probes", std::string("concurrent"));
  meta.set_attr("node_allreduce_algo", std::string("mpi"));
  if (f.oversubscribed)
    meta.set_attr("oversubscribed", std::string("hosts host1,...,host6 (one machine): 12 ranks on 4 CPUs"));
  if (f.probes_shared) meta.set_attr("probes_shared", std::string("rank 6 (host4): 3.1 runnable tasks on 2 CPUs"));
  for (int pass = 0; pass < (f.cut_short ? 1 : 2); ++pass) {
    std::vector<PairRow> rows;
    for (int s = 0; s < nranks; ++s)
      for (int d = 0; d < nranks; ++d) {
        if (s == d) continue;
        const int hs = s / kPerHost, hd = d / kPerHost;
        PairRow r;
        r.src = s, r.dst = d, r.pass = pass;
        commscope::h5::set_fixed(r.src_host, host(s));
        commscope::h5::set_fixed(r.dst_host, host(d));
        const bool inside = hs == hd;
        r.bandwidth_GBps = (inside ? 8.0 : 1.0) * spread(rng) * (inside ? 1 : f.bandwidth(hs + 1, hd + 1));
        r.latency_us = (inside ? 0.5 : 20.0) * spread(rng) * (inside ? 1 : f.latency(hs + 1, hd + 1));
        rows.push_back(r);
      }
    file.add(rows);
  }
  if (f.cut_short) return;  // closed without a status, as a killed run's signal handler leaves it
  std::vector<RankRow> ranks;
  for (int r = 0; r < nranks; ++r) {
    RankRow row;
    row.rank = r, row.node = r / kPerHost;
    commscope::h5::set_fixed(row.host, host(r));
    row.sgemm_gflops = 60 * spread(rng) * f.sgemm(r / kPerHost + 1);
    row.memcpy_GBps = 10 * spread(rng);
    ranks.push_back(row);
  }
  file.add(ranks);
  std::vector<NodeRow> nodes;
  for (int h = 0; h < f.hosts; ++h) {
    NodeRow n;
    n.node = h, n.ranks = kPerHost, n.bytes = 16 << 20;
    commscope::h5::set_fixed(n.host, "host" + std::to_string(h + 1));
    n.allreduce_us = 4000 * spread(rng);
    n.busbw_GBps = 4.2 / spread(rng);
    nodes.push_back(n);
  }
  file.add(nodes);
  file.finish("complete");
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: test_analysis_synthetic_doctor DIR\n");
    return 2;
  }
  const std::filesystem::path dir = argv[1];
  std::filesystem::create_directories(dir);
  const Fault faults[] = {
      {"clean", one, one, one_h},
      {"slow_host", [](int a, int b) { return a == 3 || b == 3 ? 0.1 : 1.0; }, one, one_h},
      {"slow_link", [](int a, int b) { return (a == 2 && b == 5) || (a == 5 && b == 2) ? 0.1 : 1.0; }, one, one_h},
      {"one_way", [](int a, int b) { return a == 1 && b == 4 ? 0.2 : 1.0; }, one, one_h},
      {"slow_node", one, one, [](int h) { return h == 4 ? 0.1 : 1.0; }},
      {"high_latency", one, [](int a, int b) { return a == 6 || b == 6 ? 4.0 : 1.0; }, one_h},
      {"cut_short", one, one, one_h, true},
      {"oversubscribed", [](int a, int b) { return a == 3 || b == 3 ? 0.1 : 1.0; },
       [](int a, int b) { return a == 6 || b == 6 ? 4.0 : 1.0; }, one_h, false, true},
      {"probes_shared", one, one, [](int h) { return h == 4 ? 0.1 : 1.0; }, false, false, true},
      {"three_hosts_slow_host", [](int a, int b) { return a == 1 || b == 1 ? 0.5 : 1.0; }, one, one_h, false, false,
       false, 3, 0.01},
      {"three_hosts_slow_link", [](int a, int b) { return a + b == 5 && a * b == 6 ? 0.5 : 1.0; }, one, one_h, false,
       false, false, 3, 0.01},
      {"one_host", one, one, one_h, false, false, false, 1},
  };
  for (const Fault& f : faults) write(dir, f);
  std::printf("wrote %zu doctor files to %s\n", std::size(faults), dir.string().c_str());
  return 0;
}
