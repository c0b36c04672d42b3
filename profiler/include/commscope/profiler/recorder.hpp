#pragma once
// Instrumentation API: RAII scopes that record into preallocated per-thread buffers.
//
//   COMMSCOPE_PROFILE_ITERATION(step);                    // one training step
//   COMMSCOPE_PROFILE_OPERATOR("block.attn.fwd");          // nested scopes allowed
//   COMMSCOPE_PROFILE_KERNEL("matmul");                    // a compute section (CPU) or launch
//   COMMSCOPE_PROFILE_COMM("allreduce", "ring", bytes);   // a collective on the profiled communicator
//
// Collectives on other communicators (a tensor-parallel group, a pipeline's messages) are
// numbered by a CommGroup of their own, so that only the same communicator's calls are matched
// across ranks:  CommGroup tp(communicator_label("tp", ranks));  ...  CommScope c(ar, ring, n, tp);
//
// or the classes with names interned once (names vary at run time, e.g. per layer):
//   const NameId attn = name_id("block3.attn.fwd");  ...  OperatorScope scope(attn);
//
// Cost: with no session recording, a scope is one relaxed atomic load and a branch. While
// recording, a scope reserves an Event slot in its thread's buffer and reads the clock twice
// (profiler/bench/overhead.cpp measures it). Compiled with COMMSCOPE_PROFILER_DISABLE defined
// (for a whole target), the macros expand to nothing and the classes to empty inline code.
//
// Concurrency: any thread may record; each thread owns its buffer. Starting or finishing a
// session while other threads are inside scopes is not supported (their events may be lost).

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string_view>
#include <vector>

#include "commscope/formats/events.hpp"
#include "commscope/profiler/clock.hpp"

namespace commscope::profiler {

using NameId = std::uint32_t;

// The process-wide name table: ids are stable for the life of the process.
NameId name_id(std::string_view name);
StringTable& process_names();

// Pass as CommScope's seq to number the collective automatically (the next number on the
// profiled communicator: every rank must then open the same CommScopes in the same order).
inline constexpr std::int64_t kAutoSeq = -2;

// Which matched instance a communication is: its communicator's label (a string id; 0 = the
// profiled communicator) and its number there (-1: not matched across ranks).
struct CommInstance {
  NameId communicator = 0;
  std::int64_t seq = -1;
};

namespace detail {

inline constexpr std::uint32_t kMaxOperatorDepth = 64;

// One thread's events: chunks of Event. The session preallocates (and touches, so no page fault
// lands in the hot path) the starting thread's chunks; other threads get one chunk when they
// register and more as needed, up to the per-thread limit; beyond it events are dropped and
// counted. Chunks never move: a scope keeps a pointer to its event.
struct ThreadBuffer {
  Event* cursor = nullptr;      // next free slot in the current chunk
  Event* limit = nullptr;       // end of the current chunk
  std::uint32_t index = 0;      // the thread's track number
  std::uint32_t depth = 0;      // open operator scopes (entries of op_stack used: min(depth, kMax))
  std::uint64_t os_thread = 0;  // the kernel's thread id (gettid), to map CUPTI's API records
  std::uint64_t next_id = 0;
  std::int64_t dropped = 0;
  std::uint64_t op_stack[kMaxOperatorDepth] = {};

  std::vector<std::unique_ptr<Event[]>> chunks;  // all allocated chunks (kept across sessions)
  std::size_t current = 0;                       // the chunk being filled
  std::size_t chunk_events = 0;                  // events per chunk
  std::size_t max_events = 0;

  Event* grow() noexcept;     // next chunk's first slot, or nullptr (counted as dropped)
  bool add_chunk() noexcept;  // allocates and touches one more chunk
  std::size_t size() const noexcept;
  void clear() noexcept;  // back to the first chunk, keeping every chunk
  std::uint64_t innermost() const noexcept {
    return depth == 0 ? 0 : op_stack[(depth <= kMaxOperatorDepth ? depth : kMaxOperatorDepth) - 1];
  }
  std::uint64_t new_id() noexcept { return (static_cast<std::uint64_t>(index) << 40) | ++next_id; }
};

inline std::atomic<bool> g_recording{false};
inline std::atomic<std::int32_t> g_iteration{-1};
inline std::atomic<std::int64_t> g_comm_seq{0};
// Counts the sessions started in this process: a CommGroup restarts its numbers in each.
inline std::atomic<std::uint64_t> g_session_generation{0};
// Set while a device backend wants external correlation ids (CUPTI).
inline std::atomic<bool> g_device_hooks{false};
// Set while the flight recorder (flight.hpp) is on: an operator entered is its rank's phase.
inline std::atomic<bool> g_flight_phases{false};
inline thread_local ThreadBuffer* t_buffer = nullptr;

ThreadBuffer* register_thread() noexcept;                 // nullptr when out of memory
NameId iteration_name() noexcept;                         // the name of every iteration event: "iteration"
void push_external(int kind, std::uint64_t id) noexcept;  // kind: ExternalKind
void pop_external(int kind) noexcept;
void flight_phase(NameId name) noexcept;  // flight::enter_phase(name, now)

// A slot for a new event on this thread, or nullptr (not recording, or dropped).
inline Event* reserve(ThreadBuffer*& buffer) noexcept {
  ThreadBuffer* b = t_buffer;
  if (b == nullptr && (b = register_thread()) == nullptr) return nullptr;
  buffer = b;
  if (b->cursor == b->limit) return b->grow();
  return b->cursor++;
}

inline Event* open_event(ThreadBuffer*& buffer, EventKind kind, NameId name) noexcept {
  Event* e = reserve(buffer);
  if (e == nullptr) return nullptr;
  e->end_ns = 0;
  e->id = 0;
  e->parent = buffer->innermost();
  e->correlation = 0;
  e->bytes = 0;
  e->seq = -1;
  e->iteration = g_iteration.load(std::memory_order_relaxed);
  e->name = name;
  e->detail = 0;
  e->track = buffer->index;
  e->communicator = 0;
  e->device = -1;
  e->kind = kind;
  e->track_kind = TrackKind::kHostThread;
  e->start_ns = ticks();  // raw ticks until the session converts them
  return e;
}

}  // namespace detail

inline bool recording() noexcept {
  return detail::g_recording.load(std::memory_order_relaxed);
}

// A communicator's numbering: its collectives are matched across its members by (label,
// number), and by nothing else. The label must be the same on every member and differ from
// every other communicator's (communicator_label: "tp[0,1]" and "tp[2,3]" are not peers);
// numbers count its communications from 0 in each session, so every member must open the same
// CommScopes on it in the same order (MPI orders a communicator's collectives so anyway). Used
// by one thread at a time, as its communicator is.
class CommGroup {
 public:
  explicit CommGroup(std::string_view label) : label_(name_id(label)) {}
  NameId label() const noexcept { return label_; }
  // The next instance: this group's label and number.
  CommInstance next() noexcept {
    const std::uint64_t generation = detail::g_session_generation.load(std::memory_order_relaxed);
    if (generation != generation_) generation_ = generation, count_ = 0;
    return {label_, count_++};
  }

 private:
  NameId label_;
  std::uint64_t generation_ = 0;
  std::int64_t count_ = 0;
};

#if !defined(COMMSCOPE_PROFILER_DISABLE)
// The two builds of the scopes live in different inline namespaces, so a program mixing targets
// built with and without COMMSCOPE_PROFILER_DISABLE has no two definitions of one class.
inline namespace scopes_on {

// A compute section on the CPU (or the host side of a device launch).
class KernelScope {
 public:
  explicit KernelScope(NameId name) noexcept {
    if (recording()) event_ = detail::open_event(buffer_, EventKind::kKernel, name);
  }
  ~KernelScope() {
    if (event_ != nullptr && recording()) event_->end_ns = ticks();
  }
  KernelScope(const KernelScope&) = delete;
  KernelScope& operator=(const KernelScope&) = delete;

 private:
  detail::ThreadBuffer* buffer_ = nullptr;
  Event* event_ = nullptr;
};

// An operator instance. Kernels and collectives recorded inside it (on this thread, or on a
// device through CUPTI's external correlation) belong to it.
class OperatorScope {
 public:
  explicit OperatorScope(NameId name) noexcept {
    if (detail::g_flight_phases.load(std::memory_order_relaxed)) detail::flight_phase(name);
    if (!recording() || (event_ = detail::open_event(buffer_, EventKind::kOperator, name)) == nullptr) return;
    event_->id = buffer_->new_id();
    if (buffer_->depth < detail::kMaxOperatorDepth) buffer_->op_stack[buffer_->depth] = event_->id;
    ++buffer_->depth;
    if (detail::g_device_hooks.load(std::memory_order_relaxed)) detail::push_external(0, event_->id);
  }
  ~OperatorScope() {
    if (event_ == nullptr || !recording()) return;  // the session ended inside the scope
    if (detail::g_device_hooks.load(std::memory_order_relaxed)) detail::pop_external(0);
    if (buffer_->depth > 0) --buffer_->depth;
    event_->end_ns = ticks();
  }
  OperatorScope(const OperatorScope&) = delete;
  OperatorScope& operator=(const OperatorScope&) = delete;
  std::uint64_t id() const noexcept { return event_ != nullptr ? event_->id : 0; }

 private:
  detail::ThreadBuffer* buffer_ = nullptr;
  Event* event_ = nullptr;
};

// A collective call. bytes: the collective's array bytes (the bench's S). On the profiled
// communicator, seq: kAutoSeq, an explicit number shared by all ranks, or -1 (no cross-rank
// matching: no wait/transfer split). On another communicator: its group (the next number there)
// or an explicit instance (a message's, CommInstance{} for none).
class CommScope {
 public:
  CommScope(NameId collective, NameId algorithm, std::int64_t bytes, std::int64_t seq = kAutoSeq) noexcept
      : CommScope(
            collective, algorithm, bytes,
            CommInstance{0, seq == kAutoSeq && recording() ? detail::g_comm_seq.fetch_add(1, std::memory_order_relaxed)
                                                           : seq}) {}
  CommScope(NameId collective, NameId algorithm, std::int64_t bytes, CommGroup& group) noexcept
      : CommScope(collective, algorithm, bytes, group.next()) {}
  CommScope(NameId collective, NameId algorithm, std::int64_t bytes, CommInstance instance) noexcept {
    if (!recording() || (event_ = detail::open_event(buffer_, EventKind::kCommunication, collective)) == nullptr)
      return;
    event_->id = buffer_->new_id();
    event_->detail = algorithm;
    event_->bytes = bytes;
    event_->seq = instance.seq;
    event_->communicator = instance.communicator;
    if (detail::g_device_hooks.load(std::memory_order_relaxed)) detail::push_external(1, event_->id);
    event_->start_ns = ticks();
  }
  ~CommScope() {
    if (event_ == nullptr || !recording()) return;
    event_->end_ns = ticks();
    if (detail::g_device_hooks.load(std::memory_order_relaxed)) detail::pop_external(1);
  }
  CommScope(const CommScope&) = delete;
  CommScope& operator=(const CommScope&) = delete;

 private:
  detail::ThreadBuffer* buffer_ = nullptr;
  Event* event_ = nullptr;
};

// One iteration (training step). Events begun inside it carry its step number.
class IterationScope {
 public:
  explicit IterationScope(std::int32_t step) noexcept {
    if (!recording()) return;
    detail::g_iteration.store(step, std::memory_order_relaxed);
    event_ = detail::open_event(buffer_, EventKind::kIteration, detail::iteration_name());
  }
  ~IterationScope() {
    if (event_ == nullptr || !recording()) return;
    event_->end_ns = ticks();
    detail::g_iteration.store(-1, std::memory_order_relaxed);
  }
  IterationScope(const IterationScope&) = delete;
  IterationScope& operator=(const IterationScope&) = delete;

 private:
  detail::ThreadBuffer* buffer_ = nullptr;
  Event* event_ = nullptr;
};

}  // namespace scopes_on

#define COMMSCOPE_PROFILE_CAT2_(a, b) a##b
#define COMMSCOPE_PROFILE_CAT_(a, b) COMMSCOPE_PROFILE_CAT2_(a, b)
#define COMMSCOPE_PROFILE_NAME_(literal)                                                                 \
  static const ::commscope::profiler::NameId COMMSCOPE_PROFILE_CAT_(commscope_profile_name_, __LINE__) = \
      ::commscope::profiler::name_id(literal)
#define COMMSCOPE_PROFILE_ITERATION(step) \
  ::commscope::profiler::IterationScope COMMSCOPE_PROFILE_CAT_(commscope_profile_scope_, __LINE__)(step)
#define COMMSCOPE_PROFILE_OPERATOR(literal)                    \
  COMMSCOPE_PROFILE_NAME_(literal);                            \
  ::commscope::profiler::OperatorScope COMMSCOPE_PROFILE_CAT_( \
      commscope_profile_scope_, __LINE__)(COMMSCOPE_PROFILE_CAT_(commscope_profile_name_, __LINE__))
#define COMMSCOPE_PROFILE_KERNEL(literal)                    \
  COMMSCOPE_PROFILE_NAME_(literal);                          \
  ::commscope::profiler::KernelScope COMMSCOPE_PROFILE_CAT_( \
      commscope_profile_scope_, __LINE__)(COMMSCOPE_PROFILE_CAT_(commscope_profile_name_, __LINE__))
#define COMMSCOPE_PROFILE_COMM(collective, algorithm, bytes)                                   \
  ::commscope::profiler::CommScope COMMSCOPE_PROFILE_CAT_(commscope_profile_scope_, __LINE__)( \
      ::commscope::profiler::name_id(collective), ::commscope::profiler::name_id(algorithm), bytes)

#else  // COMMSCOPE_PROFILER_DISABLE: no code at all
inline namespace scopes_off {

class KernelScope {
 public:
  explicit KernelScope(NameId) noexcept {}
};
class OperatorScope {
 public:
  explicit OperatorScope(NameId) noexcept {}
  std::uint64_t id() const noexcept { return 0; }
};
class CommScope {
 public:
  CommScope(NameId, NameId, std::int64_t, std::int64_t = kAutoSeq) noexcept {}
  CommScope(NameId, NameId, std::int64_t, CommGroup&) noexcept {}
  CommScope(NameId, NameId, std::int64_t, CommInstance) noexcept {}
};
class IterationScope {
 public:
  explicit IterationScope(std::int32_t) noexcept {}
};
}  // namespace scopes_off
#define COMMSCOPE_PROFILE_ITERATION(step) ((void)0)
#define COMMSCOPE_PROFILE_OPERATOR(literal) ((void)0)
#define COMMSCOPE_PROFILE_KERNEL(literal) ((void)0)
#define COMMSCOPE_PROFILE_COMM(collective, algorithm, bytes) ((void)0)

#endif

}  // namespace commscope::profiler
