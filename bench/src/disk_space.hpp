// Whether the --out file's file system has room for the run, asked before any measuring.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "commscope/bench/environment.hpp"

namespace commscope::bench {

// Bytes a results file of `rows` rows with `samples_per_row` samples each and the header of `env`
// takes at most: HDF5's own structures (superblock, groups, the two tables' headers, chunk
// indexes, the first global heap), the header's text, and each row and sample uncompressed (the
// tables are deflated: real files are smaller). bench.unit.disk_space holds it against real files.
std::uint64_t results_file_estimate(std::uint64_t rows, std::uint64_t samples_per_row, const Environment& env);
// "" when the file system that will hold `path` has room for `needed` bytes (`free_override`
// >= 0 replaces the measured free space: a test aid); else the problem, in a few words.
std::string free_space_problem(const std::string& path, std::uint64_t needed, std::int64_t free_override);

}  // namespace commscope::bench
