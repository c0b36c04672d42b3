/* The test programs' compute: the time now, and spinning on the host for a given time (no MPI
 * call, no memory traffic: what the PMPI library records as compute). */
#ifndef COMMSCOPE_MPIPROF_TESTS_BUSY_H
#define COMMSCOPE_MPIPROF_TESTS_BUSY_H

#include <time.h>

static inline double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec + t.tv_nsec * 1e-9;
}

static inline void busy(double ms) {
  const double end = now() + ms / 1e3;
  volatile double x = 0;
  while (now() < end) x += 1.0;
}

#endif
