// Clock offsets between ranks, by Cristian's method against rank 0: rank 0 sends its time,
// rank r answers with its own, and of `rounds` round trips the shortest gives the offset, with
// an error of at most half that round trip. While the shortest is over 100 us (a rank
// descheduled on a busy node makes every one of a few rounds slow) rounds go on, up to 64 x
// `rounds` or 0.25 s per rank, whichever comes first. A barrier would leave ranks skewed by its own
// fan-out; a timed round trip bounds the error. Used by the profiler (cross-rank timelines) and
// by commscope-bench (the ranks' arrival skew at each call).
#pragma once

#include <mpi.h>

#include <cstdint>
#include <functional>
#include <vector>

namespace commscope {

struct ClockOffsets {
  std::vector<std::int64_t> offset_ns;  // per rank: rank 0's clock minus rank r's (add it to r's times)
  std::vector<std::int64_t> error_ns;   // per rank: bound on the offset's error (rank 0: 0)
};

// Collective over `comm`; every rank gets every rank's offset. `now` reads the local clock (ns).
ClockOffsets estimate_clock_offsets(MPI_Comm comm, int rounds, const std::function<std::int64_t()>& now);

}  // namespace commscope
