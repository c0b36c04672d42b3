#pragma once
// The trainer's host-side collective helpers, shared by the CPU and CUDA engines: the marker a
// signal handler reads to say which collective a stopped rank was in, and the profiler's
// numbering of each communicator's collectives (both used through src/parallel/profiled_group.hpp).

#include <cstddef>
#include <string_view>
#include <vector>

#include "commscope/collectives/communicator.hpp"
#include "commscope/common/stop_line.hpp"
#include "commscope/profiler/recorder.hpp"
#include "commscope/trainer/operators.hpp"

namespace commscope::trainer {

// Marks a collective as in progress for its lifetime: "allreduce (ring, 4 MiB, gradients)" is
// commscope::current_activity() (commscope/common/stop_line.hpp) meanwhile.
class CollectiveActivity : public ActivityMarker {
 public:
  CollectiveActivity(const char* collective, std::string_view algo, std::size_t bytes, const char* what) noexcept;
};

// The profiler's numbering of comm's collectives, so that the profile matches them only across
// comm's members: a profiler::CommGroup labelled "kind[world ranks]" (profiler::communicator_label),
// made at the first call and kept with comm's MPI handle (an attribute freed with it), so later
// calls return the same group whatever kind they pass. Each communicator has one kind ("dp",
// "tp", "pp", "embedding"), and communicators of one kind have different members, so no two
// communicators share a label.
profiler::CommGroup& profile_group(const Communicator& comm, std::string_view kind);

}  // namespace commscope::trainer
