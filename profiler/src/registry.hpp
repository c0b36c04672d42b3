#pragma once
// The per-thread buffers' owner (internal to the profiler library).

#include <cstddef>
#include <cstdint>
#include <vector>

#include "commscope/profiler/recorder.hpp"

namespace commscope::profiler::detail {

// Clears every thread's buffer, sets the sizes for the next recording and preallocates (touched)
// room for `preallocate_events` events for the calling thread, registering it. Memory a previous
// session grew beyond that is given back. Call while no thread records.
void configure_buffers(std::size_t chunk_events, std::size_t max_events_per_thread, std::size_t preallocate_events = 0);

// Every finished event of every thread (raw ticks), thread by thread in record order; events
// still open (end == 0) are closed at `close_ticks`. `dropped` receives the events lost to full
// buffers. Call while no thread records.
std::vector<Event> collect_events(std::int64_t close_ticks, std::int64_t& dropped);
// The events finished since the last call with this `taken` (per thread: the events given so
// far; it grows as threads register), thread by thread in record order, each thread's up to its
// first event still open (an enclosing scope, given with what it encloses once it ends), in raw
// ticks; with close_ticks > 0 (the last call) every event, those open closed then. `dropped`
// receives the events lost to full buffers so far. Call while no thread records (between steps).
std::vector<Event> take_finished_events(std::vector<std::size_t>& taken, std::int64_t& dropped,
                                        std::int64_t close_ticks = 0);

// The track (thread index) of the registered thread with kernel thread id `os_tid`; unknown
// threads get 0x80000000 | (os_tid & 0x7fffffff).
std::uint32_t track_of_os_thread(std::uint64_t os_tid);

// The device backend's external-correlation hooks (nullptr: none).
using ExternalHook = void (*)(int kind, std::uint64_t id);
using ExternalPopHook = void (*)(int kind);
void set_external_hooks(ExternalHook push, ExternalPopHook pop) noexcept;

}  // namespace commscope::profiler::detail
