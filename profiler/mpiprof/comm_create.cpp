// libcommscope-mpiprof.so's communicator creation wrappers: each communicator the program
// creates takes its label at once, the next number of its members in creation order
// (communicators.hpp), so that two communicators with the same members (two MPI_Comm_dup of one)
// are two. Creation is collective over the parent and moves no data: it is not recorded as an
// event, and its time stays in the compute around it.
#include <mpi.h>

#include "communicators.hpp"
#include "record.hpp"

namespace {

// After a creation call: the new communicator's label, unless the library's own session made it.
int made(int rc, const MPI_Comm* comm) {
  if (rc == MPI_SUCCESS && commscope::mpiprof::recording_program_call()) commscope::mpiprof::created(*comm);
  return rc;
}

}  // namespace

extern "C" {

int MPI_Comm_dup(MPI_Comm comm, MPI_Comm* newcomm) {
  return made(PMPI_Comm_dup(comm, newcomm), newcomm);
}

int MPI_Comm_dup_with_info(MPI_Comm comm, MPI_Info info, MPI_Comm* newcomm) {
  return made(PMPI_Comm_dup_with_info(comm, info, newcomm), newcomm);
}

int MPI_Comm_split(MPI_Comm comm, int color, int key, MPI_Comm* newcomm) {
  return made(PMPI_Comm_split(comm, color, key, newcomm), newcomm);
}

int MPI_Comm_split_type(MPI_Comm comm, int split_type, int key, MPI_Info info, MPI_Comm* newcomm) {
  return made(PMPI_Comm_split_type(comm, split_type, key, info, newcomm), newcomm);
}

int MPI_Comm_create(MPI_Comm comm, MPI_Group group, MPI_Comm* newcomm) {
  return made(PMPI_Comm_create(comm, group, newcomm), newcomm);
}

int MPI_Comm_create_group(MPI_Comm comm, MPI_Group group, int tag, MPI_Comm* newcomm) {
  return made(PMPI_Comm_create_group(comm, group, tag, newcomm), newcomm);
}

int MPI_Cart_create(MPI_Comm old_comm, int ndims, const int dims[], const int periods[], int reorder,
                    MPI_Comm* comm_cart) {
  return made(PMPI_Cart_create(old_comm, ndims, dims, periods, reorder, comm_cart), comm_cart);
}

int MPI_Cart_sub(MPI_Comm comm, const int remain_dims[], MPI_Comm* new_comm) {
  return made(PMPI_Cart_sub(comm, remain_dims, new_comm), new_comm);
}

int MPI_Graph_create(MPI_Comm comm_old, int nnodes, const int index[], const int edges[], int reorder,
                     MPI_Comm* comm_graph) {
  return made(PMPI_Graph_create(comm_old, nnodes, index, edges, reorder, comm_graph), comm_graph);
}

int MPI_Dist_graph_create(MPI_Comm comm_old, int n, const int nodes[], const int degrees[], const int targets[],
                          const int weights[], MPI_Info info, int reorder, MPI_Comm* newcomm) {
  return made(PMPI_Dist_graph_create(comm_old, n, nodes, degrees, targets, weights, info, reorder, newcomm), newcomm);
}

int MPI_Dist_graph_create_adjacent(MPI_Comm comm_old, int indegree, const int sources[], const int sourceweights[],
                                   int outdegree, const int destinations[], const int destweights[], MPI_Info info,
                                   int reorder, MPI_Comm* comm_dist_graph) {
  return made(PMPI_Dist_graph_create_adjacent(comm_old, indegree, sources, sourceweights, outdegree, destinations,
                                              destweights, info, reorder, comm_dist_graph),
              comm_dist_graph);
}

int MPI_Intercomm_create(MPI_Comm local_comm, int local_leader, MPI_Comm bridge_comm, int remote_leader, int tag,
                         MPI_Comm* newintercomm) {
  return made(PMPI_Intercomm_create(local_comm, local_leader, bridge_comm, remote_leader, tag, newintercomm),
              newintercomm);
}

int MPI_Intercomm_merge(MPI_Comm intercomm, int high, MPI_Comm* newintracomm) {
  return made(PMPI_Intercomm_merge(intercomm, high, newintracomm), newintracomm);
}

}  // extern "C"
