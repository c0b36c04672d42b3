// The machine a commscope-bench run is set against (docs/bench.md, "The machine model"), over the
// run: detected on every node at the start, then the doctor's pairs (--doctor; on GPUs its GPU
// pairs too) and the user's figures (--machine, --link-rate) over it; at the end the load each node
// carried, and for a run of minutes its latency and rates by size again (--reprobe-after). Complete
// on rank 0 only.
#pragma once

#include <mpi.h>

#include <string>
#include <vector>

#include "commscope/bench/options.hpp"
#include "commscope/machine/machine_detect.hpp"
#include "commscope/model/machine_model.hpp"
#include "run_load.hpp"

namespace commscope::bench {

class RunMachine {
 public:
  // Collective: the start-up probes (measured only where a file records the model: a run printing
  // its table alone skips them), then the load meter starts. A doctor file that cannot be read
  // ends every rank alike, before anything is measured.
  RunMachine(const Options& o, MPI_Comm comm);

  // Collective, after the sweep: each node's load over the run into rank 0's model, and the latency
  // and its rates by size again where the run outlasted --reprobe-after. Rank 0's clock decides for every rank:
  // the measurement is collective, and each rank's own reading could fall on either side of the
  // threshold, one rank measuring while the others had left.
  void finish(MPI_Comm comm);

  const MachineModel& model() const { return model_; }  // rank 0's; empty elsewhere
  // Entries naming no host of the run (rank 0's).
  const std::vector<std::string>& warnings() const { return warnings_; }

 private:
  std::string device_;
  double timeout_s_ = 0;
  double reprobe_after_s_ = 0;
  MachineModel model_;
  machine::GivenFigures given_;  // what the user's entries give, not measured
  double probed_at_s_ = 0;       // when the start-up probes ended
  LoadMeter load_;               // other processes' CPU time on each node
  std::vector<std::string> warnings_;
};

}  // namespace commscope::bench
