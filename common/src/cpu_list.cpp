#include "commscope/common/cpu_list.hpp"

#include <sched.h>

#include <algorithm>

namespace commscope {

std::string cpu_list(const std::vector<int>& cpus) {
  std::string out;
  for (std::size_t i = 0; i < cpus.size();) {
    std::size_t j = i;
    while (j + 1 < cpus.size() && cpus[j + 1] == cpus[j] + 1) ++j;
    if (!out.empty()) out += ',';
    out += std::to_string(cpus[i]);
    if (j > i) out.append("-").append(std::to_string(cpus[j]));
    i = j + 1;
  }
  return out;
}

std::vector<int> parse_cpu_list(const std::string& list) {
  std::vector<int> cpus;
  std::size_t i = 0;
  constexpr long kMaxCpu = 1 << 16;
  auto number = [&](int& out) {  // digits at i, below kMaxCpu
    const std::size_t from = i;
    long v = 0;
    for (; i < list.size() && list[i] >= '0' && list[i] <= '9' && v < kMaxCpu; ++i) v = v * 10 + (list[i] - '0');
    out = static_cast<int>(v);
    return i > from && v < kMaxCpu;
  };
  while (i < list.size()) {
    int lo = 0, hi = 0;
    if (!number(lo)) return {};
    hi = lo;
    if (i < list.size() && list[i] == '-') {
      ++i;
      if (!number(hi) || hi < lo) return {};
    }
    for (int c = lo; c <= hi; ++c) cpus.push_back(c);
    if (i < list.size() && (list[i++] != ',' || i == list.size())) return {};  // "0;1", "0,"
  }
  std::sort(cpus.begin(), cpus.end());
  cpus.erase(std::unique(cpus.begin(), cpus.end()), cpus.end());
  return cpus;
}

std::vector<int> affinity_cpus() {
  cpu_set_t set;
  CPU_ZERO(&set);
  std::vector<int> cpus;
  if (sched_getaffinity(0, sizeof set, &set) != 0) return cpus;
  for (int c = 0; c < CPU_SETSIZE; ++c)
    if (CPU_ISSET(c, &set)) cpus.push_back(c);
  return cpus;
}

}  // namespace commscope
