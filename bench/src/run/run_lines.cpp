#include "run/run_lines.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>

#include "commscope/collectives/mpi_transport.hpp"
#include "commscope/collectives/shm_options.hpp"

namespace commscope::bench {

std::string memory_text(long long bytes) {
  const char* units[] = {"B", "KB", "MB", "GB"};
  double v = static_cast<double>(bytes);
  int u = 0;
  while (u < 3 && std::abs(v) >= 1024) v /= 1024, ++u;
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.*f %s", u == 0 ? 0 : 2, v, units[u]);
  return buf;
}

std::string size_or_never(std::size_t bytes) {
  return bytes == SIZE_MAX ? "never" : memory_text(static_cast<long long>(bytes));
}

std::vector<std::string> loop_shape_lines(const Options& o) {
  static const char* const kBlocking[] = {"", "wait and barrier after each call (-m: each inner iteration)",
                                          "wait after each call, no barrier",
                                          "wait and barrier after each iteration (-n); time excludes barrier"};
  std::vector<std::string> lines;
  if (o.blocking > 0) lines.push_back(std::string("# Blocking Enabled: ") + kBlocking[o.blocking]);
  if (o.agg_iters > 1) lines.push_back("# " + std::to_string(o.agg_iters) + " calls per timed iteration (-m)");
  if (o.run_cycles != 1)
    lines.push_back("# " + (o.run_cycles ? std::to_string(o.run_cycles) : std::string("endless")) +
                    " cycles of every case (-N)");
  if (o.per_iter_timing) {
    std::string line = "# Per-Iteration Report: i_* uses the max over ranks of each iteration";
    if (o.per_iter_skip) line += "; summary skips first " + std::to_string(o.per_iter_skip) + " iterations";
    lines.push_back(line);
  }
  // -z 0: the samples are another pass than the time, which may lie outside their range.
  if ((o.per_iter_timing || o.stats) && o.blocking == 0)
    lines.push_back(std::string("# time(us): the timed pass, calls back to back; ") +
                    (o.stats && o.per_iter_timing ? "i_* and min/p50/p99/max(us)"
                     : o.stats                    ? "min/p50/p99/max(us)"
                                                  : "i_*") +
                    ": a second pass, each iteration timed alone (the time may lie outside their range)");
  return lines;
}

std::string shm_shape_line(const Options& o, const Backend& backend, int local_ranks) {
  const bool named = o.algos.empty() || std::find(o.algos.begin(), o.algos.end(), "shm") != o.algos.end();
  const auto have = backend.algorithms();
  if (!named || std::find(have.begin(), have.end(), "shm") == have.end() || !backend.unavailable("shm").empty())
    return "";
  const ShmSegmentShape s = shm_segment_shape();
  char line[640];
  std::snprintf(
      line, sizeof line,
      "# shm: node segment %s per rank (%d slots of %s, %s of flags), %s on this node; steps of %s (--shm-chunk), "
      "two-shot from %s (--shm-two-shot), direct from %s (--shm-direct), measured choice from %s (--shm-adapt)",
      memory_text(static_cast<std::int64_t>(s.per_rank())).c_str(), s.slots,
      memory_text(static_cast<std::int64_t>(s.slot_bytes)).c_str(),
      memory_text(static_cast<std::int64_t>(s.flag_bytes)).c_str(),
      memory_text(static_cast<std::int64_t>(s.per_rank() * static_cast<std::size_t>(local_ranks))).c_str(),
      memory_text(static_cast<std::int64_t>(o.shm_chunk_bytes)).c_str(),
      memory_text(static_cast<std::int64_t>(o.shm_two_shot_bytes.value_or(0))).c_str(),
      size_or_never(o.shm_direct_bytes).c_str(), size_or_never(o.shm_adapt_bytes).c_str());
  return line;
}

std::string memory_line(const Backend& backend, MPI_Comm comm) {
  const std::vector<MemoryUse> use = backend.memory_use();
  std::vector<long long> mine, most(use.size());
  for (const MemoryUse& u : use) mine.push_back(u.bytes);
  COMMSCOPE_MPI_CHECK(
      MPI_Reduce(mine.data(), most.data(), static_cast<int>(mine.size()), MPI_LONG_LONG, MPI_MAX, 0, comm));
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  if (rank != 0) return {};
  const bool gpu = backend.device() == "cuda";
  std::string line = std::string("# ") + (gpu ? "GPU memory usage    " : "Host memory usage   ") + " :";
  long long total = 0;
  for (std::size_t i = 0; i < use.size(); ++i) {
    line += (i ? " | " : " ") + use[i].name + " " + memory_text(most[i]);
    total += most[i];
  }
  if (gpu) line += " | Total " + memory_text(total);  // on the host, RSS already holds our buffers
  return line;
}

}  // namespace commscope::bench
