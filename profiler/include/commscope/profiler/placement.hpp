#pragma once
// Where a profile's ranks ran: the CPUs each could run on and its host's CPUs, as /ranks
// records them, and what that means for comparing times between two runs (docs/replay.md).

#include <string>
#include <vector>

#include "commscope/formats/profile.hpp"

namespace commscope::profiler {

struct CpuPlacement {
  std::string cpus;     // "0", "0-3,8": this process's affinity
  int cpu_count = 0;    // how many CPUs that is
  int node_cpus = 0;    // the host's online CPUs
  std::string machine;  // the kernel's boot id: one per machine, whatever its namespaces' host names
};

// This process's, now (Linux: sched_getaffinity and the online CPUs).
CpuPlacement this_process_cpus();

struct PlacementSummary {
  bool known = false;  // every rank recorded its CPUs (files written before they did: false)
  // A host ran more ranks than it has CPUs with some rank free to run on any of them: which
  // ranks share a core was the scheduler's pick, so times move between two runs of the same job.
  bool shared_unbound = false;
  std::string text;  // "4 ranks on 1 host of 2 CPUs, unbound" / "... bound (CPUs 0 | 1)" / "not recorded ..."
};

PlacementSummary summarize_placement(const std::vector<RankInfo>& ranks);

// The cores a run's ranks computed on, from where they ran. Per machine (ranks of one boot id;
// where none was recorded, of one host name): the CPUs its ranks' affinities cover together
// (at most its online CPUs), and at most its ranks x `threads` of them. 4 ranks of 2 threads on
// the 4 hosts of an emulated cluster on one 2-CPU machine: 2 cores, not 4 x 2.
struct CoreCount {
  bool known = false;        // every rank recorded its CPUs (else the rest is empty)
  bool by_host = false;      // no rank recorded its machine: each host counted as one
  int machines = 0;          // machines the ranks ran on
  int hosts = 0;             // distinct host names
  double cores = 0;          // summed over the machines
  double cpus_per_rank = 0;  // the fewest a rank had: min over machines of its cores / its ranks
};
CoreCount count_cores(const std::vector<RankInfo>& ranks, int threads);

// What shared_unbound means for a run's times, after its text (the replay and its report say it).
inline constexpr const char* kSharedUnboundNote =
    "which ranks share a core is the scheduler's pick each run, and the "
    "communication times move with it (tp 2 x pp 2 on 2 CPUs: 1.00 or 1.87 of the recorded); bind the "
    "recording and the replay alike (mpirun --map-by core --bind-to core:overload-allowed)";

}  // namespace commscope::profiler
