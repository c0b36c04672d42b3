// Stage 3 of the Kineto import, across ranks: the collective instances of every rank matched
// with each other (one global sequence number per instance), then each rank's clock: one
// shared epoch, or offsets from the matched collectives' ends.
#pragma once

#include <cstdint>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "rank_trace.hpp"

namespace commscope::profiler::kineto {

// One collective instance on a rank: its communication events (the host call and the kernels
// it launched share the id).
struct Instance {
  std::uint64_t id = 0;             // communication id on the rank
  std::string key;                  // process group / collective
  std::int64_t seq = -1;            // the trace's own
  std::int64_t start = 0, end = 0;  // device activities if any, else the host call (absolute ns)
  bool device = false;
};

// The rank's instances in start order (the device activities' span where there are any, else
// the host call's); key and seq from the first event with collective arguments.
std::vector<Instance> instances_of(const RankTrace& r);

// Instances matched across ranks: per rank, comm id -> global seq, and the (rank 0 end, this
// rank's end) pairs of the instances matched with rank 0's (absolute ns).
struct Matching {
  std::string method;  // how: "by process group and sequence number", ...
  std::vector<std::unordered_map<std::uint64_t, std::int64_t>> seq_of;
  std::vector<std::vector<std::pair<std::int64_t, std::int64_t>>> ends;
};

// By (process group, seq) when every instance has a seq; else, on a shared clock, the
// instances of one key whose intervals overlap rank 0's; else by order within each key.
Matching match_collectives(const std::vector<std::vector<Instance>>& inst, bool shared);

// Per rank, its collective instances with a partner: a global seq (seq_of: comm id -> global
// seq, per rank) that another rank also holds. One rank alone has none.
std::vector<std::int64_t> matched_counts(const std::vector<std::unordered_map<std::uint64_t, std::int64_t>>& seq_of);

// Rank d's clock from its matched collective ends (end on rank 0, end on d; absolute ns): rank
// 0's local time = d's local time + offset, from end_0 = end_d; offset the median of the
// differences, error their median absolute deviation. No matched end measures nothing: offset
// 0 and an unknown error.
void align_clock(RankTrace& d, std::int64_t epoch0, const std::vector<std::pair<std::int64_t, std::int64_t>>& ends);

// Every rank's epoch, offset and error: shared, one epoch (the earliest time of any rank),
// offsets 0; else each rank's earliest time, offsets from `matching` (align_clock), a warning
// for a rank that shares no collective with rank 0. Returns how the clocks were set.
std::string set_clocks(std::vector<RankTrace>& ranks, bool shared, const Matching& matching,
                       std::vector<std::string>& warnings);

}  // namespace commscope::profiler::kineto
