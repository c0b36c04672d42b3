/* Communicators as MPI programs use them, for libcommscope-mpiprof.so's tests
 * (profiler.mpiprof.comms.*; tests/check_mpiprof_comms.cpp checks the profile and its replay).
 * A plain MPI program (no commscope headers or libraries).
 *
 *   test_mpiprof_comms MODE ITERS
 *
 * Each of ITERS iterations starts with MPI_Pcontrol(1).
 *   halves  (4 ranks) MPI_Comm_split into halves {0,1}, {2,3} and an intercommunicator between
 *           them; per iteration an MPI_Iallreduce of 1 KiB on the half, an MPI_Ibarrier on
 *           MPI_COMM_WORLD, an MPI_Allreduce of 64 B and an MPI_Ibarrier on the
 *           intercommunicator (each nonblocking call completed by MPI_Wait at once).
 *   dups    (2 ranks) two MPI_Comm_dup of MPI_COMM_WORLD and an MPI_Comm_split with one colour:
 *           three communicators of the same members, used in turn: an MPI_Allreduce of 16 B on
 *           the first, an MPI_Allreduce of 4 KiB on the second that rank 0 enters LATE_MS before
 *           rank 1 (rank 1 sleeps first), an MPI_Barrier on the third.
 *   pairs   (4 ranks, even) pairs 0-1, 2-3, ...: an MPI_Sendrecv of 1024 + rank bytes with the
 *           partner, an MPI_Sendrecv_replace of 1 KiB, and an MPI_Sendrecv from the even rank to
 *           the odd one only (the other peer MPI_PROC_NULL, as at a halo's edge) of 64 B.
 *   threads (2 ranks, MPI_THREAD_MULTIPLE) per iteration a fresh communicator (MPI_Comm_idup of
 *           MPI_COMM_WORLD: the library meets it first at a call), on which two threads of each
 *           rank make their first calls at once (rank 0 sends 4 B from each, rank 1 receives),
 *           then an MPI_Barrier on it from the main thread, and MPI_Comm_free. Prints
 *           "test_mpiprof_comms: no MPI_THREAD_MULTIPLE" and exits 0 without it.
 */
#include <mpi.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

enum { kLateMs = 100 };

static int g_rank, g_size;

static void fail(const char* what) {
  fprintf(stderr, "test_mpiprof_comms: rank %d: %s\n", g_rank, what);
  MPI_Abort(MPI_COMM_WORLD, 1);
}

static void sleep_ms(int ms) {
  struct timespec t = {ms / 1000, (long)(ms % 1000) * 1000000L};
  while (nanosleep(&t, &t) != 0) {
  }
}

static void halves(int iters) {
  if (g_size != 4) fail("halves runs on 4 ranks");
  MPI_Comm half, inter;
  MPI_Comm_split(MPI_COMM_WORLD, g_rank / 2, g_rank, &half);
  MPI_Intercomm_create(half, 0, MPI_COMM_WORLD, g_rank < 2 ? 2 : 0, 7, &inter);
  float a[256], b[256];
  for (int i = 0; i < 256; ++i) a[i] = (float)g_rank;
  for (int it = 0; it < iters; ++it) {
    MPI_Pcontrol(1);
    MPI_Request q;
    MPI_Iallreduce(a, b, 256, MPI_FLOAT, MPI_SUM, half, &q);
    MPI_Wait(&q, MPI_STATUS_IGNORE);
    if (b[0] != (float)(g_rank < 2 ? 1 : 5)) fail("the half's allreduce summed other ranks");
    MPI_Ibarrier(MPI_COMM_WORLD, &q);
    MPI_Wait(&q, MPI_STATUS_IGNORE);
    MPI_Allreduce(a, b, 16, MPI_FLOAT, MPI_SUM, inter);
    MPI_Ibarrier(inter, &q);
    MPI_Wait(&q, MPI_STATUS_IGNORE);
  }
  MPI_Comm_free(&inter);
  MPI_Comm_free(&half);
}

static void dups(int iters) {
  MPI_Comm first, second, third;
  MPI_Comm_dup(MPI_COMM_WORLD, &first);
  MPI_Comm_dup(MPI_COMM_WORLD, &second);
  MPI_Comm_split(MPI_COMM_WORLD, 0, g_rank, &third);
  int x[4] = {1, 2, 3, 4}, y[4];
  float a[1024], b[1024];
  memset(a, 0, sizeof a);
  for (int it = 0; it < iters; ++it) {
    MPI_Pcontrol(1);
    MPI_Allreduce(x, y, 4, MPI_INT, MPI_SUM, first);
    if (g_rank == 1) sleep_ms(kLateMs);
    MPI_Allreduce(a, b, 1024, MPI_FLOAT, MPI_SUM, second);
    MPI_Barrier(third);
  }
  MPI_Comm_free(&third);
  MPI_Comm_free(&second);
  MPI_Comm_free(&first);
}

static void pairs(int iters) {
  if (g_size % 2 != 0) fail("pairs runs on an even number of ranks");
  const int peer = g_rank ^ 1, even = g_rank % 2 == 0;
  static char s[2048], r[2048];
  static int buf[256];
  for (int it = 0; it < iters; ++it) {
    MPI_Pcontrol(1);
    MPI_Status st;
    MPI_Sendrecv(s, 1024 + g_rank, MPI_CHAR, peer, 0, r, (int)sizeof r, MPI_CHAR, peer, 0, MPI_COMM_WORLD, &st);
    int got = 0;
    MPI_Get_count(&st, MPI_CHAR, &got);
    if (got != 1024 + peer) fail("the sendrecv got another message than its partner's");
    MPI_Sendrecv_replace(buf, 256, MPI_INT, peer, 1, peer, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Sendrecv(s, 64, MPI_CHAR, even ? peer : MPI_PROC_NULL, 2, r, 64, MPI_CHAR, even ? MPI_PROC_NULL : peer, 2,
                 MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  }
}

/* threads: two workers, released together on a fresh communicator each iteration. */
static pthread_barrier_t g_go;
static MPI_Comm g_fresh;
static int g_iters;

static void* worker(void* arg) {
  const int tag = (int)(size_t)arg;
  for (int it = 0; it < g_iters; ++it) {
    pthread_barrier_wait(&g_go); /* the main thread made g_fresh */
    int v = tag;
    if (g_rank == 0)
      MPI_Send(&v, 1, MPI_INT, 1, tag, g_fresh);
    else
      MPI_Recv(&v, 1, MPI_INT, 0, tag, g_fresh, MPI_STATUS_IGNORE);
    if (v != tag) fail("a worker's message came with another tag");
    pthread_barrier_wait(&g_go); /* both workers are done with it */
  }
  return NULL;
}

static void threads(int iters) {
  if (g_size != 2) fail("threads runs on 2 ranks");
  g_iters = iters;
  pthread_barrier_init(&g_go, NULL, 3);
  pthread_t t[2];
  for (size_t i = 0; i < 2; ++i)
    if (pthread_create(&t[i], NULL, worker, (void*)(i + 1)) != 0) fail("pthread_create");
  for (int it = 0; it < iters; ++it) {
    MPI_Pcontrol(1);
    MPI_Request q;
    MPI_Comm_idup(MPI_COMM_WORLD, &g_fresh, &q);
    MPI_Wait(&q, MPI_STATUS_IGNORE);
    pthread_barrier_wait(&g_go);
    pthread_barrier_wait(&g_go);
    MPI_Barrier(g_fresh);
    MPI_Comm_free(&g_fresh);
  }
  for (int i = 0; i < 2; ++i) pthread_join(t[i], NULL);
  pthread_barrier_destroy(&g_go);
}

int main(int argc, char** argv) {
  const char* mode = argc == 3 ? argv[1] : "";
  const int iters = argc == 3 ? atoi(argv[2]) : 0;
  if (iters < 1 || (strcmp(mode, "halves") != 0 && strcmp(mode, "dups") != 0 && strcmp(mode, "pairs") != 0 &&
                    strcmp(mode, "threads") != 0)) {
    fprintf(stderr, "usage: test_mpiprof_comms halves|dups|pairs|threads ITERS\n");
    return 2;
  }
  int provided = MPI_THREAD_SINGLE;
  if (strcmp(mode, "threads") == 0)
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
  else
    MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
  MPI_Comm_size(MPI_COMM_WORLD, &g_size);
  if (strcmp(mode, "halves") == 0) halves(iters);
  if (strcmp(mode, "dups") == 0) dups(iters);
  if (strcmp(mode, "pairs") == 0) pairs(iters);
  if (strcmp(mode, "threads") == 0) {
    if (provided < MPI_THREAD_MULTIPLE) {
      if (g_rank == 0) printf("test_mpiprof_comms: no MPI_THREAD_MULTIPLE\n");
    } else {
      threads(iters);
    }
  }
  if (g_rank == 0) printf("test_mpiprof_comms: %s, %d iterations, %d ranks: done\n", mode, iters, g_size);
  MPI_Finalize();
  return 0;
}
