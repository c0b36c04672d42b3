#pragma once
// What commscope-replay replays: each recorded rank's ordered communication, taken from a
// profile (commscope.profile/1), and the ranks of a replay that play them (docs/replay.md).
// No MPI here: the plan and the mapping are made the same way on every replay rank from the
// same file, so every rank takes the same decisions without talking to the others.

#include <cstdint>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "commscope/collectives/types.hpp"
#include "commscope/formats/profile.hpp"
#include "commscope/profiler/vocabulary.hpp"

namespace commscope::replay {

// A profile that cannot be replayed (no communication, a group that cannot be rebuilt, a
// mapping that does not fit): what() is one line.
class PlanError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// What a recorded call is (profiler/vocabulary.hpp, the profile's one reading of its names).
// kWait: a recorded completion (MPI_Wait*, MPI_Test*: "wait", "test"), which completes the posted
// ops its `completes` names.
using OpKind = profiler::CallKind;

// A recorded communicator as its label names it (profiler::parse_label).
struct GroupLabel {
  std::string kind;          // "tp", "dp", "pp", ...; "" for the profiled communicator
  std::vector<int> members;  // recorded world ranks, ascending; a link: {from, to}
  bool link = false;         // "pp[0>2]": the messages from members[0] to members[1]
  bool inter = false;        // "mpi[0,1|2,3]": an intercommunicator (its collectives are not replayed)
};
// "tp[0,1]" -> {tp, {0,1}}; "dp[0:62:2]" -> {dp, {0,2,...,62}}; "pp[1>3]" -> link {1,3}; ""
// -> every one of `nranks` ranks; "mpi[0,1]#1" (a second communicator of ranks 0 and 1) ->
// {mpi, {0,1}}, a group of its own as its label differs. Throws PlanError for anything else.
GroupLabel parse_group_label(const std::string& label, int nranks);

// One communication of a rank, in the order the rank made them.
struct ReplayOp {
  OpKind kind = OpKind::kCollective;
  Collective collective = Collective::allreduce;  // kCollective only
  std::string name;                               // as recorded ("tp.allreduce", "MPI_Bcast", "pp.send")
  std::string group;                              // the recorded communicator label ("": all ranks)
  std::int64_t bytes = 0;                         // as recorded (the bench's S; a message's bytes)
  std::int64_t gap_before_ns = 0;                 // recorded time from the previous op's end (or the iteration's start)
  std::int64_t recorded_ns = 0;                   // the recorded call's duration
  int peer = -1;                                  // kSend / kRecv: the other side's recorded world rank
  std::int64_t start_ns = 0, end_ns = 0;          // the recorded call, on rank 0's clock (pairing messages)
  // Posted (a nonblocking call: isend, irecv, iallreduce, ibarrier; an MPI_Sendrecv's send; any
  // send of a rank that recorded no completions, as the trainer's): replayed nonblocking and
  // completed later, by the op whose `completes` names its `request` (a kWait; a sendrecv's
  // receive), or at its iteration's end (ReplayIteration::completes_at_end), else at the end of
  // the replay (completion.cpp).
  bool posted = false;
  std::int64_t request = -1;  // posted: its number on this rank (from 0, in order)
  // kWait: the requests it completes; an MPI_Sendrecv's receive (blocking): its send's, completed
  // once the receive is done.
  std::vector<std::int64_t> completes;
};
// A receive posted and completed later (MPI_Irecv: "irecv"), not a blocking one.
inline bool posted_receive(const ReplayOp& op) {
  return op.kind == OpKind::kRecv && op.posted;
}

// One recorded iteration of a rank (number -1: a run of communication outside every iteration,
// before the first, between two or after the last, in its recorded place).
struct ReplayIteration {
  std::int32_t number = -1;
  std::int64_t window_ns = 0;  // the recorded iteration's duration (0 outside iterations)
  std::int64_t tail_ns = 0;    // recorded time from the last op's end to the iteration's end
  std::int64_t start_ns = 0;   // the recorded iteration's start, on rank 0's clock (0 outside iterations)
  std::vector<ReplayOp> ops;
  std::vector<std::int64_t> completes_at_end;  // requests completed at its end (a rank without completions)
};

struct RankPlan {
  std::vector<ReplayIteration> iterations;  // in recorded order
  // Communication events that are not replayed, by name ("wait", "MPI_Scan", a message whose
  // other side is unknown): said in the output, never silently left out.
  std::map<std::string, std::int64_t> skipped;
};

struct ReplayPlan {
  int recorded_ranks = 0;
  std::vector<RankPlan> ranks;               // by recorded rank
  std::map<std::string, GroupLabel> groups;  // every collective's label, parsed
  std::int64_t resized = 0;                  // ops whose group's members recorded other bytes: replayed at the largest
  std::map<int, std::int64_t> lost_events;   // recorded rank -> events its profiler dropped (buffers full)
  std::int64_t ops() const;                  // replayable ops over all ranks
};

// The plan of `profile` (with its events), its first `max_iterations` iterations (<= 0: all).
// A call recorded twice (profiler/calls.hpp: a host call and its device kernel, a posted send and
// the 0-byte completion repeating its name, communicator and seq) is replayed once. Throws
// PlanError for a profile without communication or a label that cannot be parsed or names a rank
// the profile does not have.
ReplayPlan make_plan(const profiler::Profile& profile, int max_iterations = 0);

// How a collective or message named `name` is replayed: profiler::classify_call's reading where
// the name is the call itself (`exact`); nullopt: not replayable (skipped), as a name that only
// mentions a collective ("ncclKernel_AllReduce_RING_LL", "alltoallw").
std::optional<profiler::CallName> replayed_call(std::string_view name);

// Which recorded rank each replay rank plays (docs/replay.md, "Mapping"): as many ranks as
// recorded, each its own; fewer, the recorded ranks `chosen` (default: the first `given`).
// A group keeps its played members and each member's bytes (a gather's S shrinks with it);
// a message to or from a rank nobody plays is dropped, and counted.
struct RankMapping {
  std::vector<int> recorded;  // by replay rank: the recorded rank it plays
  int recorded_ranks = 0;
  bool identity() const;                     // every recorded rank, each by the replay rank of its number
  int replay_rank(int recorded_rank) const;  // -1: not played
  std::string describe() const;              // one line: what the mapping did
};
// Throws PlanError: more ranks given than recorded, a chosen rank out of range or repeated, or
// `chosen` not `given` long.
RankMapping map_ranks(int recorded_ranks, int given, const std::vector<int>& chosen = {});

// Makes the played members of every group agree on each call: where they recorded other bytes
// (an imported trace's uneven all_to_all) all replay the largest, counted in plan.resized.
// Throws PlanError where they ran other collectives, in number or kind (two ranks of a larger
// job whose groups the trace does not name): those ranks cannot be replayed together; the
// error names the ranks whose profiler dropped events (buffers full), the likely reason then.
void harmonize(ReplayPlan& plan, const RankMapping& mapping);

// How the played ranks start their iterations: where every played rank recorded the same
// iterations (numbers >= 0, in the same order; the runs outside them aside), by the rank's
// iteration (its plan's order; 0 for a run outside the iterations, which starts as it comes), how
// long after the earliest played rank `recorded_rank` started it (ns, rank 0's clock); else
// empty. The replay starts those iterations together and each rank that much later, as
// recorded: the trainer's ranks meet between steps in a collective it does not profile (the
// stop check), so a rank whose step ended sooner waited there, outside the step; replayed back
// to back, it waited in the next step's first collective instead.
std::vector<std::int64_t> iteration_leads(const ReplayPlan& plan, const RankMapping& mapping, int recorded_rank);

// The played members of a group (recorded world ranks, ascending).
std::vector<int> played_members(const GroupLabel& group, const RankMapping& mapping);

// A collective's per-rank element count and type: f32 when the per-rank bytes are a multiple
// of 4, else bytes (u8); per-rank bytes = S for allreduce, reduce, broadcast, sendrecv, and
// S / recorded members for allgather, gather, reducescatter, scatter, alltoall(v).
struct Elements {
  std::size_t count = 0;
  DataType type = DataType::f32;
};
Elements elements_of(Collective c, std::int64_t bytes, int recorded_members);

}  // namespace commscope::replay
