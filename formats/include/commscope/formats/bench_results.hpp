// The bench's results file, schema commscope.bench/1 (common/.../schemas.hpp;
// docs/bench-results.md): /meta, one /results row per (case, repetition) and its per-iteration
// /samples. The row, its columns, the tables' writer and reader are here and nowhere else:
// commscope-bench writes with them, commscope-report and the tests' fixture files read and write
// with them. Needs HDF5 only (no MPI, no collectives).
#pragma once

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "commscope/formats/columns.hpp"
#include "commscope/h5/h5.hpp"

namespace commscope::formats::bench {

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
  // The row set against the run's machine model (docs/verdicts.md): the time its algorithm needs
  // there, the busbw that allows, and of_expected = expected_time_us / the typical call's time (the
  // lower of time_us and p50_us: common/row_expectation.hpp's typical_time_us). NaN where the
  // model lacks an input (the row's expectation says what), the run recorded no model, or the
  // file predates these columns.
  double expected_time_us = std::numeric_limits<double>::quiet_NaN();
  double expected_busbw_GBps = std::numeric_limits<double>::quiet_NaN();
  double of_expected = std::numeric_limits<double>::quiet_NaN();
};

// One row of /samples: iteration i of result `result` (a /results row index).
struct SampleRow {
  std::uint64_t result = 0;
  std::int64_t iteration = 0;
  double time_us = 0;  // max over ranks of call i's duration
  double skew_us = 0;  // latest minus earliest rank arrival at call i; NaN if unknown
};

// The columns of /results and /samples, in file order, with their units. A reader needs the
// required ones; the optional ones read as ResultRow{}'s values where a file lacks them.
const Columns<ResultRow>& result_columns();
const Columns<SampleRow>& sample_columns();

// The tables of a new file: /results and /samples, empty, each with its description attribute.
struct Tables {
  h5::Table<ResultRow> results;
  h5::Table<SampleRow> samples;
};
Tables create_tables(h5::File& file);

// /meta's attributes of the format itself: schema (schemas::kBench), tool and status "running"
// (what a file cut short says; set_status records the end). The writer adds its run's.
h5::Group create_meta(h5::File& file);
void set_status(h5::File& file, const std::string& status);

// The tables of an open file, by column name (file_bytes: the file's size, which bounds the rows
// a damaged table may claim). Throws FormatError, or h5::Error for a table HDF5 cannot read.
std::vector<ResultRow> read_results(const h5::Group& file, std::uintmax_t file_bytes);
std::vector<SampleRow> read_samples(const h5::Group& file, std::uintmax_t file_bytes);

// A whole file (tests, and anything that wants the rows without h5py).
struct Contents {
  std::string schema;
  std::string status;  // /meta status; "" where absent
  std::vector<ResultRow> rows;
  std::vector<SampleRow> samples;
};
Contents read(const std::string& path);

}  // namespace commscope::formats::bench
