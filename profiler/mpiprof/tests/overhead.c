/* What libcommscope-mpiprof.so adds to an MPI call: ns per 8-byte MPI_Allreduce on
 * MPI_COMM_WORLD and on a duplicate of it, CALLS calls after a warm-up, ROUNDS rounds (the median
 * round printed). Run it alone and under LD_PRELOAD; the difference is the library's cost.
 *   test_mpiprof_overhead [CALLS [ROUNDS]] */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

static int cmp(const void* a, const void* b) {
  const double x = *(const double*)a, y = *(const double*)b;
  return (x > y) - (x < y);
}

static double per_call_ns(MPI_Comm comm, int calls, int rounds) {
  double v = 1, s = 0, t[64];
  for (int i = 0; i < 1000; ++i) MPI_Allreduce(&v, &s, 1, MPI_DOUBLE, MPI_SUM, comm);
  for (int r = 0; r < rounds && r < 64; ++r) {
    MPI_Barrier(comm);
    const double t0 = MPI_Wtime();
    for (int i = 0; i < calls; ++i) MPI_Allreduce(&v, &s, 1, MPI_DOUBLE, MPI_SUM, comm);
    t[r] = (MPI_Wtime() - t0) / calls * 1e9;
  }
  qsort(t, (size_t)rounds, sizeof t[0], cmp);
  return t[rounds / 2];
}

int main(int argc, char** argv) {
  const int calls = argc > 1 ? atoi(argv[1]) : 200000, rounds = argc > 2 ? atoi(argv[2]) : 7;
  MPI_Init(&argc, &argv);
  int rank;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm dup;
  MPI_Comm_dup(MPI_COMM_WORLD, &dup);
  const double world = per_call_ns(MPI_COMM_WORLD, calls, rounds), other = per_call_ns(dup, calls, rounds);
  if (rank == 0) printf("MPI_Allreduce 8 B: world %.1f ns/call, duplicate %.1f ns/call\n", world, other);
  MPI_Comm_free(&dup);
  MPI_Finalize();
  return 0;
}
