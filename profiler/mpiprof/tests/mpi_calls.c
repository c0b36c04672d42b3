/* Every MPI function libcommscope-mpiprof.so wraps, called once each, the collectives in and out
 * of place (MPI_IN_PLACE with the ignored arguments NULL or MPI_DATATYPE_NULL, as the standard
 * allows), each with byte counts known here: each call's expected event, "MPI_Function comm bytes
 * numbered", is written in call order to PREFIX.rankN.txt for test_mpiprof_calls_check. A plain
 * MPI program (no commscope headers or libraries).
 *
 *   test_mpiprof_calls PREFIX       2 ranks or more; point-to-point between ranks 0 and 1
 *
 * Bytes (docs/profiler.md): a collective's array (a Gatherv or Scatterv non-root: its own
 * piece), a send's message, a blocking receive what arrived (its status), a post what it names,
 * probes, starts, waits and tests 0. Collectives on MPI_COMM_WORLD, blocking and nonblocking, are
 * numbered; MPI_Sendrecv(_replace) is a send and a receive (what arrived). */
#include <ctype.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

enum { kCap = 8192 }; /* ints in each buffer */

static FILE* g_expect;
static int g_rank, g_size;
static int g_a[kCap], g_b[kCap];

static void expect(const char* function, const char* comm, long long bytes, int numbered) {
  fprintf(g_expect, "%s %s %lld %d\n", function, comm, bytes, numbered);
}

static void fail(const char* what) {
  fprintf(stderr, "test_mpiprof_calls: rank %d: %s\n", g_rank, what);
  MPI_Abort(MPI_COMM_WORLD, 1);
}

/* After a collective: a nonblocking one's MPI_Wait, then the expected events (MPI_Name or
 * MPI_Iname, comm or icomm). */
static void done(int nb, MPI_Request* req, const char* name, const char* comm, long long bytes) {
  if (nb) MPI_Wait(req, MPI_STATUS_IGNORE);
  char f[64], c[64];
  snprintf(f, sizeof f, nb ? "MPI_I%c%s" : "MPI_%c%s", nb ? tolower(name[0]) : name[0], name + 1);
  snprintf(c, sizeof c, "%s%s", nb ? "i" : "", comm);
  expect(f, c, bytes, 1);
  if (nb) expect("MPI_Wait", "wait", 0, 0);
}

/* counts[i] = i + base, displs packed; returns the sum of the counts. */
static long long ramp(int counts[], int displs[], int base) {
  long long sum = 0;
  for (int i = 0; i < g_size; ++i) {
    counts[i] = i + base;
    displs[i] = (int)sum;
    sum += counts[i];
  }
  return sum;
}

static void reductions(int nb) {
  const MPI_Comm w = MPI_COMM_WORLD;
  const int root = g_rank == 0;
  MPI_Request q;
  if (nb)
    MPI_Ibarrier(w, &q);
  else
    MPI_Barrier(w);
  done(nb, &q, "Barrier", "barrier", 0);
  if (nb)
    MPI_Ibcast(g_a, 10, MPI_INT, 0, w, &q);
  else
    MPI_Bcast(g_a, 10, MPI_INT, 0, w);
  done(nb, &q, "Bcast", "broadcast", 40);
  if (nb)
    MPI_Iallreduce(g_a, g_b, 11, MPI_INT, MPI_SUM, w, &q);
  else
    MPI_Allreduce(g_a, g_b, 11, MPI_INT, MPI_SUM, w);
  done(nb, &q, "Allreduce", "allreduce", 44);
  if (nb)
    MPI_Iallreduce(MPI_IN_PLACE, g_b, 12, MPI_INT, MPI_SUM, w, &q);
  else
    MPI_Allreduce(MPI_IN_PLACE, g_b, 12, MPI_INT, MPI_SUM, w);
  done(nb, &q, "Allreduce", "allreduce", 48);
  if (nb)
    MPI_Ireduce(g_a, g_b, 13, MPI_INT, MPI_SUM, 0, w, &q);
  else
    MPI_Reduce(g_a, g_b, 13, MPI_INT, MPI_SUM, 0, w);
  done(nb, &q, "Reduce", "reduce", 52);
  const void* s = root ? MPI_IN_PLACE : g_b;
  if (nb)
    MPI_Ireduce(s, g_b, 14, MPI_INT, MPI_SUM, 0, w, &q);
  else
    MPI_Reduce(s, g_b, 14, MPI_INT, MPI_SUM, 0, w);
  done(nb, &q, "Reduce", "reduce", 56);
  if (nb)
    MPI_Iscan(g_a, g_b, 15, MPI_INT, MPI_SUM, w, &q);
  else
    MPI_Scan(g_a, g_b, 15, MPI_INT, MPI_SUM, w);
  done(nb, &q, "Scan", "scan", 60);
  if (nb)
    MPI_Iscan(MPI_IN_PLACE, g_b, 16, MPI_INT, MPI_SUM, w, &q);
  else
    MPI_Scan(MPI_IN_PLACE, g_b, 16, MPI_INT, MPI_SUM, w);
  done(nb, &q, "Scan", "scan", 64);
  if (nb)
    MPI_Iexscan(g_a, g_b, 17, MPI_INT, MPI_SUM, w, &q);
  else
    MPI_Exscan(g_a, g_b, 17, MPI_INT, MPI_SUM, w);
  done(nb, &q, "Exscan", "exscan", 68);
  if (nb)
    MPI_Iexscan(MPI_IN_PLACE, g_b, 18, MPI_INT, MPI_SUM, w, &q);
  else
    MPI_Exscan(MPI_IN_PLACE, g_b, 18, MPI_INT, MPI_SUM, w);
  done(nb, &q, "Exscan", "exscan", 72);
  if (nb)
    MPI_Ireduce_scatter_block(g_a, g_b, 5, MPI_INT, MPI_SUM, w, &q);
  else
    MPI_Reduce_scatter_block(g_a, g_b, 5, MPI_INT, MPI_SUM, w);
  done(nb, &q, "Reduce_scatter_block", "reducescatter", 20LL * g_size);
  if (nb)
    MPI_Ireduce_scatter_block(MPI_IN_PLACE, g_b, 6, MPI_INT, MPI_SUM, w, &q);
  else
    MPI_Reduce_scatter_block(MPI_IN_PLACE, g_b, 6, MPI_INT, MPI_SUM, w);
  done(nb, &q, "Reduce_scatter_block", "reducescatter", 24LL * g_size);
  int counts[16], displs[16];
  long long sum = ramp(counts, displs, 1);
  if (nb)
    MPI_Ireduce_scatter(g_a, g_b, counts, MPI_INT, MPI_SUM, w, &q);
  else
    MPI_Reduce_scatter(g_a, g_b, counts, MPI_INT, MPI_SUM, w);
  done(nb, &q, "Reduce_scatter", "reducescatter", 4 * sum);
  sum = ramp(counts, displs, 2);
  if (nb)
    MPI_Ireduce_scatter(MPI_IN_PLACE, g_b, counts, MPI_INT, MPI_SUM, w, &q);
  else
    MPI_Reduce_scatter(MPI_IN_PLACE, g_b, counts, MPI_INT, MPI_SUM, w);
  done(nb, &q, "Reduce_scatter", "reducescatter", 4 * sum);
}

static void gathers(int nb) {
  const MPI_Comm w = MPI_COMM_WORLD;
  const int root = g_rank == 0, n = g_size, r = g_rank;
  MPI_Request q;
  if (nb)
    MPI_Iallgather(g_a, 5, MPI_INT, g_b, 5, MPI_INT, w, &q);
  else
    MPI_Allgather(g_a, 5, MPI_INT, g_b, 5, MPI_INT, w);
  done(nb, &q, "Allgather", "allgather", 20LL * n);
  if (nb)
    MPI_Iallgather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, g_b, 6, MPI_INT, w, &q);
  else
    MPI_Allgather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, g_b, 6, MPI_INT, w);
  done(nb, &q, "Allgather", "allgather", 24LL * n);
  int counts[16], displs[16];
  long long sum = ramp(counts, displs, 1);
  if (nb)
    MPI_Iallgatherv(g_a, r + 1, MPI_INT, g_b, counts, displs, MPI_INT, w, &q);
  else
    MPI_Allgatherv(g_a, r + 1, MPI_INT, g_b, counts, displs, MPI_INT, w);
  done(nb, &q, "Allgatherv", "allgatherv", 4 * sum);
  sum = ramp(counts, displs, 2);
  if (nb)
    MPI_Iallgatherv(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, g_b, counts, displs, MPI_INT, w, &q);
  else
    MPI_Allgatherv(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, g_b, counts, displs, MPI_INT, w);
  done(nb, &q, "Allgatherv", "allgatherv", 4 * sum);
  if (nb)
    MPI_Igather(g_a, 7, MPI_INT, g_b, 7, MPI_INT, 0, w, &q);
  else
    MPI_Gather(g_a, 7, MPI_INT, g_b, 7, MPI_INT, 0, w);
  done(nb, &q, "Gather", "gather", 28LL * n);
  /* In place: the root's send and a non-root's receive arguments are ignored. */
  if (nb && root)
    MPI_Igather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, g_b, 8, MPI_INT, 0, w, &q);
  else if (nb)
    MPI_Igather(g_a, 8, MPI_INT, NULL, 0, MPI_DATATYPE_NULL, 0, w, &q);
  else if (root)
    MPI_Gather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, g_b, 8, MPI_INT, 0, w);
  else
    MPI_Gather(g_a, 8, MPI_INT, NULL, 0, MPI_DATATYPE_NULL, 0, w);
  done(nb, &q, "Gather", "gather", 32LL * n);
  sum = ramp(counts, displs, 3);
  if (nb)
    MPI_Igatherv(g_a, r + 3, MPI_INT, g_b, counts, displs, MPI_INT, 0, w, &q);
  else
    MPI_Gatherv(g_a, r + 3, MPI_INT, g_b, counts, displs, MPI_INT, 0, w);
  done(nb, &q, "Gatherv", "gatherv", root ? 4 * sum : 4LL * (r + 3));
  sum = ramp(counts, displs, 4);
  const void* s = root ? MPI_IN_PLACE : (const void*)g_a;
  if (nb)
    MPI_Igatherv(s, root ? 0 : r + 4, MPI_INT, g_b, counts, displs, MPI_INT, 0, w, &q);
  else
    MPI_Gatherv(s, root ? 0 : r + 4, MPI_INT, g_b, counts, displs, MPI_INT, 0, w);
  done(nb, &q, "Gatherv", "gatherv", root ? 4 * sum : 4LL * (r + 4));
}

static void scatters(int nb) {
  const MPI_Comm w = MPI_COMM_WORLD;
  const int root = g_rank == 0, n = g_size, r = g_rank;
  MPI_Request q;
  if (nb)
    MPI_Iscatter(g_a, 9, MPI_INT, g_b, 9, MPI_INT, 0, w, &q);
  else
    MPI_Scatter(g_a, 9, MPI_INT, g_b, 9, MPI_INT, 0, w);
  done(nb, &q, "Scatter", "scatter", 36LL * n);
  /* In place: the root's receive and a non-root's send arguments are ignored. */
  if (nb && root)
    MPI_Iscatter(g_a, 10, MPI_INT, MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, 0, w, &q);
  else if (nb)
    MPI_Iscatter(NULL, 0, MPI_DATATYPE_NULL, g_b, 10, MPI_INT, 0, w, &q);
  else if (root)
    MPI_Scatter(g_a, 10, MPI_INT, MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, 0, w);
  else
    MPI_Scatter(NULL, 0, MPI_DATATYPE_NULL, g_b, 10, MPI_INT, 0, w);
  done(nb, &q, "Scatter", "scatter", 40LL * n);
  int counts[16], displs[16];
  long long sum = ramp(counts, displs, 5);
  if (nb)
    MPI_Iscatterv(g_a, counts, displs, MPI_INT, g_b, r + 5, MPI_INT, 0, w, &q);
  else
    MPI_Scatterv(g_a, counts, displs, MPI_INT, g_b, r + 5, MPI_INT, 0, w);
  done(nb, &q, "Scatterv", "scatterv", root ? 4 * sum : 4LL * (r + 5));
  sum = ramp(counts, displs, 6);
  void* rb = root ? MPI_IN_PLACE : (void*)g_b;
  if (nb)
    MPI_Iscatterv(g_a, counts, displs, MPI_INT, rb, root ? 0 : r + 6, MPI_INT, 0, w, &q);
  else
    MPI_Scatterv(g_a, counts, displs, MPI_INT, rb, root ? 0 : r + 6, MPI_INT, 0, w);
  done(nb, &q, "Scatterv", "scatterv", root ? 4 * sum : 4LL * (r + 6));
}

/* Alltoallv / w: rank r and rank i exchange r + i + base elements each way (the pair agrees),
 * of MPI_INT or, for w when r + i is odd, MPI_DOUBLE; displacements packed (w: in bytes). */
static long long pairs(int counts[], int displs[], MPI_Datatype types[], int base, int bytes_displs) {
  long long bytes = 0;
  for (int i = 0; i < g_size; ++i) {
    counts[i] = g_rank + i + base;
    types[i] = bytes_displs && (g_rank + i) % 2 ? MPI_DOUBLE : MPI_INT;
    const int size = types[i] == MPI_DOUBLE ? 8 : 4;
    displs[i] = bytes_displs ? (int)bytes : (int)(bytes / 4);
    bytes += (long long)counts[i] * size;
  }
  return bytes;
}

static void alltoalls(int nb) {
  const MPI_Comm w = MPI_COMM_WORLD;
  const int n = g_size;
  MPI_Request q;
  if (nb)
    MPI_Ialltoall(g_a, 3, MPI_INT, g_b, 3, MPI_INT, w, &q);
  else
    MPI_Alltoall(g_a, 3, MPI_INT, g_b, 3, MPI_INT, w);
  done(nb, &q, "Alltoall", "alltoall", 12LL * n);
  if (nb)
    MPI_Ialltoall(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, g_b, 4, MPI_INT, w, &q);
  else
    MPI_Alltoall(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, g_b, 4, MPI_INT, w);
  done(nb, &q, "Alltoall", "alltoall", 16LL * n);
  int counts[16], displs[16];
  MPI_Datatype types[16];
  long long bytes = pairs(counts, displs, types, 1, 0);
  if (nb)
    MPI_Ialltoallv(g_a, counts, displs, MPI_INT, g_b, counts, displs, MPI_INT, w, &q);
  else
    MPI_Alltoallv(g_a, counts, displs, MPI_INT, g_b, counts, displs, MPI_INT, w);
  done(nb, &q, "Alltoallv", "alltoallv", bytes);
  bytes = pairs(counts, displs, types, 2, 0);
  if (nb)
    MPI_Ialltoallv(MPI_IN_PLACE, NULL, NULL, MPI_DATATYPE_NULL, g_b, counts, displs, MPI_INT, w, &q);
  else
    MPI_Alltoallv(MPI_IN_PLACE, NULL, NULL, MPI_DATATYPE_NULL, g_b, counts, displs, MPI_INT, w);
  done(nb, &q, "Alltoallv", "alltoallv", bytes);
  bytes = pairs(counts, displs, types, 1, 1);
  if (nb)
    MPI_Ialltoallw(g_a, counts, displs, types, g_b, counts, displs, types, w, &q);
  else
    MPI_Alltoallw(g_a, counts, displs, types, g_b, counts, displs, types, w);
  done(nb, &q, "Alltoallw", "alltoallw", bytes);
  bytes = pairs(counts, displs, types, 2, 1);
  if (nb)
    MPI_Ialltoallw(MPI_IN_PLACE, NULL, NULL, NULL, g_b, counts, displs, types, w, &q);
  else
    MPI_Alltoallw(MPI_IN_PLACE, NULL, NULL, NULL, g_b, counts, displs, types, w);
  done(nb, &q, "Alltoallw", "alltoallw", bytes);
}

/* Rank 1 tells rank 0 its receives are posted (for the ready sends). */
static void ready_token(void) {
  if (g_rank == 1)
    MPI_Send(NULL, 0, MPI_INT, 0, 99, MPI_COMM_WORLD);
  else
    MPI_Recv(NULL, 0, MPI_INT, 1, 99, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  if (g_rank == 1)
    expect("MPI_Send", "send", 0, 0);
  else
    expect("MPI_Recv", "recv", 0, 0);
}

/* Blocking sends of 100, 50, 30 and 20 ints into receives of kCap: the receive counts what came. */
static void sends(void) {
  const MPI_Comm w = MPI_COMM_WORLD;
  MPI_Status st;
  MPI_Request q;
  if (g_rank == 0) {
    MPI_Send(g_a, 100, MPI_INT, 1, 1, w);
    MPI_Ssend(g_a, 50, MPI_INT, 1, 2, w);
    MPI_Bsend(g_a, 30, MPI_INT, 1, 3, w);
    expect("MPI_Send", "send", 400, 0), expect("MPI_Ssend", "send", 200, 0), expect("MPI_Bsend", "send", 120, 0);
    ready_token();
    MPI_Rsend(g_a, 20, MPI_INT, 1, 4, w);
    expect("MPI_Rsend", "send", 80, 0);
  } else {
    MPI_Recv(g_b, kCap, MPI_INT, 0, 1, w, &st);
    MPI_Recv(g_b, kCap, MPI_INT, 0, 2, w, MPI_STATUS_IGNORE);
    MPI_Recv(g_b, kCap, MPI_INT, 0, 3, w, &st);
    expect("MPI_Recv", "recv", 400, 0), expect("MPI_Recv", "recv", 200, 0), expect("MPI_Recv", "recv", 120, 0);
    MPI_Irecv(g_b, kCap, MPI_INT, 0, 4, w, &q);
    expect("MPI_Irecv", "irecv", 4LL * kCap, 0);
    ready_token();
    MPI_Wait(&q, MPI_STATUS_IGNORE);
    expect("MPI_Wait", "wait", 0, 0);
  }
  const int peer = 1 - g_rank;
  MPI_Sendrecv(g_a, 8 + g_rank, MPI_INT, peer, 5, g_b, kCap, MPI_INT, peer, 5, w, MPI_STATUS_IGNORE);
  MPI_Sendrecv_replace(g_b, 9, MPI_INT, peer, 6, peer, 6, w, MPI_STATUS_IGNORE);
  expect("MPI_Sendrecv", "send", 4LL * (8 + g_rank), 0), expect("MPI_Sendrecv", "recv", 4LL * (8 + peer), 0);
  expect("MPI_Sendrecv_replace", "send", 36, 0), expect("MPI_Sendrecv_replace", "recv", 36, 0);
}

/* Posted sends of 21-24 ints into posted receives of 100: a post counts what it names. */
static void posts(void) {
  const MPI_Comm w = MPI_COMM_WORLD;
  MPI_Request q[4];
  if (g_rank == 1) {
    for (int i = 0; i < 4; ++i) MPI_Irecv(g_b + 100 * i, 100, MPI_INT, 0, 10 + i, w, &q[i]);
    for (int i = 0; i < 4; ++i) expect("MPI_Irecv", "irecv", 400, 0);
    ready_token();
  } else {
    ready_token();
    MPI_Isend(g_a, 21, MPI_INT, 1, 10, w, &q[0]);
    MPI_Issend(g_a, 22, MPI_INT, 1, 11, w, &q[1]);
    MPI_Ibsend(g_a, 23, MPI_INT, 1, 12, w, &q[2]);
    MPI_Irsend(g_a, 24, MPI_INT, 1, 13, w, &q[3]);
    expect("MPI_Isend", "isend", 84, 0), expect("MPI_Issend", "isend", 88, 0);
    expect("MPI_Ibsend", "isend", 92, 0), expect("MPI_Irsend", "isend", 96, 0);
  }
  MPI_Waitall(4, q, MPI_STATUSES_IGNORE);
  expect("MPI_Waitall", "wait", 0, 0);
}

/* Probes (0 bytes) of messages of 7 and 9 ints, received matched: MPI_Mrecv counts what came,
 * MPI_Imrecv what it names. */
static void probes(void) {
  const MPI_Comm w = MPI_COMM_WORLD;
  if (g_rank == 0) {
    MPI_Send(g_a, 7, MPI_INT, 1, 20, w);
    MPI_Send(g_a, 9, MPI_INT, 1, 21, w);
    expect("MPI_Send", "send", 28, 0), expect("MPI_Send", "send", 36, 0);
    return;
  }
  int flag = 0;
  MPI_Message m;
  MPI_Request q;
  MPI_Probe(0, 20, w, MPI_STATUS_IGNORE);
  MPI_Iprobe(0, 20, w, &flag, MPI_STATUS_IGNORE); /* probed: there */
  if (!flag) fail("MPI_Iprobe missed a probed message");
  MPI_Improbe(0, 20, w, &flag, &m, MPI_STATUS_IGNORE);
  if (!flag) fail("MPI_Improbe missed a probed message");
  MPI_Mrecv(g_b, kCap, MPI_INT, &m, MPI_STATUS_IGNORE);
  expect("MPI_Probe", "probe", 0, 0), expect("MPI_Iprobe", "probe", 0, 0), expect("MPI_Improbe", "probe", 0, 0);
  expect("MPI_Mrecv", "recv", 28, 0);
  MPI_Mprobe(0, 21, w, &m, MPI_STATUS_IGNORE);
  MPI_Imrecv(g_b, 100, MPI_INT, &m, &q);
  MPI_Wait(&q, MPI_STATUS_IGNORE);
  expect("MPI_Mprobe", "probe", 0, 0), expect("MPI_Imrecv", "irecv", 400, 0), expect("MPI_Wait", "wait", 0, 0);
}

/* A persistent send of 12 ints (MPI_Start) into a persistent receive (MPI_Startall): 0 bytes. */
static void persistent(void) {
  MPI_Request q;
  if (g_rank == 0)
    MPI_Send_init(g_a, 12, MPI_INT, 1, 30, MPI_COMM_WORLD, &q);
  else
    MPI_Recv_init(g_b, 100, MPI_INT, 0, 30, MPI_COMM_WORLD, &q);
  if (g_rank == 0)
    MPI_Start(&q);
  else
    MPI_Startall(1, &q);
  MPI_Wait(&q, MPI_STATUS_IGNORE);
  MPI_Request_free(&q);
  expect(g_rank == 0 ? "MPI_Start" : "MPI_Startall", "start", 0, 0), expect("MPI_Wait", "wait", 0, 0);
}

/* Every completion call once, on a null request; a receive from MPI_PROC_NULL gets 0 bytes. */
static void completions(void) {
  MPI_Request q = MPI_REQUEST_NULL;
  int index = 0, flag = 0, outcount = 0;
  MPI_Wait(&q, MPI_STATUS_IGNORE);
  MPI_Waitall(1, &q, MPI_STATUSES_IGNORE);
  MPI_Waitany(1, &q, &index, MPI_STATUS_IGNORE);
  MPI_Waitsome(1, &q, &outcount, &index, MPI_STATUSES_IGNORE);
  MPI_Test(&q, &flag, MPI_STATUS_IGNORE);
  MPI_Testall(1, &q, &flag, MPI_STATUSES_IGNORE);
  MPI_Testany(1, &q, &index, &flag, MPI_STATUS_IGNORE);
  MPI_Testsome(1, &q, &outcount, &index, MPI_STATUSES_IGNORE);
  const char* f[] = {"MPI_Wait", "MPI_Waitall", "MPI_Waitany", "MPI_Waitsome",
                     "MPI_Test", "MPI_Testall", "MPI_Testany", "MPI_Testsome"};
  for (int i = 0; i < 8; ++i) expect(f[i], i < 4 ? "wait" : "test", 0, 0);
  MPI_Recv(g_b, kCap, MPI_INT, MPI_PROC_NULL, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  expect("MPI_Recv", "recv", 0, 0);
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
  MPI_Comm_size(MPI_COMM_WORLD, &g_size);
  if (argc != 2 || g_size < 2 || g_size > 16) {
    if (g_rank == 0) fprintf(stderr, "usage: mpirun -np 2..16 test_mpiprof_calls PREFIX\n");
    MPI_Finalize();
    return 2;
  }
  char path[4096];
  snprintf(path, sizeof path, "%s.rank%d.txt", argv[1], g_rank);
  if ((g_expect = fopen(path, "w")) == NULL) fail("cannot write the expected events");
  static char bsend[4096];
  MPI_Buffer_attach(bsend, sizeof bsend);
  for (int i = 0; i < kCap; ++i) g_a[i] = i;
  for (int nb = 0; nb < 2; ++nb) {
    reductions(nb);
    gathers(nb);
    scatters(nb);
    alltoalls(nb);
  }
  if (g_rank < 2) {
    sends();
    posts();
    probes();
    persistent();
  }
  completions();
  void* detached;
  int detached_size;
  MPI_Buffer_detach(&detached, &detached_size);
  fclose(g_expect);
  MPI_Finalize();
  if (g_rank == 0) printf("test_mpiprof_calls: %d ranks: expected events in %s.rankN.txt\n", g_size, argv[1]);
  return 0;
}
