// The expectation of one bench row as the bench writes it into its rows (expected_busbw_GBps,
// expected_time_us, of_expected) and the report recomputes it: expected_time, except that an
// `nccl` row of a run whose environment set NCCL_ALGO to one algorithm is priced as NCCL runs
// that algorithm instead of with the best textbook one's terms (docs/verdicts.md). One function
// for both, so that the file's figures and the report's agree to the last digit. Dependency-free.
#pragma once

#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "commscope/model/expected_time.hpp"

namespace commscope {

// What NCCL_ALGO (as the run's environment set it) says about the algorithm NCCL runs.
struct NcclAlgorithm {
  std::string priced;   // "ring" (Ring) or "tree" (Tree): the terms that price the row; "" for none
  std::string missing;  // one algorithm without a cost model here (NVLS, CollNet*, PAT, ...): what is missing
  std::string basis;    // "NCCL_ALGO=Ring", or "" where unset or NCCL still chooses (a list, '^' exclusions)
};
NcclAlgorithm nccl_algorithm(std::string_view nccl_algo);

// expected_time of `algorithm` running `c` on `node_of_rank` for `bytes`; for algorithm "nccl"
// with `nccl_algo` (the environment's NCCL_ALGO, "" where unset) naming one algorithm: Ring is
// priced with the ring's terms; Tree as NCCL runs it: allreduce as its pipelined tree
// (expected_time's "nccl_tree"), the other collectives as the ring they fall back to, which the
// basis and the limit's detail say ("NCCL runs only allreduce as a tree; broadcast falls back to
// ring"); any other is missing ("a cost model of NCCL_ALGO=NVLS"); the basis then starts
// "NCCL_ALGO=Ring". A list or an exclusion leaves NCCL its choice: the best textbook algorithm,
// as without NCCL_ALGO. One rank: one copy, whatever NCCL_ALGO says. `options`: the run's own
// settings that change a price (run_expectation_options).
Expectation expected_row(const MachineModel& model, std::span<const int> node_of_rank, Collective c,
                         std::string_view algorithm, double bytes, std::string_view nccl_algo = {},
                         const ExpectationOptions& options = {});

// The settings of a run that change a price, as the bench records them in its results header
// (/meta segment_bytes, shm_adapt_bytes, blocking): the ring's chain segment, the size from which
// shm measures its two paths on each call (UINT64_MAX, --shm-adapt never: never; a value not
// given, from a file before it: the library's default), and whether calls ran back to back (-z 0
// or 2, and a file without it: calls_overlap; -z 1 and 3 put a barrier between calls).
ExpectationOptions run_expectation_options(std::optional<double> segment_bytes, std::optional<double> shm_adapt_bytes,
                                           std::optional<double> blocking = std::nullopt);

// of_expected = expected time / measured time: nullopt where either is not positive.
std::optional<double> of_expected(const Expectation& e, double measured_time_us);

// The time a row is judged by: its typical call, the lower of its mean per call (`time_us`,
// nccl-tests' figure) and its median iteration (`median_us`; 0 or NaN: none measured). A busy
// node's rank that waits a scheduler's time slice raises a mean of 5 calls a thousandfold (a
// 1 KiB allreduce read 4006 us where its median call took 10), never the median.
inline double typical_time_us(double time_us, double median_us) {
  return median_us > 0 && median_us < time_us ? median_us : time_us;
}

}  // namespace commscope
