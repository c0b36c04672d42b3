#pragma once
// The replay itself (MPI): the recorded groups rebuilt with MPI_Comm_split, each rank's
// communication run in its recorded order with its gaps, under a profiling session whose file
// is the replay's output (docs/replay.md).

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "commscope/profiler/placement.hpp"
#include "commscope/replay/plan.hpp"

namespace commscope::replay {

// How the recorded time between two communications is spent.
enum class GapMode : std::uint8_t {
  kNone,  // not at all: the communication back to back
  kWait,  // asleep for the recorded time
  kBusy,  // computing for the recorded time (a matrix product on the core, as compute would)
};

struct RunOptions {
  std::string output;          // the replay's profile
  std::string algo = "mpi";    // the collectives' algorithm (collectives' registry; "nccl" with cuda)
  std::string device = "cpu";  // cpu: host buffers; cuda: device buffers (backend.hpp)
  GapMode gaps = GapMode::kNone;
  double timeout_s = 300;  // every wait's deadline
  std::string command_line;
  std::vector<std::pair<std::string, std::string>> attributes;  // stored in the output's /meta
};

// What a rank replayed: its ops, those that ran with `mpi` because the algorithm has no such
// collective, and the messages whose other side nobody plays.
struct RunCounts {
  std::int64_t ops = 0;
  std::map<std::string, std::int64_t> fallback;  // collective -> calls run with mpi instead
  std::int64_t dropped_messages = 0;
  bool written = false;  // rank 0: the output file was written
  profiler::PlacementSummary placement;  // rank 0: where the replay's ranks ran
};

// Collective over MPI_COMM_WORLD (its size: mapping.recorded's). Throws on a failed call.
RunCounts run_replay(const ReplayPlan& plan, const RankMapping& mapping, const RunOptions& options);

// Spends `ns` as `mode` says (kBusy: a 128 x 128 f32 matrix product, repeated).
void spend_gap(GapMode mode, std::int64_t ns);

}  // namespace commscope::replay
