/* What libcommscope-mpiprof.so adds to an MPI call: ns per 8-byte MPI_Allreduce on
 * MPI_COMM_WORLD and on a duplicate of it, per MPI_Test of a null request (the cheapest call
 * there is: nearly all of it is the library's), and per 8-byte MPI_Iallreduce + MPI_Wait pair on
 * world; CALLS calls after a warm-up, ROUNDS rounds (the median round printed). Run it alone and
 * under LD_PRELOAD; the difference is the library's cost.
 *   test_mpiprof_overhead [CALLS [ROUNDS]] */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

enum what { ALLREDUCE, TEST, IALLREDUCE_WAIT };

static int cmp(const void* a, const void* b) {
  const double x = *(const double*)a, y = *(const double*)b;
  return (x > y) - (x < y);
}

static void call(enum what w, MPI_Comm comm) {
  double v = 1, s = 0;
  MPI_Request req = MPI_REQUEST_NULL;
  int flag = 0;
  switch (w) {
    case ALLREDUCE:
      MPI_Allreduce(&v, &s, 1, MPI_DOUBLE, MPI_SUM, comm);
      break;
    case TEST:
      MPI_Test(&req, &flag, MPI_STATUS_IGNORE);
      break;
    case IALLREDUCE_WAIT:
      MPI_Iallreduce(&v, &s, 1, MPI_DOUBLE, MPI_SUM, comm, &req);
      MPI_Wait(&req, MPI_STATUS_IGNORE);
      break;
  }
}

static double per_call_ns(enum what w, MPI_Comm comm, int calls, int rounds) {
  double t[64];
  if (rounds > 64) rounds = 64;
  for (int i = 0; i < 1000; ++i) call(w, comm);
  for (int r = 0; r < rounds; ++r) {
    MPI_Barrier(comm);
    const double t0 = MPI_Wtime();
    for (int i = 0; i < calls; ++i) call(w, comm);
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
  const double world = per_call_ns(ALLREDUCE, MPI_COMM_WORLD, calls, rounds);
  const double other = per_call_ns(ALLREDUCE, dup, calls, rounds);
  const double test = per_call_ns(TEST, MPI_COMM_WORLD, calls, rounds);
  const double pair = per_call_ns(IALLREDUCE_WAIT, MPI_COMM_WORLD, calls, rounds);
  if (rank == 0)
    printf(
        "MPI_Allreduce 8 B: world %.1f ns/call, duplicate %.1f ns/call; MPI_Test (null request) %.1f ns/call; "
        "MPI_Iallreduce 8 B + MPI_Wait %.1f ns/pair\n",
        world, other, test, pair);
  MPI_Comm_free(&dup);
  MPI_Finalize();
  return 0;
}
