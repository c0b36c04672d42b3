#include "run/run_machine.hpp"

#include "commscope/collectives/mpi_transport.hpp"
#include "commscope/common/timing.hpp"

namespace commscope::bench {

RunMachine::RunMachine(const Options& o, MPI_Comm comm)
    : device_(o.device), timeout_s_(o.timeout_s), reprobe_after_s_(o.reprobe_after_s) {
  std::vector<MachineEntry> entries;
  std::vector<std::string> origins;
  std::string not_taken;
  if (!o.doctor_file.empty()) entries = machine::doctor_link_entries(o.doctor_file, o.device == "cuda", &not_taken);
  origins.assign(entries.size(), "--doctor " + o.doctor_file);
  entries.insert(entries.end(), o.machine_entries.begin(), o.machine_entries.end());
  origins.insert(origins.end(), o.machine_origins.begin(), o.machine_origins.end());
  given_ = machine::GivenFigures{entries, !o.out.empty() || !o.json_out.empty()};
  model_ = machine::detect_machine(comm, o.device, o.timeout_s, given_);
  probed_at_s_ = timing::now_s();
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  if (rank == 0) warnings_ = apply_entries(model_, entries, origins);
  if (rank == 0 && !not_taken.empty()) warnings_.push_back("--doctor " + not_taken);
  load_.start();  // what else the nodes run, from the end of the probes to the end of the run
}

void RunMachine::finish(MPI_Comm comm) {
  load_.finish(comm, model_);
  int again = reprobe_after_s_ >= 0 && timing::now_s() - probed_at_s_ > reprobe_after_s_ ? 1 : 0;
  COMMSCOPE_MPI_CHECK(MPI_Bcast(&again, 1, MPI_INT, 0, comm));
  if (again) machine::measure_again(comm, device_, timeout_s_, given_, model_);
}

}  // namespace commscope::bench
