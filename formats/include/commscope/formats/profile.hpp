#pragma once
// A whole profile in memory: what a profiling session produces and what a profile file holds
// (docs/profile-format.md). Rows are trivially copyable: they are gathered over MPI as bytes
// and written to HDF5 as compound tables with the same field names.

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "commscope/common/schemas.hpp"
#include "commscope/formats/events.hpp"

namespace commscope::profiler {

// The profile's schema name, schemas::kProfile (a literal, so NUL-terminated).
inline constexpr const char* kProfileSchema = schemas::kProfile.data();

// One row per (rank, iteration): where the iteration's time went. All *_ns are integer ns;
// kernel_ns + intra_ns + inter_ns + comm_ns == window_ns exactly (identity_ok = 1), and
// comm_wait_ns + comm_transfer_ns == comm_ns.
struct BreakdownRow {
  std::int32_t rank = 0;
  std::int32_t iteration = 0;  // the step number given to the iteration scope
  std::int64_t start_ns = 0;   // window start on rank 0's clock (ns since rank 0's epoch)
  std::int64_t window_ns = 0;  // |W|: the iteration's duration on this rank
  std::int64_t kernel_ns = 0;  // |K minus C|: compute kernels, memcpy, memset not overlapped by communication
  std::int64_t intra_ns = 0;   // idle gaps between activities of one operator (or an operator and its own nested ones)
  std::int64_t inter_ns = 0;   // idle gaps between operators, or outside any operator
  std::int64_t comm_ns = 0;    // |C|: union of communication intervals
  std::int64_t comm_wait_ns = 0;      // part of C before the slowest rank arrived at the same collective instance
  std::int64_t comm_transfer_ns = 0;  // comm_ns - comm_wait_ns
  std::int64_t overlap_ns = 0;        // |K and C|: compute hidden under communication
  std::int32_t kernels = 0;           // compute activities (kernels, memcpy, memset) overlapping W
  std::int32_t communications = 0;    // communication activities overlapping W
  std::int32_t operators = 0;         // operator instances overlapping W
  std::uint8_t identity_ok = 0;       // 1 when the four parts sum to window_ns
};

// One row per (rank, operator name): totals over the run.
struct OperatorTotalRow {
  std::int32_t rank = 0;
  std::uint32_t name = 0;      // string id in the profile's string table
  std::int64_t calls = 0;      // operator instances
  std::int64_t host_ns = 0;    // summed scope durations (inclusive of nested operators)
  std::int64_t kernel_ns = 0;  // the compute activities it launched itself (innermost operator), their union
                               // per instance less its communication's
  std::int64_t comm_ns = 0;    // the communication activities it launched itself, their union per instance
  std::int64_t intra_ns = 0;   // intra-op dispatch attributed to it (to the deeper operator of a gap's two ends)
  // Per instance its scope together with its own activities and intra-op gaps (their union),
  // summed: >= kernel + comm + intra, the rest its scope outside its own work (breakdown.hpp);
  // kUnknownTotal in files written before the field.
  std::int64_t total_ns = 0;
};
inline constexpr std::int64_t kUnknownTotal = -1;

// Adds row's counts and times to into's (the name and rank stay into's).
inline void add_totals(OperatorTotalRow& into, const OperatorTotalRow& row) {
  into.calls += row.calls;
  into.host_ns += row.host_ns;
  into.kernel_ns += row.kernel_ns;
  into.comm_ns += row.comm_ns;
  into.intra_ns += row.intra_ns;
  into.total_ns += row.total_ns;
}

// clock_error_ns of a rank whose offset nothing measured (an imported trace that shares no
// collective with rank 0): its offset is a guess of 0.
inline constexpr std::int64_t kUnknownClockError = -1;

// What the file says about each rank.
struct RankInfo {
  std::int32_t rank = 0;
  std::string host;
  std::int64_t clock_offset_ns = 0;  // rank 0's clock minus this rank's clock (add it to this rank's times)
  std::int64_t clock_error_ns = 0;   // bound on the offset's error (half the best ping-pong round trip);
                                     // kUnknownClockError when nothing measured it
  std::string backend;               // "host" or "cupti" (the timeline the breakdown used)
  std::int64_t events = 0;           // events recorded (and stored)
  std::int64_t dropped_events = 0;   // events lost because a buffer was full (host buffers + CUPTI)
  // Where it ran (placement.hpp): the CPUs it could run on ("0", "0-3,8"; cut at 63 characters),
  // how many, and its host's online CPUs; "", 0, 0 where unknown (imports, files written before).
  std::string cpus;
  std::int32_t cpu_count = 0;
  std::int32_t node_cpus = 0;
  // Its machine: the kernel's boot id, shared by ranks on one machine whatever their host names
  // (an emulated cluster's namespaces, containers); "" where unknown.
  std::string machine;
};

struct ProfileMeta {
  std::string schema = kProfileSchema;
  std::string version;  // commscope version
  std::string command_line;
  std::string clock;               // "tsc" or "steady_clock": the host time source
  std::int64_t epoch_unix_ns = 0;  // rank 0's epoch as wall-clock time (ns since 1970)
  std::int32_t nranks = 0;
  std::string events_layout;             // "single" (events in this file) or "per-rank" (one file per rank)
  std::vector<std::string> event_files;  // per-rank layout: the rank files, by rank, relative to this file's folder
  std::vector<std::pair<std::string, std::string>> attributes;  // the caller's (model, flags, versions, ...)
};

struct Profile {
  ProfileMeta meta;
  std::vector<RankInfo> ranks;              // by rank
  std::vector<std::string> strings;         // the string table: strings[0] == ""
  std::vector<std::vector<Event>> events;   // by rank; names are ids in `strings`; may be empty (not loaded)
  std::vector<BreakdownRow> breakdown;      // by rank, then iteration
  std::vector<OperatorTotalRow> operators;  // by rank, then name
};

}  // namespace commscope::profiler
