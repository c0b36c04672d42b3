#pragma once
// A profile against its replay (commscope-replay's output, or any run of the same job):
// communication per iteration and per collective, counts and bytes, and the iteration time
// projected from the recorded compute and the replayed communication (docs/replay.md).

#include <cstdint>
#include <string>
#include <vector>

#include "commscope/formats/profile.hpp"

namespace commscope::analysis {

struct ReplayIterationRow {
  std::int32_t iteration = 0;
  double recorded_comm_ns = 0, replayed_comm_ns = 0;  // mean over the compared ranks of |C|
  // |C| split as the breakdown splits it: before the last rank arrived at each collective
  // (arrival skew: the gaps, a late rank) and after it (the transfer itself).
  double recorded_wait_ns = 0, replayed_wait_ns = 0;
  double recorded_transfer_ns = 0, replayed_transfer_ns = 0;
  double recorded_step_ns = 0;  // mean window
  // Mean over ranks of window - comm + max(replayed comm, overlap): the recorded compute and
  // gaps, the replayed communication, the compute that hid under communication still hidden.
  double projected_step_ns = 0;
  std::int64_t recorded_calls = 0, replayed_calls = 0;
  std::int64_t recorded_bytes = 0, replayed_bytes = 0;
};

// One communicator's calls of one name, counted from each file's own events (replay_compare.cpp):
// a call the replay lost or added shows here, whatever the replay planned.
struct ReplayCollectiveRow {
  std::string name;   // as recorded ("tp.allreduce")
  std::string group;  // the communicator's label ("tp[0,1]", "pp[0>2]"; "all" for the profiled one)
  std::int64_t recorded_calls = 0, replayed_calls = 0;
  std::int64_t recorded_bytes = 0, replayed_bytes = 0;
  double recorded_ns = 0, replayed_ns = 0;  // summed call durations per (rank, iteration)
};

// Messages (communication on a link label, "mpi[0>2]") over the compared ranks and steps: those
// numbered (split into wait and transfer at their peer's arrival) and those not (all transfer:
// a PMPI profile cannot tell which send a receive took).
struct MessageSplit {
  std::int64_t numbered = 0, unnumbered = 0;
};

struct ReplayComparison {
  std::vector<int> ranks;                // by replay rank, the recorded rank it played
  std::vector<std::int32_t> iterations;  // compared: in both files
  std::size_t recorded_iterations = 0;
  std::vector<ReplayIterationRow> by_iteration;
  std::vector<ReplayCollectiveRow> by_collective;
  MessageSplit recorded_messages, replayed_messages;
  bool outside_iterations = false;  // the calls outside every iteration are counted too (all iterations compared)
};

// Throws std::invalid_argument when the files cannot be set against each other (no common
// iteration, a replay of more ranks than recorded, a replay_ranks attribute that does not fit).
ReplayComparison compare_replay(const profiler::Profile& original, const profiler::Profile& replay);

}  // namespace commscope::analysis
