#include "results.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>

#include "commscope/collectives/error.hpp"
#include "commscope/common/stop_signals.hpp"
#include "commscope/h5/h5.hpp"

namespace commscope::bench {

namespace {

std::vector<std::string> names(const auto& values) {
  std::vector<std::string> out;
  for (auto v : values) out.emplace_back(to_string(v));
  return out;
}

// What a cuda run's nccl rows ran, where it can be learned: NCCL_ALGO / NCCL_PROTO as the
// environment set them (NCCL then runs that one), else NCCL's own choice per call, which only its
// tuning log shows. /meta nccl_algorithm and nccl_protocol; the expected values price the former
// (docs/verdicts.md).
std::string nccl_setting(const Environment& env, const std::string& variable) {
  for (const auto& [k, v] : env.env_vars)
    if (k == variable && !v.empty()) return v + " (" + variable + ")";
  return "NCCL's choice per call (" + variable + " unset; NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=TUNING logs each choice; the bench reads that log into /meta nccl_choices)";
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
  h5::Group meta = formats::bench::create_meta(f);  // schema, tool, status "running" until finish()
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
    meta.set_attr("nccl_algorithm", nccl_setting(env, "NCCL_ALGO"));
    meta.set_attr("nccl_protocol", nccl_setting(env, "NCCL_PROTO"));
  }
  h5::Group envg = meta.create_group("env");
  for (const auto& [k, v] : env.env_vars) envg.set_attr(k, v);

  formats::bench::Tables tables = formats::bench::create_tables(f);
  f.flush();
  const std::string partial = f.partial_path();
  impl_ = new Impl{std::move(f), std::move(tables.results), std::move(tables.samples), {partial, path, "rows"}};
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

void ResultsFile::set_meta(const std::string& name, const std::string& value) {
  if (impl_) impl_->file.open_group("meta").set_attr(name, value);
}

void ResultsFile::finish(const std::string& status) {
  if (!impl_) return;
  formats::bench::set_status(impl_->file, status);
  close();
}

}  // namespace commscope::bench
