// What a rank says when a signal stops it (a launcher ending the job after another rank died,
// Ctrl-C), and the one marker of what it is doing, which the signal handler reads: the bench's
// case in progress, the trainer's collective in progress.
#pragma once

namespace commscope {

// Writes one line to stderr, "<prefix>stopped by SIGTERM while in <doing>" (or "... outside any
// collective" when `doing` is null or empty). Async-signal-safe: strlen, memcpy and write only.
void write_stop_line(const char* prefix, int sig, const char* doing) noexcept;

// The activity marked now, "" when none. Async-signal-safe (two buffers, swapped atomically).
const char* current_activity() noexcept;

// Marks `text` (copied; up to 511 bytes) as the activity in progress for its lifetime, e.g.
// "allreduce algo=ring type=f32 op=sum size=4096 B in-place" or "allreduce (ring, 4 MiB, gradients)".
class ActivityMarker {
 public:
  explicit ActivityMarker(const char* text) noexcept;
  ~ActivityMarker();
  ActivityMarker(const ActivityMarker&) = delete;
  ActivityMarker& operator=(const ActivityMarker&) = delete;
};

}  // namespace commscope
