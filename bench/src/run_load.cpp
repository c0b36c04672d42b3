#include "run_load.hpp"

#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "commscope/collectives/communicator.hpp"  // mpi_yields_when_idle
#include "commscope/collectives/mpi_transport.hpp"
#include "commscope/common/timing.hpp"
#include "commscope/machine/machine_detect.hpp"  // processor_name

namespace commscope::bench {
namespace {

std::string read_file(const char* path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// This process's user + system CPU time, all its threads (OpenMP, MPI's progress thread).
double own_cpu_seconds() {
  rusage u{};
  if (getrusage(RUSAGE_SELF, &u) != 0) return 0;
  auto s = [](const timeval& t) { return static_cast<double>(t.tv_sec) + 1e-6 * static_cast<double>(t.tv_usec); };
  return s(u.ru_utime) + s(u.ru_stime);
}

// The seconds this process's threads were ready to run but waited for a CPU (-1 unknown).
double own_queued_seconds() {
  std::error_code ec;
  double sum = 0;
  bool any = false;
  for (const auto& task : std::filesystem::directory_iterator("/proc/self/task", ec)) {
    const double s = run_delay_seconds(read_file((task.path() / "schedstat").c_str()));
    if (s >= 0) sum += s, any = true;
  }
  return any ? sum : -1;
}

double node_busy_seconds() {
  return busy_cpu_seconds(read_file("/proc/stat"), static_cast<double>(std::max(1L, sysconf(_SC_CLK_TCK))));
}

}  // namespace

double busy_cpu_seconds(std::string_view text, double ticks_per_s) {
  if (!text.starts_with("cpu ") || !(ticks_per_s > 0)) return -1;
  // cpu  user nice system idle iowait irq softirq steal guest guest_nice (guest is inside user)
  std::istringstream in{std::string(text.substr(4, text.find('\n') - 4))};
  std::vector<double> f;
  for (double v = 0; in >> v;) f.push_back(v);
  if (f.size() < 7) return -1;
  double busy = f[0] + f[1] + f[2] + f[5] + f[6];
  if (f.size() > 7) busy += f[7];
  return busy / ticks_per_s;
}

double run_delay_seconds(std::string_view text) {
  std::istringstream in{std::string(text)};
  double on_cpu_ns = 0, waited_ns = -1;
  if (!(in >> on_cpu_ns >> waited_ns) || waited_ns < 0) return -1;
  return waited_ns * 1e-9;
}

double loadavg_1min(std::string_view text) {
  double v = -1;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  return ec == std::errc() && end != text.data() && v >= 0 ? v : -1;
}

double others_cpus(double node_busy_s, double own_s_sum, double wall_s) {
  if (!(wall_s > 0) || node_busy_s < 0) return 0;
  return std::max(0.0, (node_busy_s - own_s_sum) / wall_s);
}

void LoadMeter::start() {
  wall0_ = timing::now_s();
  own0_ = own_cpu_seconds();
  queued0_ = own_queued_seconds();
  busy0_ = node_busy_seconds();
  loadavg0_ = loadavg_1min(read_file("/proc/loadavg"));
}

void LoadMeter::finish(MPI_Comm comm, MachineModel& model) const {
  int rank = 0, p = 1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &p);
  // Per rank: wall, own CPU, node busy (-1 unknown), load average before and after, own run
  // delay (-1 unknown; a thread that ended since start() takes its delay with it: a lower bound),
  // whether its MPI library yields the CPU while idle (1) or not (0).
  const double busy1 = node_busy_seconds(), queued1 = own_queued_seconds();
  const double mine[kFigures] = {timing::now_s() - wall0_,
                                 own_cpu_seconds() - own0_,
                                 busy0_ >= 0 && busy1 >= 0 ? busy1 - busy0_ : -1,
                                 loadavg0_,
                                 loadavg_1min(read_file("/proc/loadavg")),
                                 queued0_ >= 0 && queued1 >= 0 ? std::max(0.0, queued1 - queued0_) : -1,
                                 mpi_yields_when_idle() ? 1.0 : 0.0};
  char host[MPI_MAX_PROCESSOR_NAME + 1] = {};
  std::snprintf(host, sizeof host, "%s", machine::processor_name().c_str());
  std::vector<double> all(rank == 0 ? kFigures * static_cast<std::size_t>(p) : 0);
  std::vector<char> hosts(rank == 0 ? sizeof host * static_cast<std::size_t>(p) : 0);
  COMMSCOPE_MPI_CHECK(MPI_Gather(mine, kFigures, MPI_DOUBLE, all.data(), kFigures, MPI_DOUBLE, 0, comm));
  COMMSCOPE_MPI_CHECK(MPI_Gather(host, sizeof host, MPI_CHAR, hosts.data(), sizeof host, MPI_CHAR, 0, comm));
  if (rank != 0) return;
  for (NodeModel& n : model.nodes) {
    double own = 0, queued = 0, yield = 0;
    int first = -1;
    for (int r = 0; r < p; ++r) {
      if (n.host != &hosts[static_cast<std::size_t>(r) * sizeof host]) continue;
      const double* f = &all[kFigures * static_cast<std::size_t>(r)];
      own += f[1];
      queued = queued < 0 || f[5] < 0 ? -1 : queued + f[5];
      yield = std::max(yield, f[6]);
      if (first < 0) first = r;
    }
    if (first < 0) continue;
    const double* f = &all[kFigures * static_cast<std::size_t>(first)];
    if (f[2] < 0 || !(f[0] > 0)) continue;  // /proc/stat not readable there
    n.load = {f[0], others_cpus(f[2], own, f[0]), f[3], f[4], own / f[0], queued < 0 ? -1 : queued / f[0], yield};
  }
}

}  // namespace commscope::bench
