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
  //   cpu_model          /proc/cpuinfo "model name", or uname's machine when there is none
  //   cpu_cores          std::thread::hardware_concurrency
  //   os                 uname sysname and release: "Linux 6.1.0-18-amd64"
  //   mpi_library        MPI_Get_library_version, first line, trimmed
  //   mpi_version        MPI_Get_version: "3.1"
  // only when built with CUDA (rank 0's node):
  //   cuda_runtime       "13.0"
  //   cuda_driver        "13.0", or "none" when no driver is installed
  //   nccl_version       "2.28.9"
  //   gpus               "0: NVIDIA H100 80GB HBM3; 1: ..." or "none (<reason>)"
  // and last:
  //   date               UTC ISO-8601 time of the capture: "2025-01-31T12:00:00Z"
  std::vector<std::pair<std::string, std::string>> fields;
  // Environment variables shaping communication, sorted by name: those starting with NCCL_,
  // OMPI_, UCX_, FI_ or SLURM_, and CUDA_VISIBLE_DEVICES. Values as they are on rank 0.
  std::vector<std::pair<std::string, std::string>> env_vars;

  // The value of a field, nullptr if absent.
  const std::string* find(std::string_view key) const;
};

// Collective over `comm`: every rank calls it. Host names are gathered from all ranks; rank 0
// builds the rest and broadcasts it, so the result is complete and identical on every rank.
// argv (argc entries) gives command_line. Throws commscope::TransportError when an MPI call
// fails (on every rank). Missing GPUs or CUDA drivers are not errors (see "gpus").
Environment capture_environment(MPI_Comm comm, int argc, const char* const* argv);

// nccl-tests style header: "# <tool_name> <commscope_version>", then "# key: value" for every
// field, then "# env: NAME=value" for every variable. Newlines in values are printed as "\n".
void print_environment(std::FILE* out, const Environment& env, std::string_view tool_name);

}  // namespace commscope::bench
