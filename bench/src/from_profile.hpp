// commscope-bench --from-profile P.h5: the collectives, sizes and algorithms a profile's step
// calls, on each of its communicators' sizes up to the run's (the smaller ones on groups rebuilt
// as the profile's, every group at once), so that `commscope-report profile P.h5 --bench` finds a
// row for every call of those sizes.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "commscope/bench/options.hpp"

namespace commscope::bench {

// Every distinct collective call of the profile (its exact collectives; messages, completions and
// barriers have no bench case), with its communicator's size. InvalidArgument (one line naming
// the file) for an unreadable profile or one without collectives.
std::vector<ProfileCall> profile_calls_of(const std::string& path);

// A run of `nranks` ranks split into groups of `group_size` for the profile's calls on
// communicators of that size, all groups at once (as in the step): each rank's group (a color for
// MPI_Comm_split). The profile's own groups where they partition the run's ranks (tp[0,1] and
// tp[2,3] of 4), else consecutive blocks where the size divides the run's; nullopt where neither
// (or the size exceeds the run's).
std::optional<std::vector<int>> group_colors(const std::vector<ProfileCall>& calls, int group_size, int nranks);

// "2 ranks: allreduce mpi 8 B, 14.3 MiB, 27.1 MiB; 4 ranks: ..." (what a run at another size would take).
std::string describe_profile_calls(const std::vector<ProfileCall>& calls);

}  // namespace commscope::bench
