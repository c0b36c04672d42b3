// One rank's Kineto trace between the import's three stages (kineto_import.cpp): read from its
// file (read.hpp), linked on the rank (link.hpp), matched across ranks (match.hpp).
#pragma once

#include <cstddef>
#include <cstdint>
#include <limits>
#include <string>
#include <unordered_map>
#include <vector>

#include "commscope/formats/events.hpp"
#include "commscope/profiler/kineto_import.hpp"

namespace commscope::profiler::kineto {

// What a collective call carries (from record_param_comms / nccl:* arguments or an NCCL kernel's).
struct CommInfo {
  std::string collective;
  std::string pg;
  std::int64_t bytes = -1;
  std::int64_t seq = -1;
  std::vector<int> pg_ranks;  // the process group's global ranks, where the trace names them
};

// One rank's trace after reading: events with absolute ns times.
struct RankTrace {
  KinetoRankReport report;
  bool has_rank = false;
  std::int64_t base_ns = 0;  // baseTimeNanoseconds
  bool has_base = false;
  std::vector<Event> events;
  std::vector<std::int64_t> external;                      // per event: External id, -1 none
  std::unordered_map<std::size_t, CommInfo> comm;          // event index -> collective arguments
  std::unordered_map<std::string, std::uint32_t> threads;  // "pid/tid" -> host thread index
  std::int64_t min_ts = std::numeric_limits<std::int64_t>::max();
  std::uint64_t next_id = 1;
  // After linking:
  std::int64_t epoch_ns = 0;  // subtracted from every time
  std::int64_t offset_ns = 0;
  std::int64_t error_ns = 0;
};

}  // namespace commscope::profiler::kineto
