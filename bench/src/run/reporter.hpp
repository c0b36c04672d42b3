// Rank 0's Google Benchmark reporter for commscope-bench: each reported run matched with the row
// its case made, out-of-place paired with in-place on one line, the line judged against the
// run's expectations, printed and written to the results files.
#pragma once

#include <benchmark/benchmark.h>

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "cases.hpp"
#include "compat/json_results.hpp"
#include "expectations.hpp"
#include "results.hpp"
#include "rows.hpp"
#include "table.hpp"

namespace commscope::bench {

class Reporter final : public benchmark::BenchmarkReporter {
 public:
  Reporter(const std::vector<Case>& cases, Table& table, ResultsFile* file, JsonResults* json,
           RunExpectations& expected);

  // -N: cycle k's lines number from k times one cycle's lines, so that rows stay distinct.
  void start_cycle(int cycle);
  // Every call of a case's function leaves its row and samples here (Google Benchmark may call
  // a case several times while it looks for the iteration count; only the last is reported).
  void stash(const Case& c, const ResultRow& row, Samples samples);
  // Print and write whatever is pending; flush the file.
  void flush_pending();

  bool ReportContext(const Context&) override { return true; }
  void ReportRuns(const std::vector<Run>& runs) override;

 private:
  struct Entry {
    ResultRow row;
    Samples samples;
  };
  const std::vector<Case>& cases_;
  Table& table_;
  ResultsFile* file_;
  JsonResults* json_;
  RunExpectations& expected_;
  std::map<std::string, const Case*> by_name_;
  std::map<int, std::vector<Entry>> stash_;
  std::map<int, std::size_t> consumed_;
  int pending_row_ = -1;
  std::int64_t row_offset_ = 0;
  std::vector<Entry> pending_[2];
};

// The other ranks' reporter: Google Benchmark runs every case there too, and reports nothing.
class NullReporter final : public benchmark::BenchmarkReporter {
 public:
  bool ReportContext(const Context&) override { return true; }
  void ReportRuns(const std::vector<Run>&) override {}
};

}  // namespace commscope::bench
