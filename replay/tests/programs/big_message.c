/* A plain MPI program of 2 ranks that moves 2 GiB + 1 element at once, for the replay's test of
 * messages past MPI's int count (replay/tests/CMakeLists.txt): an MPI_Sendrecv between the two
 * ranks and an MPI_Send / MPI_Recv from rank 0 to rank 1, each of 2^29 + 1 floats (2 GiB + 4 B;
 * the count itself fits an int, the bytes do not). About 2 GiB of memory a rank: the send
 * buffers are calloc'd and only read (the kernel's zero page), the receive buffers are written. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (size != 2) {
    if (rank == 0) fprintf(stderr, "usage: mpirun -np 2 replay_big_message\n");
    MPI_Finalize();
    return 2;
  }
  const int count = (1 << 29) + 1;
  float* out = calloc((size_t)count, sizeof(float));
  float* in = malloc((size_t)count * sizeof(float));
  if (out == NULL || in == NULL) {
    fprintf(stderr, "replay_big_message: rank %d: cannot allocate 2 x 2 GiB\n", rank);
    MPI_Abort(MPI_COMM_WORLD, 3);
  }
  const int other = 1 - rank;
  MPI_Sendrecv(out, count, MPI_FLOAT, other, 0, in, count, MPI_FLOAT, other, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  if (rank == 0) MPI_Send(out, count, MPI_FLOAT, 1, 1, MPI_COMM_WORLD);
  if (rank == 1) MPI_Recv(in, count, MPI_FLOAT, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  if (rank == 0) printf("replay_big_message: sendrecv and send of %d floats (%lld B)\n", count, 4LL * count);
  free(out);
  free(in);
  MPI_Finalize();
  return 0;
}
