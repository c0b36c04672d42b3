#pragma once
// Communication names between commscope's and Chakra's vocabularies: a profile's call (its name
// read by vocabulary.hpp's classify_call: "allreduce", "tp.allreduce_max", Kineto's
// "_allgather_base", an NCCL kernel's) to a CollectiveCommType, and a type back to a name.
#include <optional>
#include <string>
#include <string_view>

#include "chakra/et_trace.hpp"
#include "commscope/profiler/vocabulary.hpp"

namespace commscope::profiler::chakra {

// Chakra's type of a call (vocabulary.hpp's classify_call, the one reading of a profile's names):
// ALL_REDUCE, ..., BARRIER for the collectives Chakra has, ALL_TO_ALL for alltoallv too; nullopt
// for a message, a completion and sendrecv (no type of Chakra's).
std::optional<CommType> comm_type_of(const CallName& call);
// commscope's name of a collective type: "allreduce", ..., "reducescatter" (also for
// REDUCE_SCATTER_BLOCK), "barrier"; "collective" outside the enum.
std::string_view collective_name_of(std::int64_t comm_type);

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
