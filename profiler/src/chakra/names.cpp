#include "chakra/names.hpp"

#include <array>

namespace commscope::profiler::chakra {

std::optional<CommType> comm_type_of(const CallName& call) {
  if (call.kind == CallKind::kBarrier) return CommType::kBarrier;
  if (call.kind != CallKind::kCollective) return std::nullopt;
  switch (call.collective) {
    case Collective::allreduce:
      return CommType::kAllReduce;
    case Collective::reducescatter:
      return CommType::kReduceScatter;
    case Collective::allgather:
      return CommType::kAllGather;
    case Collective::alltoall:
    case Collective::alltoallv:
      return CommType::kAllToAll;
    case Collective::broadcast:
      return CommType::kBroadcast;
    case Collective::reduce:
      return CommType::kReduce;
    case Collective::gather:
      return CommType::kGather;
    case Collective::scatter:
      return CommType::kScatter;
    case Collective::sendrecv:
      return std::nullopt;
  }
  return std::nullopt;
}

std::string_view collective_name_of(std::int64_t comm_type) {
  static constexpr std::array<std::string_view, kCommTypeCount> kNames = {
      "allreduce", "reduce",   "allgather",     "gather",        "scatter",
      "broadcast", "alltoall", "reducescatter", "reducescatter", "barrier"};
  return comm_type >= 0 && comm_type < kCommTypeCount ? kNames[static_cast<std::size_t>(comm_type)] : "collective";
}

std::optional<int> label_members(std::string_view label) {
  const std::optional<ParsedLabel> parsed = profiler::parse_label(label);  // vocabulary.hpp: the one reader
  if (!parsed || parsed->link) return std::nullopt;
  return static_cast<int>(parsed->members.size());
}

bool per_rank_comm_size(CommType type) {
  return type == CommType::kAllGather || type == CommType::kGather;
}

}  // namespace commscope::profiler::chakra
