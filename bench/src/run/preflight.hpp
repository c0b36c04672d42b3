// What commscope-bench refuses before anything is measured, on every rank alike (InvalidArgument
// on all of them, the message on rank 0): buffers beyond what a rank may take, and output files
// that cannot be created.
#pragma once

#include <string>
#include <vector>

#include "cases.hpp"
#include "commscope/bench/options.hpp"
#include "commscope/collectives/communicator.hpp"

namespace commscope::bench {

// A case whose buffers exceed what a rank may take (the node's available memory shared by its
// ranks, ulimit -v or -d, the cgroup's memory.max) would end every rank in std::bad_alloc mid-run
// (MPI_Abort). A rank holds the largest case's send and receive buffers, one buffer more while
// they grow (the new one before the old is freed) and up to one more of the algorithms' scratch
// (tree at 2 x 200 MiB under ulimit -v 1 GiB ran out of it). Collective; checked against the
// least headroom of any rank. CPU runs only.
void check_host_memory(const Options& o, const std::vector<Case>& cases, const Communicator& comm);

// Why -J's or --out's path cannot be created (a folder given as a file, a missing folder), the
// first of the two in that order; "" where both can.
std::string output_paths_problem(const Options& o);

// output_paths_problem, said before the machine's start-up probes. Rank 0 looks; every rank
// learns whether it may go on.
void check_output_paths(const Options& o, MPI_Comm comm);

}  // namespace commscope::bench
