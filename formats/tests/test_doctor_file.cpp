// The doctor's file format: a file written with its writer reads back with its reader, every
// column the same; a file with the name before the one form and without the columns added
// later (pass, round, wave, node) still reads; each column's unit agrees with its name.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "commscope/common/schemas.hpp"
#include "commscope/formats/doctor_file.hpp"
#include "temp_path.hpp"

using namespace commscope;
namespace fd = commscope::formats::doctor;

namespace {

fd::PairRow pair(std::int64_t src, std::int64_t dst) {
  fd::PairRow r;
  r.src = src, r.dst = dst, r.pass = 2, r.round = 3, r.wave = 1;
  h5::set_fixed(r.src_host, "host-" + std::to_string(src));
  h5::set_fixed(r.dst_host, std::string(64, 'x'));  // all 64 bytes, no NUL
  r.latency_us = 1.25 + static_cast<double>(src);
  r.bandwidth_GBps = 2.5 + static_cast<double>(dst);
  return r;
}

fd::RankRow rank(std::int64_t i) {
  fd::RankRow r;
  r.rank = i, r.node = 1;
  h5::set_fixed(r.host, "node-b");
  r.sgemm_gflops = 60.5;
  r.memcpy_GBps = std::nan("");  // a probe not run
  return r;
}

fd::NodeRow node() {
  fd::NodeRow n;
  n.node = 1, n.ranks = 2, n.bytes = 1 << 20;
  h5::set_fixed(n.host, "node-b");
  n.allreduce_us = 400.5;
  n.busbw_GBps = 4.25;
  return n;
}

// A file of 2 ranks on 1 node, one pair each way, both ranks, one node.
void write_file(const std::string& path) {
  fd::File f(path, 2, 1);
  f.meta().set_attr("passes", 3);
  f.add(std::vector<fd::PairRow>{pair(0, 1), pair(1, 0)});
  f.add(std::vector<fd::RankRow>{rank(0), rank(1)});
  f.add(std::vector<fd::NodeRow>{node()});
  f.finish("complete");
}

void expect_same(const fd::PairRow& g, const fd::PairRow& w, bool later_columns = true) {
  EXPECT_EQ(g.src, w.src);
  EXPECT_EQ(g.dst, w.dst);
  if (later_columns) {
    EXPECT_EQ(g.pass, w.pass);
    EXPECT_EQ(g.round, w.round);
    EXPECT_EQ(g.wave, w.wave);
  }
  EXPECT_EQ(h5::get_fixed(g.src_host), h5::get_fixed(w.src_host));
  EXPECT_EQ(h5::get_fixed(g.dst_host), h5::get_fixed(w.dst_host));
  EXPECT_EQ(g.latency_us, w.latency_us);
  EXPECT_EQ(g.bandwidth_GBps, w.bandwidth_GBps);
}

}  // namespace

TEST(DoctorFile, RoundTripOfEveryColumn) {
  const std::string path = temp_path("doctor-round-trip.h5");
  write_file(path);
  const fd::Contents d = fd::read(path);
  EXPECT_EQ(d.schema, schemas::kDoctor);
  EXPECT_EQ(d.status, "complete");
  EXPECT_EQ(d.nranks, 2);
  EXPECT_EQ(d.nnodes, 1);
  ASSERT_EQ(d.pairs.size(), 2u);
  expect_same(d.pairs[0], pair(0, 1));
  expect_same(d.pairs[1], pair(1, 0));
  EXPECT_EQ(h5::get_fixed(d.pairs[0].dst_host).size(), 64u);
  ASSERT_EQ(d.ranks.size(), 2u);
  for (std::int64_t i = 0; i < 2; ++i) {
    const fd::RankRow& g = d.ranks[static_cast<std::size_t>(i)];
    EXPECT_EQ(g.rank, i);
    EXPECT_EQ(g.node, 1);
    EXPECT_EQ(h5::get_fixed(g.host), "node-b");
    EXPECT_EQ(g.sgemm_gflops, 60.5);
    EXPECT_TRUE(std::isnan(g.memcpy_GBps));
  }
  ASSERT_EQ(d.nodes.size(), 1u);
  EXPECT_EQ(d.nodes[0].node, 1);
  EXPECT_EQ(d.nodes[0].ranks, 2);
  EXPECT_EQ(d.nodes[0].bytes, 1 << 20);
  EXPECT_EQ(h5::get_fixed(d.nodes[0].host), "node-b");
  EXPECT_EQ(d.nodes[0].allreduce_us, 400.5);
  EXPECT_EQ(d.nodes[0].busbw_GBps, 4.25);
  EXPECT_TRUE(d.gpus.empty());  // a CPU run's file: no /gpus, no /peers
  EXPECT_TRUE(d.peers.empty());
}

// A GPU run's file: its /gpus and /peers rows read back, every column the same.
TEST(DoctorFile, GpuRowsRoundTrip) {
  const std::string path = temp_path("doctor-gpus.h5");
  std::vector<fd::GpuRow> gpus(2);
  for (std::int64_t i = 0; i < 2; ++i) {
    fd::GpuRow& g = gpus[static_cast<std::size_t>(i)];
    g.rank = 4 + i, g.node = 1, g.device = i;
    h5::set_fixed(g.host, "gpu-node-2");
    h5::set_fixed(g.name, "NVIDIA H100 80GB HBM3");
    g.gemm_fp32_gflops = 51000.5 + static_cast<double>(i);
    g.gemm_fp32_peak_gflops = 66908.2;
    g.gemm_bf16_gflops = 701000.25;
    g.gemm_bf16_peak_gflops = 1070530.6;
    g.d2d_GBps = 2800.5;
    g.d2d_peak_GBps = 3352.3;
    g.h2d_GBps = 53.25;
    g.d2h_GBps = i == 1 ? std::nan("") : 54.5;  // a probe not run
    g.host_link_GBps = 63.0;
    h5::set_fixed(g.host_link, "PCIe gen 5 x16 (nvidia-smi: max gen, width now)");
    h5::set_fixed(g.bus_id, i == 0 ? "0000:1B:00.0" : "0000:2B:00.0");
  }
  std::vector<fd::PeerRow> peers;
  for (std::int64_t s = 0; s < 2; ++s) {
    fd::PeerRow p;
    p.node = 1, p.src = s, p.dst = 1 - s;
    h5::set_fixed(p.host, "gpu-node-2");
    p.oneway_GBps = 370.5 + static_cast<double>(s);
    p.bidir_GBps = 700.25;
    peers.push_back(p);
  }
  {
    fd::File f(path, 8, 2);
    f.add(std::vector<fd::RankRow>{rank(0), rank(1)});
    f.add(gpus);
    f.add(peers);
    f.finish("complete");
  }
  const fd::Contents d = fd::read(path);
  ASSERT_EQ(d.gpus.size(), 2u);
  for (std::size_t i = 0; i < 2; ++i) {
    const fd::GpuRow &g = d.gpus[i], &w = gpus[i];
    EXPECT_EQ(g.rank, w.rank);
    EXPECT_EQ(g.node, 1);
    EXPECT_EQ(g.device, w.device);
    EXPECT_EQ(h5::get_fixed(g.host), "gpu-node-2");
    EXPECT_EQ(h5::get_fixed(g.name), "NVIDIA H100 80GB HBM3");
    EXPECT_EQ(g.gemm_fp32_gflops, w.gemm_fp32_gflops);
    EXPECT_EQ(g.gemm_fp32_peak_gflops, w.gemm_fp32_peak_gflops);
    EXPECT_EQ(g.gemm_bf16_gflops, w.gemm_bf16_gflops);
    EXPECT_EQ(g.gemm_bf16_peak_gflops, w.gemm_bf16_peak_gflops);
    EXPECT_EQ(g.d2d_GBps, w.d2d_GBps);
    EXPECT_EQ(g.d2d_peak_GBps, w.d2d_peak_GBps);
    EXPECT_EQ(g.h2d_GBps, w.h2d_GBps);
    EXPECT_EQ(std::isnan(g.d2h_GBps), i == 1);
    if (i == 0) {
      EXPECT_EQ(g.d2h_GBps, 54.5);
    }
    EXPECT_EQ(g.host_link_GBps, 63.0);
    EXPECT_EQ(h5::get_fixed(g.host_link), "PCIe gen 5 x16 (nvidia-smi: max gen, width now)");
    EXPECT_EQ(h5::get_fixed(g.bus_id), h5::get_fixed(w.bus_id));
  }
  ASSERT_EQ(d.peers.size(), 2u);
  for (std::size_t i = 0; i < 2; ++i) {
    EXPECT_EQ(d.peers[i].node, 1);
    EXPECT_EQ(d.peers[i].src, peers[i].src);
    EXPECT_EQ(d.peers[i].dst, peers[i].dst);
    EXPECT_EQ(h5::get_fixed(d.peers[i].host), "gpu-node-2");
    EXPECT_EQ(d.peers[i].oneway_GBps, peers[i].oneway_GBps);
    EXPECT_EQ(d.peers[i].bidir_GBps, 700.25);
  }
  ASSERT_EQ(d.ranks.size(), 2u);
  EXPECT_TRUE(d.pairs.empty());
}

// A file as the doctor wrote it before the one form of the schema names, and with the required
// columns only: it reads, the later columns at their defaults.
TEST(DoctorFile, AnOldFileStillReads) {
  const std::string path = temp_path("doctor-old.h5");
  {
    h5::File f = h5::File::create(path);
    h5::Group meta = f.create_group("meta");
    meta.set_attr("schema", std::string(schemas::kDoctorBefore));
    meta.set_attr("nranks", std::int64_t{2});
    auto required = [](const auto& columns, auto row) {
      h5::CompoundType<decltype(row)> t;
      for (const auto& c : columns.list())
        if (c.need == formats::Need::kRequired) c.add_to(t);
      return t;
    };
    h5::Table<fd::PairRow>::create(f, "pairs", required(fd::pair_columns(), fd::PairRow{})).append(pair(0, 1));
    h5::Table<fd::RankRow>::create(f, "ranks", required(fd::rank_columns(), fd::RankRow{})).append(rank(1));
    h5::Table<fd::NodeRow>::create(f, "nodes", required(fd::node_columns(), fd::NodeRow{})).append(node());
  }
  const fd::Contents d = fd::read(path);
  EXPECT_EQ(d.schema, "commscope-doctor/1");
  EXPECT_EQ(d.nnodes, 0);
  ASSERT_EQ(d.pairs.size(), 1u);
  expect_same(d.pairs[0], pair(0, 1), false);
  EXPECT_EQ(d.pairs[0].pass, 0);
  EXPECT_EQ(d.pairs[0].round, 0);
  EXPECT_EQ(d.pairs[0].wave, 0);
  ASSERT_EQ(d.ranks.size(), 1u);
  EXPECT_EQ(d.ranks[0].rank, 1);
  EXPECT_EQ(d.ranks[0].node, 0);
  ASSERT_EQ(d.nodes.size(), 1u);
  EXPECT_EQ(d.nodes[0].node, 0);
  EXPECT_EQ(d.nodes[0].busbw_GBps, 4.25);
  EXPECT_TRUE(d.gpus.empty());
}

TEST(DoctorFile, EachUnitAgreesWithItsName) {
  auto check = [](const auto& columns) {
    for (const auto& c : columns.list()) {
      const std::string name = c.name;
      const std::string unit = c.unit;
      if (name.ends_with("_us")) {
        EXPECT_EQ(unit, "us") << name;
      } else if (name.ends_with("_GBps")) {
        EXPECT_EQ(unit, "GB/s") << name;
      } else if (name.ends_with("_gflops")) {
        EXPECT_EQ(unit, "GFLOP/s") << name;
      } else {
        EXPECT_TRUE(unit.empty() || name == "bytes") << name << " in " << unit;
      }
    }
  };
  check(fd::pair_columns());
  check(fd::rank_columns());
  check(fd::node_columns());
  check(fd::gpu_columns());
  check(fd::peer_columns());
}
