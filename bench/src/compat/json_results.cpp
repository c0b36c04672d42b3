#include "compat/json_results.hpp"
#include "results.hpp"

#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <stdexcept>

#include "commscope/collectives/error.hpp"
#include "commscope/collectives/mpi_transport.hpp"
#include "commscope/common/stop_signals.hpp"
#include "commscope/model/machine_model.hpp"
#include "measure.hpp"
#include "table.hpp"

namespace commscope::bench {
namespace {

// What close_json_results_now() needs: the file's descriptor (-1: none open) and the bytes that
// end it after the last complete line. A stop never calls it while a line is being written (each
// write holds a stop::WriteGuard, and a signal then waits until the line is complete), so the
// file always ends validly.
std::atomic<int> g_fd{-1};
char g_tail[512];
std::size_t g_tail_len = 0;  // changed only under a stop::WriteGuard
static_assert(std::atomic<int>::is_always_lock_free);
using Busy = stop::WriteGuard;

// fopen "wx" (never overwrite); an existing name moves on to path.0, path.1, ...
std::FILE* open_exclusive(const std::string& path, std::string& chosen) {
  for (int n = -1; n < 1000; ++n) {
    chosen = n < 0 ? path : path + "." + std::to_string(n);
    if (std::FILE* f = std::fopen(chosen.c_str(), "wx")) return f;
    if (errno != EEXIST)
      throw InvalidArgument("cannot create -J/--output_file '" + chosen + "': " + std::strerror(errno));
  }
  throw InvalidArgument("cannot create -J/--output_file '" + path + "': it and " + path + ".0 to .999 exist");
}

// Fixed-size record of one rank for MPI_Gather.
struct RankRecord {
  int pid = 0;
  int device = -1;
  char hostname[256] = {};
  char device_hex[32] = {};
  char device_info[256] = {};
};

void copy_text(char* dst, std::size_t n, const std::string& s) {
  std::snprintf(dst, n, "%s", s.c_str());
}

}  // namespace

std::vector<RankInfo> gather_rank_info(MPI_Comm comm, const DeviceInfo& device) {
  int rank = 0, size = 1;
  COMMSCOPE_MPI_CHECK(MPI_Comm_rank(comm, &rank));
  COMMSCOPE_MPI_CHECK(MPI_Comm_size(comm, &size));
  RankRecord mine;
  mine.pid = static_cast<int>(::getpid());
  mine.device = device.ordinal;
  if (::gethostname(mine.hostname, sizeof mine.hostname - 1) != 0) copy_text(mine.hostname, sizeof mine.hostname, "?");
  copy_text(mine.device_hex, sizeof mine.device_hex, device.pci);
  copy_text(mine.device_info, sizeof mine.device_info, device.name);
  std::vector<RankRecord> all(rank == 0 ? static_cast<std::size_t>(size) : 0);
  COMMSCOPE_MPI_CHECK(MPI_Gather(&mine, sizeof mine, MPI_BYTE, all.data(), sizeof(RankRecord), MPI_BYTE, 0, comm));
  std::vector<RankInfo> out;
  for (std::size_t r = 0; r < all.size(); ++r)
    out.push_back(
        {static_cast<int>(r), all[r].pid, all[r].hostname, all[r].device, all[r].device_hex, all[r].device_info});
  return out;
}

int nccl_version_code(const std::string& version) {
  int major = 0, minor = 0, patch = 0;
  if (std::sscanf(version.c_str(), "%d.%d.%d", &major, &minor, &patch) != 3) return 0;
  // NCCL_VERSION(X,Y,Z): X*1000 + Y*100 + Z before 2.9, X*10000 + Y*100 + Z since.
  return major * (major > 2 || (major == 2 && minor >= 9) ? 10000 : 1000) + minor * 100 + patch;
}

JsonResults::JsonResults(const std::string& path, const Options& o, const Environment& env,
                         const std::vector<std::string>& args, const std::vector<RankInfo>& ranks)
    : o_(o), file_(open_exclusive(path, path_)), json_(file_) {
  json_.begin_object();
  json_.key("version").value(3);
  json_.key("start_time").value(timestamp_text());
  json_.key("args").begin_list();
  for (const std::string& a : args) json_.value(a);
  json_.end_list();
  json_.key("env").begin_list();
  for (const auto& [k, v] : env.env_vars) json_.value(k + "=" + v);
  json_.end_list();
  const std::string* nccl = env.find("nccl_version");
  json_.key("nccl_version").value(nccl ? nccl_version_code(*nccl) : 0);

  json_.key("config").begin_object();
  json_.key("nthreads").value(1);
  json_.key("ngpus").value(1);
  json_.key("minimum_bytes").value(o.min_bytes);
  json_.key("maximum_bytes").value(o.max_bytes);
  if (o.step > 0)
    json_.key("step_bytes").value(o.step);
  else
    json_.key("step_factor").value(o.factor);
  json_.key("warmup_iters").value(o.warmup);
  json_.key("iterations").value(o.iters);
  json_.key("aggregated_iterations").value(o.agg_iters);
  json_.key("validation").value(o.check_iters);
  json_.key("graph").value(o.cuda_graphs);
  json_.key("blocking_collectives").flag(o.blocking != 0);
  json_.key("per_iter_timing").flag(o.per_iter_timing);
  json_.key("per_iter_skip").value(o.per_iter_skip);
  json_.key("parallel_init").flag(false);
  json_.key("devices").begin_list();
  for (const RankInfo& r : ranks) {
    json_.begin_object();
    json_.key("rank").value(r.rank);
    json_.key("group").value(0);
    json_.key("pid").value(r.pid);
    json_.key("hostname").value(r.hostname);
    json_.key("device").value(r.device);
    json_.key("device_hex").value(r.device_hex);
    json_.key("device_info").value(r.device_info);
    json_.end_object();
  }
  json_.end_list();
  // Ours, after nccl-tests' keys.
  json_.key("tool").value("commscope-bench");
  json_.key("device").value(o.device);
  json_.key("blocking").value(o.blocking);
  json_.key("unalign").value(o.unalign);
  if (!env.machine_model.empty()) machine_model(from_text(env.machine_model));
  json_.end_object();

  json_.key("results").begin_list();
  g_fd.store(::fileno(file_));
  end_on_disk();
}

JsonResults::~JsonResults() {
  g_fd.store(-1);
  if (file_) std::fclose(file_);
}

void JsonResults::prepare_tail() {
  const int n = std::snprintf(
      g_tail, sizeof g_tail,
      "],\"out_of_bounds\":{\"count\":%llu,\"okay\":\"%s\"},\"average_bus_bandwidth\":{\"bandwidth\":%.10g,"
      "\"okay\":\"unchecked\"},\"errors\":[\"the run was stopped before its end\"],\"end_time\":\"%s\"}\n",
      static_cast<unsigned long long>(wrong_), wrong_ ? "false" : "true", sides_ ? busbw_sum_ / sides_ : 0.0,
      timestamp_text().c_str());
  g_tail_len = n > 0 ? std::min(static_cast<std::size_t>(n), sizeof g_tail - 1) : 0;
}

void close_json_results_now() noexcept {
  const int fd = g_fd.exchange(-1);
  if (fd < 0) return;
  const ssize_t written = ::write(fd, g_tail, g_tail_len);
  (void)written;  // nothing more can be done from a signal handler
}

// config.machine_model: the nodes of the model, each rate as GB/s with its source and detail (null
// GB/s where not known).
void JsonResults::machine_model(const MachineModel& m) {
  json_.key("machine_model").begin_list();
  for (const NodeModel& n : m.nodes) {
    json_.begin_object();
    json_.key("host").value(n.host);
    json_.key("ranks").value(n.ranks);
    json_.key("cpus").value(n.cpus);
    json_.key("gpus").value(n.gpus);
    for (const auto& [name, rate] : {std::pair<const char*, const Rate*>{"copy", &n.copy},
                                     {"intra", &n.intra},
                                     {"nic", &n.nic},
                                     {"nic_measured", &n.nic_measured}}) {
      json_.key(name).begin_object();
      json_.key("GBps");
      if (rate->known())
        json_.value(rate->gbytes_per_s);
      else
        json_.null();
      json_.key("source").value(std::string(to_string(rate->source)));
      json_.key("detail").value(rate->detail);
      json_.end_object();
    }
    json_.end_object();
  }
  json_.end_list();
}

void JsonResults::side(const ResultRow& r) {
  json_.begin_object();
  json_.key(o_.report_cputime ? "cpu_time" : "time").value(o_.report_cputime ? r.cpu_time_us : r.time_us);
  json_.key("alg_bw").value(r.algbw_GBps);
  json_.key("bus_bw").value(r.busbw_GBps);
  json_.key("nwrong");
  if (r.check_iters > 0)
    json_.value(static_cast<double>(r.nwrong));
  else
    json_.null();
  // Ours: the row against the run's machine model (docs/verdicts.md), null where the model lacks
  // an input, as a side's unchecked nwrong is.
  for (const auto& [key, v] : {std::pair<const char*, double>{"expected_time", r.expected_time_us},
                               {"expected_bus_bw", r.expected_busbw_GBps},
                               {"of_expected", r.of_expected}}) {
    json_.key(key);
    if (std::isfinite(v))
      json_.value(v);
    else
      json_.null();
  }
  json_.end_object();
}

void JsonResults::per_iter(const ResultRow& r, const Samples& s) {
  const auto skip = static_cast<std::size_t>(o_.per_iter_skip);
  const IterStats st = iter_stats(s.time_us, skip);
  json_.begin_object();
  json_.key("skipped_iterations").value(o_.per_iter_skip);
  json_.key("min_us").value(st.min);
  json_.key("max_us").value(st.max);
  json_.key("avg_us").value(st.mean);
  json_.key("p50_us").value(st.p50);
  json_.key("p95_us").value(st.p95);
  json_.key("p99_us").value(st.p99);
  json_.key("stdev_us").value(st.stdev);
  json_.key("cv_pct").value(st.mean > 0 ? st.stdev / st.mean * 100 : 0.0);
  json_.key("times_us").begin_list();
  for (double v : s.time_us) json_.value(v);
  json_.end_list();
  const std::size_t n = s.time_us.size();
  if (r.nranks > 1 && n > 0 && s.rank_time_us.size() == n * static_cast<std::size_t>(r.nranks)) {
    json_.key("per_process_max_times_us").begin_list();
    for (std::size_t q = 0; q < static_cast<std::size_t>(r.nranks); ++q) {
      json_.begin_list();
      for (std::size_t i = 0; i < n; ++i) json_.value(s.rank_time_us[q * n + i]);
      json_.end_list();
    }
    json_.end_list();
  }
  json_.end_object();
}

void JsonResults::line(const ResultRow* oop, const Samples* oop_s, const ResultRow* ip, const Samples* ip_s) {
  const ResultRow* any = oop ? oop : ip;
  if (!any || !file_) return;
  const Busy busy;
  json_.begin_object();
  json_.key("size").value(any->bytes);
  json_.key("count").value(any->count);
  json_.key("type").value(nccl_tests_name(parse_datatype(text(any->type))));
  json_.key("redop").value(text(any->op));
  char root[16];
  std::snprintf(root, sizeof root, "%6i", any->root);
  json_.key("root").value(root);
  const ResultRow* rows[2] = {oop, ip};
  const Samples* samples[2] = {oop_s, ip_s};
  for (int k = 0; k < 2; ++k) {
    json_.key(k == 0 ? "out_of_place" : "in_place");
    if (rows[k]) {
      side(*rows[k]);
      wrong_ += rows[k]->nwrong;
      busbw_sum_ += rows[k]->busbw_GBps;
      ++sides_;
    } else {
      json_.null();
    }
    if (o_.per_iter_timing && rows[k] && samples[k]) {
      json_.key(k == 0 ? "out_of_place_per_iter" : "in_place_per_iter");
      per_iter(*rows[k], *samples[k]);
    }
  }
  json_.key("actual_iterations").value(any->iterations);
  json_.key("experiment_name").value("");
  json_.key("collective").value(text(any->collective));
  json_.key("algorithm").value(text(any->algorithm));
  json_.end_object();
  end_on_disk();
}

// The file on disk ends validly after every line, even if the process is killed (SIGKILL
// cannot be caught): the footer of a stopped run follows the last line, and the next line
// (or the real footer) writes over it. The stream's position stays before that footer.
void JsonResults::end_on_disk() {
  std::fflush(file_);
  prepare_tail();
  const long at = std::ftell(file_);
  const int fd = ::fileno(file_);
  if (at < 0 || ::pwrite(fd, g_tail, g_tail_len, at) != static_cast<ssize_t>(g_tail_len) ||
      ::ftruncate(fd, at + static_cast<off_t>(g_tail_len)) != 0)
    throw std::runtime_error("cannot write -J/--output_file '" + path_ + "': " + std::strerror(errno));
}

void JsonResults::discard() {
  if (!file_) return;
  g_fd.store(-1);
  std::fclose(file_);
  file_ = nullptr;
  std::remove(path_.c_str());
}

void JsonResults::finish(const std::string& error) {
  if (!file_) return;
  const Busy busy;
  g_fd.store(-1);
  json_.end_list();  // results
  json_.key("out_of_bounds").begin_object();
  json_.key("count").value(wrong_);
  json_.key("okay").flag(wrong_ == 0);
  json_.end_object();
  json_.key("average_bus_bandwidth").begin_object();
  json_.key("bandwidth").value(sides_ ? busbw_sum_ / sides_ : 0.0);
  json_.key("okay").value("unchecked");
  json_.end_object();
  json_.key("errors").begin_list();
  if (!error.empty()) json_.value(error);
  json_.end_list();
  json_.key("end_time").value(timestamp_text());
  json_.end_object();
  std::fputc('\n', file_);
  std::fflush(file_);
  const long end = std::ftell(file_);
  const bool cut = end >= 0 && ::ftruncate(::fileno(file_), end) == 0;  // the stopped footer's rest
  std::fclose(file_);
  file_ = nullptr;
  if (!cut) throw std::runtime_error("cannot end -J/--output_file '" + path_ + "': " + std::strerror(errno));
}

}  // namespace commscope::bench
