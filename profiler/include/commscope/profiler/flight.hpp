// The flight recorder (docs/hang.md) of libcommscope-mpiprof.so and of commscope's own tools
// (commscope-bench, -train, -replay: flight_watch.hpp): per communicator a ring of its
// last N calls (COMMSCOPE_FLIGHT_CALLS, default 64; 0: no recorder), each with its communicator's label, its
// sequence number there (collectives), the operation, bytes, the peer's or root's world rank, the
// datatype and reduction (collectives), and
// when it was posted and completed (or that it has not); a nonblocking call's request also when a
// wait or test first looked at it and when it completed. Written per rank, without MPI (the job
// may be stuck), to COMMSCOPE_FLIGHT_DIR (default: beside the profile or the tool's output,
// NAME.flight/) when:
//   - SIGUSR1 arrives (the job goes on; the library's signal thread, or watch_sigusr1's),
//   - an MPI error reaches MPI_COMM_WORLD's (or a communicator made from it) default handler
//     (errors are fatal): the record, then the job aborts as MPI_ERRORS_ARE_FATAL would;
//   - SIGTERM or SIGINT (the launcher ending the job after another rank's error, a user's Ctrl-C),
//     before the rank's profile;
//   - a tool's own watchdog (--timeout) fires, before the tool ends;
//   - the watchdog fires: COMMSCOPE_HANG_TIMEOUT=SECONDS, no MPI call of the rank's main thread has
//     completed for that long (the rank is stuck inside a call, or outside MPI: computing); the
//     job goes on, once per stall (COMMSCOPE_HANG_EXIT=1: the rank ends, exit status 3).
// A healthy run writes nothing. The rings are allocated when a communicator is first used, none
// per call: a call writes one slot and two atomics.
#pragma once

#include <atomic>
#include <cstdint>
#include <string>
#include <vector>

#include "commscope/profiler/clock.hpp"

namespace commscope::profiler::flight {

namespace detail {
inline std::atomic<bool> g_tsc{false};  // start's choice of clock for now()
}

// The recorder's clock, the value posted() and completed() take: the TSC where usable, else
// CLOCK_MONOTONIC's ns. In libcommscope-mpiprof it is the profiler's (ticks(): start's
// profiler_clock), whose reading the library's wrappers share with their events.
inline std::int64_t now() noexcept {
#if defined(__x86_64__)
  if (detail::g_tsc.load(std::memory_order_relaxed)) return static_cast<std::int64_t>(__rdtsc());
#endif
  return mono_ns();
}

// A call in a ring: where to mark it completed.
struct Handle {
  int ring = -1;
  std::uint64_t at = 0;
};

// At MPI_Init: the settings from the environment; `profile` is the profile's path (the folder's
// default is beside it), `hosts` every world rank's host, this rank's among them (gathered at
// MPI_Init, so that a record names the hosts of ranks that write none: a stopped or dead one);
// `tool` names the program in what the recorder says on stderr; `profiler_clock`: now() is the
// profiler's ticks() as its session has chosen (a session already started: the library's), else
// the TSC where usable (a tool's, whose session may start later and choose otherwise). Returns ""
// or a one-line warning for a bad setting.
std::string start(int world_rank, int world_size, const std::string& profile, std::vector<std::string> hosts,
                  std::string tool, bool profiler_clock);
// At MPI_Finalize: the watchdog ends; nothing is written.
void stop();
bool on();

// A ring for a communicator: its label (the profiler's string id; 0 for MPI_COMM_WORLD) and its
// members' world ranks (an intercommunicator's: both groups). Returns its index, -1 when the table
// is full (the communicator goes unrecorded).
int open_ring(std::uint32_t label, std::vector<int> members);

// The ring labelled `label` (open_ring's), -1 for none: for a tool's messages on a communicator
// it watches (flight_watch.hpp). A scan: at start-up, not per call.
int ring_of(std::uint32_t label);

// A call posted on ring `ring` at `ticks` (now(): the caller has read it already): op, the profiler's string id of the
// operation; peer, the world rank of the root or the peer (-1: none); link, a message's label id (0: none). detail: a
// collective's datatype and reduction (the profiler's string ids of their names, 0: none) and its root's rank in the
// communicator (-1: none), written as the root's world rank.
struct Detail {
  std::uint32_t type = 0, reduction = 0;
  int root = -1;
};
Handle posted(int ring, std::int64_t seq, std::uint32_t op, std::int64_t bytes, int peer, std::uint32_t link,
              std::int64_t ticks, const Detail& detail = {});
void completed(Handle h, std::int64_t ticks);

// A tool's section of MPI calls that every member of a ring makes alike (the profiler's gathers
// of a step), recorded as one call from construction to destruction.
class Section {
 public:
  Section(int ring, std::int64_t seq, std::uint32_t op) noexcept : h_(posted(ring, seq, op, 0, -1, 0, now())) {}
  ~Section() { completed(h_, now()); }
  Section(const Section&) = delete;
  Section& operator=(const Section&) = delete;

 private:
  Handle h_;
};

// Nonblocking calls (MPI_Iallreduce, ...): the post is the call above; its request, by `key` (the
// request handle's bits), is tracked until a completion call (MPI_Wait*, MPI_Test*) returns it
// done: the record then says when a wait or test first looked at it (checked) and when it
// completed (done), so that a request never waited on is told from one waited on in vain. At most
// kMaxPending requests at once are tracked (later ones are not: their calls read as blocking ones).
inline constexpr int kMaxPending = 4096;
void track_request(std::uint64_t key, Handle h);
// Whether any request is tracked now: the completion calls' fast path.
bool tracking();
// A completion call looks at `key` (before the MPI call): its call is checked, if it was not.
// Returns whether the request is tracked.
bool check_request(std::uint64_t key, std::int64_t ticks);
// After the MPI call: a tracked request found completed (its handle MPI_REQUEST_NULL) is done,
// and no longer tracked; `freed` (MPI_Request_free): no longer tracked, and its call reads as its
// post alone (a blocking call's record).
void finish_request(std::uint64_t key, std::int64_t ticks, bool freed = false);

// The phase the rank last entered (a tool's: "forward", "backward", "optimizer"; the profiler's
// string id) at `ticks`: a record of a rank outside MPI says what it was computing.
void enter_phase(std::uint32_t name, std::int64_t ticks);

// For a program that owns its signals (commscope's tools, not the library inside another's):
// SIGUSR1 writes this rank's file and the program goes on. The handler only writes a byte to a
// pipe; a thread of the recorder's, with every signal blocked, writes the file.
void watch_sigusr1();

// Writes this rank's file now (reason "signal", "watchdog", "timeout" or "error"; `error`, for an MPI error:
// its text and class, on an "error" line); its path, or "" after saying why on stderr. No MPI calls.
std::string dump(const char* reason, const std::string& error = {});

}  // namespace commscope::profiler::flight
