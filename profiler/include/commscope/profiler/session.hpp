#pragma once
// A profiling session over an MPI communicator: starts recording on every rank, and at finish()
// turns the recorded events into the per-iteration breakdown and writes the profile file.
//
//   profiler::SessionOptions options;  options.output = "profile.h5";
//   profiler::Session session(MPI_COMM_WORLD, options);   // collective
//   for (step ...) { COMMSCOPE_PROFILE_ITERATION(step); ... }
//   profiler::Profile p = session.finish();               // collective; rank 0 holds all ranks' rows
//
// The profiler logs and carries on: a failure to write the file or to start CUPTI is a warning
// on stderr, never an exception out of finish() or an abort of the host program.

#include <mpi.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "commscope/formats/profile.hpp"
#include "commscope/profiler/recorder.hpp"

namespace commscope::profiler {

enum class BackendChoice : std::uint8_t {
  kAuto,   // CUPTI in CUDA builds when a device is present, else the host tracer
  kHost,   // the host tracer: compute sections and blocking collectives on the host thread
  kCupti,  // CUPTI activity records (falls back to the host tracer, with a warning, if CUPTI fails)
};

struct SessionOptions {
  std::string output;  // profile file written by finish(); empty: none
  BackendChoice backend = BackendChoice::kAuto;
  std::size_t chunk_events = std::size_t{1} << 16;           // events per buffer chunk (80 B each)
  std::size_t max_events_per_thread = std::size_t{1} << 23;  // beyond: dropped, counted, warned about
  // Allocated and touched at start for the thread that starts the session (80 B per event), so
  // recording does not page-fault; other threads' buffers grow as they record.
  std::size_t preallocate_events = std::size_t{1} << 18;
  // Up to this many ranks, rank 0 gathers every rank's raw events into the one file; beyond it
  // each rank writes its own events file next to it (docs/profile-format.md).
  int single_file_max_ranks = 64;
  bool allow_tsc = true;  // false: read CLOCK_MONOTONIC on every event
  int clock_rounds = 8;   // ping-pong rounds per rank for the clock offsets
  std::string command_line;
  std::vector<std::pair<std::string, std::string>> attributes;  // stored under /meta
  // Write `output` step by step: append_so_far() appends what every rank finished since to
  // NAME.partial, which a stop (Ctrl-C, a launcher's SIGTERM: commscope/common/stop_signals.hpp)
  // publishes as NAME at once, "kept N steps in NAME"; finish() appends the rest and renames it.
  // With the host tracer on every rank and the single layout; otherwise finish() writes the file.
  bool stream = false;
};

// The ranks in MPI_COMM_WORLD of comm's members, by their rank in comm (an intercommunicator:
// its local group's): what communicator_label (vocabulary.hpp) labels a communicator by.
std::vector<int> world_ranks(MPI_Comm comm);
// The same of a group's members (MPI_UNDEFINED for a process outside MPI_COMM_WORLD).
std::vector<int> world_ranks(MPI_Group group);

// "" when `path` can be created (its folder exists and is writable), else a one-line reason.
std::string output_problem(const std::string& path);

class Session {
 public:
  Session(MPI_Comm comm, SessionOptions options);  // collective over comm
  ~Session();
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;

  int rank() const noexcept;
  int size() const noexcept;
  const char* backend() const noexcept;           // "host" or "cupti"
  std::int64_t clock_offset_ns() const noexcept;  // this rank's
  std::int64_t now_ns() const noexcept;           // ns since this rank's epoch

  // Collective. Stops recording and returns the profile: on rank 0 every rank's breakdown rows,
  // operator totals and rank info (and every rank's events when they were gathered, i.e. the
  // single-file layout); on other ranks their own. Writes options.output when set; whether it
  // was written is written().
  Profile finish();
  // Collective, between steps (no collective in flight on any rank): writes options.output with
  // every rank's events so far, as finish() would, and goes on recording; finish() writes the
  // file again, whole. Returns whether the file was written: false on every rank when there is
  // no output or when a rank records with CUPTI (its records come at finish() only).
  bool write_so_far();
  // Collective, between steps (no collective in flight on any rank), with SessionOptions::stream:
  // appends every rank's events, breakdown rows and operator totals finished since the last call
  // to NAME.partial and flushes it. Returns whether it did: false on every rank without a
  // stream, once a stop has published the file (it then holds the steps appended before), or
  // after a failure to write (a warning; the stream ends). With a stream, write_so_far() appends
  // and then copies NAME.partial to NAME.
  bool append_so_far();
  // Not collective, no MPI calls: for a rank that cannot count on the others any more (the job
  // is being killed). Stops recording and writes `path` (NAME.partial, then renamed), a valid
  // one-rank profile of this rank: its events, its breakdown with all communication counted as
  // transfer (no other rank's arrival is known), its clock offset to rank 0 from the start, and
  // /meta attributes job_rank and job_nranks, then `attributes`. The rank is 0 in the file's
  // tables. Returns whether the file was written (a failure is a warning). Callable from any
  // thread, also while others record (they stop at their next scope; events they hold open end
  // now). Either this or finish(), once.
  bool finish_local(const std::string& path, const std::vector<std::pair<std::string, std::string>>& attributes = {});
  bool written() const noexcept;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace commscope::profiler
