// What libcommscope-mpiprof.so records of a communicator other than MPI_COMM_WORLD: its members'
// label (communicator_label("mpi", their world ranks): "mpi[0,2]"), so that a replay can rebuild
// it and the session can number its collectives across its members, and the count of its
// collectives so far; and the labels of messages to and from each member. Kept in an MPI attribute
// on the communicator (freed with it).
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

// The label of a message between this rank and `peer` (a rank of `comm`, MPI_COMM_WORLD
// included), from link_label("mpi", from, to) on world ranks: "mpi[0>2]" for a send from world
// rank 0 to 2. 0 for MPI_PROC_NULL, MPI_ANY_SOURCE, an intercommunicator or a bad rank.
std::uint32_t link_to(MPI_Comm comm, int peer);    // this rank sends to peer
std::uint32_t link_from(MPI_Comm comm, int peer);  // this rank receives from peer

}  // namespace commscope::mpiprof
