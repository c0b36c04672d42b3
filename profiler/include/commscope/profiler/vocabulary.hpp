#pragma once
// The profile's vocabulary, written and read in one place: the labels of communicators and links
// (an Event's `communicator`: what the trainer, the PMPI library and the imports write, and the
// one parser the replay, the Chakra export and import and the report read them with), and what a
// communication event's name says it is (the one classifier the replay and the Chakra export and
// import use). docs/profile-format.md describes both.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "commscope/formats/profile.hpp"
#include "commscope/model/collective_model.hpp"

namespace commscope::profiler {

// --- labels

// The label of a communicator, by which its collectives are matched across its members (an
// Event's `communicator`): its kind and its members' ranks in the job, "tp[0,1]",
// "dp[0,2,4,6]" (ranks ascending; more than four in steps of one stride as "first:last:step",
// "dp[0:62:2]"). Every member computes the same label, and communicators of one kind whose
// members differ get different labels. `instance` tells apart communicators with the same
// members: the k-th one created with them (from 0), "mpi[0,1]#1" for the second; the first
// carries no suffix, as labels did before it existed.
std::string communicator_label(std::string_view kind, std::vector<int> world_ranks, int instance = 0);
// The label of an intercommunicator between two groups (world ranks), "mpi[0,1|2,3]": the group
// holding the lowest rank first, so that both sides compute the same label; `instance` as above.
std::string intercommunicator_label(std::string_view kind, std::vector<int> a, std::vector<int> b, int instance = 0);
// The label of the messages from one rank to another, "pp[0>2]" (world ranks): a send and the
// receive that takes it are one matched instance, numbered in the order they are made.
std::string link_label(std::string_view kind, int from, int to);

// A label taken apart: the one reader of what the three functions above write (the replay's
// groups, the Chakra export's peers and group sizes, the report's replay comparison).
struct ParsedLabel {
  std::string kind;          // "tp", "mpi", ... (letters, digits, '_')
  std::vector<int> members;  // world ranks, ascending (an intercommunicator: both groups'); a link: {from, to}
  bool link = false;         // "pp[0>2]": the messages from members[0] to members[1]
  bool inter = false;        // "mpi[0,1|2,3]": an intercommunicator
  int instance = 0;          // "#k": the k-th communicator with these members; 0 when none is written
};
// nullopt for anything else ("" too), with the reason in *why when given ("'x' is not a rank").
std::optional<ParsedLabel> parse_label(std::string_view label, std::string* why = nullptr);

// --- communication names

// What a communication event's name says it is. kWait: a recorded completion (MPI_Wait*,
// MPI_Test*: "wait", "test").
enum class CallKind : std::uint8_t { kCollective, kBarrier, kSend, kRecv, kWait };

struct CallName {
  CallKind kind = CallKind::kCollective;
  Collective collective = Collective::allreduce;  // kCollective only (sendrecv: MPI_Sendrecv's shift)
  // Whether the name is the call itself: its last word ('.' parts), in lower-case letters and
  // without MPI's, NCCL's or c10d's prefix, is a collective's word, alone or with _max, v, _block,
  // _base or _coalesced ("tp.allreduce_max", "MPI_Allgatherv", "_reduce_scatter_base", "iallreduce"),
  // "barrier", a completion (wait, waitall, waitany, waitsome, test, testall, testany, testsome),
  // a send (send, isend, ssend, bsend) or a receive (recv, irecv), or one of those after an 'i'
  // (a nonblocking post: "issend", "ibarrier"). False: a longer name only mentions one (an NCCL
  // kernel "ncclKernel_Broadcast_RING_LL", PyTorch's "aten::all_reduce.out", MPI's "alltoallw" or
  // "MPI_Mrecv"): a message by the name's end (send, recv; not sendrecv), else the first of
  // allreduce, reducescatter, allgather, alltoall, broadcast (bcast), barrier, reduce, gather,
  // scatter, sendrecv it contains, in lower case without '_' and '-'. The replay replays the exact
  // ones only; Chakra has a type for either.
  bool exact = true;
  bool nonblocking = false;  // exact, and a nonblocking post: "isend", "irecv", "MPI_Iallreduce", "ibarrier"
};
// nullopt for a name that is none of these ("scan", "probe", "MPI_Start", "compute").
std::optional<CallName> classify_call(std::string_view name);

// --- a communication event as a call

// What a communication event of a profile is, as the bench would run it: its communicator (the
// label, "" for the profiled one, whose members are the profile's ranks) and size, its call, the
// algorithm its writer named and its bytes. The one reading of an event that the bench's
// --from-profile and the report's "Communication in the step" share.
struct ProfiledCall {
  std::string label;
  int group_size = 0;  // members; 0 where the label does not parse
  bool link = false;   // a message between two ranks ("pp[0>2]")
  bool inter = false;  // an intercommunicator's
  std::optional<CallName> call;
  // The writer's name for it ("mpi", "ring"); an imported NCCL kernel's detail names the kernel,
  // which is NCCL's own choice: "nccl"; a process group (an import's host call) names none: "".
  std::string algorithm;
  std::int64_t bytes = 0;
  // An exact collective: one the bench has a case of.
  bool collective() const { return call && call->exact && call->kind == CallKind::kCollective; }
};
ProfiledCall profiled_call(const Profile& profile, const Event& e);

}  // namespace commscope::profiler
