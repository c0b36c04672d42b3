// commscope-bench's results: one ResultRow per (case, repetition), printed as a table and
// appended to the HDF5 file, plus its per-iteration samples. Schema "commscope.bench/1",
// documented in docs/bench-results.md.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "cases.hpp"
#include "commscope/bench/environment.hpp"
#include "commscope/bench/options.hpp"

namespace commscope::bench {

// One row of /results. Strings are fixed-length, NUL-padded (h5py reads them as bytes).
struct ResultRow {
  std::int64_t row = 0;  // table row: the out-of-place and in-place results of one line share it
  char collective[16] = {};
  char algorithm[16] = {};
  char device[8] = {};
  char type[8] = {};
  char op[8] = {};         // "none" for collectives that do not reduce
  std::int32_t root = -1;  // -1 for collectives without a root
  std::uint8_t in_place = 0;
  std::int32_t nranks = 0;
  std::uint64_t bytes = 0;  // nccl-tests' size (the array measured)
  std::uint64_t count = 0;  // per-call element count (NCCL conventions)
  std::int64_t iterations = 0;
  std::int32_t warmup = 0;
  double time_us = 0;      // per call, ranks combined as /meta combine says (max by default)
  double cpu_time_us = 0;  // per call, the host's time to issue the calls (-C), combined alike
  double algbw_GBps = 0;
  double busbw_GBps = 0;
  std::uint64_t nwrong = 0;  // wrong elements, summed over ranks and check iterations
  std::int32_t check_iters = 0;
  // Of the per-iteration max over ranks, the first /meta per_iter_skip iterations left out.
  double min_us = 0, p50_us = 0, p99_us = 0, max_us = 0;
  double mean_us = 0, stdev_us = 0;  // population standard deviation
  double skew_us = 0;                // mean over iterations of (latest - earliest arrival); NaN if unknown
  std::int32_t slowest_rank = 0;     // the rank with the longest total time
  std::uint64_t sample_offset = 0;   // first row of this result in /samples
  std::uint64_t sample_count = 0;
};

// One row of /samples: iteration i of result `result` (a /results row index).
struct SampleRow {
  std::uint64_t result = 0;
  std::int64_t iteration = 0;
  double time_us = 0;  // max over ranks of call i's duration
  double skew_us = 0;  // latest minus earliest rank arrival at call i; NaN if unknown
};

// The per-iteration values a result carries before it is written.
struct Samples {
  std::vector<double> time_us;
  std::vector<double> skew_us;  // empty if unknown
  // -I 1 only: every rank's own iteration times, [rank][iteration] flat (nccl-tests' JSON
  // per_process_max_times_us); empty otherwise.
  std::vector<double> rank_time_us;
};

void set_text(char* dst, std::size_t n, std::string_view s);
template <std::size_t N>
void set_text(char (&dst)[N], std::string_view s) {
  set_text(dst, N, s);
}
template <std::size_t N>
std::string text(const char (&src)[N]) {
  std::size_t n = 0;
  while (n < N && src[n]) ++n;
  return std::string(src, n);
}

// Writes the results file on rank 0: /meta at creation, rows and samples appended by
// append() and made durable by flush(); published under its final name by close(), by
// publish_results_file_now() (timeout), or by the SIGINT/SIGTERM handler.
// Bytes a results file of `cases` cases needs, generously: rows, samples (`iters` per case, or
// 1,000 when Google Benchmark chooses) and 256 KiB of metadata.
std::uint64_t results_file_estimate(std::size_t cases, std::int64_t iters);
// "" when the file system that will hold `path` has room for `needed` bytes (`free_override`
// >= 0 replaces the measured free space: a test aid); else the problem, in a few words.
std::string free_space_problem(const std::string& path, std::uint64_t needed, std::int64_t free_override);

class ResultsFile {
 public:
  ResultsFile(const std::string& path, const Options& o, const Environment& env, int nranks);
  ~ResultsFile();
  ResultsFile(const ResultsFile&) = delete;
  ResultsFile& operator=(const ResultsFile&) = delete;

  // Buffer one result; sets row.sample_offset / sample_count.
  void append(ResultRow row, const Samples& samples);
  // Write buffered rows and samples and flush the file (signals are held off meanwhile).
  void flush();
  // Flush, close and rename to the final path. Idempotent.
  void close();
  std::size_t rows_written() const { return rows_written_; }

 private:
  struct Impl;
  Impl* impl_;
  std::vector<ResultRow> rows_;
  std::vector<SampleRow> samples_;
  std::size_t rows_written_ = 0;
  std::uint64_t samples_written_ = 0;
};

// Async-signal-safe: if a results file is open and not being written, rename it to its final
// name now (its content is what the last flush() wrote); end an open -J file likewise.
void publish_results_file_now() noexcept;
// Called when a write of the results or JSON file ends: a signal that arrived during the write
// (and was held back so that the files stay valid) is handled now: publish, then die of it.
void deliver_deferred_signal() noexcept;
// SIGINT/SIGTERM/SIGHUP (installed on every rank at start): say which collective the rank was
// in ("commscope-bench: rank 2: stopped by SIGTERM while in allreduce algo=ring ... size=4096 B
// ..."; a launcher ending the job after another rank died sends SIGTERM), publish the results
// file if one is open, then die of the signal as before.
void install_signal_handlers(int rank);
// While alive, the signal handlers name case `c` as the collective in progress.
class SignalContext {
 public:
  explicit SignalContext(const Case& c) noexcept;
  ~SignalContext();
  SignalContext(const SignalContext&) = delete;
  SignalContext& operator=(const SignalContext&) = delete;
};

// Read a results file back (tests, and anything that wants the rows without h5py).
struct ResultsData {
  std::string schema;
  std::vector<ResultRow> rows;
  std::vector<SampleRow> samples;
};
ResultsData read_results(const std::string& path);

}  // namespace commscope::bench
