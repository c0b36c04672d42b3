#pragma once
// Communication names between commscope's and Chakra's vocabularies: a profile's communication
// event name ("allreduce", "tp.allreduce_max", "MPI_Allgather"'s "allgather", Kineto's
// "_allgather_base", "pp.send") to a CollectiveCommType or a message direction, and back.
#include <optional>
#include <string>
#include <string_view>

#include "chakra/et_trace.hpp"

namespace commscope::profiler::chakra {

enum class Message : std::uint8_t { kNone, kSend, kRecv };

// The name in lower case without '_' and '-' ("tp.allreduce_max" -> "tp.allreducemax"). A group
// prefix stays: the rules below look for words inside the name or at its end, and a name's last
// '.' is not always a group's ("aten::all_reduce.out").
std::string normalized_name(std::string_view name);
// The collective a name says, by the first of allreduce, reducescatter, allgather, alltoall,
// broadcast (bcast), barrier, reduce, gather, scatter it contains; nullopt for none (send, scan).
std::optional<CommType> comm_type_of(std::string_view name);
// A message's direction: send, isend, ssend, ... / recv, irecv, mrecv, ...; kNone for sendrecv
// (both ways) and everything else.
Message message_of(std::string_view name);
// commscope's name of a collective type: "allreduce", ..., "reducescatter" (also for
// REDUCE_SCATTER_BLOCK), "barrier"; "collective" outside the enum.
std::string_view collective_name_of(std::int64_t comm_type);

// A communicator label "tp[0,1]" or link label "pp[0>2]" taken apart (profiler::parse_label):
// its kind and, for a link, the two ranks (from = -1 when it is no link).
struct Label {
  std::string kind;
  int from = -1, to = -1;
};
std::optional<Label> parse_label(std::string_view label);
// How many ranks a communicator label names ("tp[0,1]": 2, "dp[0:62:2]": 32, "mpi[0,1]#1": 2; an
// intercommunicator's both groups), read by profiler::parse_label; nullopt for a link, or a label
// that is not one.
std::optional<int> label_members(std::string_view label);

// Whether Chakra's comm_size of a collective of this type is one rank's part, not the whole array
// (a profile's bytes, the bench's S): ALL_GATHER and GATHER, as ASTRA-sim's collectives and
// Chakra's PyTorch converter (the input tensor's bytes) read it.
bool per_rank_comm_size(CommType type);

}  // namespace commscope::profiler::chakra

namespace commscope::profiler::chakra {

// The GlobalMetadata.version commscope writes: Chakra's release of the schema it follows.
inline constexpr std::string_view kSchemaVersion = "1.0.0";
// GlobalMetadata attribute "source" of the traces export_chakra writes.
inline constexpr std::string_view kExportSource = "commscope-export chakra";

// Node attributes of Chakra's own that commscope reads and writes (et_feeder_node.cpp's names).
namespace attr {
inline constexpr std::string_view kCommType = "comm_type", kCommSize = "comm_size", kCommSrc = "comm_src",
                                  kCommDst = "comm_dst", kCommTag = "comm_tag", kPgName = "pg_name",
                                  kIsCpuOp = "is_cpu_op";
// commscope's own, so that a profile exported and imported again keeps what Chakra has no field
// for: the event's name and detail, its iteration and instance number, and times in ns.
inline constexpr std::string_view kName = "commscope.name", kDetail = "commscope.detail",
                                  kIteration = "commscope.iteration", kSeq = "commscope.seq",
                                  kStartNs = "commscope.start_ns", kDurationNs = "commscope.duration_ns",
                                  // a per-rank comm_size's whole array, where the members do not divide it
    kBytes = "commscope.bytes";
}  // namespace attr

}  // namespace commscope::profiler::chakra
