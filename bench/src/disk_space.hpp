// Whether the --out file's file system has room for the run, asked before any measuring.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace commscope::bench {

// Bytes a results file of `cases` cases needs, generously: rows, samples (`iters` per case, or
// 1,000 when Google Benchmark chooses) and 256 KiB of metadata.
std::uint64_t results_file_estimate(std::size_t cases, std::int64_t iters);
// "" when the file system that will hold `path` has room for `needed` bytes (`free_override`
// >= 0 replaces the measured free space: a test aid); else the problem, in a few words.
std::string free_space_problem(const std::string& path, std::uint64_t needed, std::int64_t free_override);

}  // namespace commscope::bench
