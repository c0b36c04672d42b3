// The CUPTI activity tracer: a thin wrapper over CUPTI's activity API that copies CUPTI's records
// into DeviceRecord and nothing else (RecordProcessor turns them into events). Built with the
// CUPTI code only where COMMSCOPE_WITH_CUDA is set; elsewhere start_cupti says why it cannot.
//
// Shape (after Kineto's CuptiActivityApi): CUPTI asks for empty buffers (buffer_requested) and
// hands them back full (buffer_completed); the tracer lends buffers from a pool allocated at start,
// decodes each completed buffer and returns it to the pool.
//
// Concurrency, the hazards:
//   - buffer_completed runs on CUPTI's worker thread (or on the thread calling
//     cuptiActivityFlushAll, i.e. stop()), concurrently with the application, which keeps
//     launching work and recording events; buffer_requested runs on whichever thread makes CUPTI
//     need a buffer, often an application thread in the middle of a CUDA call.
//   - Both callbacks are plain C functions with no user pointer: they find the tracer through
//     g_active. Two mutexes guard it: g_completion_mutex (the decoded batches; taken by
//     buffer_completed for an append, by stop() once) and g_pool_mutex (the free buffers; taken
//     briefly by both callbacks, so an application thread asking for a buffer never waits for a
//     buffer being decoded). g_active changes only with both held (std::scoped_lock; no code
//     nests them otherwise), so a callback holding either sees a live tracer or none.
//   - No CUPTI call is made while holding either mutex: CUPTI may hold its own locks around the
//     callbacks, and waiting for one of them while holding ours could deadlock. In particular
//     stop() flushes (which calls buffer_completed on its own thread) before it takes any lock.
//   - A buffer still inside CUPTI when its tracer goes away is freed by buffer_completed when it
//     comes back (every buffer is its own allocation; the pool is just a free list).
//   - The external-correlation hooks run on application threads inside OperatorScope/CommScope;
//     they only call CUPTI's thread-safe, per-thread push/pop.
// Nothing here throws out of a function: the callbacks catch everything (records lost to an
// exception are counted as dropped), start_cupti turns failures into `why`.

#include "cupti_backend.hpp"

#if COMMSCOPE_WITH_CUDA
#include <cuda_runtime_api.h>
#include <cupti.h>
#include <cxxabi.h>

#include <array>
#include <atomic>
#include <cstdlib>
#include <exception>
#include <limits>
#include <mutex>
#include <new>
#include <string_view>
#include <unordered_map>

#include "registry.hpp"
#endif

namespace commscope::profiler::detail {

#if !COMMSCOPE_WITH_CUDA

std::unique_ptr<DeviceTracer> start_cupti(const TickConverter&, std::string& why) {
  why = "this build has no CUDA support";
  return nullptr;
}

#else

namespace {

constexpr std::size_t kBufferBytes = std::size_t{8} << 20;
constexpr std::size_t kPoolBuffers = 16;  // allocated at start: 128 MiB
constexpr std::size_t kMaxBuffers = 64;   // the pool may grow to this when CUPTI outpaces decoding;
                                          // beyond it CUPTI drops records (and counts them)
constexpr std::size_t kBufferAlign = 8;   // CUPTI requires 8-byte aligned activity buffers
constexpr int kClockTries = 8;            // cuptiGetTimestamp reads bracketed by mono_ns(), tightest kept

// The track registry.hpp gives a thread it does not know (os tid 0): CUPTI's synchronization
// records carry no thread; RecordProcessor gives them their API call's thread when it can.
constexpr std::uint32_t kUnknownThread = 0x80000000u;

constexpr std::array<CUpti_ActivityKind, 7> kKinds = {
    CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, CUPTI_ACTIVITY_KIND_MEMCPY, CUPTI_ACTIVITY_KIND_MEMSET,
    CUPTI_ACTIVITY_KIND_RUNTIME,           CUPTI_ACTIVITY_KIND_DRIVER, CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION,
    CUPTI_ACTIVITY_KIND_SYNCHRONIZATION,
};

const char* kind_name(CUpti_ActivityKind kind) noexcept {
  switch (kind) {
    case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL:
      return "CONCURRENT_KERNEL";
    case CUPTI_ACTIVITY_KIND_MEMCPY:
      return "MEMCPY";
    case CUPTI_ACTIVITY_KIND_MEMSET:
      return "MEMSET";
    case CUPTI_ACTIVITY_KIND_RUNTIME:
      return "RUNTIME";
    case CUPTI_ACTIVITY_KIND_DRIVER:
      return "DRIVER";
    case CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION:
      return "EXTERNAL_CORRELATION";
    case CUPTI_ACTIVITY_KIND_SYNCHRONIZATION:
      return "SYNCHRONIZATION";
    default:
      return "?";
  }
}

std::string cupti_error(CUptiResult result) {
  const char* text = nullptr;
  if (cuptiGetResultString(result, &text) != CUPTI_SUCCESS || text == nullptr)
    return "CUPTI error " + std::to_string(static_cast<int>(result));
  return text;
}

std::uint8_t* allocate_buffer() noexcept {
  return static_cast<std::uint8_t*>(::operator new (kBufferBytes, std::align_val_t{kBufferAlign}, std::nothrow));
}
void free_buffer(std::uint8_t* buffer) noexcept {
  ::operator delete (buffer, std::align_val_t{kBufferAlign});
}

const char* memcpy_direction(std::uint8_t copy_kind) noexcept {
  switch (copy_kind) {
    case CUPTI_ACTIVITY_MEMCPY_KIND_HTOD:
      return "HtoD";
    case CUPTI_ACTIVITY_MEMCPY_KIND_DTOH:
      return "DtoH";
    case CUPTI_ACTIVITY_MEMCPY_KIND_HTOA:
      return "HtoA";
    case CUPTI_ACTIVITY_MEMCPY_KIND_ATOH:
      return "AtoH";
    case CUPTI_ACTIVITY_MEMCPY_KIND_ATOA:
      return "AtoA";
    case CUPTI_ACTIVITY_MEMCPY_KIND_ATOD:
      return "AtoD";
    case CUPTI_ACTIVITY_MEMCPY_KIND_DTOA:
      return "DtoA";
    case CUPTI_ACTIVITY_MEMCPY_KIND_DTOD:
      return "DtoD";
    case CUPTI_ACTIVITY_MEMCPY_KIND_HTOH:
      return "HtoH";
    case CUPTI_ACTIVITY_MEMCPY_KIND_PTOP:
      return "PtoP";
    default:
      return "unknown";
  }
}

const char* synchronization_name(CUpti_ActivitySynchronizationType type) noexcept {
  switch (type) {
    case CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_EVENT_SYNCHRONIZE:
      return "event synchronize";
    case CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_WAIT_EVENT:
      return "stream wait event";
    case CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_SYNCHRONIZE:
      return "stream synchronize";
    case CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_CONTEXT_SYNCHRONIZE:
      return "context synchronize";
    default:
      return "synchronize";
  }
}

// "cudaLaunchKernel_v7000" -> "cudaLaunchKernel": CUPTI's runtime names carry the version that
// introduced the entry point. Driver names keep theirs ("cuMemcpyHtoD_v2" is the real symbol).
std::string api_name(CUpti_CallbackDomain domain, CUpti_CallbackId cbid) {
  const char* raw = nullptr;
  if (cuptiGetCallbackName(domain, cbid, &raw) != CUPTI_SUCCESS || raw == nullptr)
    return "cbid " + std::to_string(cbid);
  std::string_view name(raw);
  if (domain == CUPTI_CB_DOMAIN_RUNTIME_API) {
    const std::size_t v = name.rfind("_v");
    if (v != std::string_view::npos && name.size() - v >= 6 &&
        name.find_first_not_of("0123456789", v + 2) == std::string_view::npos)
      name = name.substr(0, v);
  }
  return std::string(name);
}

// One CUPTI record -> DeviceRecord (appended), or nothing for kinds we do not use. API records'
// `thread` holds CUPTI's thread id (the OS tid, see cuptiSetThreadIdType) until stop() maps it to
// the recorder's track; kernel names stay as CUPTI gives them (mangled) until stop() demangles.
void decode(const CUpti_Activity* activity, std::vector<DeviceRecord>& out) {
  DeviceRecord r;
  switch (activity->kind) {
    case CUPTI_ACTIVITY_KIND_KERNEL:
    case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL: {
      const auto* k = reinterpret_cast<const CUpti_ActivityKernel10*>(activity);
      r.kind = DeviceRecordKind::kKernel;
      r.start_ns = k->start;
      r.end_ns = k->end;
      r.correlation = k->correlationId;
      r.device = k->deviceId;
      r.stream = k->streamId;
      r.name = k->name != nullptr ? k->name : "";
      break;
    }
    case CUPTI_ACTIVITY_KIND_MEMCPY: {
      const auto* m = reinterpret_cast<const CUpti_ActivityMemcpy6*>(activity);
      r.kind = DeviceRecordKind::kMemcpy;
      r.start_ns = m->start;
      r.end_ns = m->end;
      r.correlation = m->correlationId;
      r.device = m->deviceId;
      r.stream = m->streamId;
      r.name = memcpy_direction(m->copyKind);
      r.bytes = static_cast<std::int64_t>(m->bytes);
      break;
    }
    case CUPTI_ACTIVITY_KIND_MEMSET: {
      const auto* m = reinterpret_cast<const CUpti_ActivityMemset4*>(activity);
      r.kind = DeviceRecordKind::kMemset;
      r.start_ns = m->start;
      r.end_ns = m->end;
      r.correlation = m->correlationId;
      r.device = m->deviceId;
      r.stream = m->streamId;
      r.name = "memset";
      r.bytes = static_cast<std::int64_t>(m->bytes);
      break;
    }
    case CUPTI_ACTIVITY_KIND_RUNTIME:
    case CUPTI_ACTIVITY_KIND_DRIVER: {
      const auto* a = reinterpret_cast<const CUpti_ActivityAPI*>(activity);
      const bool runtime = activity->kind == CUPTI_ACTIVITY_KIND_RUNTIME;
      r.kind = runtime ? DeviceRecordKind::kRuntime : DeviceRecordKind::kDriver;
      r.start_ns = a->start;
      r.end_ns = a->end;
      r.correlation = a->correlationId;
      r.thread = a->threadId;
      r.name = api_name(runtime ? CUPTI_CB_DOMAIN_RUNTIME_API : CUPTI_CB_DOMAIN_DRIVER_API, a->cbid);
      break;
    }
    case CUPTI_ACTIVITY_KIND_SYNCHRONIZATION: {
      const auto* s = reinterpret_cast<const CUpti_ActivitySynchronization2*>(activity);
      r.kind = DeviceRecordKind::kSynchronization;
      r.start_ns = s->start;
      r.end_ns = s->end;
      r.correlation = s->correlationId;
      r.stream = s->streamId;  // CUPTI_SYNCHRONIZATION_INVALID_VALUE when not a stream's
      r.thread = 0;            // not in the record: see kUnknownThread
      r.name = synchronization_name(s->type);
      break;
    }
    case CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION: {
      const auto* x = reinterpret_cast<const CUpti_ActivityExternalCorrelation*>(activity);
      if (x->externalKind == CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0)
        r.external_kind = ExternalKind::kOperator;
      else if (x->externalKind == CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM1)
        r.external_kind = ExternalKind::kCommunication;
      else
        return;  // another tool's kind
      r.kind = DeviceRecordKind::kExternalCorrelation;
      r.correlation = x->correlationId;
      r.external_id = x->externalId;
      break;
    }
    default:
      return;
  }
  out.push_back(std::move(r));
}

// The kernel name as a C++ programmer wrote it, or the name as it is if it is no mangled name.
std::string demangle(const std::string& name) {
  if (!name.starts_with("_Z")) return name;
  int status = 0;
  char* plain = abi::__cxa_demangle(name.c_str(), nullptr, nullptr, &status);
  std::string out = status == 0 && plain != nullptr ? std::string(plain) : name;
  std::free(plain);
  return out;
}

class CuptiTracer;
using Batch = std::vector<DeviceRecord>;  // the records of one completed buffer

std::mutex g_completion_mutex;
std::mutex g_pool_mutex;
CuptiTracer* g_active = nullptr;  // written holding both mutexes, read holding either

class CuptiTracer final : public DeviceTracer {
 public:
  CuptiTracer() = default;
  CuptiTracer(const CuptiTracer&) = delete;
  CuptiTracer& operator=(const CuptiTracer&) = delete;
  ~CuptiTracer() override;

  std::vector<DeviceRecord> stop() override;
  std::int64_t dropped() const override { return dropped_.load(std::memory_order_relaxed); }
  std::int64_t cupti_minus_host_ns() const override { return cupti_minus_host_ns_; }

  // start_cupti's steps; each returns false with `why` set. The destructor undoes what succeeded.
  bool allocate_pool(std::string& why);
  bool attach(std::string& why);
  bool subscribe(std::string& why);
  bool enable(std::string& why);
  bool measure_clock(const TickConverter& clock, std::string& why);
  void install_hooks() noexcept;

  // The CUPTI callbacks (static: CUPTI passes no user pointer).
  static void CUPTIAPI buffer_requested(std::uint8_t** buffer, std::size_t* size, std::size_t* max_records) noexcept;
  static void CUPTIAPI buffer_completed(CUcontext context, std::uint32_t stream, std::uint8_t* buffer, std::size_t size,
                                        std::size_t valid_size) noexcept;

 private:
  void shut_down() noexcept;  // hooks off, kinds off, flush, detach, unsubscribe (idempotent)
  static void release(std::uint8_t* buffer) noexcept;
  static std::vector<DeviceRecord> finish(std::vector<Batch>& batches);

  // Guarded by g_pool_mutex while attached; reserved to kMaxBuffers so returning never allocates.
  std::vector<std::uint8_t*> free_;
  std::size_t allocated_ = 0;      // buffers allocated by this tracer (pool + extra)
  std::size_t extra_buffers_ = 0;  // allocated because the pool ran dry
  // Guarded by g_completion_mutex while attached: one batch per completed buffer.
  std::vector<Batch> batches_;
  std::atomic<std::int64_t> dropped_{0};

  std::int64_t cupti_minus_host_ns_ = 0;
  CUpti_SubscriberHandle subscriber_ = nullptr;
  std::vector<CUpti_ActivityKind> enabled_;
  bool attached_ = false;
  bool callbacks_ = false;
  bool hooks_ = false;
  bool stopped_ = false;
};

void CUPTIAPI CuptiTracer::buffer_requested(std::uint8_t** buffer, std::size_t* size,
                                            std::size_t* max_records) noexcept {
  *buffer = nullptr;  // declining: CUPTI drops the records and counts them
  *size = 0;
  *max_records = 0;  // as many as fit
  std::uint8_t* b = nullptr;
  {
    std::lock_guard lock(g_pool_mutex);
    CuptiTracer* t = g_active;
    if (t == nullptr) return;
    if (!t->free_.empty()) {
      b = t->free_.back();
      t->free_.pop_back();
    } else if (t->allocated_ < kMaxBuffers && (b = allocate_buffer()) != nullptr) {
      ++t->allocated_;
      ++t->extra_buffers_;
    }
  }
  if (b == nullptr) return;
  *buffer = b;
  *size = kBufferBytes;
}

void CuptiTracer::release(std::uint8_t* buffer) noexcept {
  {
    std::lock_guard lock(g_pool_mutex);
    if (g_active != nullptr && g_active->free_.size() < g_active->free_.capacity()) {
      g_active->free_.push_back(buffer);  // within the reserved capacity: cannot throw
      return;
    }
  }
  free_buffer(buffer);  // no tracer any more (or a buffer of a previous one beyond the pool)
}

void CUPTIAPI CuptiTracer::buffer_completed(CUcontext context, std::uint32_t stream, std::uint8_t* buffer,
                                            std::size_t /*size*/, std::size_t valid_size) noexcept {
  if (buffer == nullptr) return;
  // Decode without our locks (CUPTI calls inside), then hand the batch over.
  Batch decoded;
  std::int64_t lost = 0;  // records we could not keep (out of memory), counted as dropped
  CUpti_Activity* record = nullptr;
  std::size_t count = 0;  // records vary from 24 to 300+ bytes: count them to reserve exactly
  while (cuptiActivityGetNextRecord(buffer, valid_size, &record) == CUPTI_SUCCESS) ++count;
  try {
    decoded.reserve(count);
  } catch (...) {  // decode() will try again per record
  }
  record = nullptr;
  while (cuptiActivityGetNextRecord(buffer, valid_size, &record) == CUPTI_SUCCESS) {
    try {
      decode(record, decoded);
    } catch (...) {
      ++lost;
    }
  }
  std::size_t cupti_dropped = 0;
  if (cuptiActivityGetNumDroppedRecords(context, stream, &cupti_dropped) != CUPTI_SUCCESS) cupti_dropped = 0;
  {
    std::lock_guard lock(g_completion_mutex);
    if (CuptiTracer* t = g_active) {
      try {
        if (!decoded.empty()) t->batches_.push_back(std::move(decoded));
      } catch (...) {
        lost += static_cast<std::int64_t>(decoded.size());
      }
      t->dropped_.fetch_add(static_cast<std::int64_t>(cupti_dropped) + lost, std::memory_order_relaxed);
    }
  }
  release(buffer);
}

bool CuptiTracer::allocate_pool(std::string& why) {
  free_.reserve(kMaxBuffers);
  for (std::size_t i = 0; i < kPoolBuffers; ++i) {
    std::uint8_t* b = allocate_buffer();
    if (b == nullptr) {
      why = "cannot allocate CUPTI activity buffers (" + std::to_string(kPoolBuffers) + " x " +
            std::to_string(kBufferBytes >> 20) + " MiB)";
      return false;
    }
    free_.push_back(b);
    ++allocated_;
  }
  return true;
}

bool CuptiTracer::attach(std::string& why) {
  std::scoped_lock lock(g_completion_mutex, g_pool_mutex);
  if (g_active != nullptr) {
    why = "a CUPTI tracer is already running in this process";
    return false;
  }
  g_active = this;
  attached_ = true;
  return true;
}

void CUPTIAPI noop_callback(void*, CUpti_CallbackDomain, CUpti_CallbackId, const void*) {}

bool CuptiTracer::subscribe(std::string& why) {
  // Claiming CUPTI's single subscriber slot (no callbacks are enabled) is how a CUPTI client
  // learns that another profiler (Nsight Systems, Kineto, ...) owns CUPTI; the activity calls
  // alone would quietly share or steal its buffers.
  char holder[CUPTI_OLD_SUBSCRIBER_NAME_MIN_LEN + 1] = {};
  CUpti_SubscriberParams params{};
  params.structSize = CUpti_SubscriberParams_STRUCT_SIZE;
  params.subscriberName = "commscope";
  params.oldSubscriberName = holder;
  params.oldSubscriberSize = sizeof(holder);
  const CUptiResult r = cuptiSubscribe_v2(&subscriber_, noop_callback, nullptr, &params);
  if (r == CUPTI_SUCCESS) return true;
  subscriber_ = nullptr;
  if (r == CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED)
    why = std::string("CUPTI is in use by another profiler") + (holder[0] != '\0' ? " (" : "") + holder +
          (holder[0] != '\0' ? ")" : "") + ": " + cupti_error(r);
  else
    why = "cuptiSubscribe failed: " + cupti_error(r);
  return false;
}

bool CuptiTracer::enable(std::string& why) {
  // API records must carry the kernel's thread id (gettid), which the recorder knows threads by;
  // CUPTI's default is pthread_self().
  if (const CUptiResult r = cuptiSetThreadIdType(CUPTI_ACTIVITY_THREAD_ID_TYPE_SYSTEM); r != CUPTI_SUCCESS) {
    why = "cuptiSetThreadIdType failed: " + cupti_error(r);
    return false;
  }
  if (const CUptiResult r = cuptiActivityRegisterCallbacks(buffer_requested, buffer_completed); r != CUPTI_SUCCESS) {
    why = (r == CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED ? "CUPTI is in use by another profiler: "
                                                               : "cuptiActivityRegisterCallbacks failed: ") +
          cupti_error(r);
    return false;
  }
  callbacks_ = true;
  enabled_.reserve(kKinds.size());
  for (CUpti_ActivityKind kind : kKinds) {
    const CUptiResult r = cuptiActivityEnable(kind);
    if (r != CUPTI_SUCCESS) {
      why = r == CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED
                ? "CUPTI is in use by another profiler: " + cupti_error(r)
                : std::string("cuptiActivityEnable(") + kind_name(kind) + ") failed: " + cupti_error(r);
      return false;
    }
    enabled_.push_back(kind);
  }
  return true;
}

bool CuptiTracer::measure_clock(const TickConverter& clock, std::string& why) {
  std::int64_t best = std::numeric_limits<std::int64_t>::max();
  for (int i = 0; i < kClockTries; ++i) {
    std::uint64_t cupti_ns = 0;
    const std::int64_t before = mono_ns();
    const CUptiResult r = cuptiGetTimestamp(&cupti_ns);
    const std::int64_t after = mono_ns();
    if (r != CUPTI_SUCCESS) {
      why = "cuptiGetTimestamp failed: " + cupti_error(r);
      return false;
    }
    if (after - before < best) {
      best = after - before;
      cupti_minus_host_ns_ = static_cast<std::int64_t>(cupti_ns) - clock.mono_to_ns(before + (after - before) / 2);
    }
  }
  return true;
}

// The recorder's hooks: OperatorScope pushes kind 0 (CUSTOM0), CommScope kind 1 (CUSTOM1).
// Called on application threads; CUPTI's external-id stacks are per thread. A scope still open
// when stop() removes the hooks leaves its id on that thread's CUPTI stack (the recorder does
// not support stopping inside scopes, see recorder.hpp).
void push_hook(int kind, std::uint64_t id) noexcept {
  if (kind != 0 && kind != 1) return;
  cuptiActivityPushExternalCorrelationId(
      static_cast<CUpti_ExternalCorrelationKind>(CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0 + kind), id);
}

void pop_hook(int kind) noexcept {
  if (kind != 0 && kind != 1) return;
  std::uint64_t last = 0;
  // CUPTI_ERROR_QUEUE_EMPTY (a scope opened before the hooks were installed) is harmless.
  cuptiActivityPopExternalCorrelationId(
      static_cast<CUpti_ExternalCorrelationKind>(CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0 + kind), &last);
}

void CuptiTracer::install_hooks() noexcept {
  set_external_hooks(push_hook, pop_hook);
  hooks_ = true;
}

void CuptiTracer::shut_down() noexcept {
  if (stopped_) return;
  stopped_ = true;
  if (hooks_) set_external_hooks(nullptr, nullptr);
  hooks_ = false;
  // Work still queued on the device would otherwise have no record yet when the kinds are
  // disabled: wait for this rank's device (one device per rank) first. Errors are left to the
  // application to see.
  cudaDeviceSynchronize();
  // Disable before flushing: records made between a flush and the disabling would reach
  // buffer_completed after this tracer has detached, and be lost.
  for (auto it = enabled_.rbegin(); it != enabled_.rend(); ++it) cuptiActivityDisable(*it);
  enabled_.clear();
  // Delivers every buffer, including ones holding incomplete records. Runs buffer_completed
  // on this thread: no lock of ours may be held here.
  if (callbacks_) cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
  if (attached_) {
    std::scoped_lock lock(g_completion_mutex, g_pool_mutex);
    if (g_active == this) g_active = nullptr;
    attached_ = false;
  }
  if (subscriber_ != nullptr) cuptiUnsubscribe(subscriber_);
  subscriber_ = nullptr;
}

// Concatenates the batches, maps API records' OS thread ids to the recorder's tracks, demangles
// kernel names (here, on the thread calling stop(), rather than on CUPTI's thread: once per
// distinct name).
std::vector<DeviceRecord> CuptiTracer::finish(std::vector<Batch>& batches) {
  std::size_t total = 0;
  for (const auto& b : batches) total += b.size();
  std::vector<DeviceRecord> out;
  out.reserve(total);
  std::unordered_map<std::uint32_t, std::uint32_t> tracks;
  std::unordered_map<std::string, std::string> plain;
  for (auto& batch : batches) {
    for (DeviceRecord& r : batch) {
      switch (r.kind) {
        case DeviceRecordKind::kRuntime:
        case DeviceRecordKind::kDriver: {
          auto [it, inserted] = tracks.try_emplace(r.thread, 0);
          if (inserted) it->second = track_of_os_thread(r.thread);
          r.thread = it->second;
          break;
        }
        case DeviceRecordKind::kSynchronization:
          r.thread = kUnknownThread;
          break;
        case DeviceRecordKind::kKernel: {
          auto it = plain.find(r.name);
          if (it == plain.end()) it = plain.emplace(r.name, demangle(r.name)).first;
          r.name = it->second;
          break;
        }
        default:
          break;
      }
      out.push_back(std::move(r));
    }
    batch = {};  // free as we go: the records exist twice only one batch at a time
  }
  return out;
}

std::vector<DeviceRecord> CuptiTracer::stop() {
  if (stopped_) return {};
  shut_down();
  std::vector<Batch> batches;
  {
    std::lock_guard lock(g_completion_mutex);  // detached: only a late callback could be here
    batches.swap(batches_);
  }
  std::int64_t total = 0;
  for (const auto& b : batches) total += static_cast<std::int64_t>(b.size());
  try {
    return finish(batches);
  } catch (...) {
    dropped_.fetch_add(total, std::memory_order_relaxed);  // out of memory: the records are lost, counted
    return {};
  }
}

CuptiTracer::~CuptiTracer() {
  shut_down();  // quietly: the records are discarded
  // Detached: no callback can reach free_ any more. Buffers still inside CUPTI (none after the
  // forced flush, normally) are freed by buffer_completed when they come back.
  for (std::uint8_t* b : free_) free_buffer(b);
}

std::unique_ptr<DeviceTracer> start(const TickConverter& clock, std::string& why) {
  int devices = 0;
  if (const cudaError_t e = cudaGetDeviceCount(&devices); e != cudaSuccess) {
    why = std::string("no CUDA device: ") + cudaGetErrorString(e);
    return nullptr;
  }
  if (devices <= 0) {
    why = "no CUDA device";
    return nullptr;
  }
  auto tracer = std::make_unique<CuptiTracer>();
  // On any failure `tracer` goes out of scope and its destructor undoes the steps done so far.
  if (!tracer->allocate_pool(why) || !tracer->attach(why) || !tracer->subscribe(why) || !tracer->enable(why) ||
      !tracer->measure_clock(clock, why))
    return nullptr;
  tracer->install_hooks();
  return tracer;
}

}  // namespace

std::unique_ptr<DeviceTracer> start_cupti(const TickConverter& clock, std::string& why) {
  try {
    return start(clock, why);
  } catch (const std::exception& e) {
    why = std::string("CUPTI tracer failed to start: ") + e.what();
  } catch (...) {
    why = "CUPTI tracer failed to start";
  }
  return nullptr;
}

#endif  // COMMSCOPE_WITH_CUDA

}  // namespace commscope::profiler::detail
