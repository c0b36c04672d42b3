// nccl-tests' run-description lines before the table (nccl-tests 2.19, src/util.cu), which
// scripts written for nccl-tests parse:
//   # nThread 1 nGpus 1 minBytes 8 maxBytes 67108864 step: 2(factor) warmup iters: 5 iters: 20 agg iters: 1 validation:
//   1 graph: 0 unalign: 0 #  Rank  0 Group  0 Pid  12345 on      host1 device  0 [0000:04:00] NVIDIA H100 80GB HBM3
// One thread and one GPU per rank, so nThread and nGpus are 1 and each rank has one line; on the
// host the device is -1, "[cpu] cpu" (the -J file's devices say the same: device -1, "cpu").
#pragma once

#include <string>

#include "commscope/bench/options.hpp"

namespace commscope::bench {

// One rank's entry of nccl-tests' device list (the "#  Rank" line, -J's config.devices).
struct RankInfo {
  int rank = 0;
  int pid = 0;
  std::string hostname;
  int device = -1;          // CUDA ordinal; -1 on the host
  std::string device_hex;   // PCI "dddd:bb:dd"; "" on the host
  std::string device_info;  // GPU name, or "cpu"
};

// "# nThread 1 nGpus 1 minBytes ... unalign: U" (no newline). The step is the factor (-f) or the
// bytes (-i) as nccl-tests prints it; a factor that is not a whole number keeps its digits (1.5).
std::string nccl_tests_run_line(const Options& o);

// "#  Rank  0 Group  0 Pid  12345 on       host device -1 [cpu] cpu" (no newline), in
// nccl-tests' widths.
std::string nccl_tests_rank_line(const RankInfo& r);

}  // namespace commscope::bench
