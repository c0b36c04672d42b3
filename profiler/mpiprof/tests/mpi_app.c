/* A plain MPI program that knows nothing of commscope, for the PMPI library's tests: ITERS
 * iterations, each MPI_Pcontrol(1), about COMPUTE_MS of host compute, an allreduce of 1 MiB on
 * MPI_COMM_WORLD (rank 1 arrives LATE_MS late in every iteration), a ring sendrecv of 64 KiB,
 * an allreduce on a split communicator and a barrier; then nonblocking calls: a ring of
 * MPI_Irecv + MPI_Isend of 16 KiB completed by MPI_Waitall, an MPI_Iallreduce of 4 KiB on world
 * tested once (MPI_Test) and completed by MPI_Wait, an MPI_Ibcast of 1 KiB from rank 0 completed
 * by MPI_Waitsome, and an MPI_Ibarrier completed by MPI_Wait. Prints what it did, for the checks.
 *
 *   test_mpiprof_app [ITERS [READY_FILE]]
 * ITERS 0: iterate until killed (at most 60 s, then finish normally); rank 0 creates READY_FILE
 * (when given) after 3 iterations, so that a test knows when to send its signal. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "busy.h"

int main(int argc, char** argv) {
  const int iters = argc > 1 ? atoi(argv[1]) : 4;
  const char* ready = argc > 2 ? argv[2] : NULL;
  const double compute_ms = 4, late_ms = 40;
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  MPI_Comm half;
  MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &half);
  const int n = 1 << 18; /* floats: 1 MiB */
  float* a = malloc(sizeof(float) * n);
  float* b = malloc(sizeof(float) * n);
  for (int i = 0; i < n; ++i) a[i] = (float)rank;
  char sbuf[65536], rbuf[65536];
  int bcast[256] = {0};
  const double until = now() + 60;
  for (int it = 0; iters > 0 ? it < iters : now() < until; ++it) {
    MPI_Pcontrol(1);
    busy(compute_ms);
    if (rank == 1) busy(late_ms);
    MPI_Allreduce(a, b, n, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
    MPI_Sendrecv(sbuf, sizeof sbuf, MPI_CHAR, (rank + 1) % size, 0, rbuf, sizeof rbuf, MPI_CHAR,
                 (rank + size - 1) % size, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Allreduce(a, b, 1024, MPI_FLOAT, MPI_SUM, half);
    MPI_Barrier(MPI_COMM_WORLD);

    MPI_Request ring[2], one;
    MPI_Irecv(rbuf, 16384, MPI_CHAR, (rank + size - 1) % size, 1, MPI_COMM_WORLD, &ring[0]);
    MPI_Isend(sbuf, 16384, MPI_CHAR, (rank + 1) % size, 1, MPI_COMM_WORLD, &ring[1]);
    MPI_Waitall(2, ring, MPI_STATUSES_IGNORE);
    int done = 0;
    MPI_Iallreduce(a, b, 1024, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD, &one);
    MPI_Test(&one, &done, MPI_STATUS_IGNORE);
    MPI_Wait(&one, MPI_STATUS_IGNORE); /* a no-op when the test completed it */
    int outcount = 0, which = 0;
    MPI_Ibcast(bcast, 256, MPI_INT, 0, MPI_COMM_WORLD, &one);
    MPI_Waitsome(1, &one, &outcount, &which, MPI_STATUSES_IGNORE);
    MPI_Ibarrier(MPI_COMM_WORLD, &one);
    MPI_Wait(&one, MPI_STATUS_IGNORE);

    if (it == 2 && rank == 0 && ready != NULL) {
      FILE* f = fopen(ready, "w");
      if (f != NULL) fclose(f);
    }
  }
  if (rank == 0)
    printf(
        "mpi_app: %d ranks, %d iterations: compute %.0f ms (+%.0f ms on rank 1), allreduce 1 MiB, "
        "sendrecv 64 KiB, allreduce 4 KiB on halves, barrier, isend/irecv 16 KiB + waitall, "
        "iallreduce 4 KiB + test + wait, ibcast 1 KiB + waitsome, ibarrier + wait; sum %.0f\n",
        size, iters, compute_ms, late_ms, (double)b[0]);
  free(a);
  free(b);
  MPI_Comm_free(&half);
  MPI_Finalize();
  return 0;
}
