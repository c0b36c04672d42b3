#include "chakra/names.hpp"

#include <array>
#include <cctype>
#include <utility>

#include "commscope/profiler/events.hpp"

namespace commscope::profiler::chakra {

std::string normalized_name(std::string_view name) {
  std::string out;
  for (const char c : name)
    if (c != '_' && c != '-') out.push_back(static_cast<char>(std::tolower(static_cast<unsigned char>(c))));
  return out;
}

std::optional<CommType> comm_type_of(std::string_view name) {
  // Longer names first: "allreduce" holds "reduce", "reducescatter" holds "scatter".
  static constexpr std::array<std::pair<std::string_view, CommType>, 10> kOrder = {{
      {"allreduce", CommType::kAllReduce},
      {"reducescatter", CommType::kReduceScatter},
      {"allgather", CommType::kAllGather},
      {"alltoall", CommType::kAllToAll},
      {"broadcast", CommType::kBroadcast},
      {"bcast", CommType::kBroadcast},
      {"barrier", CommType::kBarrier},
      {"reduce", CommType::kReduce},
      {"gather", CommType::kGather},
      {"scatter", CommType::kScatter},
  }};
  const std::string n = normalized_name(name);
  for (const auto& [key, type] : kOrder)
    if (n.find(key) != std::string::npos) return type;
  return std::nullopt;
}

Message message_of(std::string_view name) {
  const std::string n = normalized_name(name);
  if (n.find("sendrecv") != std::string::npos) return Message::kNone;
  if (n.ends_with("send")) return Message::kSend;
  if (n.ends_with("recv")) return Message::kRecv;
  return Message::kNone;
}

std::string_view collective_name_of(std::int64_t comm_type) {
  static constexpr std::array<std::string_view, kCommTypeCount> kNames = {
      "allreduce", "reduce",   "allgather",     "gather",        "scatter",
      "broadcast", "alltoall", "reducescatter", "reducescatter", "barrier"};
  return comm_type >= 0 && comm_type < kCommTypeCount ? kNames[static_cast<std::size_t>(comm_type)] : "collective";
}

std::optional<Label> parse_label(std::string_view label) {
  const std::optional<ParsedLabel> parsed = profiler::parse_label(label);  // events.hpp: the one reader
  if (!parsed) return std::nullopt;
  Label out;
  out.kind = parsed->kind;
  if (parsed->link) out.from = parsed->members[0], out.to = parsed->members[1];
  return out;
}

std::optional<int> label_members(std::string_view label) {
  const std::optional<ParsedLabel> parsed = profiler::parse_label(label);  // events.hpp: the one reader
  if (!parsed || parsed->link) return std::nullopt;
  return static_cast<int>(parsed->members.size());
}

bool per_rank_comm_size(CommType type) {
  return type == CommType::kAllGather || type == CommType::kGather;
}

}  // namespace commscope::profiler::chakra
