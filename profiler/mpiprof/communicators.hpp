// What libcommscope-mpiprof.so records of a communicator other than MPI_COMM_WORLD: its members'
// label (communicator_label("mpi", their world ranks): "mpi[0,2]"), so that a replay can rebuild
// it and the session can number its collectives across its members, and the count of its
// collectives so far. Kept in an MPI attribute on the communicator (freed with it).
#pragma once

#include <mpi.h>

#include <cstdint>

namespace commscope::mpiprof {

struct CollectiveInstance {
  std::uint32_t label = 0;  // the profiler's string id of the label; 0: not labelled (an intercommunicator)
  std::int64_t seq = -1;    // this rank's count of the communicator's collectives before this one; -1: none
};

// The next collective instance on `comm` (an intracommunicator other than MPI_COMM_WORLD, and
// not MPI_COMM_NULL). Called inside the library's wrappers: its own MPI calls go to PMPI.
CollectiveInstance next_collective(MPI_Comm comm);

}  // namespace commscope::mpiprof
