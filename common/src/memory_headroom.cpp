#include "commscope/common/memory_headroom.hpp"

#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <sstream>

namespace commscope {
namespace {

// The soft limit of `resource`, or -1 when unlimited.
std::int64_t soft_limit(int resource) {
  struct rlimit r {};
  if (::getrlimit(resource, &r) != 0 || r.rlim_cur == RLIM_INFINITY) return -1;
  return static_cast<std::int64_t>(r.rlim_cur);
}

// Fields of /proc/self/statm, in bytes: [0] the address space, [5] data and stack.
bool statm(std::int64_t& size, std::int64_t& data) {
  std::ifstream in("/proc/self/statm");
  std::int64_t f[6] = {};
  for (std::int64_t& x : f)
    if (!(in >> x)) return false;
  const std::int64_t page = ::sysconf(_SC_PAGESIZE);
  size = f[0] * page;
  data = f[5] * page;
  return true;
}

std::int64_t mem_available() {
  std::ifstream in("/proc/meminfo");
  std::string key;
  std::int64_t kib = 0;
  std::string unit;
  while (in >> key >> kib) {
    std::getline(in, unit);
    if (key == "MemAvailable:") return kib * 1024;
  }
  return -1;
}

// A cgroup v2 file of this process's cgroup as a number ("max" and absence: -1).
std::int64_t cgroup_value(const std::string& dir, const char* file) {
  std::ifstream in("/sys/fs/cgroup" + dir + "/" + file);
  std::string text;
  if (!(in >> text) || text == "max") return -1;
  try {
    return std::stoll(text);
  } catch (const std::exception&) {
    return -1;
  }
}

std::int64_t cgroup_headroom() {
  std::ifstream in("/proc/self/cgroup");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("0::", 0) != 0) continue;  // the v2 hierarchy's line
    const std::string dir = line.substr(3) == "/" ? "" : line.substr(3);
    const std::int64_t max = cgroup_value(dir, "memory.max"), used = cgroup_value(dir, "memory.current");
    if (max < 0) return -1;
    return max > used ? max - std::max<std::int64_t>(used, 0) : 0;
  }
  return -1;
}

}  // namespace

std::string bytes_text(std::uint64_t bytes) {
  const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  double v = static_cast<double>(bytes);
  int u = 0;
  while (u < 4 && v >= 1024) v /= 1024, ++u;
  char text[32];
  std::snprintf(text, sizeof text, u == 0 ? "%.0f %s" : "%.1f %s", v, units[u]);
  return text;
}

MemoryHeadroom memory_headroom() {
  MemoryHeadroom h;
  std::int64_t size = 0, data = 0;
  const bool mapped = statm(size, data);
  if (const std::int64_t as = soft_limit(RLIMIT_AS); as >= 0 && mapped) h.address_space = as > size ? as - size : 0;
  if (const std::int64_t d = soft_limit(RLIMIT_DATA); d >= 0 && mapped) h.data = d > data ? d - data : 0;
  h.available = mem_available();
  h.cgroup = cgroup_headroom();
  return h;
}

std::string memory_shortfall(const MemoryHeadroom& h, std::uint64_t per_process, int processes_on_node) {
  const double node = static_cast<double>(per_process) * (processes_on_node > 0 ? processes_on_node : 1);
  auto over = [](std::int64_t left, double need) { return left >= 0 && need > static_cast<double>(left); };
  const std::string on_node = processes_on_node > 1 ? " for " + std::to_string(processes_on_node) + " ranks" : "";
  if (over(h.address_space, static_cast<double>(per_process)))
    return "more than the " + bytes_text(static_cast<std::uint64_t>(h.address_space)) +
           " this process may still map (ulimit -v)";
  if (over(h.data, static_cast<double>(per_process)))
    return "more than the " + bytes_text(static_cast<std::uint64_t>(h.data)) +
           " of data this process may still take (ulimit -d)";
  if (over(h.cgroup, node))
    return "more" + on_node + " than the " + bytes_text(static_cast<std::uint64_t>(h.cgroup)) +
           " left under the cgroup's memory.max";
  if (over(h.available, node))
    return "more" + on_node + " than the node's " + bytes_text(static_cast<std::uint64_t>(h.available)) +
           " available (MemAvailable)";
  return {};
}

}  // namespace commscope
