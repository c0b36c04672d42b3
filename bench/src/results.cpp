#include "results.hpp"

#include <unistd.h>

#include <atomic>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <system_error>

#include "commscope/collectives/error.hpp"
#include "commscope/h5/h5.hpp"
#include "json_results.hpp"
#include "watchdog.hpp"

namespace commscope::bench {

inline constexpr const char* kSchema = "commscope.bench/1";

void set_text(char* dst, std::size_t n, std::string_view s) {
  std::memset(dst, 0, n);
  std::memcpy(dst, s.data(), std::min(n, s.size()));
}

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

// What a signal handler needs to publish the file: fixed buffers and one state word.
enum : int { kNone = 0, kOpen = 1, kWriting = 2 };
std::atomic<int> g_state{kNone};
std::atomic<int> g_pending_signal{0};
char g_partial[4096];
char g_final[4096];
static_assert(std::atomic<int>::is_always_lock_free);

void die_of(int sig) {
  std::signal(sig, SIG_DFL);
  std::raise(sig);
}

// What the handler says: "commscope-bench: rank N: " and the case in progress, double-buffered
// (the main thread fills the buffer not being shown, then publishes its index).
char g_signal_prefix[64] = "commscope-bench: ";
char g_context[2][512];
std::atomic<int> g_context_shown{-1};

extern "C" void on_signal(int sig) {
  const int shown = g_context_shown.load();
  write_stop_line(g_signal_prefix, sig, shown >= 0 ? g_context[shown] : nullptr);
  if (g_state.load() == kWriting || json_results_busy()) {  // the writer publishes when it is done
    g_pending_signal.store(sig);
    return;
  }
  publish_results_file_now();
  die_of(sig);
}

// Holds signals off the file while it is being written (by deferring them).
class WriteGuard {
 public:
  WriteGuard() { g_state.store(kWriting); }
  ~WriteGuard() {
    g_state.store(kOpen);
    deliver_deferred_signal();
  }
};

std::vector<std::string> names(const auto& values) {
  std::vector<std::string> out;
  for (auto v : values) out.emplace_back(to_string(v));
  return out;
}

}  // namespace

void deliver_deferred_signal() noexcept {
  if (g_state.load() == kWriting || json_results_busy()) return;  // the other writer delivers it
  if (const int sig = g_pending_signal.exchange(0)) {
    publish_results_file_now();
    die_of(sig);
  }
}

void publish_results_file_now() noexcept {
  close_json_results_now();
  int expected = kOpen;
  if (g_state.compare_exchange_strong(expected, kNone)) ::rename(g_partial, g_final);
}

SignalContext::SignalContext(const Case& c) noexcept {
  const int next = g_context_shown.load() == 0 ? 1 : 0;
  try {
    const std::string text = describe(c);
    std::snprintf(g_context[next], sizeof g_context[next], "%s", text.c_str());
  } catch (...) {
    std::snprintf(g_context[next], sizeof g_context[next], "%s", "a collective");
  }
  g_context_shown.store(next);
}

SignalContext::~SignalContext() {
  g_context_shown.store(-1);
}

void install_signal_handlers(int rank) {
  std::snprintf(g_signal_prefix, sizeof g_signal_prefix, "commscope-bench: rank %d: ", rank);
  for (int sig : {SIGINT, SIGTERM, SIGHUP}) {
    struct sigaction sa {};
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    sigaction(sig, &sa, nullptr);
  }
}

struct ResultsFile::Impl {
  h5::File file;
  h5::Table<ResultRow> results;
  h5::Table<SampleRow> samples;
};

ResultsFile::ResultsFile(const std::string& path, const Options& o, const Environment& env, int nranks) {
  if (path.size() + 16 > sizeof g_partial) throw InvalidArgument("--out path too long");
  h5::File f = h5::File::create(path);
  h5::Group meta = f.create_group("meta");
  meta.set_attr("schema", std::string(kSchema));
  meta.set_attr("tool", std::string("commscope-bench"));
  for (const auto& [k, v] : env.fields) meta.set_attr(k, v);
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
  impl_ = new Impl{std::move(f), std::move(results), std::move(samples)};
  std::snprintf(g_partial, sizeof g_partial, "%s", impl_->file.partial_path().c_str());
  std::snprintf(g_final, sizeof g_final, "%s", path.c_str());
  g_state.store(kOpen);
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

std::uint64_t results_file_estimate(std::size_t cases, std::int64_t iters) {
  const auto samples = static_cast<std::uint64_t>(iters > 0 ? iters : 1000);
  return (256u << 10) + cases * (sizeof(ResultRow) + samples * sizeof(SampleRow));
}

std::string free_space_problem(const std::string& path, std::uint64_t needed, std::int64_t free_override) {
  namespace fs = std::filesystem;
  std::error_code ec;
  fs::path dir = fs::absolute(fs::path(path), ec).parent_path();
  const fs::space_info space = fs::space(dir, ec);
  if (ec && free_override < 0) return {};  // the file's creation reports a missing folder better
  const std::uint64_t available = free_override >= 0 ? static_cast<std::uint64_t>(free_override) : space.available;
  if (available >= needed) return {};
  char text[160];
  std::snprintf(text, sizeof text, "%.1f KiB free on its file system, the run needs about %.1f KiB",
                static_cast<double>(available) / 1024.0, static_cast<double>(needed) / 1024.0);
  return text;
}

void ResultsFile::flush() {
  if (!impl_ || g_state.load() == kNone) return;
  WriteGuard guard;
  impl_->samples.append(samples_);
  impl_->results.append(rows_);
  impl_->file.flush();
  rows_written_ += rows_.size();
  rows_.clear();
  samples_.clear();
}

void ResultsFile::close() {
  if (!impl_) return;
  flush();
  int expected = kOpen;
  // Whoever takes the state from open publishes: here by closing (which renames). A signal
  // arriving meanwhile waits until the file has its final name (a launcher's SIGTERM after
  // another rank's abort came mid-close, and the file stayed FILE.partial).
  if (g_state.compare_exchange_strong(expected, kWriting)) {
    struct Done {
      ~Done() {
        g_state.store(kNone);
        deliver_deferred_signal();
      }
    } done;
    impl_->file.close();
  }
  delete impl_;
  impl_ = nullptr;
}

ResultsData read_results(const std::string& path) {
  h5::File f = h5::File::open(path);
  ResultsData d;
  d.schema = f.open_group("meta").attr_string("schema");
  d.rows = h5::Table<ResultRow>::open(f, "results", result_type()).read_all();
  d.samples = h5::Table<SampleRow>::open(f, "samples", sample_type()).read_all();
  return d;
}

}  // namespace commscope::bench
