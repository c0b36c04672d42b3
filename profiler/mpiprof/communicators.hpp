// What libcommscope-mpiprof.so records of a communicator other than MPI_COMM_WORLD: its label,
// by which a replay rebuilds it and the session matches its collectives across its members, and
// the count of its collectives so far; and the labels of messages to and from each member. Kept
// in an MPI attribute on the communicator (freed with it).
//
// The label is its members' world ranks and which communicator of those members it is: the k-th
// created with them, counted in creation order on each member ("mpi[0,2]", the second
// "mpi[0,2]#1"; vocabulary.hpp's communicator_label), so two duplicates of one communicator are two
// communicators. Creation is collective over the parent, so every member counts alike: the
// library takes the number when the program creates the communicator (comm_create.cpp). One it
// did not see created (MPI_Comm_idup's, whose handle is not usable before its wait; a predefined
// one; MPI_Comm_spawn's, ...) takes the next number at its first recorded call, which is alike
// where the members first use such communicators in the same order. An intercommunicator is
// labelled by both groups, "mpi[0,1|2,3]" (intercommunicator_label).
#pragma once

#include <mpi.h>

#include <cstdint>

namespace commscope::mpiprof {

struct CollectiveInstance {
  std::uint32_t label = 0;  // the profiler's string id of the label; 0: not labelled
  std::int64_t seq = -1;    // this rank's count of the communicator's collectives before this one; -1: none
  int ring = -1;            // its ring in the flight recorder (flight.hpp); -1: none
};

// The next collective instance on `comm` (an intra- or intercommunicator other than
// MPI_COMM_WORLD, and not MPI_COMM_NULL), blocking or nonblocking: MPI orders both alike on every
// member. Called inside the library's wrappers: its own MPI calls go to PMPI.
CollectiveInstance next_collective(MPI_Comm comm);

// The label of a message between this rank and `peer` (a rank of `comm`, MPI_COMM_WORLD
// included; of an intercommunicator's remote group), from link_label("mpi", from, to) on world
// ranks: "mpi[0>2]" for a send from world rank 0 to 2. 0 for MPI_PROC_NULL, MPI_ANY_SOURCE or a
// bad rank.
std::uint32_t link_to(MPI_Comm comm, int peer);    // this rank sends to peer
std::uint32_t link_from(MPI_Comm comm, int peer);  // this rank receives from peer

// The flight recorder's ring of `comm` (flight.hpp): 0 for MPI_COMM_WORLD and for calls on no
// communicator (MPI_COMM_NULL: waits, tests), -1 where it has none.
int flight_ring(MPI_Comm comm);

// A communicator the program has just created (MPI_Comm_dup, MPI_Comm_split, ...): its label
// taken now, in creation order. MPI_COMM_NULL (not a member) is left alone.
void created(MPI_Comm comm);

}  // namespace commscope::mpiprof
