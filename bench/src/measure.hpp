// One measurement of one case on every rank: warm-up, `iters` timed calls back to back after
// a barrier, then `-c` checked calls; the ranks' times combined (docs/design.md, "Timing").
#pragma once

#include <cstdint>
#include <vector>

#include "backends/backend.hpp"
#include "rows.hpp"

namespace commscope::bench {

struct Measurement {
  std::int64_t iterations = 0;  // timed iterations (of -m calls each)
  double time_s = 0;            // per call, ranks combined per -a; identical on every rank
  double cpu_time_s = 0;        // per call, the host's time to issue the calls, combined alike
  int slowest_rank = 0;
  std::uint64_t nwrong = 0;  // summed over ranks and check iterations; identical on every rank
  // Rank 0 only: per-iteration max over ranks, and arrival skew (empty when unknown).
  Samples samples;
};

// Collective over `comm`. Throws what the backend throws (TimeoutError, TransportError).
Measurement measure(Backend& backend, Communicator& comm, const Case& c, std::int64_t iters, const Options& o,
                    Watchdog& dog);

// The timed loop the options ask for, with `iters` iterations.
TimingPlan timing_plan(const Options& o, std::int64_t iters);

}  // namespace commscope::bench
