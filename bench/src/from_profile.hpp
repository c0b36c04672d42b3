// commscope-bench --from-profile P.h5: the collectives, sizes and algorithms a profile's step
// calls, on each of its communicators' sizes, so that `commscope-report profile P.h5 --bench`
// finds a row for every call of the group size the bench runs at.
#pragma once

#include <string>
#include <vector>

#include "commscope/bench/options.hpp"

namespace commscope::bench {

// Every distinct collective call of the profile (its exact collectives; messages, completions and
// barriers have no bench case), with its communicator's size. InvalidArgument (one line naming
// the file) for an unreadable profile or one without collectives.
std::vector<ProfileCall> profile_calls_of(const std::string& path);

// "2 ranks: allreduce mpi 8 B, 14.3 MiB, 27.1 MiB; 4 ranks: ..." (what a run at another size would take).
std::string describe_profile_calls(const std::vector<ProfileCall>& calls);

}  // namespace commscope::bench
