// The one signal path of the tools that write files (commscope-bench, commscope-doctor,
// commscope-train): a stop flag, the handlers of SIGINT, SIGTERM and SIGHUP, and one registry of
// the files being written, which a stop publishes (FILE.partial renamed to FILE, as its last
// flush left it) and names on the way out ("<tool>: rank 0: kept 12 rows in FILE").
//
// Two ways to stop (install's `mode`):
//  - kPublishAndDie (bench, doctor): the handler publishes every tracked file first, then says
//    which collective the rank was in (stop_line.hpp) and where the results are, then the
//    process dies of the signal. A signal that comes while a tracked file is being written
//    (a WriteGuard is alive) waits until the write ends, so that the files stay valid.
//  - kRaiseFlag (trainer): the first signal publishes every tracked file as its last flush left
//    it (when a write ends, if one is in progress), says where, and raises the stop flag, which
//    the tool polls at a safe point (a step's end) to end; a second signal stops as above. The
//    files are not left for the step's end: a step may take longer than a launcher waits before
//    its SIGKILL (Open MPI's mpirun: about 1 s after the SIGTERM it forwards at a Ctrl-C), and a
//    5-step profile was lost so under mpirun while one rank alone kept it.
// A library inside another program (libcommscope-mpiprof) takes signal_pipe instead: the handler
// hands the signal to a thread of the library's, which writes its file and re-raises it under the
// program's own disposition.
// A rank whose launcher goes away also stops (the parent's death is delivered as SIGHUP): Open
// MPI's mpirun, at a second Ctrl-C within 5 s, exits at once, before it has forwarded the first
// to the ranks, and the ranks would otherwise exit without a word when they lose it.
//
// Ranks other than 0 have no file to publish and wait up to 0.5 s before dying of the signal:
// Open MPI's mpirun SIGKILLs every rank within milliseconds of one dying of its SIGTERM, so a
// rank 1 dying at once left rank 0 no time to publish when it got the CPU late (a loaded node,
// or a row being written), and FILE.partial stayed behind. mpirun SIGKILLs the waiting ranks as
// soon as rank 0 has published and died, and every rank 1 s after its SIGTERM in any case.
#pragma once

#include <cstdint>
#include <string>

namespace commscope::stop {

enum class Mode { kPublishAndDie, kRaiseFlag };

// Installs the handlers (an ignored signal stays ignored: nohup, a background job's SIGINT).
// `tool` names the program in what the handler says ("commscope-bench: rank 2: stopped by ...").
void install(const char* tool, int rank, Mode mode);

// The first stop signal's number, 0 while none came. Async-signal-safe.
int requested() noexcept;
// For tests and the trainer's own stop: raise the flag as a signal would.
void request(int sig) noexcept;

// The registry of files being written: at most 4 at once, paths up to 4,000 bytes.
// check_path throws std::invalid_argument for a path the handler could not hold (before the
// file is made).
void check_path(const std::string& path);

// A file written as `partial` and published as `final_path`: tracked while alive. `unit` names
// what kept() counts in the line said at a stop ("rows", "steps"); nullptr: no line.
class TrackedFile {
 public:
  TrackedFile(const std::string& partial, const std::string& final_path, const char* unit = "rows");
  ~TrackedFile();
  TrackedFile(const TrackedFile&) = delete;
  TrackedFile& operator=(const TrackedFile&) = delete;

  // What a stop would keep now (rows flushed so far). Async-signal-safe.
  void set_kept(std::uint64_t n) noexcept;
  // Still the writer's: neither published by a stop nor closed. Check it under a WriteGuard
  // before writing (a stop cannot take the file from a write in progress).
  bool held() const noexcept;
  // Takes the file from the handler for closing (which renames it): true when the caller is to
  // close it; then end_close() once it has its final name (a signal that came meanwhile is
  // delivered then). False when a stop already published it.
  bool begin_close() noexcept;
  void end_close() noexcept;

 private:
  int slot_;
};

// For the ranks that do not write a file rank 0 writes (and publishes at a stop): a stop on such a
// rank, after its hold for rank 0, says where the rows are when they were not published, i.e.
// `partial` is still there ("<tool>: rank 1: OUT was not published: its rows are in
// OUT.partial"): rank 0 was killed first (SIGKILL, the OOM killer), and the launcher's own line
// names the signal only. Where rank 0's file is not on this rank's file system, nothing is said.
// One file; check_path's limits.
void watch(const std::string& partial, const std::string& final_path);

// A file ended by a function of its own at a stop (the bench's -J JSON file writes its footer):
// `publish` must be async-signal-safe and is called at most once, while this is alive.
class TrackedHook {
 public:
  explicit TrackedHook(void (*publish)() noexcept);
  ~TrackedHook();
  TrackedHook(const TrackedHook&) = delete;
  TrackedHook& operator=(const TrackedHook&) = delete;

 private:
  int slot_;
};

// While one is alive a tracked file is being written: a signal waits for the last to end.
class WriteGuard {
 public:
  WriteGuard() noexcept;
  ~WriteGuard();
  WriteGuard(const WriteGuard&) = delete;
  WriteGuard& operator=(const WriteGuard&) = delete;
};

// For a library inside another program (libcommscope-mpiprof): the handler writes the signal's
// number to a pipe and nothing else (nothing more is safe in someone else's program), and a thread
// of the library's own reads it and does the rest. One per process; the pipe is never closed (a
// handler already running on another thread may still write to it).
namespace signal_pipe {
// Makes the pipe (its write end non-blocking: the handler never blocks); the read end, or -1 with
// errno set when no pipe could be made.
int open() noexcept;
// The handler for `signals` (up to 8), each disposition before remembered; an ignored signal stays
// ignored (nohup, a background job's SIGINT).
void install(const int* signals, int n) noexcept;
// The dispositions before, back (once: later calls do nothing).
void restore() noexcept;
// Writes `byte` as the handler would (0: asks the reader to stop).
void post(unsigned char byte) noexcept;
}  // namespace signal_pipe

// Async-signal-safe: publish every tracked file not being written now (the watchdog, before it
// ends a hung run), and say where each is. Returns how many files were published.
int publish_now() noexcept;

}  // namespace commscope::stop
