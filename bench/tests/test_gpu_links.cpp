// A node's GPU figures from text as nvidia-smi and sysfs write it: the CSV of
// `nvidia-smi --query-gpu=... --format=csv` (with units, and with noheader's sibling nounits), the
// PCIe link files of a made-up sysfs tree, and refusals of text that is neither.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <stdexcept>

#include "commscope/machine/gpu_links.hpp"
#include "gpu_probes.hpp"  // declarations only: they compile on the CPU build

namespace commscope::machine {
namespace {

namespace fs = std::filesystem;

// The form of nvidia-smi 535's output for the query on an 8-GPU H100 SXM node (GPU 5's
// link trained at x8, GPU 7 idle at gen 1, as current_link_* read on an idle GPU).
constexpr const char* kSmi =
    "index, name, pci.bus_id, pcie.link.gen.current, pcie.link.width.current, clocks.max.sm [MHz], "
    "clocks.max.memory [MHz]\n"
    "0, NVIDIA H100 80GB HBM3, 00000000:18:00.0, 5, 16, 1980 MHz, 2619 MHz\n"
    "1, NVIDIA H100 80GB HBM3, 00000000:2A:00.0, 5, 16, 1980 MHz, 2619 MHz\n"
    "5, NVIDIA H100 80GB HBM3, 00000000:AB:00.0, 5, 8, 1980 MHz, 2619 MHz\n"
    "7, NVIDIA H100 80GB HBM3, 00000000:DB:00.0, 1, 16, 1980 MHz, 2619 MHz\n";

TEST(GpuLinks, NvidiaSmiCsv) {
  const std::vector<SmiGpu> g = parse_nvidia_smi_csv(kSmi);
  ASSERT_EQ(g.size(), 4u);
  EXPECT_EQ(g[0].index, 0);
  EXPECT_EQ(g[0].name, "NVIDIA H100 80GB HBM3");
  EXPECT_EQ(g[0].bus_id, "00000000:18:00.0");
  EXPECT_EQ(g[0].sm_clock_max_mhz, 1980);
  EXPECT_EQ(g[0].mem_clock_max_mhz, 2619);
  EXPECT_EQ(g[0].link.gen, 5u);
  EXPECT_EQ(g[0].link.width, 16u);
  EXPECT_NEAR(g[0].link.gbytes, 63.0, 0.01);
  EXPECT_EQ(g[0].link.detail, "PCIe gen 5 x16 (nvidia-smi: max gen, width now)");
  EXPECT_NEAR(g[2].link.gbytes, 31.5, 0.01);  // x8
  EXPECT_EQ(g[2].index, 5);
  EXPECT_NEAR(g[3].link.gbytes, 4.0, 0.01);  // gen 1 x16: 16 x 0.25 (no maximum asked for)
}

// The doctor's query: the generation's maximum at the width now. GPU 7 idle at gen 1 is no slow link
// (it read 4 GB/s by the current generation); GPU 5 trained at x8 in an x16 slot is, and shows.
TEST(GpuLinks, NvidiaSmiMaxGenerationWidthNow) {
  const std::vector<SmiGpu> g = parse_nvidia_smi_csv(
      "index, pci.bus_id, pcie.link.gen.current, pcie.link.width.current, pcie.link.gen.max, pcie.link.width.max\n"
      "5, 00000000:AB:00.0, 5, 8, 5, 16\n"
      "7, 00000000:DB:00.0, 1, 16, 5, 16\n");
  ASSERT_EQ(g.size(), 2u);
  EXPECT_NEAR(g[0].link.gbytes, 31.5, 0.01);
  EXPECT_EQ(g[0].link.detail, "PCIe gen 5 x8 (nvidia-smi: max gen, width now)");
  EXPECT_NEAR(g[1].link.gbytes, 63.0, 0.01);
  EXPECT_EQ(g[1].link.detail, "PCIe gen 5 x16 (nvidia-smi: max gen, width now)");
  // The rule itself, as NVML's readings take it: each reading stands in for the other not known.
  EXPECT_EQ(trained_link(5, 1, 16, 8, "NVML").detail, "PCIe gen 5 x8 (NVML)");
  EXPECT_EQ(trained_link(0, 4, 16, 0, "NVML").detail, "PCIe gen 4 x16 (NVML)");
  EXPECT_EQ(trained_link(0, 0, 16, 16, "NVML").gbytes, 0);
}

TEST(GpuLinks, NvidiaSmiNoUnitsOtherOrderAndNotAvailable) {
  const std::vector<SmiGpu> g = parse_nvidia_smi_csv(
      "pci.bus_id, index, clocks.max.mem, pcie.link.gen.max, pcie.link.width.max, pcie.link.gen.current\n"
      "00000000:07:00.0, 0, 1215, 4, 16, [N/A]\n");
  ASSERT_EQ(g.size(), 1u);
  EXPECT_EQ(g[0].mem_clock_max_mhz, 1215);
  EXPECT_EQ(g[0].gen_current, 0u);
  EXPECT_NEAR(g[0].link.gbytes, 31.5, 0.01);  // current not given: the maximum
  EXPECT_EQ(g[0].link.detail, "PCIe gen 4 x16 (nvidia-smi: max gen, width now)");
  const std::vector<SmiGpu> none = parse_nvidia_smi_csv("index, name\n0, Tesla V100-SXM2-16GB\n");
  EXPECT_EQ(none[0].link.gbytes, 0);
  EXPECT_EQ(none[0].link.detail, "nvidia-smi: max gen, width now: PCIe generation not known");
}

TEST(GpuLinks, NvidiaSmiRefusals) {
  EXPECT_THROW(parse_nvidia_smi_csv(""), std::invalid_argument);
  EXPECT_THROW(parse_nvidia_smi_csv("0, NVIDIA H100, 00000000:18:00.0\n"), std::invalid_argument);  // noheader
  EXPECT_THROW(parse_nvidia_smi_csv("index, name\n0\n"), std::invalid_argument);
  try {
    parse_nvidia_smi_csv("index, clocks.max.sm [MHz]\n0, fast\n");
    FAIL();
  } catch (const std::invalid_argument& e) {
    EXPECT_STREQ(e.what(), "nvidia-smi CSV: column clocks.max.sm: 'fast' is not a number");
  }
}

TEST(GpuLinks, SysfsSpeedText) {
  EXPECT_EQ(pcie_gen_of_speed("16.0 GT/s PCIe"), 4u);
  EXPECT_EQ(pcie_gen_of_speed("32.0 GT/s PCIe\n"), 5u);
  EXPECT_EQ(pcie_gen_of_speed("8 GT/s"), 3u);  // older kernels
  EXPECT_EQ(pcie_gen_of_speed("2.5 GT/s PCIe"), 1u);
  EXPECT_EQ(pcie_gen_of_speed("Unknown speed"), 0u);
  EXPECT_EQ(pcie_gen_of_speed("12 GT/s"), 0u);
}

TEST(GpuLinks, SysfsTree) {
  EXPECT_EQ(sysfs_address("00000000:AB:00.0"), "0000:ab:00.0");
  EXPECT_EQ(sysfs_address("0000:18:00.0"), "0000:18:00.0");
  const fs::path sys = fs::temp_directory_path() / ("gpu-links-" + std::to_string(::getpid()));
  const fs::path dev = sys / "bus/pci/devices/0000:ab:00.0";
  fs::create_directories(dev);
  std::ofstream(dev / "current_link_speed") << "32.0 GT/s PCIe\n";
  std::ofstream(dev / "current_link_width") << "8\n";
  const PcieLink l = sysfs_link_of(sys.string(), "00000000:AB:00.0");
  EXPECT_EQ(l.gen, 5u);
  EXPECT_EQ(l.width, 8u);
  EXPECT_NEAR(l.gbytes, 31.5, 0.01);
  EXPECT_EQ(l.detail, "PCIe gen 5 x8 (sysfs: max speed, width now)");
  // An idle GPU at gen 1 in a gen 5 x16 slot, trained at x16: the slot's generation, not 4 GB/s.
  const fs::path idle = sys / "bus/pci/devices/0000:db:00.0";
  fs::create_directories(idle);
  std::ofstream(idle / "current_link_speed") << "2.5 GT/s PCIe\n";
  std::ofstream(idle / "max_link_speed") << "32.0 GT/s PCIe\n";
  std::ofstream(idle / "current_link_width") << "16\n";
  std::ofstream(idle / "max_link_width") << "16\n";
  EXPECT_NEAR(sysfs_link_of(sys.string(), "00000000:DB:00.0").gbytes, 63.0, 0.01);
  // Text that is no rate: unknown, with what was read.
  const fs::path odd = sys / "bus/pci/devices/0000:07:00.0";
  fs::create_directories(odd);
  std::ofstream(odd / "current_link_speed") << "Unknown speed\n";
  std::ofstream(odd / "current_link_width") << "0\n";
  const PcieLink unknown = sysfs_link_of(sys.string(), "00000000:07:00.0");
  EXPECT_EQ(unknown.gbytes, 0);
  EXPECT_EQ(unknown.detail,
            "sysfs: max speed, width now: PCIe generation not known (speed '' at most, 'Unknown speed' now; width '0' "
            "now, '' at most)");
  const PcieLink missing = sysfs_link_of(sys.string(), "00000000:18:00.0");
  EXPECT_EQ(missing.gbytes, 0);
  EXPECT_NE(missing.detail.find("no PCIe link files"), std::string::npos);
  fs::remove_all(sys);
}

// A two-socket node: CPUs 0-3 on NUMA node 0, 4-7 on node 1, the GPU at AB:00.0 on node 1.
TEST(GpuLinks, HostMemoryNearItsGpu) {
  const fs::path sys = fs::temp_directory_path() / ("gpu-numa-" + std::to_string(::getpid()));
  fs::create_directories(sys / "devices/system/node/node0");
  fs::create_directories(sys / "devices/system/node/node1");
  fs::create_directories(sys / "devices/system/node/possible_not_a_node");
  std::ofstream(sys / "devices/system/node/node0/cpulist") << "0-3\n";
  std::ofstream(sys / "devices/system/node/node1/cpulist") << "4-7\n";
  const fs::path dev = sys / "bus/pci/devices/0000:ab:00.0";
  fs::create_directories(dev);
  std::ofstream(dev / "numa_node") << "1\n";
  const fs::path one = sys / "bus/pci/devices/0000:18:00.0";  // a one-node machine writes -1
  fs::create_directories(one);
  std::ofstream(one / "numa_node") << "-1\n";
  EXPECT_EQ(sysfs_numa_node(sys.string(), "00000000:AB:00.0"), 1);
  EXPECT_EQ(sysfs_numa_node(sys.string(), "00000000:18:00.0"), -1);
  EXPECT_EQ(sysfs_numa_node(sys.string(), "00000000:07:00.0"), -1);  // no such device
  EXPECT_EQ(numa_nodes_of(sys.string(), {4, 5}), std::vector<int>{1});
  EXPECT_EQ(numa_nodes_of(sys.string(), {0, 1}), std::vector<int>{0});
  EXPECT_EQ(numa_nodes_of(sys.string(), {3, 4}), (std::vector<int>{0, 1}));
  EXPECT_TRUE(numa_nodes_of((sys / "none").string(), {0}).empty());
  // The memory placed on the GPU's node: nothing to say unless the rank is bound to another node.
  EXPECT_EQ(host_memory_placement(1, {1}, ""), "");
  EXPECT_EQ(host_memory_placement(1, {0, 1}, ""), "");
  EXPECT_EQ(host_memory_placement(1, {0}, ""),
            "the GPU is on NUMA node 1, the rank's CPUs on node 0: its pinned host memory is placed on the GPU's "
            "node, and the rank's own work crosses to it (bind each rank near its GPU: mpirun --map-by numa, srun "
            "--cpu-bind)");
  // Not placed (the kernel refused): bound near its GPU: nothing to say; bound to the other
  // socket: said; not bound: said, each with the reason.
  const std::string refused = "mbind to node 1: Operation not permitted";
  EXPECT_EQ(host_memory_placement(1, {1}, refused), "");
  EXPECT_EQ(host_memory_placement(1, {0}, refused),
            "the GPU is on NUMA node 1, the rank's CPUs on node 0: its pinned host memory could not be placed on "
            "the GPU's node (mbind to node 1: Operation not permitted): it is on the other socket, and its host "
            "copies cross between them (bind each rank near its GPU: mpirun --map-by numa, srun --cpu-bind)");
  EXPECT_EQ(host_memory_placement(1, {0, 1}, refused),
            "the GPU is on NUMA node 1, the rank may run on nodes 0,1 (not bound to one): its pinned host memory "
            "could not be placed on the GPU's node (mbind to node 1: Operation not permitted): it is on whichever "
            "node the rank first touched it from");
  EXPECT_EQ(host_memory_placement(-1, {0}, refused), "");
  EXPECT_EQ(host_memory_placement(0, {}, refused), "");
  fs::remove_all(sys);
}

}  // namespace
}  // namespace commscope::machine
