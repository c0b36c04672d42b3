// The '#' lines commscope-bench prints about its own run, besides nccl-tests' header: what -z,
// -m, -N, -K change about the loop, the shm algorithm's memory, the memory report (-M); and the
// byte counts in nccl-tests' words.
#pragma once

#include <mpi.h>

#include <cstddef>
#include <string>
#include <vector>

#include "backends/backend.hpp"
#include "commscope/bench/options.hpp"

namespace commscope::bench {

// Bytes as nccl-tests' memory report writes them: B, KB, MB, GB (powers of 1024).
std::string memory_text(long long bytes);
// A size switch: "never" for SIZE_MAX.
std::string size_or_never(std::size_t bytes);

// What -z, -m, -N, -K change about the loop, in nccl-tests' words (none for the defaults).
std::vector<std::string> loop_shape_lines(const Options& o);
// The memory the shm algorithm takes on a node of `local_ranks`, where it runs ("" where it does not).
std::string shm_shape_line(const Options& o, const Backend& backend, int local_ranks);
// -M, collective over `comm`: "# GPU memory usage     : Initialization 1.2 GB | ..." with each
// amount the max over ranks (rank 0's line; "" elsewhere).
std::string memory_line(const Backend& backend, MPI_Comm comm);

}  // namespace commscope::bench
