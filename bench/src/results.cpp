#include "results.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>

#include "commscope/collectives/error.hpp"
#include "commscope/common/schemas.hpp"
#include "commscope/common/stop_signals.hpp"
#include "commscope/h5/h5.hpp"

namespace commscope::bench {

namespace {

h5::CompoundType<ResultRow> result_type() {
  h5::CompoundType<ResultRow> t;
  t.add("row", &ResultRow::row)
      .add("collective", &ResultRow::collective)
      .add("algorithm", &ResultRow::algorithm)
      .add("device", &ResultRow::device)
      .add("type", &ResultRow::type)
      .add("op", &ResultRow::op)
      .add("root", &ResultRow::root)
      .add("in_place", &ResultRow::in_place)
      .add("nranks", &ResultRow::nranks)
      .add("bytes", &ResultRow::bytes)
      .add("count", &ResultRow::count)
      .add("iterations", &ResultRow::iterations)
      .add("warmup", &ResultRow::warmup)
      .add("time_us", &ResultRow::time_us)
      .add("cpu_time_us", &ResultRow::cpu_time_us)
      .add("algbw_GBps", &ResultRow::algbw_GBps)
      .add("busbw_GBps", &ResultRow::busbw_GBps)
      .add("nwrong", &ResultRow::nwrong)
      .add("check_iters", &ResultRow::check_iters)
      .add("min_us", &ResultRow::min_us)
      .add("p50_us", &ResultRow::p50_us)
      .add("p99_us", &ResultRow::p99_us)
      .add("max_us", &ResultRow::max_us)
      .add("mean_us", &ResultRow::mean_us)
      .add("stdev_us", &ResultRow::stdev_us)
      .add("skew_us", &ResultRow::skew_us)
      .add("slowest_rank", &ResultRow::slowest_rank)
      .add("sample_offset", &ResultRow::sample_offset)
      .add("sample_count", &ResultRow::sample_count);
  return t;
}

h5::CompoundType<SampleRow> sample_type() {
  h5::CompoundType<SampleRow> t;
  t.add("result", &SampleRow::result)
      .add("iteration", &SampleRow::iteration)
      .add("time_us", &SampleRow::time_us)
      .add("skew_us", &SampleRow::skew_us);
  return t;
}

std::vector<std::string> names(const auto& values) {
  std::vector<std::string> out;
  for (auto v : values) out.emplace_back(to_string(v));
  return out;
}

}  // namespace

struct ResultsFile::Impl {
  h5::File file;
  h5::Table<ResultRow> results;
  h5::Table<SampleRow> samples;
  stop::TrackedFile tracked;  // a stop publishes the file as the last flush left it
};

ResultsFile::ResultsFile(const std::string& path, const Options& o, const Environment& env, int nranks) {
  try {
    stop::check_path(path);
  } catch (const std::invalid_argument&) {
    throw InvalidArgument("--out path too long");
  }
  h5::File f = h5::File::create(path);
  h5::Group meta = f.create_group("meta");
  meta.set_attr("schema", std::string(schemas::kBench));
  meta.set_attr("tool", std::string("commscope-bench"));
  meta.set_attr("status", std::string("running"));  // until finish(): a file cut short says so
  for (const auto& [k, v] : env.fields) meta.set_attr(k, v);
  if (!env.machine_model.empty()) meta.set_attr("machine_model", env.machine_model);
  meta.set_attr("nranks", nranks);
  meta.set_attr("device", o.device);
  if (o.device == "cuda") meta.set_attr("transport", o.transport);
  meta.set_attr("collectives", names(o.collectives));
  meta.set_attr("datatypes", names(o.types));
  meta.set_attr("ops", names(o.ops));
  meta.set_attr("algorithms", o.algos.empty() ? std::vector<std::string>{"all"} : o.algos);
  meta.set_attr("min_bytes", static_cast<std::uint64_t>(o.min_bytes));
  meta.set_attr("max_bytes", static_cast<std::uint64_t>(o.max_bytes));
  meta.set_attr("step_factor", o.factor);
  meta.set_attr("step_bytes", static_cast<std::uint64_t>(o.step));
  meta.set_attr("iters", static_cast<std::int64_t>(o.iters));
  meta.set_attr("warmup_iters", o.warmup);
  meta.set_attr("check_iters", o.check_iters);
  meta.set_attr("root", o.root);
  meta.set_attr("combine", std::string(to_string(o.combine)));
  meta.set_attr("timeout_s", o.timeout_s);
  meta.set_attr("seed", static_cast<std::uint64_t>(o.seed));
  meta.set_attr("segment_bytes", static_cast<std::uint64_t>(o.segment_bytes));
  meta.set_attr("shm_chunk_bytes", static_cast<std::uint64_t>(o.shm_chunk_bytes));
  meta.set_attr("shm_two_shot_bytes", static_cast<std::uint64_t>(o.shm_two_shot_bytes.value_or(0)));
  meta.set_attr("shm_direct_bytes", static_cast<std::uint64_t>(o.shm_direct_bytes));  // UINT64_MAX: never
  meta.set_attr("shm_adapt_bytes", static_cast<std::uint64_t>(o.shm_adapt_bytes));    // UINT64_MAX: never
  meta.set_attr("unalign", static_cast<std::uint64_t>(o.unalign));
  meta.set_attr("blocking", o.blocking);
  meta.set_attr("agg_iters", o.agg_iters);
  meta.set_attr("run_cycles", o.run_cycles);
  meta.set_attr("per_iter_skip", o.per_iter_skip);
  if (o.device == "cuda") {
    meta.set_attr("cuda_graphs", o.cuda_graphs);
    meta.set_attr("local_register", o.local_register);
    meta.set_attr("stream_null", static_cast<int>(o.stream_null));
    meta.set_attr("cta_policy", o.cta_policy);
  }
  h5::Group envg = meta.create_group("env");
  for (const auto& [k, v] : env.env_vars) envg.set_attr(k, v);

  auto results = h5::Table<ResultRow>::create(f, "results", result_type());
  results.set_attr("description", std::string("one row per case and repetition; times in microseconds per call, "
                                              "bandwidths in GB/s (1e9 B/s), busbw = algbw * nccl-tests' factor"));
  auto samples = h5::Table<SampleRow>::create(f, "samples", sample_type(), 4096);
  samples.set_attr("description", std::string("per-iteration samples of each /results row (result = row index): "
                                              "max over ranks of the call's duration, and the arrival skew"));
  f.flush();
  const std::string partial = f.partial_path();
  impl_ = new Impl{std::move(f), std::move(results), std::move(samples), {partial, path, "rows"}};
}

ResultsFile::~ResultsFile() {
  try {
    close();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "commscope-bench: closing the results file: %s\n", e.what());
  }
  delete impl_;
}

void ResultsFile::append(ResultRow row, const Samples& s) {
  row.sample_offset = samples_written_;
  row.sample_count = s.time_us.size();
  const std::uint64_t index = rows_written_ + rows_.size();
  for (std::size_t i = 0; i < s.time_us.size(); ++i)
    samples_.push_back(
        {index, static_cast<std::int64_t>(i), s.time_us[i], i < s.skew_us.size() ? s.skew_us[i] : std::nan("")});
  samples_written_ += s.time_us.size();
  rows_.push_back(row);
}

void ResultsFile::flush() {
  if (!impl_) return;
  const stop::WriteGuard guard;
  if (!impl_->tracked.held()) return;  // the watchdog published it: the run is ending
  impl_->samples.append(samples_);
  impl_->results.append(rows_);
  impl_->file.flush();
  rows_written_ += rows_.size();
  impl_->tracked.set_kept(rows_written_);
  rows_.clear();
  samples_.clear();
}

void ResultsFile::close() {
  if (!impl_) return;
  flush();
  // Whoever takes the file from the signal handler publishes it: here by closing (which
  // renames). A signal arriving meanwhile waits until the file has its final name (a launcher's
  // SIGTERM after another rank's abort came mid-close, and the file stayed FILE.partial).
  if (impl_->tracked.begin_close()) {
    struct Done {
      stop::TrackedFile& tracked;
      ~Done() { tracked.end_close(); }
    } done{impl_->tracked};
    impl_->file.close();
  }
  delete impl_;
  impl_ = nullptr;
}

void ResultsFile::finish(const std::string& status) {
  if (!impl_) return;
  impl_->file.open_group("meta").set_attr("status", status);
  close();
}

ResultsData read_results(const std::string& path) {
  h5::File f = h5::File::open(path);
  ResultsData d;
  const h5::Group meta = f.open_group("meta");
  d.schema = meta.attr_string("schema");
  if (meta.has_attr("status")) d.status = meta.attr_string("status");
  d.rows = h5::Table<ResultRow>::open(f, "results", result_type()).read_all();
  d.samples = h5::Table<SampleRow>::open(f, "samples", sample_type()).read_all();
  return d;
}

}  // namespace commscope::bench
