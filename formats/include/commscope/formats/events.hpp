#pragma once
// The profiler's event model: what one rank records, in integer ns on one clock per rank.
//
// A rank's clock counts ns since its epoch (the moment the profiling session started on that
// rank, taken just after a barrier). Rank r's time t corresponds to rank 0's time
// t + clock_offset_ns[r] (estimated at start; see session.hpp), so cross-rank comparisons
// (arrival times of one collective instance) are done on rank 0's clock.

#include <cstdint>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "commscope/common/grid_ranks.hpp"

namespace commscope::profiler {

// What a recorded event is. Stored as uint8 in files: the values are part of the schema.
enum class EventKind : std::uint8_t {
  kIteration = 0,      // one training step / measured iteration (host scope)
  kOperator = 1,       // an operator instance (host scope; operators nest)
  kKernel = 2,         // a device kernel, or a compute section on the CPU
  kMemcpy = 3,         // a device memcpy
  kMemset = 4,         // a device memset
  kCommunication = 5,  // a collective: a blocking host call, or an NCCL kernel on a device
  kRuntime = 6,        // a CUDA runtime or driver API call (host)
  kSync = 7,           // a CUDA synchronization: the host waiting for the device
};
inline constexpr int kEventKindCount = 8;
// "iteration", "operator", "kernel", "memcpy", "memset", "communication", "runtime", "sync".
std::string_view to_string(EventKind kind);

// The process group a communication's name says: "tp" (tp.*: inside a tensor-parallel group),
// "pp" (pp.*: between pipeline stages), "embedding" (embedding.*: the first and last stage), else
// "dp" (the data parallelism's collectives and everything else).
std::string_view communication_group(std::string_view name);

// A rank's place in the trainer's PP x DP x TP grid (common/grid_ranks.hpp); all zero when
// tp x pp does not divide nranks.
using GridPlace = commscope::GridPlace;
GridPlace grid_place(int rank, int nranks, int tp, int pp);

// Where an event ran: a host thread (track = thread index, 0 = the thread that started the
// session) or a device stream (track = stream id, device = device ordinal).
enum class TrackKind : std::uint8_t { kHostThread = 0, kDeviceStream = 1 };

// One recorded event. Trivially copyable: it is written to HDF5 as it is (events.hpp's field
// names are the file's field names, see docs/profile-format.md).
struct Event {
  std::int64_t start_ns = 0;       // ns since the rank's epoch, on the rank's clock
  std::int64_t end_ns = 0;         // >= start_ns
  std::uint64_t id = 0;            // instance id of an operator or communication scope (unique per rank); a device
                                   // kernel, memcpy or memset inside a communication scope: that scope's id; else 0
  std::uint64_t parent = 0;        // innermost enclosing operator instance (operators: the parent operator); 0 = none
  std::uint64_t correlation = 0;   // CUPTI correlation id of a device record and its launching API call, else 0
  std::int64_t bytes = 0;          // communication: the collective's array bytes (bench's S); memcpy/memset bytes
  std::int64_t seq = -1;           // communication: instance number within its communicator, else -1
  std::int32_t iteration = -1;     // the step in progress on the host when the event began, -1 outside steps
  std::uint32_t name = 0;          // string id: iteration, operator, kernel, collective or API name
  std::uint32_t detail = 0;        // string id: communication algorithm, memcpy direction, ...; 0 = none
  std::uint32_t track = 0;         // host thread index or device stream id
  std::uint32_t communicator = 0;  // communication: string id of its communicator's label ("tp[0,1]", "pp[1>3]";
                                   // vocabulary.hpp), seq counts within it; 0 = the profiled communicator
  std::int16_t device = -1;        // device ordinal of a device event, -1 for host events
  EventKind kind = EventKind::kKernel;
  TrackKind track_kind = TrackKind::kHostThread;

  std::int64_t duration_ns() const noexcept { return end_ns - start_ns; }
};

// Interned strings: id 0 is always "". Thread-safe.
class StringTable {
 public:
  StringTable();
  StringTable(const StringTable& other);
  StringTable& operator=(const StringTable& other);

  std::uint32_t intern(std::string_view s);
  // Throws std::out_of_range for an unknown id.
  std::string at(std::uint32_t id) const;
  std::size_t size() const;
  std::vector<std::string> strings() const;
  // A table holding exactly `strings` (strings[0] must be ""; duplicates keep their first id).
  static StringTable from(const std::vector<std::string>& strings);

 private:
  mutable std::mutex mutex_;
  std::vector<std::string> strings_;
  std::unordered_map<std::string, std::uint32_t> index_;
};

}  // namespace commscope::profiler
