/* Hangs with known answers, for the flight recorder (docs/hang.md): a plain MPI program that
 * knows nothing of commscope, run under libcommscope-mpiprof.so with a short watchdog.
 *   mpi_hang MODE   (4 ranks at least for "split")
 *     healthy:  5 allreduces and a barrier on MPI_COMM_WORLD: no hang, no record
 *     compute:  rank 1 computes (outside MPI) instead of world allreduce #3
 *     skip:     on the row communicator of a 2 x 2 grid ("split"), rank 3 skips allreduce #2 and
 *               waits in a receive from rank 2 on MPI_COMM_WORLD, which never comes
 *     desync:   rank 1 calls MPI_Bcast where the others call MPI_Allreduce (world #3)
 *     recv:     ranks 0 and 1 each receive from the other first
 *     nowait:   world collective #3 is MPI_Ibarrier; rank 1 posts it, never waits on it and computes
 *               (outside MPI), the others wait on it in MPI_Wait: at 3 ranks Open MPI's
 *               dissemination barrier needs rank 1's second round, sent only from inside an MPI
 *               call, so rank 0 waits for ever (rank 2 completes it and waits in allreduce #4)
 *     stopped:  rank 1 stops itself (SIGSTOP) before world allreduce #3: it writes no record, and
 *               the others' records name its host
 *     count:    rank 1's world allreduce #3 has 4096 doubles where the others' has 1: the rank that
 *               receives its part fails (MPI_ERR_TRUNCATE, fatal), its record says so, and the
 *               launcher's SIGTERM has the others write theirs (the desync)
 * A stuck rank stays stuck until the test kills the job (the watchdog writes the records). */
#include <mpi.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static void compute_forever(void) {
  volatile double x = 0;
  for (;;) x += 1e-9; /* no MPI call: the rank is computing */
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const char* mode = argc > 1 ? argv[1] : "healthy";
  double v = rank, sum = 0;
  static double big[4096], big_sum[4096]; /* "count": rank 1's allreduce of 4096 where the others' is of 1 */
  if (strcmp(mode, "skip") == 0) {
    MPI_Comm row;
    MPI_Comm_split(MPI_COMM_WORLD, rank / 2, rank, &row);
    for (int i = 0; i < 4; ++i) {
      if (rank == 3 && i == 2) {
        MPI_Recv(&sum, 1, MPI_DOUBLE, 2, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        break;
      }
      MPI_Allreduce(&v, &sum, 1, MPI_DOUBLE, MPI_SUM, row);
    }
  } else if (strcmp(mode, "recv") == 0) {
    if (rank < 2) MPI_Recv(&sum, 1, MPI_DOUBLE, 1 - rank, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Barrier(MPI_COMM_WORLD);
  } else {
    for (int i = 0; i < 5; ++i) {
      if (i == 3 && rank == 1 && strcmp(mode, "compute") == 0) compute_forever();
      if (i == 3 && rank == 1 && strcmp(mode, "stopped") == 0) raise(SIGSTOP);
      if (i == 3 && strcmp(mode, "nowait") == 0) {
        MPI_Request barrier;
        MPI_Ibarrier(MPI_COMM_WORLD, &barrier);
        if (rank == 1) compute_forever();
        MPI_Wait(&barrier, MPI_STATUS_IGNORE);
      } else if (i == 3 && rank == 1 && strcmp(mode, "desync") == 0)
        MPI_Bcast(&v, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
      else if (i == 3 && rank == 1 && strcmp(mode, "count") == 0)
        MPI_Allreduce(big, big_sum, 4096, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
      else
        MPI_Allreduce(&v, &sum, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    }
    MPI_Barrier(MPI_COMM_WORLD);
  }
  if (rank == 0) printf("mpi_hang %s: done\n", mode);
  MPI_Finalize();
  return 0;
}
