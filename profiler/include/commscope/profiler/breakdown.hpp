#pragma once
// The iteration breakdown (docs/profiler.md is the contract; the definitions of docs/design.md):
// per rank and iteration window W,
//   C = union of communication intervals, K = union of compute intervals (kernels, memcpy, memset),
//   comm = |C|, kernel = |K minus C|, overlap = |K and C|,
//   every idle piece of W minus (C or K) lies between a previous thing p and a next thing q
//   (an activity, or an operator's begin/end marker on the host timeline; the window's edges
//   are "nothing"); it is intra-op dispatch when p and q belong to operator instances one of
//   which encloses the other (or the same one), inter-op dispatch otherwise,
//   comm + kernel + intra + inter = |W| exactly, in integer ns,
//   comm = wait + transfer: wait is the part of a communication activity before the slowest
//   rank arrived at the same collective instance (same communicator and sequence number).
// All functions here are pure: they are unit tested with hand-computed timelines.

#include <cstddef>
#include <cstdint>
#include <limits>
#include <span>
#include <unordered_map>
#include <vector>

#include "commscope/formats/events.hpp"
#include "commscope/formats/profile.hpp"

namespace commscope::profiler {

inline constexpr std::int64_t kNoArrival = std::numeric_limits<std::int64_t>::min();

enum class ActivityClass : std::uint8_t { kCompute, kCommunication };

struct Activity {
  std::int64_t start_ns = 0;
  std::int64_t end_ns = 0;
  ActivityClass cls = ActivityClass::kCompute;
  std::uint64_t op = 0;                     // innermost operator instance, 0 = none
  std::uint32_t communicator = 0;           // communication: its communicator's label (string id)
  std::int64_t seq = -1;                    // communication: instance within the communicator (after
                                            // number_instances: across all of them), -1 = unknown
  std::int64_t wait_until_ns = kNoArrival;  // communication: local time the slowest rank arrived
  std::uint32_t source = 0;                 // build_timeline: the index of its event in the rank's events
};

// An operator's begin or end on the host timeline. Markers split idle gaps; in a span of
// markers, the order of those with equal times is their record order.
struct Marker {
  std::int64_t t_ns = 0;
  std::uint64_t op = 0;
};

// Operator instances and their parents.
class OperatorTree {
 public:
  void add(std::uint64_t id, std::uint64_t parent);
  // a == b, or one is an ancestor of the other; false when either is 0.
  bool related(std::uint64_t a, std::uint64_t b) const;
  // 0 for "none", 1 for a root operator, ...
  int depth(std::uint64_t id) const;

 private:
  std::unordered_map<std::uint64_t, std::uint64_t> parent_;
};

struct Components {
  std::int64_t window_ns = 0;
  std::int64_t kernel_ns = 0;
  std::int64_t intra_ns = 0;
  std::int64_t inter_ns = 0;
  std::int64_t comm_ns = 0;
  std::int64_t comm_wait_ns = 0;
  std::int64_t comm_transfer_ns = 0;
  std::int64_t overlap_ns = 0;

  bool identity_holds() const noexcept {
    return kernel_ns + intra_ns + inter_ns + comm_ns == window_ns && comm_wait_ns + comm_transfer_ns == comm_ns &&
           kernel_ns >= 0 && intra_ns >= 0 && inter_ns >= 0 && comm_wait_ns >= 0 && comm_transfer_ns >= 0;
  }
};

// A piece of time [start_ns, end_ns).
struct Interval {
  std::int64_t start_ns = 0;
  std::int64_t end_ns = 0;
};
// The intra-op gaps attributed to each operator instance, in time order per instance.
using IntraGaps = std::unordered_map<std::uint64_t, std::vector<Interval>>;

// The breakdown of one window [start, end). Activities and markers may extend beyond it (they
// are clipped) and come in any order (markers: ties in record order). intra_by_op, when given,
// receives each intra-op gap, appended to the deeper of its two operators.
Components breakdown_window(std::int64_t start_ns, std::int64_t end_ns, std::span<const Activity> activities,
                            std::span<const Marker> markers, const OperatorTree& tree,
                            IntraGaps* intra_by_op = nullptr);

// One communication activity's part of a window's communication C: each piece of C goes to the
// earliest-started communication in progress (ties: the first listed), and is wait, overlap or
// neither by breakdown_window's rules (some communication in progress still waits for its slowest
// member; compute runs). So over a window's activities the shares' comm, wait and overlap sum to
// its Components' comm_ns, comm_wait_ns and overlap_ns exactly. One share per communication
// activity that holds a piece, in the activities' order; `activity` indexes `activities`.
struct CommShare {
  std::size_t activity = 0;
  std::int64_t comm_ns = 0;
  std::int64_t wait_ns = 0;
  std::int64_t overlap_ns = 0;
};
std::vector<CommShare> communication_shares(std::int64_t start_ns, std::int64_t end_ns,
                                            std::span<const Activity> activities);

// |union of the intervals| (any order, overlaps counted once).
std::int64_t union_ns(std::vector<Interval> intervals);

// Which timeline a rank's breakdown uses: the host thread (CPU runs: compute sections and
// blocking collectives) or the device (CUPTI: kernels, memcpy, memset, NCCL kernels, plus each
// host communication scope that no NCCL kernel carries out: a collective the host drives, such
// as host-staged MPI, whose transfers and waits happen on the host; its device kernels and
// copies, which carry its id, are communication too).
enum class Timeline : std::uint8_t { kHost, kDevice };

struct Window {
  std::int32_t iteration = 0;
  std::int64_t start_ns = 0;
  std::int64_t end_ns = 0;
};

// A rank's events rearranged for the breakdown. Host timeline: compute = host kKernel, kMemcpy,
// kMemset; communication = host kCommunication; markers = operator begins and ends. Device
// timeline: see above; no markers (operator scopes are host times).
struct RankTimeline {
  std::vector<Window> windows;  // kIteration events, in start order
  std::vector<Activity> activities;
  std::vector<Marker> markers;
  OperatorTree tree;
};
RankTimeline build_timeline(std::span<const Event> events, Timeline timeline);

// Every communication activity's share of each iteration window it overlaps (communication_shares),
// per window in order: what commscope-report profile sets against the same calls alone. Per
// window the shares sum to analyze_rank's row (comm_ns, comm_wait_ns, overlap_ns).
struct CallShare {
  std::int32_t iteration = 0;
  std::uint32_t event = 0;  // the activity's source: its event's index in the rank's events
  std::int64_t comm_ns = 0;
  std::int64_t wait_ns = 0;
  std::int64_t overlap_ns = 0;
};
std::vector<CallShare> call_shares(const RankTimeline& timeline);

// Instances are matched across ranks by (communicator, seq), the communicator's string id in a
// table shared by the ranks. To match them with one dense vector: each communicator's instance
// count on this rank (max seq + 1, indexed by string id), their element-wise max over the ranks,
// then number_instances, which renumbers every activity's seq as the communicators' instances
// laid end to end (communicator c's instance s: the counts of c' < c, plus s). The same counts
// give the same numbers on every rank.
std::vector<std::int64_t> instance_counts(const RankTimeline& timeline);
void number_instances(RankTimeline& timeline, std::span<const std::int64_t> counts);

// Each collective instance's arrival on this rank, on rank 0's clock (local + clock_offset_ns):
// the earliest start of its communication activities; kNoArrival where the rank has none.
// Indexed by seq (numbered across communicators); the size is max(seq + 1, min_size).
std::vector<std::int64_t> collective_arrivals(const RankTimeline& timeline, std::int64_t clock_offset_ns,
                                              std::size_t min_size = 0);
// Element-wise max (growing `into` when `other` is longer): the slowest rank's arrival.
void merge_latest_arrivals(std::vector<std::int64_t>& into, std::span<const std::int64_t> other);
// Sets each communication activity's wait_until_ns from the latest arrivals (rank 0's clock).
void apply_latest_arrivals(RankTimeline& timeline, std::span<const std::int64_t> latest, std::int64_t clock_offset_ns);

struct RankBreakdown {
  std::vector<BreakdownRow> rows;           // one per window, in order
  std::vector<OperatorTotalRow> operators;  // one per operator name, by name id
};
// Breakdown rows (start_ns on rank 0's clock) and per-operator totals of one rank. Per operator
// instance, with K and C the unions of the compute and communication activities it launched
// itself, I its intra-op gaps (disjoint from every activity) and S its scope [start, end):
// comm = |C|, kernel = |K minus C|, intra = |I|, total = |S or K or C or I| (on a device
// timeline its kernels run after its scope has ended), so total - kernel - comm - intra =
// |S minus (K or C or I)| >= 0: its scope's time outside its own work (nested operators, launching).
RankBreakdown analyze_rank(std::int32_t rank, std::span<const Event> events, const RankTimeline& timeline,
                           std::int64_t clock_offset_ns);

// The ranks' timelines matched as analyze_ranks matches them (instances numbered, every
// communication's wait_until_ns set from the latest arrivals), with each rank's own arrivals and
// the latest, on rank 0's clock, by numbered instance. events[r], clock_offsets_ns[r] and
// timelines[r] are rank r's.
struct MatchedRanks {
  std::vector<RankTimeline> timelines;
  std::vector<std::vector<std::int64_t>> arrivals;
  std::vector<std::int64_t> latest;
};
MatchedRanks match_ranks(std::span<const std::vector<Event>> events, std::span<const std::int64_t> clock_offsets_ns,
                         std::span<const Timeline> timelines);

// The breakdown of several ranks held in one process (an imported trace): each rank's timeline,
// the instances numbered and their arrivals merged over all ranks (what Session::finish does
// with MPI_Allreduce(MAX)), then analyze_rank. events[r] and clock_offsets_ns[r] are rank r's;
// their string ids (the communicators') are one table's.
std::vector<RankBreakdown> analyze_ranks(std::span<const std::vector<Event>> events,
                                         std::span<const std::int64_t> clock_offsets_ns, Timeline timeline);

// One iteration of a profile in the mean over its (rank, iteration) rows, in ms: what a tool
// prints after a profiled run.
struct StepSummary {
  std::size_t rows = 0;
  double window_ms = 0, kernel_ms = 0, intra_ms = 0, inter_ms = 0, comm_ms = 0, comm_wait_ms = 0;
};
StepSummary summarize(const Profile& profile);

}  // namespace commscope::profiler
