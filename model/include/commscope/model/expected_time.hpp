// The time a collective should take on a machine model (issue 34's expected value of a bench
// row): the algorithm's own cost terms (collective_model.hpp) priced with the model's links, the
// slowest link each step crosses, per level for hier. The bench computes it at the end of a run;
// the report recomputes it for files that recorded a model. Formulas: docs/verdicts.md.
// Dependency-free (the standard library only).
#pragma once

#include <algorithm>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "commscope/model/collective_model.hpp"
#include "commscope/model/machine_model.hpp"

namespace commscope {

// Which kind of link bounds a time: a node's memory (shm's copies, reductions, one rank's copy),
// the link between two ranks of a node, a node's link to the others.
enum class LinkLevel : std::uint8_t { none, memory, intra, inter };
std::string_view link_level_name(LinkLevel level);  // "", "memory", "intra-node", "inter-node"

// The link whose time is the largest part of an expected time.
struct LimitingLink {
  LinkLevel level = LinkLevel::none;
  std::string host;      // the node it belongs to
  double link_GBps = 0;  // its rate, one direction (GB/s, 1e9 B/s)
  int sharing = 1;       // flows of one step through it at once (each gets link_GBps / sharing)
  FigureSource source = FigureSource::none;
  std::string detail;  // the model's detail of the figure ("eth0 1000 Mb/s", "memcpy 256 MiB, halved: ...")
  double spread = 0;   // the figure's Rate::spread (how far its probe's repeats moved)
  double moved = 0;    // how far it moved at this size between the run's two moments (moved_at)
  // A rate between ranks read at the algorithm's messages (on its curve): the time of the curve's
  // smallest message (us), which no smaller message beats; a message's fixed cost, counted with
  // the latency (Expectation::latency_us). 0 for every other rate.
  double message_floor_us = 0;
  // With it, the node's call of a message alone (NodeModel::self_exchange, us; 0 where unknown).
  double call_us = 0;
  std::string call_detail{};  // that figure's detail
};

struct ExpectationOptions {
  // The pipeline segment of the ring's reduce and broadcast chains (AlgoOptions::segment_bytes).
  double ring_segment_bytes = 1 << 20;
  // shm's settings (hier's node level too); nullopt: the library's defaults for the node's ranks.
  std::optional<ShmCostSettings> shm;
  // From this many bytes shm measures its direct reads against its segment on each call and runs
  // the faster (ShmOptions::adapt_bytes, --shm-adapt; infinity: never): priced as the faster of
  // the two's terms.
  double shm_adapt_bytes = 262144;
  // The latency per message to price with instead of the model's (latency_of_run prices a row with
  // none, to see what of its time the rates do not explain); nullopt: the model's.
  std::optional<double> latency_us;
  // The calls were timed back to back (the bench's -z 0, and -z 2: no barrier between calls): a
  // rooted collective's root returns before the others receive, so consecutive calls overlap and
  // a call's time may hide its messages' fixed part (Expectation::hidden_us).
  bool calls_overlap = false;
};

struct Expectation {
  std::optional<double> time_us;     // nullopt where the model lacks an input (`missing` says which)
  std::optional<double> busbw_GBps;  // busbw_factor x bytes / time; nullopt with time or on 1 rank
  // The messages' fixed part of time_us: `messages` x (alpha_us + the least time of a message on
  // the curve of the rate between ranks that priced them, where one did:
  // LimitingLink::message_floor_us).
  double latency_us = 0;
  double messages = 0;  // the alpha terms' count: the messages the latency is paid for
  // The cost per message beside its transfer: the model's latency; or where every step is between
  // ranks of one node on the rate's curve, whose points hold the transfer's latency already, the
  // node's call of a message alone (`call_priced`, LimitingLink::call_us, its detail `call_detail`).
  double alpha_us = 0;
  bool call_priced = false;
  std::string call_detail;
  // Where some of the steps are between ranks of one node on the rate's curve and the others
  // cross a link without one (between nodes): the share of the messages that pay the latency,
  // `crossing_alpha_us` each, while the others pay their node's call, `call_us` on average
  // (`call_detail`); alpha_us is then the mean over all of them. 1 (and 0, 0) everywhere else.
  double latency_share = 1;
  double crossing_alpha_us = 0;
  double call_us = 0;
  LimitingLink limit;
  // What was priced: "ring", "hier: shm in nodes, ring between them", "best of the textbook
  // algorithms (the library's choice is hidden): rabenseifner".
  std::string basis;
  std::vector<std::string> missing;  // "host2's link rate (NIC)", ...
  // Priced without the latency (a model that lacks it, at a size where even a generous latency
  // would be under 1/kLatencyFreeFactor of the time): "latency not in the model".
  bool latency_left_out = false;
  // The part of time_us that calls timed back to back may hide (ExpectationOptions::calls_overlap):
  // a rooted collective's latency_us, or where that is half the time or more all of time_us (the
  // rest is a message's least time on a curve whose small sizes are latency too); not shm's, whose
  // price already overlaps its roles; 0 else.
  double hidden_us = 0;
  // The latency term is at least half the expected time.
  bool latency_bound() const { return time_us && *time_us > 0 && latency_us >= 0.5 * *time_us; }
  // hidden_us's share of the expected time, 0 to 1 (0 where it has no time).
  double hidden_share() const {
    return hidden_us > 0 && time_us && *time_us > 0 ? std::min(hidden_us / *time_us, 1.0) : 0;
  }
};

// Without the model's latency, a size is priced with none where kLatencyFreeFactor x the
// algorithm's messages x a generous latency (kGenerousLatencyOneNodeUs between ranks of one node,
// kGenerousLatencyUs across nodes: 10-100x what shared memory and a TCP network take) is at most
// the time without it (the estimate then errs by under 5%); smaller sizes are not priced.
inline constexpr double kLatencyFreeFactor = 20;
inline constexpr double kGenerousLatencyOneNodeUs = 10;
inline constexpr double kGenerousLatencyUs = 100;

// The bytes of one rank's send and receive buffers for `c` of `bytes` (nccl-tests' size) on p
// ranks, out of place: 2 x bytes, or bytes + bytes / p for allgather, gather, reducescatter and
// scatter (one side holds one rank's part): the working set at which a rate with a curve
// (rate_at) prices the row, the copy rate its copies and the rate between a node's ranks its
// messages (docs/verdicts.md, "The rate of a size").
double buffer_bytes_per_rank(Collective c, double bytes, int p);

// Each rank's node: model.node_of_rank, or blocks of nodes[k].ranks in node order where it is
// empty. std::invalid_argument where the model's ranks and `nranks` disagree.
std::vector<int> placement_of(const MachineModel& model, int nranks);

// The expected time of `algorithm` ("ring", "rhd", "tree", "shm", "hier", "mpi", "nccl", and
// "nccl_tree": NCCL's pipelined tree allreduce, as NCCL_ALGO=Tree runs it) running
// `c` on the ranks of `node_of_rank` (indices into model.nodes) for an array of `bytes`
// (nccl-tests' size). alpha: model.latency_us per message (none: see kLatencyFreeFactor). Flat algorithms: each step's
// bytes at the rate of the slowest link it crosses (a node's link shared by the step's flows through it, each direction
// apart; between ranks of one node, the node's intra rate); hier: per level; nccl_tree (allreduce only): its chain in
// each node and its tree between them at once (nccl_tree_allreduce_cost_terms); shm: one node's copy rate; mpi, nccl:
// the fastest textbook algorithm (sendrecv: the ring's message); one rank: one copy of the array at the copy rate.
// Unknown algorithms and collectives without terms give `missing`.
Expectation expected_time(const MachineModel& model, std::span<const int> node_of_rank, Collective c,
                          std::string_view algorithm, double bytes, const ExpectationOptions& options = {});

}  // namespace commscope
