#include "commscope/profiler/recorder.hpp"

#include <algorithm>
#include <mutex>
#include <new>

#include <sys/syscall.h>
#include <unistd.h>

#include "registry.hpp"

namespace commscope::profiler {

StringTable& process_names() {
  static StringTable names;
  return names;
}

NameId name_id(std::string_view name) {
  return process_names().intern(name);
}

namespace detail {

NameId iteration_name() noexcept {
  static const NameId id = name_id("iteration");
  return id;
}

namespace {

struct Registry {
  std::mutex mutex;
  std::vector<std::unique_ptr<ThreadBuffer>> buffers;  // never shrinks: threads keep raw pointers
  std::size_t chunk_events = std::size_t{1} << 16;
  std::size_t max_events = std::size_t{1} << 23;
};

Registry& registry() {
  static Registry r;
  return r;
}

std::atomic<ExternalHook> g_push{nullptr};
std::atomic<ExternalPopHook> g_pop{nullptr};

}  // namespace

bool ThreadBuffer::add_chunk() noexcept {
  auto chunk = std::unique_ptr<Event[]>(new (std::nothrow) Event[chunk_events]);  // Event() touches every page
  if (!chunk) return false;
  try {
    chunks.push_back(std::move(chunk));
  } catch (...) {
    return false;
  }
  return true;
}

Event* ThreadBuffer::grow() noexcept {
  if (chunks.empty()) {
    if (!add_chunk()) return ++dropped, nullptr;
    current = 0;
  } else {
    if ((current + 2) * chunk_events > max_events) return ++dropped, nullptr;
    if (current + 1 == chunks.size() && !add_chunk()) return ++dropped, nullptr;
    ++current;
  }
  cursor = chunks[current].get();
  limit = cursor + chunk_events;
  return cursor++;
}

std::size_t ThreadBuffer::size() const noexcept {
  if (chunks.empty() || cursor == nullptr) return 0;
  return current * chunk_events + static_cast<std::size_t>(cursor - chunks[current].get());
}

void ThreadBuffer::clear() noexcept {
  current = 0;
  if (!chunks.empty()) {
    cursor = chunks.front().get();
    limit = cursor + chunk_events;
  } else {
    cursor = limit = nullptr;
  }
  dropped = 0;
  depth = 0;
}

ThreadBuffer* register_thread() noexcept {
  Registry& r = registry();
  try {
    auto b = std::make_unique<ThreadBuffer>();
    std::lock_guard lock(r.mutex);
    b->index = static_cast<std::uint32_t>(r.buffers.size());
    b->os_thread = static_cast<std::uint64_t>(syscall(SYS_gettid));
    b->chunk_events = r.chunk_events;
    b->max_events = r.max_events;
    if (!b->add_chunk()) return nullptr;
    b->clear();
    r.buffers.push_back(std::move(b));
    t_buffer = r.buffers.back().get();
    return t_buffer;
  } catch (...) {
    return nullptr;
  }
}

void configure_buffers(std::size_t chunk_events, std::size_t max_events_per_thread, std::size_t preallocate_events) {
  Registry& r = registry();
  {
    std::lock_guard lock(r.mutex);
    r.chunk_events = std::max<std::size_t>(chunk_events, 16);
    r.max_events = std::max(max_events_per_thread, r.chunk_events);
    const std::size_t keep = std::max<std::size_t>(1, (preallocate_events + r.chunk_events - 1) / r.chunk_events);
    for (auto& b : r.buffers) {
      if (b->chunk_events != r.chunk_events) b->chunks.clear();
      b->chunk_events = r.chunk_events;
      if (b->chunks.size() > keep) b->chunks.resize(keep);  // give back what the last session grew
      b->max_events = r.max_events;
      b->clear();
    }
  }
  // The calling thread (the one that records most) gets its chunks now, touched.
  ThreadBuffer* self = t_buffer != nullptr ? t_buffer : register_thread();
  if (self == nullptr) return;
  const std::size_t want = std::min(preallocate_events, r.max_events);
  while (self->chunks.size() * self->chunk_events < want && self->add_chunk()) {
  }
  self->clear();
}

std::vector<Event> collect_events(std::int64_t close_ticks, std::int64_t& dropped) {
  Registry& r = registry();
  std::lock_guard lock(r.mutex);
  std::size_t total = 0;
  dropped = 0;
  for (const auto& b : r.buffers) total += b->size(), dropped += b->dropped;
  std::vector<Event> out;
  out.reserve(total);
  for (const auto& b : r.buffers) {
    if (b->chunks.empty() || b->cursor == nullptr) continue;
    for (std::size_t c = 0; c <= b->current; ++c) {
      const Event* first = b->chunks[c].get();
      const Event* last = c < b->current ? first + b->chunk_events : b->cursor;
      out.insert(out.end(), first, last);
    }
  }
  for (Event& e : out)
    if (e.end_ns == 0) e.end_ns = std::max(close_ticks, e.start_ns);
  return out;
}

std::vector<Event> take_finished_events(std::vector<std::size_t>& taken, std::int64_t& dropped,
                                        std::int64_t close_ticks) {
  Registry& r = registry();
  std::lock_guard lock(r.mutex);
  dropped = 0;
  taken.resize(r.buffers.size(), 0);
  std::vector<Event> out;
  for (std::size_t t = 0; t < r.buffers.size(); ++t) {
    const ThreadBuffer& b = *r.buffers[t];
    dropped += b.dropped;
    for (std::size_t i = taken[t], n = b.size(); i < n; ++i, ++taken[t]) {
      const Event& e = b.chunks[i / b.chunk_events][i % b.chunk_events];
      if (e.end_ns == 0 && close_ticks <= 0) break;
      out.push_back(e);
      if (out.back().end_ns == 0) out.back().end_ns = std::max(close_ticks, e.start_ns);
    }
  }
  return out;
}

std::uint32_t track_of_os_thread(std::uint64_t os_tid) {
  Registry& r = registry();
  std::lock_guard lock(r.mutex);
  for (const auto& b : r.buffers)
    if (b->os_thread == os_tid) return b->index;
  return 0x80000000u | static_cast<std::uint32_t>(os_tid & 0x7fffffffu);
}

void set_external_hooks(ExternalHook push, ExternalPopHook pop) noexcept {
  g_push.store(push);
  g_pop.store(pop);
  g_device_hooks.store(push != nullptr && pop != nullptr);
}

void push_external(int kind, std::uint64_t id) noexcept {
  if (auto f = g_push.load(std::memory_order_acquire)) f(kind, id);
}

void pop_external(int kind) noexcept {
  if (auto f = g_pop.load(std::memory_order_acquire)) f(kind);
}

}  // namespace detail
}  // namespace commscope::profiler
