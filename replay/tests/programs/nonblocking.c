/* A plain MPI program of 2 ranks whose nonblocking calls a blocking replay deadlocks, for the
 * replay's tests (replay/tests/CMakeLists.txt). ITERS iterations, each MPI_Pcontrol(1), then:
 *
 *   ibcast:    rank 0: MPI_Ibcast (4 MiB, root 0), MPI_Send (64 B to 1), MPI_Wait;
 *              rank 1: MPI_Recv (64 B from 0), MPI_Ibcast, MPI_Wait.
 *              Replayed as a blocking broadcast at its post, rank 0 waits for rank 1 in it and
 *              rank 1 for rank 0's message.
 *   preposted: rank 0 posts an MPI_Irecv (2 MiB) in one iteration for the message rank 1 sends
 *              in the next, and completes it there (MPI_Wait); in each iteration, after that
 *              post, it sends rank 1 64 B (MPI_Isend + MPI_Waitall), and both meet in an
 *              MPI_Barrier. Completed at the end of its posting iteration (or by that iteration's
 *              MPI_Waitall), the receive waits for a message sent after the next one began.
 *
 *   replay_nonblocking ibcast|preposted [ITERS] */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { kBig = 1 << 20 }; /* floats: 4 MiB, past any eager limit */

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const char* mode = argc > 1 ? argv[1] : "";
  const int iters = argc > 2 ? atoi(argv[2]) : 3;
  const int ibcast = strcmp(mode, "ibcast") == 0, preposted = strcmp(mode, "preposted") == 0;
  if (size != 2 || (!ibcast && !preposted) || iters < 2) {
    if (rank == 0) fprintf(stderr, "usage: mpirun -np 2 replay_nonblocking ibcast|preposted [ITERS >= 2]\n");
    MPI_Finalize();
    return 2;
  }
  float* big = calloc(kBig, sizeof(float));
  float* early = calloc(kBig, sizeof(float));
  char small[64] = {0};
  MPI_Request pre[2] = {MPI_REQUEST_NULL, MPI_REQUEST_NULL}; /* by iteration, alternately */
  for (int it = 0; it < iters; ++it) {
    MPI_Pcontrol(1);
    if (ibcast) {
      MPI_Request r;
      if (rank == 0) {
        MPI_Ibcast(big, kBig, MPI_FLOAT, 0, MPI_COMM_WORLD, &r);
        MPI_Send(small, sizeof small, MPI_CHAR, 1, 1, MPI_COMM_WORLD);
      } else {
        MPI_Recv(small, sizeof small, MPI_CHAR, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Ibcast(big, kBig, MPI_FLOAT, 0, MPI_COMM_WORLD, &r);
      }
      MPI_Wait(&r, MPI_STATUS_IGNORE);
    } else if (rank == 0) {
      if (it + 1 < iters)
        MPI_Irecv(early + (it % 2) * (kBig / 2), kBig / 2, MPI_FLOAT, 1, 2, MPI_COMM_WORLD, &pre[it % 2]);
      MPI_Request s;
      MPI_Isend(small, sizeof small, MPI_CHAR, 1, 3, MPI_COMM_WORLD, &s);
      MPI_Waitall(1, &s, MPI_STATUSES_IGNORE);
      if (it > 0) MPI_Wait(&pre[(it - 1) % 2], MPI_STATUS_IGNORE); /* posted in the iteration before */
    } else {
      MPI_Recv(small, sizeof small, MPI_CHAR, 0, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      if (it > 0) MPI_Send(early, kBig / 2, MPI_FLOAT, 0, 2, MPI_COMM_WORLD);
    }
    MPI_Barrier(MPI_COMM_WORLD);
  }
  if (rank == 0) printf("replay_nonblocking %s: %d iterations\n", mode, iters);
  free(big);
  free(early);
  MPI_Finalize();
  return 0;
}
