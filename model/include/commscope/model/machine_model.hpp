// The machine a run's numbers are judged against: per node its memory copy rate, its ranks and
// devices, the link between ranks inside it, and its link to the other nodes, each figure with
// where it came from (measured by the run, read from the system, given by the user, measured by
// the doctor). Written into a results file's header by the bench and read back by the report,
// which sets every row against the time the row's algorithm needs on this model.
// Dependency-free (the standard library only).
#pragma once

#include <cstdint>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace commscope {

// Where a figure came from. `none`: not known (a verdict that needs it is not given; the report
// says what is missing instead).
enum class FigureSource : std::uint8_t { none, measured, system, user, doctor };

// A rate at one size: each rank's working set of `bytes` (its buffers: the source and destination
// of a copy, the send and receive buffers of an exchange) moved at `gbytes_per_s` per rank or flow.
// `moved`: how far the size's figure moved between the run's two moments where it was measured
// again at the end (keep_faster), 1 - slower / faster; 0 where measured once.
struct CurvePoint {
  double bytes = 0;
  double gbytes_per_s = 0;
  double moved = 0;
};

// A one-direction rate in GB/s (1e9 bytes per second) and its origin; `detail` says what it is
// ("memcpy 256 MiB", "eth0 1000 Mb/s", "mlx5_0 port 1 200 Gb/sec (4X HDR)", "NVLink 4 x18",
// "--link-rate host2=1gbit", "doctor pair host1-host2").
struct Rate {
  double gbytes_per_s = 0;
  FigureSource source = FigureSource::none;
  std::string detail;
  // How far the figure moved over the probe's repeats: 1 - median / best (0: one repeat, or not
  // probed). The rate is the best repeat, the machine's capability; a verdict whose margin lies
  // inside this spread is not decided (docs/verdicts.md, "Stable inputs").
  double spread = 0;
  // The size of the buffers or messages the probe moved (bytes; 0 unknown: given, or written
  // before it was recorded): a rate measured past the cache prices sizes past it.
  double at_bytes = 0;
  // The rate by size, ascending in working set (docs/verdicts.md, "The rate of a size"): measured
  // at start-up on CPU nodes with every rank of the node at once, from the L1 to past the
  // last-level cache; empty where not measured (files written before it, GPUs, given figures),
  // and then the one rate prices every size.
  std::vector<CurvePoint> curve{};
  bool known() const { return source != FigureSource::none && gbytes_per_s > 0; }
};

// The rate for a rank's working set of `bytes`: the curve interpolated linearly in log2 of the
// size between its points, the nearest end outside them; gbytes_per_s where it has no curve.
double rate_at(const Rate& r, double bytes);
// The time in us of a point's message: half its bytes (a rank's working set is a message's two
// buffers) at its rate; the rates between ranks' least time of a message and a rank's call of one.
inline double message_us(const CurvePoint& p) {
  return p.bytes / 2 / (p.gbytes_per_s * 1e3);
}
// How far the figure for that working set moved between the run's two moments: the larger of its
// two neighbouring points' `moved` (the nearest end's outside them); 0 without a curve.
double moved_at(const Rate& r, double bytes);
// The same rate measured again at another moment (the end of a run, its curve at the same sizes):
// `r` keeps each point's faster figure, the machine's capability (and the faster of the two one
// figures where `again` has one), each point's `moved` at least how far it moved between the two,
// 1 - slower / faster, and its spread the larger of the two moments' (docs/verdicts.md, "Stable
// inputs"). A rate without a curve, or one whose sizes differ from `again`'s, is left as it is;
// returns whether `r` took `again` in.
bool keep_faster(Rate& r, const Rate& again);
// "16384:36.53,65536:36.42,..." and back, a point that moved between two moments with its
// movement third ("1048576:12.8:0.76"); MachineModelError for a bad point or sizes not ascending.
std::string curve_text(const std::vector<CurvePoint>& curve);
std::vector<CurvePoint> parse_curve(std::string_view text);

// What else a node was doing while the run ran (docs/verdicts.md, "A busy machine"): other
// processes' CPU time (the node's busy time in /proc/stat less the run's own ranks' CPU time)
// per second of the run, and /proc/loadavg's 1-minute figure before and after. Unknown
// (seconds 0) in files written before it was recorded, and where /proc is not readable.
struct NodeLoad {
  double seconds = 0;         // the wall time it was measured over
  double others_cpus = 0;     // other processes' CPU-seconds per second (1.5: one and a half CPUs)
  double loadavg_start = -1;  // /proc/loadavg's first figure when the run started (-1 unknown)
  double loadavg_end = -1;    // and when it ended
  // The CPU-seconds per second the run's own ranks on the node had (2 ranks that each had half a
  // CPU: 1); -1 unknown (files written before it).
  double ranks_cpus = -1;
  // The seconds per second the ranks were ready to run but waited for a CPU (the scheduler's run
  // delay of their threads, /proc/PID/task/*/schedstat), summed over them; -1 unknown.
  double ranks_queued = -1;
  // 1 where the MPI library's idle ranks yield the CPU (Open MPI's mpi_yield_when_idle, which it
  // sets where the ranks outnumber the slots), 0 where they spin or sleep, -1 unknown (files
  // written before it). A yielding thread stays ready to run while it waits for a message, so its
  // run delay counts the waits for messages as well as for a CPU.
  double ranks_yield = -1;
  bool known() const { return seconds > 0; }
};

struct NodeModel {
  std::string host;
  int ranks = 0;     // the run's ranks on this node
  int cpus = 0;      // online CPUs
  int gpus = 0;      // visible GPUs (0 on CPU-only nodes)
  Rate copy;         // memory copy rate (host memcpy; device-to-device copy on GPUs)
  Rate copy_in;      // from a rank's buffer into a slot that stays in the caches (shm's steps); unknown: copy
  Rate copy_out;     // from such a slot into a rank's buffer, streamed where large; unknown: copy
  Rate reduce;       // bytes reduced per second (f32 sum of one buffer into another); unknown: copy
  Rate reduce_slot;  // f32 sums of a slot another rank of the node just wrote into a rank's buffer
                     // (shm's reductions); unknown: reduce, in the caches
  Rate intra;        // between two ranks of this node, each flow with every rank at once (shm: derived
                     // from copy; NVLink or PCIe)
  Rate intra_one;    // one message alone between two of its ranks (a chain's step); unknown: intra
  // A rank's exchange of a small message with itself (one point, a message of half its bytes): the
  // library's cost of a call without a transfer between cores, a step's software beside its message.
  Rate self_exchange;
  Rate nic;           // this node's link to the other nodes (nominal or given)
  Rate nic_measured;  // the doctor's measured rate for this node's link, where a doctor file was given
  NodeLoad load;      // what else ran on the node during the run (the bench records it at the end)
};

// keep_faster for every rate of `n` (those measured by size take `again`'s in); each that took it
// in gains `note` at the end of its detail.
void keep_faster(NodeModel& n, const NodeModel& again, std::string_view note);
// A node's CPU contention during a run, how much slower its ranks ran for want of a CPU, at least
// 1; 1 where the load was not recorded. Where the ranks' run delay was recorded: (the CPU they had
// + the time they waited for one) / the CPU they had (2 ranks beside 2 busy processes on 2 CPUs had
// 1 CPU and waited 1: 2; a rank that slept in a blocking call beside busy CPUs waited for none: 1).
// Else (files before it) (its ranks + other processes' CPUs) / its CPUs, and where other processes
// ran its ranks / the CPU open to them, the larger: every rank of an MPI job takes a whole CPU
// while it waits (it polls), so 4 ranks on 2 CPUs read 2.
double contention(const NodeModel& n);
// A node counts as busy from this contention on (docs/verdicts.md): its ranks had at most 1/1.1
// of the CPU time they would have had alone.
inline constexpr double kBusyContention = 1.1;
// "2 ranks and other processes' 1.3 CPUs on 2 CPUs" ("2 ranks on 2 CPUs" where the others took
// under 0.05 CPU); "" where the load was not recorded.
std::string describe_load(const NodeModel& n);
// What moved between the run's two moments on `n` (keep_faster), the rates by their largest
// movement, most first: "intra moved up to 76% (at 1 MiB a rank, 12.8 GB/s at its faster moment),
// intra_one 70% (...)"; "" where nothing was measured again or nothing moved.
std::string describe_moved(const NodeModel& n);

struct MachineModel {
  std::vector<NodeModel> nodes;  // in the order of the nodes' first ranks
  // Each rank's node (an index into `nodes`), in rank order; empty: consecutive blocks of
  // nodes[k].ranks ranks in node order (mpirun's default mapping).
  std::vector<int> node_of_rank;
  // The latency of one small message between two ranks (us), the expected values' alpha: the
  // doctor's 8 B half round trip (the largest over its pairs) where a doctor file was given, a
  // machine file's, else the bench's own 8 B ping-pong at start-up (docs/verdicts.md, "Alpha").
  double latency_us = 0;
  FigureSource latency_source = FigureSource::none;
  std::string latency_detail;  // "8 B ping-pong, median of 3 passes of 100 round trips, ..."
  double latency_spread = 0;   // as Rate::spread: 1 - best / median over the probe's passes
  // As CurvePoint::moved: how far it moved between the run's two moments (measured again at the
  // end, keep_faster_latency), 1 - slower / faster; 0 where measured once.
  double latency_moved = 0;
  bool latency_known() const { return latency_source != FigureSource::none && latency_us > 0; }
};

// The latency measured again at another moment (the end of a run): where both were measured, `m`
// keeps the faster, the larger of the two spreads, its latency_moved at least how far the two moved
// apart (1 - slower / faster) and `note` at the end of its detail; returns whether it took `again` in.
bool keep_faster_latency(MachineModel& m, const MachineModel& again, std::string_view note);

// ---------------------------------------------------------------------------- text form
// One line per node, `node` then key=value fields (docs/bench.md, "The machine model"):
//
//   node host=host1 ranks=2 cpus=4 gpus=0 copy=9.8GB/s copy.source=measured
//        copy.detail="memcpy 256 MiB, best of 4" nic=0.125GB/s nic.source=user ...
//
// keys: host, ranks, cpus, gpus, and per rate (copy, copy_in, copy_out, reduce, reduce_slot, intra, intra_one,
// nic, nic_measured) the rate with its
// unit, RATE.source (none measured system user doctor), RATE.detail, RATE.spread (a fraction) and
// RATE.bytes (the size it was measured at), RATE.curve (the rate by size, curve_text);
// the load during the run: load.seconds, load.others_cpus, load.loadavg_start, load.loadavg_end. The figures of the
// whole machine on one `machine` line, after the nodes where the model has any:
//
//   machine latency_us=1.25 latency.source=measured latency.detail="8 B ping-pong, ..." latency.spread=0.12
//           latency.moved=0.6
//
// (latency_us in microseconds; a text without the line reads as a model without a latency). A value with blanks,
// quotes, '#' or '=' is double-quoted with \" and \\ escapes; '#' starts a comment outside quotes.
// The same text is the machine file a user writes: any subset of the fields, `host=*` for every
// node, a rate without a source taken as the user's.

// Bad text or a bad rate: what and where, one line ("line 3: unknown key 'nics'").
struct MachineModelError : std::invalid_argument {
  using std::invalid_argument::invalid_argument;
};

std::string_view to_string(FigureSource s);

// A rate as people write it, in GB/s (1e9 bytes/s): tc's bits per second (100mbit, 1gbit,
// 25gbit, also 10Gb/s, 200Gbit) or bytes with a slash (12.5GB/s, 900MB/s). Throws
// MachineModelError for anything else, zero or negative.
double parse_rate(std::string_view text);
// "12.5GB/s": the shortest text parse_rate reads back as the same double.
std::string rate_text(double gbytes_per_s);

// One line of a machine file: the host it names ("*": every node) and its fields as written;
// `machine`: a `machine` line (the whole machine's figures, no host).
struct MachineEntry {
  std::string host;
  std::vector<std::pair<std::string, std::string>> fields;  // key, value (unquoted), host left out
  int line = 0;
  bool machine = false;
};

// Parses the text form. Throws MachineModelError naming the line for a line not starting with
// `node` or `machine`, an unknown key, a bad value, a missing host. `unknown_keys_ok`: keys of a later version
// are skipped (reading a file's header) instead of refused (a user's file).
std::vector<MachineEntry> parse_machine_entries(std::string_view text, bool unknown_keys_ok = false);

// One direction of one rank pair as commscope-doctor measured it in one pass (docs/doctor.md): its
// half round trip and its rate, NaN or 0 where not measured. The report's reading of a doctor file
// gives these (analysis's DoctorPair); the bench converts the file's rows.
struct PairMeasurement {
  std::int64_t src = 0, dst = 0;
  std::string src_host, dst_host;
  double latency_us = 0, bandwidth_GBps = 0;  // half round trip; src -> dst, 1e9 bytes/s
};

// --doctor FILE's figures as a machine file's entries (`file_name` in their details): per host its
// nic_measured, the fastest of its host pairs, a pair's figure being its slower direction at its
// best pass (a pair crosses both hosts' links, so each is at least that fast, and a slow host's
// link slows all its pairs while the others keep their fast ones); and a `machine` entry with the
// latency (alpha, what a message between nodes pays: the largest over the rank pairs between hosts
// of the pair's best 8 B half round trip, over all pairs where none is between hosts; source
// doctor) where a pair measured one and `oversubscribed` is empty. Pairs inside a node give no
// link rate. `oversubscribed`: the file's /meta/oversubscribed, where its ranks outnumbered their
// CPUs: a round trip there waits for the scheduler (the doctor's report does not judge it), and
// the latency is left to the caller's own measure (doctor_latency_not_taken says why).
std::vector<MachineEntry> doctor_entries(std::string_view file_name, std::span<const PairMeasurement> pairs,
                                         std::string_view oversubscribed = {});

// Why doctor_entries gives no latency for a file whose ranks outnumbered their CPUs, one line
// naming the file; "" where `oversubscribed` is empty.
std::string doctor_latency_not_taken(std::string_view file_name, std::string_view oversubscribed);

// One ordered pair of a node's GPUs as commscope-doctor --device cuda measured it (docs/doctor.md):
// the peer copy from src to dst alone, and both directions at once (the sum of the two); NaN or 0
// where not measured (no peer access). The report's reading of a doctor file gives these
// (analysis's DoctorPeer); the bench converts the file's rows.
struct GpuPairMeasurement {
  std::string host;
  std::int64_t src = 0, dst = 0;  // CUDA device indices on the node
  double oneway_GBps = 0, bidir_GBps = 0;
};

// --doctor FILE's GPU pairs as a machine file's entries for a run on GPUs (`file_name` in their
// details): per host with a measured pair, `intra` (a flow with the reverse one at once, as a
// ring's or a pairwise step's: half a pair's both-ways figure) and `intra_one` (one copy alone),
// each the median over the host's pairs, source doctor, the detail naming the slowest pair. The
// median is the node's link as its pairs measure it, so a collective that crosses a slow pair reads
// below it, as the doctor's report names that pair; hosts without peer access give none (their
// copies go through the host; the NVML figure stays).
std::vector<MachineEntry> doctor_gpu_entries(std::string_view file_name, std::span<const GpuPairMeasurement> pairs);

// --link-rate's HOST=RATE (HOST or *; RATE as parse_rate reads it): an entry giving that host's
// link rate (nic). Throws MachineModelError for another form or a bad rate.
MachineEntry link_rate_entry(std::string_view text);

// Sets a node's fields from an entry; a rate given without a source is the user's, with
// `origin` ("--machine m.txt line 3") as its detail unless the entry gives one. Throws
// MachineModelError for a bad value.
void apply_entry(NodeModel& node, const MachineEntry& entry, const std::string& origin);
// The same for a `machine` entry: the model's latency (latency_us given without a source is the
// user's, `origin` its detail). Throws MachineModelError for a bad value.
void apply_machine_entry(MachineModel& model, const MachineEntry& entry, const std::string& origin);

// Entries over a model, in order (later entries win): a `machine` entry on the model, a node's on
// each node it names (entry_names); origins[i] is entry i's detail (apply_entry). Returns a warning
// for each entry naming no node of the model ("... names host 'x', which this run has not"),
// none where every entry named one. Throws MachineModelError for a bad value.
std::vector<std::string> apply_entries(MachineModel& model, const std::vector<MachineEntry>& entries,
                                       const std::vector<std::string>& origins);

// Whether an entry names this node: "*", the same name, or the same name up to the first '.'
// (never for a `machine` entry).
bool entry_names(const MachineEntry& entry, std::string_view host);

// The model's text form, and back (one node per entry; the reader of a file's header skips
// unknown keys). to_text(from_text(t)) == t for any text to_text wrote.
std::string to_text(const MachineModel& model);
MachineModel from_text(std::string_view text);

}  // namespace commscope
