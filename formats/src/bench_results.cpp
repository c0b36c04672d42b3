#include "commscope/formats/bench_results.hpp"

#include <filesystem>

#include "commscope/common/schemas.hpp"

namespace commscope::formats::bench {

namespace {

constexpr Need kOptional = Need::kOptional;

Columns<ResultRow> make_result_columns() {
  Columns<ResultRow> c;
  c.add("row", &ResultRow::row)
      .add("collective", &ResultRow::collective)
      .add("algorithm", &ResultRow::algorithm)
      .add("device", &ResultRow::device)
      .add("type", &ResultRow::type)
      .add("op", &ResultRow::op)
      .add("root", &ResultRow::root)
      .add("in_place", &ResultRow::in_place)
      .add("nranks", &ResultRow::nranks)
      .add("bytes", &ResultRow::bytes, "B")
      .add("count", &ResultRow::count)
      .add("iterations", &ResultRow::iterations)
      .add("warmup", &ResultRow::warmup, "", kOptional)
      .add("time_us", &ResultRow::time_us, "us")
      .add("cpu_time_us", &ResultRow::cpu_time_us, "us", kOptional)
      .add("algbw_GBps", &ResultRow::algbw_GBps, "GB/s")
      .add("busbw_GBps", &ResultRow::busbw_GBps, "GB/s")
      .add("nwrong", &ResultRow::nwrong)
      .add("check_iters", &ResultRow::check_iters, "", kOptional)
      .add("min_us", &ResultRow::min_us, "us")
      .add("p50_us", &ResultRow::p50_us, "us")
      .add("p99_us", &ResultRow::p99_us, "us")
      .add("max_us", &ResultRow::max_us, "us")
      .add("mean_us", &ResultRow::mean_us, "us", kOptional)
      .add("stdev_us", &ResultRow::stdev_us, "us", kOptional)
      .add("skew_us", &ResultRow::skew_us, "us")
      .add("slowest_rank", &ResultRow::slowest_rank)
      .add("sample_offset", &ResultRow::sample_offset)
      .add("sample_count", &ResultRow::sample_count)
      .add("expected_time_us", &ResultRow::expected_time_us, "us", kOptional)
      .add("expected_busbw_GBps", &ResultRow::expected_busbw_GBps, "GB/s", kOptional)
      .add("of_expected", &ResultRow::of_expected, "", kOptional);
  return c;
}

Columns<SampleRow> make_sample_columns() {
  Columns<SampleRow> c;
  c.add("result", &SampleRow::result, "", kOptional)
      .add("iteration", &SampleRow::iteration, "", kOptional)
      .add("time_us", &SampleRow::time_us, "us")
      .add("skew_us", &SampleRow::skew_us, "us", kOptional);
  return c;
}

}  // namespace

const Columns<ResultRow>& result_columns() {
  static const Columns<ResultRow> columns = make_result_columns();
  return columns;
}

const Columns<SampleRow>& sample_columns() {
  static const Columns<SampleRow> columns = make_sample_columns();
  return columns;
}

Tables create_tables(h5::File& file) {
  auto results = h5::Table<ResultRow>::create(file, "results", result_columns().all());
  results.set_attr("description", std::string("one row per case and repetition; times in microseconds per call, "
                                              "bandwidths in GB/s (1e9 B/s), busbw = algbw * nccl-tests' factor"));
  auto samples = h5::Table<SampleRow>::create(file, "samples", sample_columns().all(), 4096);
  samples.set_attr("description", std::string("per-iteration samples of each /results row (result = row index): "
                                              "max over ranks of the call's duration, and the arrival skew"));
  return {std::move(results), std::move(samples)};
}

h5::Group create_meta(h5::File& file) {
  h5::Group meta = file.create_group("meta");
  meta.set_attr("schema", std::string(schemas::kBench));
  meta.set_attr("tool", std::string("commscope-bench"));
  meta.set_attr("status", std::string("running"));  // until set_status: a file cut short says so
  return meta;
}

void set_status(h5::File& file, const std::string& status) {
  file.open_group("meta").set_attr("status", status);
}

std::vector<ResultRow> read_results(const h5::Group& file, std::uintmax_t file_bytes) {
  return read_rows(file, "results", result_columns(), file_bytes);
}

std::vector<SampleRow> read_samples(const h5::Group& file, std::uintmax_t file_bytes) {
  return read_rows(file, "samples", sample_columns(), file_bytes);
}

Contents read(const std::string& path) {
  const std::uintmax_t bytes = std::filesystem::file_size(path);
  const h5::File f = h5::File::open(path);
  Contents d;
  const h5::Group meta = f.open_group("meta");
  d.schema = meta.attr_string("schema");
  if (meta.has_attr("status")) d.status = meta.attr_string("status");
  d.rows = read_results(f, bytes);
  d.samples = read_samples(f, bytes);
  return d;
}

}  // namespace commscope::formats::bench
