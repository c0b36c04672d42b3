// commscope-bench's signal handling, in async-signal-safe state: SIGINT/SIGTERM/SIGHUP say which
// collective the rank was in, publish the results file (rename FILE.partial to FILE, as the
// last flush left it) and end an open -J file, then die of the signal. A signal that arrives
// while a file is being written is held back until the write ends, so that the files stay valid.
#pragma once

#include <string>

namespace commscope::bench {

// SIGINT/SIGTERM/SIGHUP (installed on every rank at start): say which collective the rank was
// in ("commscope-bench: rank 2: stopped by SIGTERM while in allreduce algo=ring ... size=4096 B
// ..."; a launcher ending the job after another rank died sends SIGTERM), publish the results
// file if one is open, then die of the signal as before.
void install_signal_handlers(int rank);

// The handler names the activity marked (commscope/common/stop_line.hpp): measure() marks the
// case in progress with describe(c).

// The results file the handler publishes. check_trackable_path throws InvalidArgument for a
// path too long for the handler's fixed buffers (before the file is made); track_results_file
// hands the open file's partial and final paths to the handler.
void check_trackable_path(const std::string& path);
void track_results_file(const std::string& partial_path, const std::string& final_path);
bool results_file_tracked() noexcept;
// While alive, the results file is being written: signals wait.
class ResultsWriteGuard {
 public:
  ResultsWriteGuard() noexcept;
  ~ResultsWriteGuard();
  ResultsWriteGuard(const ResultsWriteGuard&) = delete;
  ResultsWriteGuard& operator=(const ResultsWriteGuard&) = delete;
};
// Takes the file from the handler for closing: true when the caller is to close (and so publish)
// it; then end_results_close() once it has its final name (a signal that came meanwhile is
// delivered then).
bool begin_results_close() noexcept;
void end_results_close() noexcept;

// Async-signal-safe: if a results file is open and not being written, rename it to its final
// name now (its content is what the last flush() wrote); end an open -J file likewise.
void publish_results_file_now() noexcept;
// Called when a write of the results or JSON file ends: a signal that arrived during the write
// (and was held back so that the files stay valid) is handled now: publish, then die of it.
void deliver_deferred_signal() noexcept;

}  // namespace commscope::bench
