#pragma once
// A rank's row (profile.hpp's RankInfo) as fixed-size bytes: the one form both the /ranks table
// (profile_file.cpp, its HDF5 columns) and the session's gather of every rank's row to rank 0
// (session.cpp, MPI_Gather of bytes) carry, so a field added to RankInfo is added here once.

#include <cstdint>

#include "commscope/formats/columns.hpp"
#include "commscope/formats/profile.hpp"

namespace commscope::profiler {

struct RankRow {
  std::int32_t rank = 0;
  char host[64] = {};
  std::int64_t clock_offset_ns = 0;
  std::int64_t clock_error_ns = 0;
  char backend[16] = {};
  std::int64_t events = 0;
  std::int64_t dropped_events = 0;
  char cpus[64] = {};
  std::int32_t cpu_count = 0;
  std::int32_t node_cpus = 0;
  char machine[48] = {};
};

// The strings cut to their fields (a NUL ends them, none where they fill one).
RankRow rank_row(const RankInfo& info);
RankInfo rank_info(const RankRow& row);

// The /ranks table's columns, in file order: the placement (cpus, cpu_count, node_cpus) and the
// machine were added later and are optional (files written before read "", 0, 0 and "").
const formats::Columns<RankRow>& rank_columns();

}  // namespace commscope::profiler
