// The doctor's findings rule (doctor_findings.hpp) on tables of values, without a file: a slow
// link, a slow host, nothing wrong, one host, missing rows, latency not judged; and GPUs: a slow GPU,
// a node of slow GPUs, a slow peer link one way or only both ways, a slow host link; 3 nodes, one
// slow against its two peers.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "commscope/analysis/doctor_findings.hpp"

namespace ca = commscope::analysis;

namespace {

// `hosts` hosts of `per_host` ranks each ("h0", "h1", ...); every ordered rank pair measured once,
// 10 GB/s and 2 us between hosts, 20 GB/s and 0.5 us inside one; `link(a, b, bw, lat)` may change a
// pair of hosts' values; every rank probed at 100 GFLOP/s and 10 GB/s.
ca::DoctorValues cluster(int hosts, int per_host,
                         const std::function<void(int, int, double&, double&)>& link = nullptr) {
  ca::DoctorValues v;
  const int p = hosts * per_host;
  for (int r = 0; r < p; ++r) {
    std::string host = "h";  // not "h" + ...: GCC 12's -Wrestrict false positive
    host += std::to_string(r / per_host);
    v.host_of.push_back(host);
  }
  for (int s = 0; s < p; ++s)
    for (int t = 0; t < p; ++t) {
      if (s == t) continue;
      const int a = s / per_host, b = t / per_host;
      double bw = a == b ? 20 : 10, lat = a == b ? 0.5 : 2;
      if (link && a != b) link(std::min(a, b), std::max(a, b), bw, lat);
      v.pairs.push_back({s, t, bw, lat});
    }
  for (int r = 0; r < p; ++r) v.ranks.push_back({r, 100, 10});
  return v;
}

std::vector<std::string> kinds(const ca::DoctorFindings& f) {
  std::vector<std::string> out;
  for (const ca::DoctorFinding& x : f.findings) out.push_back(x.kind + ": " + x.subject);
  return out;
}

}  // namespace

TEST(DoctorFindings, NothingWrong) {
  const ca::DoctorFindings f = ca::find_doctor_outliers(cluster(4, 2));
  EXPECT_TRUE(f.findings.empty()) << ::testing::PrintToString(kinds(f));
  EXPECT_EQ(f.hosts, (std::vector<std::string>{"h0", "h1", "h2", "h3"}));
  EXPECT_EQ(f.ranks_on, (std::vector<std::size_t>{2, 2, 2, 2}));
  EXPECT_EQ(f.judged_kinds, 2);  // links and probes; no node rows
  EXPECT_TRUE(f.unjudged.empty());
  EXPECT_DOUBLE_EQ(f.bandwidth.hosts[0][1], 10);
  EXPECT_DOUBLE_EQ(f.bandwidth.hosts[2][2], 20);
  EXPECT_DOUBLE_EQ(f.latency.hosts[1][3], 2);
}

TEST(DoctorFindings, SlowLinkNamedAloneNotItsHosts) {
  const ca::DoctorFindings f = ca::find_doctor_outliers(cluster(4, 1, [](int a, int b, double& bw, double&) {
    if (a == 1 && b == 2) bw = 1;
  }));
  ASSERT_EQ(kinds(f), (std::vector<std::string>{"bandwidth link: h1 <-> h2"}));
  EXPECT_DOUBLE_EQ(f.findings[0].value, 1);
  EXPECT_DOUBLE_EQ(f.findings[0].median, 10);
  EXPECT_EQ(f.findings[0].text, "slow link: h1 <-> h2: 1 GB/s, 10x below the median of 10 GB/s over the other links");
}

TEST(DoctorFindings, OneDirectionSlowIsASlowLink) {
  ca::DoctorValues v = cluster(4, 1);
  for (ca::DoctorValues::Pair& pr : v.pairs)
    if (pr.src == 3 && pr.dst == 0) pr.bandwidth_GBps = 2;  // 0 -> 3 stays at 10
  EXPECT_EQ(kinds(ca::find_doctor_outliers(v)), (std::vector<std::string>{"bandwidth link: h0 <-> h3"}));
}

TEST(DoctorFindings, SlowHostTakesItsLinks) {
  // Every link of h3 slow: 3 of 6 links, which the links alone could not tell apart.
  const ca::DoctorFindings f = ca::find_doctor_outliers(cluster(4, 1, [](int, int b, double& bw, double&) {
    if (b == 3) bw = 1;
  }));
  ASSERT_EQ(kinds(f), (std::vector<std::string>{"bandwidth host: h3"}));
  EXPECT_DOUBLE_EQ(f.findings[0].value, 1);
  EXPECT_NE(f.findings[0].text.find("\n  link h3 <-> h0: 1 GB/s (10x below the median of 10 GB/s"), std::string::npos)
      << f.findings[0].text;
}

TEST(DoctorFindings, SlowHostThatIsSlowToComputeSaysSo) {
  ca::DoctorValues v = cluster(4, 1, [](int, int b, double& bw, double&) {
    if (b == 3) bw = 1;
  });
  v.ranks[3].sgemm_gflops = 10;
  const ca::DoctorFindings f = ca::find_doctor_outliers(v);
  ASSERT_EQ(kinds(f), (std::vector<std::string>{"bandwidth host: h3", "sgemm node: h3"}));
  EXPECT_NE(f.findings[0].text.find("(h3 is also slow to compute"), std::string::npos);
}

TEST(DoctorFindings, OneHostJudgesItsRanks) {
  // 3 ranks on one host: no host links, the links inside it, and the probes per rank.
  ca::DoctorValues v = cluster(1, 3);
  v.ranks[2].memcpy_GBps = 1;
  const ca::DoctorFindings f = ca::find_doctor_outliers(v);
  EXPECT_EQ(f.hosts.size(), 1u);
  EXPECT_TRUE(f.bandwidth.measured);  // the diagonal
  ASSERT_EQ(kinds(f), (std::vector<std::string>{"memcpy rank: 2"}));
  EXPECT_EQ(f.findings[0].text,
            "slow rank: 2 (h0): memcpy 1 GB/s, 10x below the median of 10 GB/s over the other ranks");
}

TEST(DoctorFindings, ThreeNodesOneSlowAgainstTheOtherTwo) {
  // 3 nodes whose good two differ by 20% (55 and 45 GFLOP/s) and a third at 20: 2.5x below
  // them. Judged among all three, the slow node's own value drew the median and the spread
  // towards it, and it needed 3.1x to be named; against its two peers it is named, and the words
  // give the peers' median.
  ca::DoctorValues v = cluster(3, 1);
  v.ranks[0].sgemm_gflops = 55;
  v.ranks[1].sgemm_gflops = 45;
  v.ranks[2].sgemm_gflops = 20;
  const ca::DoctorFindings f = ca::find_doctor_outliers(v);
  ASSERT_EQ(kinds(f), (std::vector<std::string>{"sgemm node: h2"}));
  EXPECT_DOUBLE_EQ(f.findings[0].median, 50);
  EXPECT_EQ(f.findings[0].text,
            "slow node: h2: sgemm 20 GFLOP/s, 2.5x below the median of 50 GFLOP/s over the other nodes");
}

TEST(DoctorFindings, MissingRows) {
  // A run killed after two probe rows: no pairs, a rank no row names, too few values to judge.
  ca::DoctorValues v;
  v.host_of = {"a", "b", "?"};
  v.ranks = {{0, 100, 10}, {1, 1, 1}};
  const ca::DoctorFindings f = ca::find_doctor_outliers(v);
  EXPECT_TRUE(f.findings.empty());
  EXPECT_FALSE(f.bandwidth.measured);
  EXPECT_FALSE(f.latency.measured);
  EXPECT_EQ(f.judged_kinds, 0);
  EXPECT_EQ(f.unjudged, "ranks' probes (2)");
  EXPECT_EQ(f.hosts, (std::vector<std::string>{"a", "b", "?"}));
  // Unmeasured pairs (NaN) are no values either.
  v.pairs = {{0, 1, std::nan(""), std::nan("")}};
  EXPECT_FALSE(ca::find_doctor_outliers(v).bandwidth.measured);
}

TEST(DoctorFindings, BestPassCounts) {
  ca::DoctorValues v = cluster(4, 1, [](int a, int b, double& bw, double&) {
    if (a == 1 && b == 2) bw = 1;
  });
  for (const ca::DoctorValues::Pair pr : std::vector<ca::DoctorValues::Pair>(v.pairs))
    if ((pr.src == 1 && pr.dst == 2) || (pr.src == 2 && pr.dst == 1)) v.pairs.push_back({pr.src, pr.dst, 9.5, 2});
  EXPECT_TRUE(ca::find_doctor_outliers(v).findings.empty());  // a second pass at 9.5 GB/s: interference
}

TEST(DoctorFindings, LatencyNotJudgedWhenOversubscribed) {
  auto slow = [](int a, int b, double&, double& lat) {
    if (a == 0 && b == 1) lat = 50;
  };
  EXPECT_EQ(kinds(ca::find_doctor_outliers(cluster(4, 1, slow))),
            (std::vector<std::string>{"latency link: h0 <-> h1"}));
  ca::DoctorValues v = cluster(4, 1, slow);
  v.judge_latency = false;
  const ca::DoctorFindings f = ca::find_doctor_outliers(v);
  EXPECT_TRUE(f.findings.empty());
  EXPECT_TRUE(f.latency.measured);  // still printed
}

TEST(DoctorFindings, SlowNodeAllreduce) {
  ca::DoctorValues v = cluster(4, 2);
  v.nodes = {{"h0", 5}, {"h1", 5}, {"h2", 0.5}, {"h3", 5}};
  EXPECT_EQ(kinds(ca::find_doctor_outliers(v)), (std::vector<std::string>{"allreduce node: h2"}));
}

namespace {

// `hosts` hosts of 4 GPUs each (rank = host x 4 + device): every GPU at 700 TFLOP/s bf16, 50 fp32,
// 2800 GB/s device copy, 53 and 54 GB/s to and from the host; every ordered GPU pair of a host at
// 370 GB/s one way and 720 both ways; `gpu(i, g)` and `peer(host, a, b, p)` may change them.
ca::DoctorValues gpu_cluster(int hosts, const std::function<void(int, ca::DoctorGpu&)>& gpu = nullptr,
                             const std::function<void(int, int, int, ca::DoctorPeer&)>& peer = nullptr) {
  ca::DoctorValues v;
  for (int r = 0; r < hosts * 4; ++r) {
    std::string host = "g";
    host += std::to_string(r / 4);
    v.host_of.push_back(host);
    ca::DoctorGpu g{host, r, r % 4, "", 50e3, 67e3, 700e3, 1070e3, 2800, 3352, 53, 54, 63, "", ""};
    if (gpu) gpu(r, g);
    v.gpus.push_back(g);
    for (int d = 0; d < 4; ++d) {
      if (d == r % 4) continue;
      ca::DoctorPeer p{host, r % 4, d, 370, 720};
      if (peer) peer(r / 4, r % 4, d, p);
      v.peers.push_back(p);
    }
  }
  return v;
}

}  // namespace

TEST(DoctorGpuFindings, NothingWrong) {
  const ca::DoctorFindings f = ca::find_doctor_outliers(gpu_cluster(3));
  EXPECT_TRUE(f.findings.empty()) << ::testing::PrintToString(kinds(f));
}

TEST(DoctorGpuFindings, SlowGpuIsOneFindingOfItsProbes) {
  const ca::DoctorFindings f = ca::find_doctor_outliers(gpu_cluster(2, [](int r, ca::DoctorGpu& g) {
    if (r == 5) g.gemm_bf16_gflops /= 2, g.d2d_GBps /= 3;
  }));
  ASSERT_EQ(kinds(f), std::vector<std::string>{"gpu: g1 rank 5 GPU 1"});
  EXPECT_NE(f.findings[0].text.find("bf16 GEMM 350 TFLOP/s (0.33 of its peak 1070 TFLOP/s), 2x below"),
            std::string::npos)
      << f.findings[0].text;
  EXPECT_NE(f.findings[0].text.find("\n  device copy 933 GB/s"), std::string::npos) << f.findings[0].text;
}

TEST(DoctorGpuFindings, EachRankItsOwnGpuIsNamedByBusId) {
  // A launcher that gives each rank a GPU of its own shows each rank one, as device 0: the bus id
  // tells which GPU of the machine is slow.
  const ca::DoctorFindings f = ca::find_doctor_outliers(gpu_cluster(2, [](int r, ca::DoctorGpu& g) {
    char bus[16];
    std::snprintf(bus, sizeof bus, "0000:%02X:00.0", 0x1B + 16 * (r % 4));
    g.device = 0, g.bus_id = bus;
    if (r == 5) g.gemm_bf16_gflops /= 2;
  }));
  EXPECT_EQ(kinds(f), std::vector<std::string>{"gpu: g1 rank 5 GPU 0 (0000:2B:00.0)"});
}

TEST(DoctorGpuFindings, NodeOfSlowGpusIsNamedNotEachGpu) {
  // 3 nodes, every GPU of g2 at a third: g2 is the median's odd one, its GPUs not named apart.
  const ca::DoctorFindings f = ca::find_doctor_outliers(
      gpu_cluster(3, [](int r, ca::DoctorGpu& g) { g.gemm_fp32_gflops /= r / 4 == 2 ? 3 : 1; }));
  EXPECT_EQ(kinds(f), std::vector<std::string>{"gemm_fp32 gpu node: g2"});
}

TEST(DoctorGpuFindings, PeerLinkSlowOneWayOrOnlyBothWays) {
  // g0: GPU 0 -> 3 at a quarter one way (the pair's worse direction); g1: 1 <-> 2 fine one way
  // but at a third both ways at once.
  const ca::DoctorFindings f =
      ca::find_doctor_outliers(gpu_cluster(2, nullptr, [](int h, int a, int b, ca::DoctorPeer& p) {
        if (h == 0 && a == 0 && b == 3) p.oneway_GBps /= 4;
        if (h == 1 && std::min(a, b) == 1 && std::max(a, b) == 2) p.bidir_GBps /= 3;
      }));
  EXPECT_EQ(kinds(f),
            (std::vector<std::string>{"peer link: g0 GPU 0 <-> GPU 3", "peer link both ways: g1 GPU 1 <-> GPU 2"}));
}

TEST(DoctorGpuFindings, SlowHostLinkApartFromCompute) {
  const ca::DoctorFindings f = ca::find_doctor_outliers(gpu_cluster(2, [](int r, ca::DoctorGpu& g) {
    if (r == 2) g.h2d_GBps /= 4;
  }));
  ASSERT_EQ(kinds(f), std::vector<std::string>{"gpu host link: g0 rank 2 GPU 2"});
  EXPECT_NE(f.findings[0].text.find("host to device 13.2 GB/s (0.21 of its link's 63 GB/s)"), std::string::npos)
      << f.findings[0].text;
}
