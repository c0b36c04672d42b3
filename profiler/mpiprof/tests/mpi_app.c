/* A plain MPI program that knows nothing of commscope, for the PMPI library's tests: ITERS
 * iterations, each MPI_Pcontrol(1), about COMPUTE_MS of host compute, an allreduce of 1 MiB on
 * MPI_COMM_WORLD (rank 1 arrives LATE_MS late in every iteration), a ring sendrecv of 64 KiB,
 * an allreduce on a split communicator and a barrier. Prints what it did, for the checks. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec + t.tv_nsec * 1e-9;
}

static void busy(double ms) {
  const double end = now() + ms / 1e3;
  volatile double x = 0;
  while (now() < end) x += 1.0;
}

int main(int argc, char** argv) {
  const int iters = argc > 1 ? atoi(argv[1]) : 4;
  const double compute_ms = 4, late_ms = 6;
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
  for (int it = 0; it < iters; ++it) {
    MPI_Pcontrol(1);
    busy(compute_ms);
    if (rank == 1) busy(late_ms);
    MPI_Allreduce(a, b, n, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
    MPI_Sendrecv(sbuf, sizeof sbuf, MPI_CHAR, (rank + 1) % size, 0, rbuf, sizeof rbuf, MPI_CHAR,
                 (rank + size - 1) % size, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Allreduce(a, b, 1024, MPI_FLOAT, MPI_SUM, half);
    MPI_Barrier(MPI_COMM_WORLD);
  }
  if (rank == 0)
    printf("mpi_app: %d ranks, %d iterations: compute %.0f ms (+%.0f ms on rank 1), allreduce 1 MiB, "
           "sendrecv 64 KiB, allreduce 4 KiB on halves, barrier; sum %.0f\n",
           size, iters, compute_ms, late_ms, (double)b[0]);
  free(a);
  free(b);
  MPI_Comm_free(&half);
  MPI_Finalize();
  return 0;
}
