// The bench results format: a file written with its writer reads back with its reader, every
// column the same; a file without an optional column still reads, one without a required
// column does not; each column's unit agrees with its name.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "commscope/common/schemas.hpp"
#include "commscope/formats/bench_results.hpp"
#include "temp_path.hpp"

namespace fs = std::filesystem;
using namespace commscope;
namespace fb = commscope::formats::bench;

namespace {

// A row whose every column holds a value of its own (no two alike, none the default).
fb::ResultRow distinct_row(int i) {
  fb::ResultRow r;
  r.row = 100 + i;
  h5::set_fixed(r.collective, "reducescatter_x");
  h5::set_fixed(r.algorithm, "0123456789abcdef");  // all 16 bytes, no NUL
  h5::set_fixed(r.device, "cuda");
  h5::set_fixed(r.type, "bf16");
  h5::set_fixed(r.op, "avg");
  r.root = 3 + i;
  r.in_place = 1;
  r.nranks = 7;
  r.bytes = 1ull << 40;
  r.count = 12345 + static_cast<unsigned>(i);
  r.iterations = 11;
  r.warmup = 12;
  r.time_us = 1.5;
  r.cpu_time_us = 2.5;
  r.algbw_GBps = 3.5;
  r.busbw_GBps = 4.5;
  r.nwrong = 13;
  r.check_iters = 14;
  r.min_us = 5.5;
  r.p50_us = 6.5;
  r.p99_us = 7.5;
  r.max_us = 8.5;
  r.mean_us = 9.5;
  r.stdev_us = 10.5;
  r.skew_us = 0.75;
  r.slowest_rank = 6;
  r.sample_offset = 2u * static_cast<unsigned>(i);
  r.sample_count = 2;
  r.expected_time_us = 1.25 + i;
  r.expected_busbw_GBps = 5.25;
  r.of_expected = 0.875;
  return r;
}

// Every column of two rows equal.
void expect_same(const fb::ResultRow& g, const fb::ResultRow& w) {
  EXPECT_EQ(g.row, w.row);
  EXPECT_EQ(h5::get_fixed(g.collective), h5::get_fixed(w.collective));
  EXPECT_EQ(h5::get_fixed(g.algorithm), h5::get_fixed(w.algorithm));
  EXPECT_EQ(h5::get_fixed(g.device), h5::get_fixed(w.device));
  EXPECT_EQ(h5::get_fixed(g.type), h5::get_fixed(w.type));
  EXPECT_EQ(h5::get_fixed(g.op), h5::get_fixed(w.op));
  EXPECT_EQ(g.root, w.root);
  EXPECT_EQ(g.in_place, w.in_place);
  EXPECT_EQ(g.nranks, w.nranks);
  EXPECT_EQ(g.bytes, w.bytes);
  EXPECT_EQ(g.count, w.count);
  EXPECT_EQ(g.iterations, w.iterations);
  EXPECT_EQ(g.warmup, w.warmup);
  EXPECT_EQ(g.time_us, w.time_us);
  EXPECT_EQ(g.cpu_time_us, w.cpu_time_us);
  EXPECT_EQ(g.algbw_GBps, w.algbw_GBps);
  EXPECT_EQ(g.busbw_GBps, w.busbw_GBps);
  EXPECT_EQ(g.nwrong, w.nwrong);
  EXPECT_EQ(g.check_iters, w.check_iters);
  EXPECT_EQ(g.min_us, w.min_us);
  EXPECT_EQ(g.p50_us, w.p50_us);
  EXPECT_EQ(g.p99_us, w.p99_us);
  EXPECT_EQ(g.max_us, w.max_us);
  EXPECT_EQ(g.mean_us, w.mean_us);
  EXPECT_EQ(g.stdev_us, w.stdev_us);
  EXPECT_EQ(g.skew_us, w.skew_us);
  EXPECT_EQ(g.slowest_rank, w.slowest_rank);
  EXPECT_EQ(g.sample_offset, w.sample_offset);
  EXPECT_EQ(g.sample_count, w.sample_count);
  EXPECT_EQ(g.expected_time_us, w.expected_time_us);
  EXPECT_EQ(g.expected_busbw_GBps, w.expected_busbw_GBps);
  EXPECT_EQ(g.of_expected, w.of_expected);
}

}  // namespace

TEST(BenchResults, RoundTripOfEveryColumn) {
  const std::string path = temp_path("round-trip.h5");
  std::vector<fb::ResultRow> rows = {distinct_row(0), distinct_row(1)};
  std::vector<fb::SampleRow> samples = {{0, 0, 1.25, 0.5}, {0, 1, 2.25, std::nan("")}, {1, 0, 3.25, 0}, {1, 1, 4, 1}};
  {
    h5::File f = h5::File::create(path);
    fb::create_meta(f);
    fb::Tables t = fb::create_tables(f);
    t.results.append(rows);
    t.samples.append(samples);
    fb::set_status(f, "complete");
    f.close();
  }
  const fb::Contents d = fb::read(path);
  EXPECT_EQ(d.schema, schemas::kBench);
  EXPECT_EQ(d.status, "complete");
  ASSERT_EQ(d.rows.size(), rows.size());
  for (std::size_t i = 0; i < rows.size(); ++i) {
    SCOPED_TRACE("row " + std::to_string(i));
    expect_same(d.rows[i], rows[i]);
    EXPECT_EQ(h5::get_fixed(d.rows[i].algorithm), "0123456789abcdef");
  }
  ASSERT_EQ(d.samples.size(), samples.size());
  for (std::size_t i = 0; i < samples.size(); ++i) {
    EXPECT_EQ(d.samples[i].result, samples[i].result);
    EXPECT_EQ(d.samples[i].iteration, samples[i].iteration);
    EXPECT_EQ(d.samples[i].time_us, samples[i].time_us);
    EXPECT_EQ(std::isnan(d.samples[i].skew_us), std::isnan(samples[i].skew_us));
  }
}

TEST(BenchResults, TheWriterWritesEveryColumnInOrder) {
  const std::string path = temp_path("columns.h5");
  {
    h5::File f = h5::File::create(path);
    fb::create_meta(f);
    (void)fb::create_tables(f);
  }
  const h5::File f = h5::File::open(path);
  const h5::Dataset results = f.open_dataset("results");
  for (const auto& c : fb::result_columns().list()) EXPECT_TRUE(results.has_field(c.name)) << c.name;
  EXPECT_EQ(fb::result_columns().list().size(), 32u);
  EXPECT_STREQ(fb::result_columns().list().front().name, "row");
  EXPECT_STREQ(fb::result_columns().list().back().name, "of_expected");
  EXPECT_TRUE(f.open_group("meta").has_attr("status"));
}

// A file from before a column was added (here one with the required columns only) reads, the
// missing columns at ResultRow{}'s values.
TEST(BenchResults, AFileWithoutTheOptionalColumnsReads) {
  const std::string path = temp_path("required-only.h5");
  {
    h5::File f = h5::File::create(path);
    fb::create_meta(f);
    h5::CompoundType<fb::ResultRow> type;
    for (const auto& c : fb::result_columns().list())
      if (c.need == formats::Need::kRequired) c.add_to(type);
    h5::Table<fb::ResultRow>::create(f, "results", type).append(distinct_row(0));
  }
  const h5::File f = h5::File::open(path);
  const std::vector<fb::ResultRow> rows = fb::read_results(f, fs::file_size(path));
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].count, distinct_row(0).count);
  EXPECT_EQ(rows[0].busbw_GBps, 4.5);
  EXPECT_EQ(rows[0].warmup, 0);
  EXPECT_EQ(rows[0].cpu_time_us, 0);
  EXPECT_EQ(rows[0].stdev_us, 0);
  // A file from before the expected columns: absent, NaN (not 0, which would read as a verdict).
  EXPECT_TRUE(std::isnan(rows[0].expected_time_us));
  EXPECT_TRUE(std::isnan(rows[0].expected_busbw_GBps));
  EXPECT_TRUE(std::isnan(rows[0].of_expected));
}

TEST(BenchResults, AFileWithoutARequiredColumnIsRefused) {
  const std::string path = temp_path("no-busbw.h5");
  {
    h5::File f = h5::File::create(path);
    fb::create_meta(f);
    h5::CompoundType<fb::ResultRow> type;
    for (const auto& c : fb::result_columns().list())
      if (std::strcmp(c.name, "busbw_GBps") != 0) c.add_to(type);
    h5::Table<fb::ResultRow>::create(f, "results", type).append(distinct_row(0));
  }
  const h5::File f = h5::File::open(path);
  EXPECT_THROW((void)fb::read_results(f, fs::file_size(path)), h5::Error);
}

TEST(BenchResults, ATableClaimingMoreRowsThanTheFileHoldsIsRefused) {
  EXPECT_NO_THROW(formats::check_row_claim("results", 8000, 1000));
  try {
    formats::check_row_claim("results", 8008, 1000);
    ADD_FAILURE() << "no error";
  } catch (const formats::FormatError& e) {
    EXPECT_STREQ(e.what(), "/results claims 8008 rows, more than a file of 1000 bytes holds: a damaged file?");
  }
}

// Units live in the names (docs/bench-results.md): a column named *_us is in us, *_GBps in GB/s.
TEST(BenchResults, EachUnitAgreesWithItsName) {
  auto check = [](const auto& columns) {
    for (const auto& c : columns.list()) {
      const std::string name = c.name;
      const std::string unit = c.unit;
      if (name.ends_with("_us")) {
        EXPECT_EQ(unit, "us") << name;
      } else if (name.ends_with("_GBps")) {
        EXPECT_EQ(unit, "GB/s") << name;
      } else {
        EXPECT_TRUE(unit.empty() || name == "bytes") << name << " in " << unit;
      }
    }
  };
  check(fb::result_columns());
  check(fb::sample_columns());
}
