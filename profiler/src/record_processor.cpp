// RecordProcessor: decoded CUPTI records -> events (the spec is device_records.hpp's header
// comment). No CUDA dependency: tests/test_record_processor.cpp feeds it made-up records.
//
// finish() makes two passes over the records: the first builds the correlation tables (external
// links, the host thread of each API call), the second converts every timed record into one Event
// using them. Both are linear with hash maps sized up front; the final sort is O(n log n).

#include <algorithm>
#include <cctype>
#include <span>
#include <string>
#include <tuple>
#include <unordered_map>

#include "commscope/profiler/device_records.hpp"

namespace commscope::profiler {

namespace {

// "_Z<length><name>" (a function at global scope, Itanium ABI) -> "<name>..."; other names as
// they are.
std::string_view strip_itanium_prefix(std::string_view name) {
  if (!name.starts_with("_Z")) return name;
  std::size_t i = 2;
  while (i < name.size() && std::isdigit(static_cast<unsigned char>(name[i])) != 0) ++i;
  return i == 2 ? name : name.substr(i);
}

// The scopes one correlation id (one API call and what it launched) ran in; 0 = none.
struct Links {
  std::uint64_t op = 0;
  std::uint64_t comm = 0;
};

// Interns names through a local cache: one StringTable lock per distinct name, not per record.
class NameCache {
 public:
  explicit NameCache(StringTable& strings) : strings_(strings) {}
  // `s` must outlive the cache (it points into the processor's records or literals).
  std::uint32_t operator()(std::string_view s) {
    auto [it, inserted] = ids_.try_emplace(s, 0);
    if (inserted) it->second = strings_.intern(s);
    return it->second;
  }

 private:
  StringTable& strings_;
  std::unordered_map<std::string_view, std::uint32_t> ids_;
};

std::int64_t shifted(std::uint64_t cupti_ns, std::int64_t offset_ns) noexcept {
  // Modular arithmetic (no signed overflow); the conversion back to signed is exact in C++20.
  return static_cast<std::int64_t>(cupti_ns - static_cast<std::uint64_t>(offset_ns));
}

bool timed(DeviceRecordKind kind) noexcept {
  return kind != DeviceRecordKind::kExternalCorrelation;
}

// finish()'s first pass: correlation -> scopes, correlation -> host thread of the API call.
struct Correlations {
  std::unordered_map<std::uint32_t, Links> links;
  std::unordered_map<std::uint32_t, std::uint32_t> api_thread;
  std::size_t external = 0;  // external-correlation records (not timed: no event of their own)
};

Correlations correlate(std::span<const DeviceRecord> records) {
  Correlations c;
  std::size_t api = 0;
  for (const DeviceRecord& r : records) {
    c.external += r.kind == DeviceRecordKind::kExternalCorrelation ? 1 : 0;
    api += r.kind == DeviceRecordKind::kRuntime || r.kind == DeviceRecordKind::kDriver ? 1 : 0;
  }
  c.links.reserve(c.external);
  c.api_thread.reserve(api);
  for (const DeviceRecord& r : records) {
    if (r.kind == DeviceRecordKind::kExternalCorrelation) {
      Links& l = c.links[r.correlation];
      std::uint64_t& slot = r.external_kind == ExternalKind::kCommunication ? l.comm : l.op;
      slot = std::max(slot, r.external_id);
    } else if (r.kind == DeviceRecordKind::kRuntime || r.kind == DeviceRecordKind::kDriver) {
      c.api_thread.try_emplace(r.correlation, r.thread);
    }
  }
  return c;
}

// The track of a record's event: its device stream (kernels, copies, sets) or its host thread.
void place(Event& e, const DeviceRecord& r) {
  switch (r.kind) {
    case DeviceRecordKind::kKernel:
    case DeviceRecordKind::kMemcpy:
    case DeviceRecordKind::kMemset:
      e.track_kind = TrackKind::kDeviceStream;
      e.track = r.stream;
      e.device = static_cast<std::int16_t>(r.device);
      e.bytes = r.bytes;
      break;
    default:
      e.track_kind = TrackKind::kHostThread;
      e.track = r.thread;
      e.device = -1;
      break;
  }
}

// Device work inside a CommScope is the collective's. NCCL's kernels become the collective (its
// name, algorithm and bytes): they are its transfer. Other work there (the reduction kernels of
// our algorithms on device buffers, the staged transport's copies to and from the host) keeps its
// kind and name and carries the collective's id and seq: communication in the breakdown, inside a
// collective the host drives.
void attribute_to_collective(Event& e, const Event* host_comm) {
  if (host_comm == nullptr || e.track_kind != TrackKind::kDeviceStream) return;
  e.id = host_comm->id;
  e.seq = host_comm->seq;
  e.communicator = host_comm->communicator;
  if (e.kind == EventKind::kCommunication) {
    e.bytes = host_comm->bytes;
    e.detail = host_comm->detail;
    e.name = host_comm->name;
  }
}

}  // namespace

bool is_nccl_kernel(std::string_view name) {
  const std::string_view base = strip_itanium_prefix(name);
  return base.starts_with("ncclKernel_") || base.starts_with("ncclDevKernel_");
}

RecordProcessor::RecordProcessor(StringTable& strings, std::int64_t cupti_minus_host_ns)
    : strings_(strings), offset_ns_(cupti_minus_host_ns) {}

void RecordProcessor::add(const DeviceRecord& record) {
  records_.push_back(record);
}

void RecordProcessor::add(std::span<const DeviceRecord> records) {
  records_.insert(records_.end(), records.begin(), records.end());
}

std::vector<Event> RecordProcessor::finish(std::span<const Event> host_events) {
  // Host scopes by instance id (operator and communication ids are unique per rank).
  std::unordered_map<std::uint64_t, const Event*> host_by_id;
  host_by_id.reserve(host_events.size());
  for (const Event& e : host_events)
    if ((e.kind == EventKind::kOperator || e.kind == EventKind::kCommunication) && e.id != 0)
      host_by_id.emplace(e.id, &e);

  // Pass 1: the correlation tables.
  const Correlations c = correlate(records_);

  // Pass 2: one event per well-formed timed record.
  NameCache intern(strings_);
  std::unordered_map<std::string_view, std::uint32_t> memcpy_names;  // direction -> "memcpy <direction>"
  std::vector<Event> out;
  out.reserve(records_.size() - c.external);
  for (const DeviceRecord& r : records_) {
    if (!timed(r.kind)) continue;
    if (r.end_ns < r.start_ns || (r.start_ns == 0 && r.end_ns == 0)) {
      ++malformed_;
      continue;
    }
    Event e;
    e.start_ns = shifted(r.start_ns, offset_ns_);
    e.end_ns = shifted(r.end_ns, offset_ns_);
    e.correlation = r.correlation;

    Links l;
    if (auto it = c.links.find(r.correlation); it != c.links.end()) l = it->second;
    const Event* host_comm = nullptr;
    if (l.comm != 0)
      if (auto it = host_by_id.find(l.comm); it != host_by_id.end() && it->second->kind == EventKind::kCommunication)
        host_comm = it->second;
    const Event* host_op = nullptr;
    if (l.op != 0)
      if (auto it = host_by_id.find(l.op); it != host_by_id.end() && it->second->kind == EventKind::kOperator)
        host_op = it->second;
    e.parent = l.op;
    e.iteration = host_comm != nullptr ? host_comm->iteration : host_op != nullptr ? host_op->iteration : -1;

    place(e, r);
    switch (r.kind) {
      case DeviceRecordKind::kKernel:
        e.name = intern(r.name);
        e.kind = is_nccl_kernel(r.name) ? EventKind::kCommunication : EventKind::kKernel;
        break;
      case DeviceRecordKind::kMemcpy: {
        e.kind = EventKind::kMemcpy;
        auto [it, inserted] = memcpy_names.try_emplace(r.name, 0);
        if (inserted) it->second = strings_.intern(r.name.empty() ? std::string("memcpy") : "memcpy " + r.name);
        e.name = it->second;
        e.detail = intern(r.name);
        break;
      }
      case DeviceRecordKind::kMemset:
        e.kind = EventKind::kMemset;
        e.name = intern(r.name.empty() ? std::string_view("memset") : std::string_view(r.name));
        break;
      case DeviceRecordKind::kRuntime:
      case DeviceRecordKind::kDriver:
        e.kind = EventKind::kRuntime;
        e.name = intern(r.name);
        break;
      case DeviceRecordKind::kSynchronization:
        e.kind = EventKind::kSync;
        e.name = intern(r.name);
        if (auto it = c.api_thread.find(r.correlation); it != c.api_thread.end()) e.track = it->second;
        break;
      case DeviceRecordKind::kExternalCorrelation:
        break;  // not timed: skipped above
    }
    attribute_to_collective(e, host_comm);
    out.push_back(e);
  }

  std::sort(out.begin(), out.end(), [](const Event& a, const Event& b) {
    return std::make_tuple(a.track_kind, a.device, a.track, a.start_ns, b.end_ns, a.correlation, a.kind) <
           std::make_tuple(b.track_kind, b.device, b.track, b.start_ns, a.end_ns, b.correlation, b.kind);
  });

  // Consumed: the events now own copies of everything they need (interned names).
  records_.clear();
  records_.shrink_to_fit();
  return out;
}

}  // namespace commscope::profiler
