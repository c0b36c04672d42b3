/* Known answers for the in-training gap (commscope-report profile --bench): a plain MPI program
 * that knows nothing of commscope. ITERS iterations, each MPI_Pcontrol(1), COMPUTE_MS of host
 * compute on every rank, then an allreduce of BYTES (floats) on MPI_COMM_WORLD; one allreduce
 * before the first iteration (the connections are made then).
 *   late: rank 1 computes LATE_MS (20) more before every allreduce: the others wait 20 ms a call
 *         for it, and the transfer is the allreduce's alone;
 *   none: every rank computes the same: the step adds nothing to the allreduce;
 *   stream: as none, and every rank runs a thread copying 64 MiB buffers during its allreduces
 *           (started just before each call, stopped after): the transfer is slower than alone,
 *           the contention of the rank's own compute.
 * GAP_COMPUTE_MS sets the compute a step (5 ms); GAP_INIT_MS, compute on every rank before the
 * first allreduce (0 ms), as a program's start-up that runs once. GAP_ARRIVALS=PATH: each rank
 * writes PATH.RANK, the time it reached each allreduce (CLOCK_MONOTONIC ns, a line a call, the
 * one before the steps first): what the ranks did, timed without the profiler, for the test to
 * hold the report against (a machine that stops rank 1 for 24 ms in a step makes it 44 ms late
 * there, and a right report says so).
 *
 *   test_mpiprof_gap MODE [ITERS [BYTES]] */
#include <mpi.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "busy.h"

/* The streaming thread: copies between two buffers while `streaming` is set, until `quit`. */
static volatile int streaming = 0, quit = 0;
static void* stream(void* arg) {
  (void)arg;
  const size_t bytes = 64u << 20;
  char* x = malloc(bytes);
  char* y = malloc(bytes);
  memset(x, 1, bytes);
  memset(y, 2, bytes);
  while (!quit) {
    if (!streaming) {
      const struct timespec pause = {0, 50000}; /* 50 us: idle between the calls */
      nanosleep(&pause, NULL);
      continue;
    }
    for (size_t off = 0; off < bytes && streaming; off += 1u << 20) memcpy(y + off, x + off, 1u << 20);
  }
  free(x);
  free(y);
  return NULL;
}

int main(int argc, char** argv) {
  if (argc < 2 || (strcmp(argv[1], "late") != 0 && strcmp(argv[1], "none") != 0 && strcmp(argv[1], "stream") != 0)) {
    fprintf(stderr, "usage: test_mpiprof_gap late|none|stream [ITERS [BYTES]]\n");
    return 2;
  }
  const int late = strcmp(argv[1], "late") == 0, streams = strcmp(argv[1], "stream") == 0;
  const int iters = argc > 2 ? atoi(argv[2]) : 20;
  const long bytes = argc > 3 ? atol(argv[3]) : 1 << 20;
  const double compute_ms = getenv("GAP_COMPUTE_MS") ? atof(getenv("GAP_COMPUTE_MS")) : 5, late_ms = 20;
  int provided = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided);
  pthread_t streamer;
  if (streams) pthread_create(&streamer, NULL, stream, NULL);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const int n = (int)(bytes / (long)sizeof(float));
  float* a = malloc(sizeof(float) * (size_t)n);
  float* b = malloc(sizeof(float) * (size_t)n);
  for (int i = 0; i < n; ++i) a[i] = (float)rank;
  if (getenv("GAP_INIT_MS")) busy(atof(getenv("GAP_INIT_MS")));
  double* arrived = calloc((size_t)(iters > 0 ? iters : 0) + 1, sizeof(double));
  /* Connections are made at the first call: one before the steps, as a benchmark's warm-up. */
  arrived[0] = now();
  MPI_Allreduce(a, b, n, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
  for (int it = 0; it < iters; ++it) {
    MPI_Pcontrol(1);
    /* One deadline: a stop in the first part of a split compute would add to the second. */
    busy(compute_ms + (late && rank == 1 ? late_ms : 0));
    streaming = streams;
    arrived[it + 1] = now();
    MPI_Allreduce(a, b, n, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
    streaming = 0;
  }
  const char* arrivals = getenv("GAP_ARRIVALS");
  int wrote = 1;
  if (arrivals && *arrivals) {
    char path[4096];
    snprintf(path, sizeof path, "%s.%d", arrivals, rank);
    FILE* out = fopen(path, "w");
    for (int it = 0; out && it <= iters; ++it) fprintf(out, "%.0f\n", arrived[it] * 1e9);
    wrote = out && fclose(out) == 0;
    if (!wrote) fprintf(stderr, "test_mpiprof_gap: cannot write %s\n", path);
  }
  free(arrived);
  if (streams) {
    quit = 1;
    pthread_join(streamer, NULL);
  }
  const int ok = n == 0 || b[0] == (float)(size * (size - 1) / 2);
  if (rank == 0)
    printf("mpi_gap %s: %d ranks, %d iterations of %.0f ms compute (+%.0f ms on rank 1) and an allreduce of %ld B%s: %s\n",
           argv[1], size, iters, compute_ms, late ? late_ms : 0.0, bytes, streams ? " beside a streaming thread" : "",
           ok ? "sum ok" : "WRONG SUM");
  free(a);
  free(b);
  MPI_Finalize();
  return ok && wrote ? 0 : 1;
}
