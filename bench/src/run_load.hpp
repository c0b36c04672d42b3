// What else ran on each node while a run ran (docs/verdicts.md, "A busy machine"): other processes'
// CPU time, from the node's busy time in /proc/stat less the CPU time of the run's own ranks on it,
// and the CPU time the ranks had, per second of the run (from the end of the machine's probes to
// the last call), and /proc/loadavg before and after. The verdicts of a busy node allow for it;
// the results header records it in the machine model (NodeModel::load).
#pragma once

#include <mpi.h>

#include <string_view>

#include "commscope/model/machine_model.hpp"

namespace commscope::bench {

// The node's busy CPU time in seconds from /proc/stat's text (its first, "cpu", line: user, nice,
// system, irq, softirq and steal; idle and iowait left out), with `ticks_per_s` clock ticks per
// second; -1 where the line cannot be read.
double busy_cpu_seconds(std::string_view proc_stat, double ticks_per_s);
// The run delay in seconds from a thread's /proc/PID/task/TID/schedstat text ("on-CPU ns, waited
// for a CPU ns, time slices"): the time it was ready to run but waited; -1 where unreadable.
double run_delay_seconds(std::string_view schedstat);
// /proc/loadavg's first figure from its text; -1 where it cannot be read.
double loadavg_1min(std::string_view proc_loadavg);

// Each node's load: (node busy CPU time - the CPU time of the run's ranks on it) / wall time, in
// CPUs, at least 0. `node_busy_s` the node's busy time over the run, `own_s` each of its ranks'.
double others_cpus(double node_busy_s, double own_s_sum, double wall_s);

class LoadMeter {
 public:
  // Every rank, as the run starts (after the machine's probes, whose repeats say how far they
  // moved): its own CPU time, and the node's busy time and load average.
  void start();
  // Collective over `comm`: every rank's figures since start() to rank 0, which sets each node of
  // `model` (by host, as MPI_Get_processor_name names it) its NodeLoad. A node whose /proc was not
  // readable keeps an unknown load.
  void finish(MPI_Comm comm, MachineModel& model) const;

 private:
  static constexpr int kFigures = 7;
  double wall0_ = 0, own0_ = 0, busy0_ = -1, loadavg0_ = -1, queued0_ = -1;
};

}  // namespace commscope::bench
