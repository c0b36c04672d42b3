// The machine a run's numbers are judged against: per node its memory copy rate, its ranks and
// devices, the link between ranks inside it, and its link to the other nodes, each figure with
// where it came from (measured by the run, read from the system, given by the user, measured by
// the doctor). Written into a results file's header by the bench and read back by the report,
// which sets every row against the time the row's algorithm needs on this model.
// Dependency-free (the standard library only).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace commscope {

// Where a figure came from. `none`: not known (a verdict that needs it is not given; the report
// says what is missing instead).
enum class FigureSource : std::uint8_t { none, measured, system, user, doctor };

// A one-direction rate in GB/s (1e9 bytes per second) and its origin; `detail` says what it is
// ("memcpy 256 MiB", "eth0 1000 Mb/s", "mlx5_0 port 1 200 Gb/sec (4X HDR)", "NVLink 4 x18",
// "--link-rate host2=1gbit", "doctor pair host1-host2").
struct Rate {
  double gbytes_per_s = 0;
  FigureSource source = FigureSource::none;
  std::string detail;
  bool known() const { return source != FigureSource::none && gbytes_per_s > 0; }
};

struct NodeModel {
  std::string host;
  int ranks = 0;  // the run's ranks on this node
  int cpus = 0;   // online CPUs
  int gpus = 0;   // visible GPUs (0 on CPU-only nodes)
  Rate copy;      // memory copy rate (host memcpy; device-to-device copy on GPUs)
  Rate intra;     // between two ranks of this node (shm: derived from copy; NVLink or PCIe)
  Rate nic;       // this node's link to the other nodes (nominal or given)
  Rate nic_measured;  // the doctor's measured rate for this node's link, where a doctor file was given
};

struct MachineModel {
  std::vector<NodeModel> nodes;  // in the order of the nodes' first ranks
};

}  // namespace commscope
