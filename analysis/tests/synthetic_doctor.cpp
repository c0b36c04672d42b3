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
// and GPU runs (--device cuda): 2 hosts of 8 ranks, a GPU each (H100 SXM figures, their peaks
// from model/gpu_peaks.hpp), every value spread by up to +-1%:
//   gpu_clean.h5   none
//   gpu_faults.h5  host2's GPU 5 (rank 13) at half the GEMM rates (bf16 and fp32), and the peer
//                  link host1 GPU 2 <-> GPU 6 at a quarter (one way and both ways)
//   gpu_host_link.h5  host1's GPU 3 (rank 3) at half the host-to-device and device-to-host rates
//   usage: test_analysis_synthetic_doctor DIR
#include <cstdio>
#include <filesystem>
#include <random>
#include <string>
#include <vector>

#include "commscope/formats/doctor_file.hpp"
#include "commscope/model/gpu_peaks.hpp"

namespace {

using commscope::formats::doctor::File;
using commscope::formats::doctor::GpuRow;
using commscope::formats::doctor::NodeRow;
using commscope::formats::doctor::PairRow;
using commscope::formats::doctor::PeerRow;
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

struct GpuFault {
  std::string name;
  int gemm_rank = -1;                            // this rank's GPU at half the GEMM rates
  int link_rank = -1;                            // and this one's host link at half
  int peer_host = -1, peer_a = -1, peer_b = -1;  // this pair of GPUs at a quarter
};

void write_gpus(const std::filesystem::path& dir, const GpuFault& f) {
  constexpr int kHosts = 2, kGpus = 8, nranks = kHosts * kGpus;
  std::mt19937 rng(11);
  std::uniform_real_distribution<double> spread(0.99, 1.01);
  auto gpu_host = [](int h) { return "host" + std::to_string(h + 1); };
  File file((dir / (f.name + ".h5")).string(), nranks, kHosts);
  auto meta = file.meta();
  meta.set_attr("bandwidth_bytes", std::uint64_t{1} << 20);
  meta.set_attr("window", 8);
  meta.set_attr("passes", 1);
  meta.set_attr("probes", std::string("concurrent"));
  meta.set_attr("device", std::string("cuda"));
  std::vector<PairRow> rows;
  for (int s = 0; s < nranks; ++s)
    for (int d = 0; d < nranks; ++d) {
      if (s == d) continue;
      PairRow r;
      r.src = s, r.dst = d;
      commscope::h5::set_fixed(r.src_host, gpu_host(s / kGpus));
      commscope::h5::set_fixed(r.dst_host, gpu_host(d / kGpus));
      const bool inside = s / kGpus == d / kGpus;
      r.bandwidth_GBps = (inside ? 150.0 : 45.0) * spread(rng);
      r.latency_us = (inside ? 2.0 : 4.5) * spread(rng);
      rows.push_back(r);
    }
  file.add(rows);
  using commscope::model::GemmType;
  const double bf16_peak = commscope::model::gemm_peak_flops(9, 0, 132, 1980, GemmType::bf16) / 1e9;
  const double fp32_peak = commscope::model::gemm_peak_flops(9, 0, 132, 1980, GemmType::fp32) / 1e9;
  const double mem_peak = commscope::model::memory_peak_bytes(5120, 2619) / 1e9;
  std::vector<RankRow> ranks;
  std::vector<GpuRow> gpus;
  for (int r = 0; r < nranks; ++r) {
    RankRow row;
    row.rank = r, row.node = r / kGpus;
    commscope::h5::set_fixed(row.host, gpu_host(r / kGpus));
    row.sgemm_gflops = 60 * spread(rng);
    row.memcpy_GBps = 10 * spread(rng);
    ranks.push_back(row);
    GpuRow g;
    g.rank = r, g.node = r / kGpus, g.device = r % kGpus;
    commscope::h5::set_fixed(g.host, gpu_host(r / kGpus));
    commscope::h5::set_fixed(g.name, "NVIDIA H100 80GB HBM3");
    char bus[16];
    std::snprintf(bus, sizeof bus, "0000:%02X:00.0", 0x18 + 0x10 * (r % kGpus));
    commscope::h5::set_fixed(g.bus_id, bus);
    const double gemm = r == f.gemm_rank ? 0.5 : 1.0, link = r == f.link_rank ? 0.5 : 1.0;
    g.gemm_bf16_gflops = 0.66 * bf16_peak * spread(rng) * gemm;
    g.gemm_bf16_peak_gflops = bf16_peak;
    g.gemm_fp32_gflops = 0.75 * fp32_peak * spread(rng) * gemm;
    g.gemm_fp32_peak_gflops = fp32_peak;
    g.d2d_GBps = 0.84 * mem_peak * spread(rng);
    g.d2d_peak_GBps = mem_peak;
    g.h2d_GBps = 53.5 * spread(rng) * link;
    g.d2h_GBps = 54.5 * spread(rng) * link;
    g.host_link_GBps = 63.0;
    commscope::h5::set_fixed(g.host_link, "PCIe gen 5 x16 (nvidia-smi: max gen, width now)");
    gpus.push_back(g);
  }
  file.add(ranks);
  file.add(gpus);
  std::vector<PeerRow> peers;
  for (int h = 0; h < kHosts; ++h)
    for (int a = 0; a < kGpus; ++a)
      for (int b = 0; b < kGpus; ++b) {
        if (a == b) continue;
        PeerRow p;
        p.node = h, p.src = a, p.dst = b;
        commscope::h5::set_fixed(p.host, gpu_host(h));
        const bool slow = h == f.peer_host && ((a == f.peer_a && b == f.peer_b) || (a == f.peer_b && b == f.peer_a));
        p.oneway_GBps = 370 * spread(rng) * (slow ? 0.25 : 1.0);
        p.bidir_GBps = 720 * spread(rng) * (slow ? 0.25 : 1.0);
        peers.push_back(p);
      }
  file.add(peers);
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
  const GpuFault gpu_faults[] = {
      {"gpu_clean"},
      {"gpu_faults", 13, -1, 0, 2, 6},
      {"gpu_host_link", -1, 3},
  };
  for (const GpuFault& f : gpu_faults) write_gpus(dir, f);
  std::printf("wrote %zu doctor files to %s\n", std::size(faults) + std::size(gpu_faults), dir.string().c_str());
  return 0;
}
