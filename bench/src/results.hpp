// commscope-bench's results: one ResultRow per (case, repetition), printed as a table and
// appended to the HDF5 file, plus its per-iteration samples. The file's format (schema
// commscope.bench/1, docs/bench-results.md), its reader included, is formats/bench_results.hpp.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "commscope/bench/environment.hpp"
#include "commscope/bench/options.hpp"
#include "rows.hpp"

namespace commscope::bench {

// Writes the results file on rank 0: /meta at creation, rows and samples appended by
// append() and made durable by flush(); published under its final name by close(), by
// stop::publish_now() (the watchdog), or by a stop signal (commscope/common/stop_signals.hpp).
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
  // Flush, close and rename to the final path. Idempotent. /meta status stays "running" (what a
  // file published by a signal or a timeout says) unless finish() recorded another.
  void close();
  // A text attribute of /meta learned during the run (nccl_choices).
  void set_meta(const std::string& name, const std::string& value);
  // Records /meta status ("complete", or "failed: why") and closes.
  void finish(const std::string& status);
  std::size_t rows_written() const { return rows_written_; }

 private:
  struct Impl;
  Impl* impl_;
  std::vector<ResultRow> rows_;
  std::vector<SampleRow> samples_;
  std::size_t rows_written_ = 0;
  std::uint64_t samples_written_ = 0;
};

}  // namespace commscope::bench
