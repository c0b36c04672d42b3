// The bytes libcommscope-mpiprof.so records for each call, from the arguments the MPI standard
// makes significant for that call, rank and MPI_IN_PLACE form only (an ignored argument may be
// anything: MPI_Alltoallv(MPI_IN_PLACE, NULL, NULL, MPI_DATATYPE_NULL, ...) is valid).
//
// Collectives count their array as the bench does (nccl-tests' S): the buffer all ranks
// together reduce, gather or exchange. Gather / Scatter: the root's whole array, which a
// non-root also knows (its piece x the group's size); Gatherv / Scatterv: the root's whole
// array, a non-root's own piece (the other counts are the root's alone); Alltoall(v/w): a
// rank's send buffer, its receive buffer in place (the same size by the type-matching rule);
// Scan / Exscan: the reduced vector. Intercommunicators: a root's arrays have the remote
// group's size; MPI_PROC_NULL as root (the root's group, not the root): 0 bytes.
#pragma once

#include <mpi.h>

#include <cstdint>

namespace commscope::mpiprof {

std::int64_t bytes_of(int count, MPI_Datatype type);  // count elements of type; 0 when count <= 0
int group_size(MPI_Comm comm);                        // this rank's group
int peers(MPI_Comm comm);  // the entries of a per-rank counts array: the remote group's size on an intercommunicator
// The bytes a receive delivered (its status), not its buffer's capacity.
std::int64_t received_bytes(const MPI_Status* status, MPI_Datatype type);

std::int64_t sum_bytes(const int counts[], MPI_Datatype type, int n);
std::int64_t gather_bytes(int scount, MPI_Datatype stype, int rcount, MPI_Datatype rtype, int root, MPI_Comm comm);
std::int64_t gatherv_bytes(int scount, MPI_Datatype stype, const int rcounts[], MPI_Datatype rtype, int root,
                           MPI_Comm comm);
std::int64_t scatter_bytes(int scount, MPI_Datatype stype, int rcount, MPI_Datatype rtype, int root, MPI_Comm comm);
std::int64_t scatterv_bytes(const int scounts[], MPI_Datatype stype, int rcount, MPI_Datatype rtype, int root,
                            MPI_Comm comm);
std::int64_t alltoall_bytes(int rcount, MPI_Datatype rtype, MPI_Comm comm);
std::int64_t alltoallv_bytes(const void* send, const int scounts[], MPI_Datatype stype, const int rcounts[],
                             MPI_Datatype rtype, MPI_Comm comm);
std::int64_t alltoallw_bytes(const void* send, const int scounts[], const MPI_Datatype stypes[], const int rcounts[],
                             const MPI_Datatype rtypes[], MPI_Comm comm);

}  // namespace commscope::mpiprof
