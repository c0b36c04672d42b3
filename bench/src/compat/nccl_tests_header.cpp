#include "compat/nccl_tests_header.hpp"

#include <cmath>
#include <cstdio>

namespace commscope::bench {

std::string nccl_tests_run_line(const Options& o) {
  char step[64];
  if (o.step > 0)
    std::snprintf(step, sizeof step, "%zu(bytes)", o.step);
  else if (o.factor == std::floor(o.factor) && o.factor < 1e15)
    std::snprintf(step, sizeof step, "%lld(factor)", static_cast<long long>(o.factor));
  else
    std::snprintf(step, sizeof step, "%g(factor)", o.factor);
  char line[512];
  std::snprintf(line, sizeof line,
                "# nThread 1 nGpus 1 minBytes %zu maxBytes %zu step: %s warmup iters: %d iters: %lld agg iters: %d "
                "validation: %d graph: %d unalign: %zu",
                o.min_bytes, o.max_bytes, step, o.warmup, static_cast<long long>(o.iters), o.agg_iters, o.check_iters,
                o.cuda_graphs, o.unalign);
  return line;
}

std::string nccl_tests_rank_line(const RankInfo& r) {
  const std::string where = r.device_hex.empty() ? "cpu" : r.device_hex;
  char line[1024];
  std::snprintf(line, sizeof line, "#  Rank %2d Group %2d Pid %6d on %10s device %2d [%s] %s", r.rank, 0, r.pid,
                r.hostname.c_str(), r.device, where.c_str(), r.device_info.c_str());
  return line;
}

}  // namespace commscope::bench
