// The environment a measurement was taken in: versions, hosts, CPU, MPI, CUDA/NCCL and the
// environment variables that shape communication. Captured once per run (collectively), printed
// as an nccl-tests style header and stored beside the results.
#pragma once

#include <mpi.h>

#include <cstdio>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace commscope::bench {

struct Environment {
  // Ordered key/value pairs:
  //   commscope_version  the version this was built from ("0.1.0")
  //   command_line       argv joined by spaces; arguments with spaces or quotes are single-quoted
  //   nranks, nhosts     ranks in the communicator, distinct hosts among them
  //   hosts              ranks per host in rank order of first appearance: "host1:4,host2:4"
  //   cpu_model          /proc/cpuinfo "model name" and its CPUID family, model, stepping (and
  //                      the server generation when known): "AMD EPYC (Zen 5, Turin; family 26
  //                      model 2 stepping 1)"; uname's machine when there is no model name
  //   cpu_cores          std::thread::hardware_concurrency
  //   os                 uname sysname and release: "Linux 6.1.0-18-amd64"
  //   mpi_library        MPI_Get_library_version, first line, trimmed
  //   mpi_version        MPI_Get_version: "3.1"
  // only when built with CUDA (rank 0's node):
  //   cuda_runtime       "13.0"
  //   cuda_driver        "13.0", or "none" when no driver is installed
  //   nccl_version       "2.28.9"
  //   gpus               "0: NVIDIA H100 80GB HBM3; 1: ..." or "none (<reason>)"
  // only where ranks outnumber the CPUs of their machine (see oversubscription):
  //   oversubscribed     "node0: 4 ranks on 2 CPUs": their times are the scheduler's
  // and last:
  //   date               UTC ISO-8601 time of the capture: "2025-01-31T12:00:00Z"
  std::vector<std::pair<std::string, std::string>> fields;
  // Environment variables that change how communication behaves, sorted by name (see
  // is_recorded_variable). Values as they are on rank 0.
  std::vector<std::pair<std::string, std::string>> env_vars;
  // The machine model's text form (commscope/model/machine_model.hpp), set by the bench after
  // capture on rank 0 (commscope-bench's detect_machine); "" where none was made.
  std::string machine_model;

  // The value of a field, nullptr if absent.
  const std::string* find(std::string_view key) const;
};

// Whether the variable `name` goes into Environment::env_vars: the tuning variables of NCCL,
// UCX, libfabric (FI_), PSM2, MPICH, Intel MPI and HCOLL; Open MPI's MCA parameters (OMPI_MCA_*)
// except the launch internals its launcher hands every process (orte_*, ess*, pmix*, plm*, ...);
// CUDA_VISIBLE_DEVICES, CUDA_DEVICE_MAX_CONNECTIONS, OMP_NUM_THREADS; Slurm's job, step and node
// ids and its binding. Not the launcher's bookkeeping (OMPI_COMM_WORLD_*, OMPI_ARGV, PMIX_*, ...).
bool is_recorded_variable(std::string_view name);

// The cpu_model field from the text of /proc/cpuinfo (`machine`, uname's, when it has no model).
std::string describe_cpu(std::string_view cpuinfo, std::string_view machine);

// Collective over `comm`: the machines (by boot id: emulated hosts sharing one count once)
// whose ranks outnumber the CPUs they may run on together (the union of their affinity masks),
// "node0: 4 ranks on 2 CPUs; hosts h1,h2 (one machine): 6 ranks on 4 CPUs"; "" where none do.
// Every rank returns the same text. Throws commscope::TransportError when an MPI call fails.
std::string oversubscription(MPI_Comm comm);

// Collective over `comm`: every rank calls it. Host names are gathered from all ranks; rank 0
// builds the rest and broadcasts it, so the result is complete and identical on every rank.
// argv (argc entries) gives command_line. Throws commscope::TransportError when an MPI call
// fails (on every rank). Missing GPUs or CUDA drivers are not errors (see "gpus").
Environment capture_environment(MPI_Comm comm, int argc, const char* const* argv);

// nccl-tests style header: "# <tool_name> <commscope_version>", then "# key: value" for every
// field, then "# env: NAME=value" for every variable. Newlines in values are printed as "\n".
void print_environment(std::FILE* out, const Environment& env, std::string_view tool_name);

}  // namespace commscope::bench
