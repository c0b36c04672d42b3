#pragma once
// Decoded CUPTI activity records and the record processor that turns them into events.
//
// The CUPTI glue (src/cupti_backend.cpp, CUDA builds only) only copies the fields it needs out
// of CUPTI's activity structs into DeviceRecord; everything else happens here, in code with no
// CUDA dependency, tested on the CPU with made-up records (tests/test_record_processor.cpp).

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "commscope/formats/events.hpp"

namespace commscope::profiler {

enum class DeviceRecordKind : std::uint8_t {
  kKernel,               // CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL
  kMemcpy,               // CUPTI_ACTIVITY_KIND_MEMCPY
  kMemset,               // CUPTI_ACTIVITY_KIND_MEMSET
  kRuntime,              // CUPTI_ACTIVITY_KIND_RUNTIME (host API call)
  kDriver,               // CUPTI_ACTIVITY_KIND_DRIVER (host API call)
  kSynchronization,      // CUPTI_ACTIVITY_KIND_SYNCHRONIZATION (host waits)
  kExternalCorrelation,  // CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION
};

// External correlation kinds our scopes push (CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0/1).
enum class ExternalKind : std::uint8_t {
  kOperator = 0,       // external id = operator instance id (OperatorScope)
  kCommunication = 1,  // external id = communication scope id (CommScope)
};

struct DeviceRecord {
  DeviceRecordKind kind = DeviceRecordKind::kKernel;
  std::uint64_t start_ns = 0;  // CUPTI timestamps (ns, CUPTI's clock)
  std::uint64_t end_ns = 0;
  std::uint32_t correlation = 0;  // links a device record to the API call that launched it
  std::uint32_t device = 0;
  std::uint32_t stream = 0;
  std::uint32_t thread = 0;  // API records: the host thread's index in our recorder (see RecordProcessor)
  std::string name;          // kernel name (demangled or not), API function name; memcpy: direction
  std::int64_t bytes = 0;    // memcpy / memset
  ExternalKind external_kind = ExternalKind::kOperator;  // kExternalCorrelation only
  std::uint64_t external_id = 0;                         // kExternalCorrelation only
};

// True for NCCL's device kernels: names beginning "ncclKernel_" (NCCL <= 2.18, e.g.
// ncclKernel_AllReduce_RING_LL_Sum_float) or "ncclDevKernel_" (NCCL >= 2.19, e.g.
// ncclDevKernel_Generic), demangled or in their Itanium-mangled form ("_Z21ncclDevKernel_Generic...").
// Bare "nccl", "ncclKernel" without the underscore, and other kernels that merely contain "nccl"
// are not: only the kernels NCCL launches for its collectives are communication.
bool is_nccl_kernel(std::string_view kernel_name);

// Turns device records into events on the rank's clock.
//   event time = CUPTI time - cupti_minus_host_ns, where cupti_minus_host_ns = (CUPTI clock - rank
//   clock), measured at start (computed in wrapping 64-bit arithmetic: results may be negative).
// Records arrive in any order (CUPTI completes buffers asynchronously, so an external-correlation
// record may come before or after the records it links); add() them all, then finish(). finish():
//   - links: each kExternalCorrelation record maps a correlation id to an operator instance id
//     (ExternalKind::kOperator) and/or a communication scope id (kCommunication); a launch inside
//     both scopes has one record of each kind. Should one correlation have several records of
//     one kind, the largest id wins (ids grow with time on a thread: the innermost scope).
//   - device kernels / memcpy / memset become kKernel / kMemcpy / kMemset events on a device
//     stream track (track_kind kDeviceStream, track = stream, device = device, correlation kept);
//     name = the kernel name; memcpy: name "memcpy <direction>" and detail "<direction>" (the
//     record's name, e.g. "HtoD"); memset: name "memset" (or the record's name if it has one);
//     bytes = the record's bytes;
//   - NCCL kernels (is_nccl_kernel) become kCommunication. With a kCommunication link whose host
//     event is in `host_events`, the device event copies that event's id, seq, bytes, detail
//     (algorithm) and name (collective); otherwise id 0, seq -1, detail 0, name = the kernel name.
//     Other kernels, memcpys and memsets with such a link (our algorithms' reduction kernels, the
//     staged transport's copies) keep their kind and name and copy the host event's id and seq:
//     the breakdown counts them as that collective's communication;
//   - runtime / driver calls become kRuntime events, synchronizations kSync, on the host thread
//     track (track_kind kHostThread, track = record.thread, device -1, correlation kept).
//     CUPTI's synchronization records carry no thread: a kSync event takes the thread of the
//     runtime/driver record with the same correlation id, if any, else record.thread;
//   - parent (every kind) = the operator instance id of the correlation's kOperator link, else 0;
//   - iteration (every kind) = the iteration of the linked host kCommunication event if it is in
//     `host_events`, else that of the linked host kOperator event, else -1;
//   - records with end < start, or with start == end == 0 (CUPTI: "no timestamp collected"), are
//     dropped and counted (malformed()); external-correlation records carry no times and never are.
// Output order: by (track_kind, device, track, start_ns), ties by longer first (end_ns
// descending), then correlation, then kind: host threads first, then each device's streams, each
// track in time order. finish() consumes the added records (a second call returns only records
// added since). `strings` must be the table that host_events' name/detail ids refer to (the
// device events copy those ids). Cost: O(n log n) for n records, hash maps sized up front.
class RecordProcessor {
 public:
  RecordProcessor(StringTable& strings, std::int64_t cupti_minus_host_ns);

  void add(const DeviceRecord& record);
  void add(std::span<const DeviceRecord> records);

  // host_events: the rank's host events (ns), for operator/communication lookups.
  std::vector<Event> finish(std::span<const Event> host_events);

  std::int64_t malformed() const noexcept { return malformed_; }

 private:
  StringTable& strings_;
  std::int64_t offset_ns_;
  std::vector<DeviceRecord> records_;
  std::int64_t malformed_ = 0;
};

}  // namespace commscope::profiler
