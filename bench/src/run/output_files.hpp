// commscope-bench's result files: the HDF5 file (--out) and nccl-tests' JSON (-J), created by
// rank 0 before the sweep, with every rank's device for their headers.
#pragma once

#include <mpi.h>

#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "backends/backend.hpp"
#include "commscope/bench/environment.hpp"
#include "commscope/bench/options.hpp"
#include "compat/json_results.hpp"
#include "results.hpp"

namespace commscope::bench {

struct OutputFiles {
  std::vector<RankInfo> ranks;  // every rank's device (rank 0's; empty elsewhere)
  std::unique_ptr<ResultsFile> file;  // --out (rank 0's)
  std::unique_ptr<JsonResults> json;  // -J (rank 0's)
};

// Collective over `comm`. Rank 0 creates the files; every rank learns whether that worked, so that
// a bad path ends all ranks alike (InvalidArgument, exit code 2) instead of leaving the others
// waiting. A folder given as a file is found now, not when the finished file is renamed after the
// sweep, and a full disk now, not after minutes of measuring (`cases` rows a cycle).
OutputFiles open_output_files(const Options& o, const Environment& env, const std::vector<std::string>& args,
                              std::size_t cases, const DeviceInfo& device, MPI_Comm comm);

}  // namespace commscope::bench
