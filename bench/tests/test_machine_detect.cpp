// The machine model's detection pieces and the user's sources: the default route, a NIC's rate
// from a made-up sysfs tree, the copy probe, a doctor file's pairs per host, and entries applied
// over a detected model.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <limits>

#include "commscope/collectives/error.hpp"
#include "commscope/formats/doctor_file.hpp"
#include "commscope/machine/machine_detect.hpp"
#include "run_load.hpp"

namespace commscope::bench {
namespace {

using namespace commscope::machine;  // the detection pieces under test (machine/)

namespace fs = std::filesystem;
namespace doctor = commscope::formats::doctor;

struct TempDir {
  fs::path path = fs::temp_directory_path() / ("machine-" + std::to_string(::getpid()));
  TempDir() { fs::create_directories(path); }
  ~TempDir() { fs::remove_all(path); }
  void write(const std::string& rel, const std::string& text) const {
    fs::create_directories((path / rel).parent_path());
    std::ofstream(path / rel) << text << "\n";
  }
};

TEST(MachineDetect, DefaultRoute) {
  const char* route =
      "Iface\tDestination\tGateway\tFlags\tRefCnt\tUse\tMetric\tMask\n"
      "ens1\t0002000A\t00000000\t0001\t0\t0\t0\t00FFFFFF\n"
      "eth0\t00000000\t010200C0\t0003\t0\t0\t0\t00000000\n";
  EXPECT_EQ(default_route_interface(route), "eth0");
  EXPECT_EQ(default_route_interface("Iface\tDestination\n"), "");
}

TEST(MachineDetect, NicRateFromSysfs) {
  TempDir sys;
  sys.write("class/net/veth0/speed", "10000");
  sys.write("class/net/eth1/speed", "-1");
  const Rate veth = nic_rate(sys.path, "veth0");
  EXPECT_DOUBLE_EQ(veth.gbytes_per_s, 1.25);
  EXPECT_EQ(veth.source, FigureSource::system);
  EXPECT_EQ(veth.detail, "veth0 10000 Mb/s");
  const Rate unknown = nic_rate(sys.path, "eth1");
  EXPECT_FALSE(unknown.known());
  EXPECT_EQ(unknown.detail, "eth1: speed -1 (not known)");
  EXPECT_EQ(nic_rate(sys.path, "eth2").detail, "eth2: speed not given (not known)");
  EXPECT_FALSE(nic_rate(sys.path, "").known());
  // An active InfiniBand port wins over the Ethernet interface; a port that is down does not count.
  sys.write("class/infiniband/mlx5_0/ports/1/state", "4: ACTIVE");
  sys.write("class/infiniband/mlx5_0/ports/1/rate", "200 Gb/sec (4X HDR)");
  sys.write("class/infiniband/mlx5_1/ports/1/state", "1: DOWN");
  sys.write("class/infiniband/mlx5_1/ports/1/rate", "400 Gb/sec (4X NDR)");
  const Rate ib = nic_rate(sys.path, "veth0");
  EXPECT_DOUBLE_EQ(ib.gbytes_per_s, 25);
  EXPECT_EQ(ib.detail, "mlx5_0 port 1 200 Gb/sec (4X HDR)");
}

// The GPU link tables NVML's answers are priced with (the NVML calls themselves need a GPU).
TEST(MachineDetect, GpuLinkRates) {
  EXPECT_EQ(18 * nvlink_gbytes_per_link(6), 450);  // H100: NVLink 4, 18 links, 450 GB/s each way
  EXPECT_EQ(18 * nvlink_gbytes_per_link(4), 450);  // the same from an older driver's plain 4
  EXPECT_EQ(nvlink_gbytes_per_link(7), 50);
  EXPECT_EQ(nvlink_gbytes_per_link(1), 20);
  EXPECT_EQ(nvlink_gbytes_per_link(0), 0);
  EXPECT_EQ(nvlink_gbytes_per_link(8), 0);
  EXPECT_NEAR(16 * pcie_gbytes_per_lane(5), 63.0, 0.01);  // gen 5 x16
  EXPECT_NEAR(16 * pcie_gbytes_per_lane(4), 31.5, 0.01);
  EXPECT_EQ(pcie_gbytes_per_lane(9), 0);
}

TEST(MachineDetect, CopyProbe) {
  std::string detail;
  EXPECT_GT(host_copy_rate(std::size_t{4} << 20, 2, detail), 0);
  EXPECT_EQ(detail, "memcpy 4 MiB, best of 2");
  EXPECT_GE(copy_probe_bytes(), std::size_t{32} << 20);
  EXPECT_LE(copy_probe_bytes(), std::size_t{256} << 20);
}

// Three hosts, host3's link slow: pairs with host3 at 0.012 GB/s, the others at 0.116 (best of
// two passes; one direction of host1-host2 slower in one pass only).
TEST(MachineDetect, DoctorPairsPerHost) {
  TempDir dir;
  const std::string path = (dir.path / "doctor.h5").string();
  {
    doctor::File f(path, 3, 3);
    std::vector<doctor::PairRow> rows;
    auto pair = [&](int s, int d, int pass, double gbps) {
      doctor::PairRow r;
      r.src = s, r.dst = d, r.pass = pass;
      h5::set_fixed(r.src_host, "host" + std::to_string(s + 1));
      h5::set_fixed(r.dst_host, "host" + std::to_string(d + 1));
      r.bandwidth_GBps = gbps;
      rows.push_back(r);
    };
    pair(0, 1, 0, 0.116), pair(1, 0, 0, 0.05), pair(1, 0, 1, 0.116);
    pair(0, 2, 0, 0.012), pair(2, 0, 0, 0.012), pair(1, 2, 0, 0.012), pair(2, 1, 0, 0.011);
    f.add(rows);
    f.finish("complete");
  }
  const std::vector<MachineEntry> entries = doctor_link_entries(path);
  ASSERT_EQ(entries.size(), 3u);
  MachineModel m;
  for (const char* h : {"host1", "host2", "host3"}) {
    NodeModel n;
    n.host = h;
    m.nodes.push_back(n);
  }
  EXPECT_TRUE(apply_entries(m, entries, {"d", "d", "d"}).empty());
  // A host's figure is its fastest pair (each pair the slower of its directions' best passes):
  // host1 0.116 (with host2), host3 0.012 (with host1), the slow host named by its own figure only.
  EXPECT_DOUBLE_EQ(m.nodes[0].nic_measured.gbytes_per_s, 0.116);
  EXPECT_DOUBLE_EQ(m.nodes[1].nic_measured.gbytes_per_s, 0.116);
  EXPECT_DOUBLE_EQ(m.nodes[2].nic_measured.gbytes_per_s, 0.012);
  EXPECT_EQ(m.nodes[2].nic_measured.source, FigureSource::doctor);
  EXPECT_EQ(m.nodes[2].nic_measured.detail, "doctor.h5: fastest of 2 host pairs (best pass, slower direction)");
  EXPECT_THROW(doctor_link_entries((dir.path / "none.h5").string()), InvalidArgument);
}

// The doctor's latency: per rank pair between hosts its best pass, alpha the largest pair (here
// host1-host3's 61 us; its other pass 75 us, host1-host2 40 us). The pair inside host1 (95 and 90
// us: its ranks waited for a CPU) measures no message between nodes.
namespace {
void write_latency_pairs(const std::string& path, const std::string& oversubscribed) {
  doctor::File f(path, 4, 3);
  if (!oversubscribed.empty()) f.meta().set_attr("oversubscribed", oversubscribed);
  std::vector<doctor::PairRow> rows;
  auto pair = [&](int s, int d, const char* sh, const char* dh, int pass, double us) {
    doctor::PairRow r;
    r.src = s, r.dst = d, r.pass = pass;
    h5::set_fixed(r.src_host, sh);
    h5::set_fixed(r.dst_host, dh);
    r.latency_us = us, r.bandwidth_GBps = 0.1;
    rows.push_back(r);
  };
  pair(0, 1, "host1", "host1", 0, 95), pair(1, 0, "host1", "host1", 0, 95);
  pair(0, 1, "host1", "host1", 1, 90), pair(1, 0, "host1", "host1", 1, 90);
  pair(1, 2, "host1", "host2", 0, 40), pair(2, 1, "host2", "host1", 0, 40);
  pair(1, 3, "host1", "host3", 0, 75), pair(3, 1, "host3", "host1", 0, 75);
  pair(1, 3, "host1", "host3", 1, 61), pair(3, 1, "host3", "host1", 1, 61);
  f.add(rows);
  f.finish("complete");
}

MachineModel three_hosts() {
  MachineModel m;
  for (const char* h : {"host1", "host2", "host3"}) {
    NodeModel n;
    n.host = h;
    m.nodes.push_back(n);
  }
  return m;
}
}  // namespace

TEST(MachineDetect, DoctorLatencyIsTheLargestPairBetweenHosts) {
  TempDir dir;
  const std::string path = (dir.path / "lat.h5").string();
  write_latency_pairs(path, "");
  std::string note = "unset";
  const std::vector<MachineEntry> entries = doctor_link_entries(path, false, &note);
  EXPECT_EQ(note, "");
  MachineModel m = three_hosts();
  EXPECT_TRUE(apply_entries(m, entries, std::vector<std::string>(entries.size(), "--doctor lat.h5")).empty());
  EXPECT_DOUBLE_EQ(m.latency_us, 61);
  EXPECT_EQ(m.latency_source, FigureSource::doctor);
  EXPECT_EQ(m.latency_detail,
            "lat.h5: 8 B half round trip, the largest of 2 pairs between hosts (best pass each; host1-host3)");
  EXPECT_DOUBLE_EQ(from_text(to_text(m)).latency_us, 61);
}

// A doctor file whose ranks outnumbered their CPUs (its /meta/oversubscribed; the doctor's report
// does not judge its latency): its round trips are the scheduler's (2 hosts x 2 ranks on 2 CPUs:
// the largest pair's best pass read 10.7, 11.5, 13.8, 14.4, 122.5 and 136.9 us in six runs, the
// bench's own probe 4.7-6.3 us), so its latency is left to the bench, and the note says why; its
// link rates are still taken.
TEST(MachineDetect, DoctorLatencyOfRanksOutnumberingCpusIsNotTaken) {
  TempDir dir;
  const std::string path = (dir.path / "busy.h5").string();
  write_latency_pairs(path, "hosts host1,host2 (one machine): 4 ranks on 2 CPUs");
  std::string note;
  const std::vector<MachineEntry> entries = doctor_link_entries(path, false, &note);
  EXPECT_EQ(note,
            "busy.h5's latency is not taken: its ranks outnumbered their CPUs (hosts host1,host2 (one machine): 4 "
            "ranks on 2 CPUs), where a round trip waits for the scheduler");
  MachineModel m = three_hosts();
  EXPECT_TRUE(apply_entries(m, entries, std::vector<std::string>(entries.size(), "--doctor busy.h5")).empty());
  EXPECT_FALSE(m.latency_known());
  EXPECT_DOUBLE_EQ(m.nodes[0].nic_measured.gbytes_per_s, 0.1);
}

// A GPU doctor file (--device cuda): host1's 4 GPUs, their pairs at 370 GB/s one way and 720 both
// ways but GPU 1 <-> 3 (120 and 200); host2's 2 GPUs without peer access (NaN). For a run on GPUs
// host1's intra is the median over its 6 pairs of half the both-ways figure and intra_one the
// median over its 12 ordered pairs, the slow pair named; host2 has none (its NVML figure stays); a
// run on CPUs takes only the pairs' figures.
TEST(MachineDetect, DoctorGpuPairsPerHost) {
  TempDir dir;
  const std::string path = (dir.path / "gpus.h5").string();
  {
    doctor::File f(path, 2, 2);
    doctor::PairRow pr;
    pr.src = 0, pr.dst = 1, pr.bandwidth_GBps = 25, pr.latency_us = 3;
    h5::set_fixed(pr.src_host, "host1"), h5::set_fixed(pr.dst_host, "host2");
    f.add(std::vector<doctor::PairRow>{pr});
    std::vector<doctor::PeerRow> peers;
    auto peer = [&](const char* host, int s, int d, double oneway, double bidir) {
      doctor::PeerRow r;
      r.src = s, r.dst = d, r.oneway_GBps = oneway, r.bidir_GBps = bidir;
      h5::set_fixed(r.host, host);
      peers.push_back(r);
    };
    for (int s = 0; s < 4; ++s)
      for (int d = 0; d < 4; ++d)
        if (s != d) {
          const bool slow = (s == 1 && d == 3) || (s == 3 && d == 1);
          peer("host1", s, d, slow ? 120 : 370, slow ? 200 : 720);
        }
    const double nan = std::numeric_limits<double>::quiet_NaN();
    peer("host2", 0, 1, nan, nan), peer("host2", 1, 0, nan, nan);
    f.add(peers);
    f.finish("complete");
  }
  const auto model = [] {
    MachineModel m;
    for (const char* h : {"host1", "host2"}) {
      NodeModel n;
      n.host = h, n.gpus = 4;
      n.intra = {450, FigureSource::system, "NVLink version code 4 x18 (NVML; PCIe gen 5 x16)"};
      m.nodes.push_back(n);
    }
    return m;
  };
  MachineModel cpu = model();
  const std::vector<MachineEntry> pairs_only = doctor_link_entries(path);
  EXPECT_TRUE(apply_entries(cpu, pairs_only, std::vector<std::string>(pairs_only.size(), "d")).empty());
  EXPECT_EQ(cpu.nodes[0].intra.source, FigureSource::system);
  EXPECT_DOUBLE_EQ(cpu.nodes[0].nic_measured.gbytes_per_s, 25);

  MachineModel gpu = model();
  const std::vector<MachineEntry> entries = doctor_link_entries(path, true);
  ASSERT_EQ(entries.size(), pairs_only.size() + 1);
  EXPECT_TRUE(apply_entries(gpu, entries, std::vector<std::string>(entries.size(), "d")).empty());
  const NodeModel& h1 = gpu.nodes[0];
  EXPECT_DOUBLE_EQ(h1.intra.gbytes_per_s, 360);  // 5 pairs at 720 / 2, one at 200 / 2
  EXPECT_EQ(h1.intra.source, FigureSource::doctor);
  EXPECT_EQ(h1.intra.detail,
            "gpus.h5: median of 6 GPU pairs, both ways at once, per direction (slowest GPU 1 <-> 3 100GB/s)");
  EXPECT_DOUBLE_EQ(h1.intra_one.gbytes_per_s, 370);
  EXPECT_EQ(h1.intra_one.detail, "gpus.h5: median of 12 GPU pairs, one way alone (slowest GPU 1 -> 3 120GB/s)");
  EXPECT_EQ(gpu.nodes[1].intra.source, FigureSource::system);
  EXPECT_FALSE(gpu.nodes[1].intra_one.known());
  EXPECT_DOUBLE_EQ(gpu.nodes[0].nic_measured.gbytes_per_s, 25);
  // The header's text form carries them.
  const MachineModel back = from_text(to_text(gpu));
  EXPECT_DOUBLE_EQ(back.nodes[0].intra.gbytes_per_s, 360);
  EXPECT_EQ(back.nodes[0].intra.source, FigureSource::doctor);
}

TEST(MachineDetect, EntriesOverTheDetectedModel) {
  MachineModel m;
  NodeModel a, b;
  a.host = "host1.cluster", a.ranks = 2, a.cpus = 4;
  a.nic = {1.25, FigureSource::system, "veth0 10000 Mb/s"};
  b.host = "host2";
  m.nodes = {a, b};
  const std::vector<MachineEntry> entries = parse_machine_entries(
      "node host=* nic=1gbit\n"
      "node host=host1 nic=100mbit\n"
      "node host=host9 cpus=3\n");
  const std::vector<std::string> warnings = apply_entries(m, entries, {"f line 1", "f line 2", "f line 3"});
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_EQ(warnings[0], "f line 3 names host 'host9', which this run has not");
  EXPECT_DOUBLE_EQ(m.nodes[0].nic.gbytes_per_s, 0.0125);
  EXPECT_EQ(m.nodes[0].nic.detail, "f line 2");
  EXPECT_EQ(m.nodes[0].cpus, 4);
  EXPECT_DOUBLE_EQ(m.nodes[1].nic.gbytes_per_s, 0.125);
  EXPECT_EQ(m.nodes[1].nic.source, FigureSource::user);
}

}  // namespace

// The load during a run from /proc's texts: the busy ticks (user nice system irq softirq steal;
// idle and iowait not), the 1-minute load average, and other processes' CPUs per second.
TEST(RunLoad, ProcTexts) {
  EXPECT_DOUBLE_EQ(busy_cpu_seconds("cpu  100 20 30 5000 70 4 6 10 0 0\ncpu0 1 2 3\n", 100), 1.7);
  EXPECT_DOUBLE_EQ(busy_cpu_seconds("cpu  100 20 30 5000 70 4 6\n", 100), 1.6);  // no steal column
  EXPECT_EQ(busy_cpu_seconds("intr 1 2 3\n", 100), -1);
  // A thread's schedstat: 2.5 s on a CPU, 0.75 s ready but waiting, 120 slices.
  EXPECT_DOUBLE_EQ(run_delay_seconds("2500000000 750000000 120\n"), 0.75);
  EXPECT_EQ(run_delay_seconds(""), -1);
  EXPECT_EQ(run_delay_seconds("12 x 3\n"), -1);
  EXPECT_EQ(busy_cpu_seconds("cpu  1 2\n", 100), -1);
  EXPECT_DOUBLE_EQ(loadavg_1min("0.52 1.10 0.90 2/345 6789\n"), 0.52);
  EXPECT_EQ(loadavg_1min(""), -1);
  // 30 s busy on the node over 10 s, the run's ranks 18 s of it: others 1.2 CPUs; never negative.
  EXPECT_DOUBLE_EQ(others_cpus(30, 18, 10), 1.2);
  EXPECT_EQ(others_cpus(10, 12, 10), 0);
  EXPECT_EQ(others_cpus(-1, 0, 10), 0);
}

// The end-of-run lines: a node's load, and "busy" from kBusyContention on.
TEST(RunLoad, LoadLines) {
  MachineModel m;
  NodeModel n;
  n.host = "vm", n.ranks = 2, n.cpus = 2;
  n.load = {10, 0.01, 0.2, 0.4};
  m.nodes = {n};
  EXPECT_EQ(load_lines(m),
            (std::vector<std::string>{
                "# machine: vm during the run: 2 ranks on 2 CPUs, load average 0.20 before, 0.40 after"}));
  m.nodes[0].load.others_cpus = 1.3;
  EXPECT_EQ(load_lines(m).at(0),
            "# machine: vm during the run: 2 ranks and other processes' 1.3 CPUs on 2 CPUs, load average 0.20 before, "
            "0.40 after: busy, which its verdicts allow for (docs/verdicts.md)");
  m.nodes[0].load.ranks_cpus = 1.2;  // the ranks had 1.2 of the 2 CPUs they wanted
  EXPECT_EQ(load_lines(m).at(0),
            "# machine: vm during the run: 2 ranks (which had 1.2 CPUs) and other processes' 1.3 CPUs on 2 CPUs, "
            "load average 0.20 before, 0.40 after: busy, which its verdicts allow for (docs/verdicts.md)");
  m.nodes[0].load = {};
  EXPECT_TRUE(load_lines(m).empty());
}

// The end-of-run lines of what moved between the start and the end: a node's rates by size, and
// the latency; none where nothing moved.
TEST(RunLoad, MovedLines) {
  MachineModel m;
  NodeModel n;
  n.host = "vm";
  n.intra = {5.5, FigureSource::measured, "ring exchange", 0, 268435456, {{1048576, 12.8, 0.76}, {268435456, 5.5}}};
  m.nodes = {n};
  EXPECT_EQ(moved_lines(m), (std::vector<std::string>{"# machine: vm between the start and the end of the run: intra "
                                                      "moved up to 76% (at 1.0 MiB a rank, 12.8 GB/s at its faster "
                                                      "moment): its verdicts allow for it (docs/verdicts.md, \"Stable "
                                                      "inputs\")"}));
  m.latency_us = 0.125, m.latency_moved = 0.64;
  EXPECT_EQ(moved_lines(m).at(1),
            "# machine: the latency per message between the start and the end of the run: moved 64% (0.125 us at its "
            "faster moment): its verdicts allow for it (docs/verdicts.md, \"Stable inputs\")");
  EXPECT_TRUE(moved_lines(MachineModel{}).empty());
}
}  // namespace commscope::bench
