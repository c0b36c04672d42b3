/* A plain MPI program with two communicators of the same members: two duplicates of
 * MPI_COMM_WORLD, one MPI_Allreduce (4 KiB) on each. Two calls per rank, each the first on its
 * communicator (replay/tests/CMakeLists.txt: the replay and its report count both). */
#include <mpi.h>
#include <stdio.h>

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm a, b;
  MPI_Comm_dup(MPI_COMM_WORLD, &a);
  MPI_Comm_dup(MPI_COMM_WORLD, &b);
  float x[1024] = {0}, y[1024];
  MPI_Allreduce(x, y, 1024, MPI_FLOAT, MPI_SUM, a);
  MPI_Allreduce(x, y, 1024, MPI_FLOAT, MPI_SUM, b);
  if (rank == 0) printf("replay_duplicates: an allreduce on each of 2 duplicates of MPI_COMM_WORLD\n");
  MPI_Comm_free(&a);
  MPI_Comm_free(&b);
  MPI_Finalize();
  return 0;
}
