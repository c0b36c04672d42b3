// The figures of a node's GPUs as the system states them, read from text so that tests give
// recorded text (commscope-doctor --device cuda, docs/doctor.md "GPU nodes"): nvidia-smi's CSV
// (`nvidia-smi --query-gpu=index,name,pci.bus_id,pcie.link.gen.current,pcie.link.width.current,
// pcie.link.gen.max,pcie.link.width.max,clocks.max.sm,clocks.max.mem --format=csv`, with or
// without its header's units and the values'), and the PCIe link files of sysfs
// (/sys/bus/pci/devices/ADDR/max_link_speed "32.0 GT/s PCIe", current_link_width "16", and their
// current_ and max_ siblings). The link's rate is width x pcie_gbytes_per_lane(gen)
// (machine_detect.hpp), at the generation and width of trained_link: NVML's readings, nvidia-smi's
// and sysfs's alike.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace commscope::machine {

// A GPU's link to its host.
struct PcieLink {
  unsigned gen = 0, width = 0;  // 0: not known
  double gbytes = 0;            // per direction, 1e9 bytes/s; 0 where gen or width is not known
  std::string detail;           // "PCIe gen 5 x16 (nvidia-smi)", or why it is not known
};
// width x pcie_gbytes_per_lane(gen), with `source` named in the detail.
PcieLink pcie_link(unsigned gen, unsigned width, const std::string& source);
// The one rule for a GPU's PCIe link (the doctor's host link, the bench's machine model): the most
// its generation can be (an idle GPU lowers its link's generation, gen 1 at rest being usual, which
// is no fault) at the width it trained to now (a link trained narrower than its slot keeps its
// width low, and shows); each from the other reading where one is 0 (not known).
PcieLink trained_link(unsigned gen_max, unsigned gen_now, unsigned width_max, unsigned width_now,
                      const std::string& source);

// One row of nvidia-smi's CSV. Numbers not given ("[N/A]", "[Not Supported]", a column not
// asked for) stay 0.
struct SmiGpu {
  int index = -1;
  std::string name, bus_id;  // bus_id as nvidia-smi writes it: "00000000:18:00.0"
  unsigned gen_current = 0, width_current = 0, gen_max = 0, width_max = 0;
  double sm_clock_max_mhz = 0, mem_clock_max_mhz = 0;
  PcieLink link;  // trained_link of the four
};
// The rows of `text`, its first line the header naming the columns (any order; "clocks.max.mem"
// and "clocks.max.memory" alike; "[MHz]" after a name ignored). Throws std::invalid_argument with
// a one-line reason for text that is not such CSV (no header, a row of another width, a number
// that is not one).
std::vector<SmiGpu> parse_nvidia_smi_csv(std::string_view text);

// "16.0 GT/s PCIe" (or "8 GT/s", "2.5 GT/s") -> its generation (4); 0 for a speed not known
// ("Unknown speed", text that is not a rate).
unsigned pcie_gen_of_speed(std::string_view speed);
// The sysfs device directory's name of nvidia-smi's bus id: "00000000:18:00.0" -> "0000:18:00.0"
// (a 4-digit domain, lower case).
std::string sysfs_address(std::string_view bus_id);
// The link of the device at `bus_id` from a sysfs tree (`sys` is "/sys", or a test's copy):
// trained_link of its bus/pci/devices/ADDR/{max,current}_link_{speed,width}; unknown, the reason in
// detail, where none is there or none can be read.
PcieLink sysfs_link_of(const std::string& sys, std::string_view bus_id);

// The NUMA node of the device at `bus_id` (bus/pci/devices/ADDR/numa_node of the sysfs tree
// `sys`), -1 where the system does not say (one node: -1).
int sysfs_numa_node(const std::string& sys, std::string_view bus_id);
// The NUMA nodes holding any of `cpus` (devices/system/node/nodeN/cpulist), ascending; empty where
// the tree has none.
std::vector<int> numa_nodes_of(const std::string& sys, const std::vector<int>& cpus);
// What a rank should hear of where its pinned host memory lies against its GPU on NUMA node
// `gpu_node`, the rank's CPUs on `rank_nodes`. Where the memory was placed on the GPU's node
// (`not_placed` empty: common/numa_memory.hpp) the host copies stay on its socket, and only a rank
// bound to another node hears of it (its own work crosses); where it could not be (`not_placed`
// says why), a page lands on the node of the CPU that first touches it, and a rank bound away from
// the GPU or not bound to one hears that its host copies may cross between sockets. "" where there
// is nothing to say or either node is not known.
std::string host_memory_placement(int gpu_node, const std::vector<int>& rank_nodes, const std::string& not_placed);

}  // namespace commscope::machine
