// The machine model of a run, detected on each node and gathered to rank 0 (docs/bench.md, "The
// machine model"): host, online CPUs, visible GPUs, the memory copy rate (measured), the link
// between a node's ranks (shm: the copy rate; GPUs: NVLink or PCIe from NVML) and the NIC's nominal
// rate (/sys/class/infiniband's active ports, else the speed of the interface that carries the
// traffic to the other nodes). What the system cannot say is left unknown with the reason in the
// figure's detail; the user's --machine and --link-rate and the doctor's pairs complete it.
#pragma once

#include <mpi.h>

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "commscope/model/machine_model.hpp"

namespace commscope::machine {

// GB/s per NVLink link and direction by NVML's version code (nvmlNvlinkVersion_t: 1 = 1.0,
// 2 = 2.0, 3 = 2.2, 4 = 3.0, 5 = 3.1, 6 = 4.0, 7 = 5.0; older drivers said 1 to 4 plainly, which
// the same table covers): 20 for NVLink 1, 25 for 2 to 4, 50 for 5; 0 for a code not known.
double nvlink_gbytes_per_link(unsigned version);
// GB/s per PCIe lane and direction by generation, after line coding (gen 3: 0.985); 0 unknown.
double pcie_gbytes_per_lane(unsigned gen);

// The interface whose default route /proc/net/route's text names (destination 00000000); "" none.
std::string default_route_interface(std::string_view proc_net_route);

// The interface MPI's TCP traffic takes: the first of Open MPI's btl_tcp_if_include list
// (OMPI_MCA_btl_tcp_if_include: names, or CIDRs matched against this host's IPv4 addresses),
// else the default route's. `why` says which rule picked it.
std::string traffic_interface(std::string& why);

// The node's link to the others from a sysfs tree (`sys` is "/sys", or a test's copy): the fastest
// ACTIVE port under class/infiniband/*/ports/*/ (its rate file, "200 Gb/sec (4X HDR)"), else
// class/net/IFACE/speed in Mb/s. Unknown (source none, the reason in detail) where the speed
// is -1, unreadable, or there is no interface.
Rate nic_rate(const std::string& sys, const std::string& iface);

// Bytes copied per second (GB/s) by memcpy of `bytes` (the best of `reps` timed copies after one
// untimed); smaller buffers are tried when `bytes` cannot be allocated. `detail` says what ran;
// `spread`, where given, how far the copies moved (stats::spread_of).
double host_copy_rate(std::size_t bytes, int reps, std::string& detail, double* spread = nullptr,
                      std::size_t* used = nullptr);
// The rates of a node by size, measured with every rank of the node at once
// (machine_curves.cpp): per rank size S from kCurveFirstBytes by 4x to `largest`, each rank's
// memcpy of S (copy; and through cache-resident slots, into, out_of and reduce_slot) and a ring
// exchange of S among the node's ranks, each rank sending to the next and receiving from the
// previous (exchange: per flow), and one message alone, a ping-pong between its first two ranks
// (one: half a round trip); the exchange and the ping-pong also from kLinkCurveFirstBytes by 2x
// below kCurveFirstBytes, and (self) each rank's exchange of the first size with itself. Each the
// fastest of kCurveReps samples of back-to-back calls (kCurveBatchBytes a sample for the copy, a
// quarter of it for the exchange, fewer where they would take over kCurveSampleSeconds), the
// slowest rank's.
// Points are keyed by a rank's working set, 2 S (its two buffers), as buffer_bytes_per_rank keys
// a row (the model reads the exchange's at the algorithm's messages). About 1.2 s on 2 ranks of
// the 2-core VM to 64 MiB.
struct NodeCurves {
  std::vector<CurvePoint> copy, exchange;
  // S bytes through slots of kCurveSlotBytes that stay in the caches, a slot at a time: from the
  // rank's buffer into one (into), and from one into the buffer (out_of; non-temporal stores from
  // kStreamOutputBytes, as shm writes its outputs): how shm's steps move a large array. Where the
  // node's ranks share memory and are two or more (slots_between_ranks), the slots are handed from
  // core to core as shm's are: each rank copies into its own and out of the previous rank's, and
  // (reduce_slot) sums the previous rank's into its buffer as f32, each part timed alone; else
  // each rank copies into and out of its own slot, and reduce_slot is empty.
  std::vector<CurvePoint> into, out_of, reduce_slot;
  bool slots_between_ranks = false;
  // S bytes of f32 summed from one of its buffers into the other (reduce_host): the reductions' rate.
  std::vector<CurvePoint> reduce;
  std::vector<CurvePoint> one;  // one message alone: a ping-pong between the node's first two ranks
  // A message's call alone: each rank's MPI_Sendrecv of kLinkCurveFirstBytes with itself, every
  // rank at once (no transfer between cores: the library's own cost of a call), one point.
  std::vector<CurvePoint> self;
  double exchange_spread = 0;  // how far the largest exchange's samples moved (stats::spread_of)
  double one_spread = 0;       // and the largest ping-pong's
  std::size_t largest = 0;     // its S
};
// Collective over `node` (one node's ranks); `copy`, `exchange`: which to measure (the exchange
// needs two ranks or more).
NodeCurves measure_node_curves(MPI_Comm node, bool copy, bool exchange, std::size_t largest);
// kCurveFirstBytes, 4x that, ... below `largest` (at least kCurveFirstBytes), then `largest`.
std::vector<std::size_t> curve_sizes(std::size_t largest);
inline constexpr std::size_t kCurveFirstBytes = 8 << 10;
// The exchange's and the ping-pong's first size: from it by 2x to kCurveFirstBytes, the small
// messages whose protocol changes (eager to rendezvous) a 4x grid would miss, down to a message
// whose time is its fixed costs alone (the model's least time of a message: docs/verdicts.md).
inline constexpr std::size_t kLinkCurveFirstBytes = 8;
// The most calls of a sample of the small messages (8192 exchanges of 8 B: about 1.3 ms on the
// 2-core VM, well above the clock; by bytes alone, 500 thousand).
inline constexpr std::size_t kLinkCurveMaxCalls = 8192;
// A sample's calls fill at most this time at the pace of the first kCurvePaceCalls (the slowest
// rank's; machine_curves.cpp's paced): above the 8192 exchanges of 8 B (1.3 ms) on 2 ranks of the
// quiet 2-core VM; a point whose full count takes longer there is cut to about 2 ms, and a node
// whose ranks wait for cores gets a few calls a sample instead of thousands.
inline constexpr double kCurveSampleSeconds = 2e-3;
inline constexpr std::size_t kCurvePaceCalls = 8;
inline constexpr std::size_t kCurveBatchBytes = 16 << 20;
inline constexpr int kCurveReps = 4;
inline constexpr std::size_t kCurveSlotBytes = 256 << 10;  // shm's step (ShmOptions::chunk_bytes' default)
// A node of `ranks` ranks probes per rank buffers of copy_probe_bytes() / ranks, at least 4 MiB:
// together past the last-level cache, as the copy probe is alone.
std::size_t curve_largest_bytes(int ranks);
// The start-up's copy probe: the fastest of 8 copies (about 0.2 s at 10 GB/s and 256 MiB), so that
// the spread of the machine's own figure is known (docs/verdicts.md, "Stable inputs").
inline constexpr int kCopyProbeReps = 8;

// The buffer the copy rate is measured on: twice the last-level cache, 32 to 256 MiB.
std::size_t copy_probe_bytes();

// A ping-pong's shape: `passes` of up to `round_trips` round trips of `bytes` (a pass stops
// sooner past `pass_budget_s`, after at least 4), after `warmup` untimed ones; each round trip is
// timed alone. The probes take the fastest round trip: on a loaded machine one where either rank
// lost its core takes a scheduler's slice (a 2-core VM at load 14 read 5 ms per message as the
// mean of the best pass, 0.25-0.5 us as the fastest round trip).
struct PingPongShape {
  std::size_t bytes = 8;
  int warmup = 10;
  int passes = 10;
  int round_trips = 20;
  double pass_budget_s = 0.001;
};
// The latency probe: 8 B, the fastest of 10 passes of up to 20 round trips (1 ms each at most).
inline constexpr PingPongShape kLatencyProbe{};
// Between this rank and `peer` of `comm` (both call it; `first` on exactly one of them): each
// pass's fastest half round trip in microseconds on the `first` rank, nothing on the other.
std::vector<double> pingpong_half_round_trips_us(MPI_Comm comm, int peer, bool first, const PingPongShape& shape);

// What the start-up need not measure, because the user's entries (--machine, --doctor) give it
// (per host its copy rate and its intra rate, and the latency) or nothing records the model.
struct GivenFigures {
  std::vector<MachineEntry> entries;
  // false: nothing is measured (no --out or -J records the model; the header shows what the
  // system says, the copy and intra rates and the latency as not measured).
  bool measure = true;
  bool gives(std::string_view host, std::string_view key) const;  // a node entry naming host with key
  bool gives_latency() const;                                     // a machine entry with latency_us
};

// This rank's host as MPI_Get_processor_name gives it ("unknown" where it gives none).
std::string processor_name();
// The CUDA devices this process sees; 0 without a driver or device, or in a build without CUDA.
int visible_gpus();

// Collective over `comm`: each node's first rank measures its node (the others wait asleep); on
// the host every rank of each node then measures its rates by size together (measure_node_curves:
// the copy rate's curve, and the rate between its ranks, a ring exchange among them, per flow,
// with its curve), the nodes side by side; rank 0 receives every node, in the order of the nodes'
// first ranks (nodes are host names, as MPI_Get_processor_name gives them). `device` "cuda": the
// copy is the device-to-device copy and the intra-node link NVLink or PCIe (CUDA builds), without
// curves. Then, one pair at a time while the other ranks sleep, the latency (kLatencyProbe between
// rank 0 and the first rank of every other node, and between the first two ranks of every node
// with two or more; alpha the largest pair's fastest round trip / 2). What `given` gives is not
// measured (--machine fills it in). The model is complete on rank 0 only.
MachineModel detect_machine(MPI_Comm comm, const std::string& device, double timeout_s, const GivenFigures& given = {});

// Collective over `comm` at the end of a run: the latency probe and each node's rates by size
// again (as detect_machine, with the same `given`; the rates not on a GPU device), and rank 0's
// `model` keeps the faster latency and each point's faster figure, each with how far it moved
// between the two moments (keep_faster_latency, keep_faster; the details say so). Nothing where
// nothing records the model.
void measure_again(MPI_Comm comm, const std::string& device, double timeout_s, const GivenFigures& given,
                   MachineModel& model);

// --doctor FILE: the model's doctor_entries over the file's pairs (per host its nic_measured, and
// the latency where the file has one and its ranks did not outnumber their CPUs), and for a run on
// GPUs (`gpus`) doctor_gpu_entries over its GPU pairs (per host with measured peer copies its intra
// and intra_one). `note`, where given: why the file's latency is not taken, "" where it is or has
// none (doctor_latency_not_taken). Throws InvalidArgument naming the file when it cannot be read as
// a doctor file.
std::vector<MachineEntry> doctor_link_entries(const std::string& path, bool gpus = false, std::string* note = nullptr);

// The model as the bench's header prints it: "# machine: host1: 2 ranks, 4 CPUs, ..." per node.
std::vector<std::string> machine_lines(const MachineModel& model);
// Each node's load during the run, as the bench prints it at the end: "# machine: vm during the
// run: 2 ranks and other processes' 0.31 CPUs on 2 CPUs, load average 0.52 before, 1.95 after"
// (": busy, ..." from kBusyContention on); none for a node whose load is unknown.
std::vector<std::string> load_lines(const MachineModel& model);
// "# machine: vm between the start and the end of the run: intra moved up to 76% (...)" per node
// whose rates by size moved between the two moments (measure_again), and the latency's likewise.
std::vector<std::string> moved_lines(const MachineModel& model);

}  // namespace commscope::machine
