/* A plain MPI program in the style of a real application (no commscope headers), for the replay's
 * tests (replay/tests/CMakeLists.txt, app_grid.sh). 4 ranks on a 2 x 2 grid, rank r at row r / 2,
 * column r % 2. Set-up: two MPI_Comm_dup of MPI_COMM_WORLD (a library's private communicators),
 * MPI_Cart_create (non-periodic) and MPI_Cart_sub into row and column communicators. Then ITERS
 * iterations, each MPI_Pcontrol(1), then:
 *
 *   ring:     (from the second iteration on) MPI_Send of 1 KiB to world rank r + 1, and MPI_Wait
 *             for the MPI_Irecv from rank r - 1 posted at the end of the iteration before;
 *   library:  an MPI_Allreduce on each duplicate (64 B, then 16 B);
 *   row:      an MPI_Bcast (1 KiB, root 0) and an MPI_Allreduce (256 B) on the row;
 *   halo:     two MPI_Sendrecv with the row neighbours of the grid (MPI_Cart_shift): 4 KiB east,
 *             then 2 KiB west; at the grid's edge the neighbour is MPI_PROC_NULL, so each rank
 *             sends once and receives once;
 *   column:   an MPI_Iallreduce (8 KiB) on the column overlapped with a world message of 512 B
 *             down the column: the top row posts it, then sends; the bottom row receives, then
 *             posts it (a replay running it blocking at its post deadlocks); then MPI_Wait;
 *   ring:     (but in the last iteration) MPI_Irecv of 1 KiB from rank r - 1, completed in the
 *             next iteration, whose send comes only then;
 *   barrier:  an MPI_Barrier on MPI_COMM_WORLD.
 *
 * Each call is counted where it is made, as the PMPI library records it (docs/profiler.md): per
 * communicator label and event name, calls and bytes. Labels: a communicator's members' world
 * ranks, "#k" for the k-th created with the same members ("mpi[0,1,2,3]", "mpi[0,1,2,3]#1" for
 * the duplicates, "mpi[0,1]" for row 0, "mpi[0,2]" for column 0); a message's its world ranks
 * from and to ("mpi[0>1]", on whatever communicator it ran); "all" for MPI_COMM_WORLD's
 * collectives and the completions (waits), which the library records without a label. Bytes: a
 * collective's array, a send's message, a receive what arrived, a posted receive what it names, a
 * wait 0. Written to PREFIX.rankN.txt, one "LABEL NAME CALLS BYTES" line each.
 *
 *   replay_app_grid PREFIX [ITERS]   (4 ranks, ITERS >= 2, default 5) */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { kRing = 256, kLib = 8, kLib2 = 4, kBcast = 256, kRow = 64, kEast = 1024, kWest = 512, kCol = 2048, kDown = 512 };
enum { kMaxCounts = 32 };

struct Count {
  char label[32], name[16];
  long long calls, bytes;
};

static struct Count g_counts[kMaxCounts];
static int g_ncounts, g_rank;

static void fail(const char* what) {
  fprintf(stderr, "replay_app_grid: rank %d: %s\n", g_rank, what);
  MPI_Abort(MPI_COMM_WORLD, 1);
}

static void tally(const char* label, const char* name, long long bytes) {
  int i = 0;
  while (i < g_ncounts && (strcmp(g_counts[i].label, label) != 0 || strcmp(g_counts[i].name, name) != 0)) ++i;
  if (i == g_ncounts) {
    if (g_ncounts == kMaxCounts) fail("too many kinds of calls");
    snprintf(g_counts[i].label, sizeof g_counts[i].label, "%s", label);
    snprintf(g_counts[i].name, sizeof g_counts[i].name, "%s", name);
    ++g_ncounts;
  }
  ++g_counts[i].calls;
  g_counts[i].bytes += bytes;
}

/* A message's label, by world ranks: "mpi[FROM>TO]". */
static const char* link(int from, int to) {
  static char out[32];
  snprintf(out, sizeof out, "mpi[%d>%d]", from, to);
  return out;
}

static void write_counts(const char* prefix) {
  char path[4096];
  snprintf(path, sizeof path, "%s.rank%d.txt", prefix, g_rank);
  FILE* f = fopen(path, "w");
  if (f == NULL) fail("cannot write the counts");
  for (int i = 0; i < g_ncounts; ++i)
    fprintf(f, "%s %s %lld %lld\n", g_counts[i].label, g_counts[i].name, g_counts[i].calls, g_counts[i].bytes);
  if (fclose(f) != 0) fail("cannot write the counts");
}

struct Grid {
  MPI_Comm lib, lib2, cart, row, col;
  char row_label[32], col_label[32];
  int west, east; /* row neighbours in the grid (MPI_PROC_NULL at its edge) */
};

static void make_grid(struct Grid* g) {
  MPI_Comm_dup(MPI_COMM_WORLD, &g->lib);
  MPI_Comm_dup(MPI_COMM_WORLD, &g->lib2);
  int dims[2] = {2, 2}, periods[2] = {0, 0}, keep_col[2] = {0, 1}, keep_row[2] = {1, 0};
  MPI_Cart_create(MPI_COMM_WORLD, 2, dims, periods, 0, &g->cart);
  MPI_Cart_sub(g->cart, keep_col, &g->row); /* the ranks of my row: the column index varies */
  MPI_Cart_sub(g->cart, keep_row, &g->col);
  MPI_Cart_shift(g->cart, 1, 1, &g->west, &g->east);
  const int row = g_rank / 2, col = g_rank % 2;
  snprintf(g->row_label, sizeof g->row_label, "mpi[%d,%d]", 2 * row, 2 * row + 1);
  snprintf(g->col_label, sizeof g->col_label, "mpi[%d,%d]", col, col + 2);
}

static void fill(float* x, int n, float v) {
  for (int i = 0; i < n; ++i) x[i] = v;
}

/* The library's, the row's and the halo's calls of one iteration. */
static void library_row_halo(struct Grid* g) {
  double norm[kLib], norm_sum[kLib];
  int flags[kLib2] = {1, 0, 0, 0}, flags_sum[kLib2];
  for (int i = 0; i < kLib; ++i) norm[i] = g_rank;
  MPI_Allreduce(norm, norm_sum, kLib, MPI_DOUBLE, MPI_SUM, g->lib);
  tally("mpi[0,1,2,3]", "allreduce", sizeof norm);
  MPI_Allreduce(flags, flags_sum, kLib2, MPI_INT, MPI_SUM, g->lib2);
  tally("mpi[0,1,2,3]#1", "allreduce", sizeof flags);
  if (norm_sum[0] != 6.0 || flags_sum[0] != 4) fail("a library allreduce summed wrong");

  float bc[kBcast], rv[kRow], rs[kRow];
  fill(bc, kBcast, (float)g_rank);
  MPI_Bcast(bc, kBcast, MPI_FLOAT, 0, g->row);
  tally(g->row_label, "broadcast", sizeof bc);
  if (bc[0] != (float)(g_rank / 2 * 2)) fail("the row's broadcast came from another root");
  fill(rv, kRow, 1.0f);
  MPI_Allreduce(rv, rs, kRow, MPI_FLOAT, MPI_SUM, g->row);
  tally(g->row_label, "allreduce", sizeof rv);
  if (rs[0] != 2.0f) fail("the row's allreduce summed other ranks");

  static float east_out[kEast], east_in[kEast], west_out[kWest], west_in[kWest];
  fill(east_out, kEast, (float)g_rank), fill(west_out, kWest, (float)g_rank);
  MPI_Status st;
  MPI_Sendrecv(east_out, kEast, MPI_FLOAT, g->east, 1, east_in, kEast, MPI_FLOAT, g->west, 1, g->cart, &st);
  if (g->east != MPI_PROC_NULL) tally(link(g_rank, g_rank + 1), "send", sizeof east_out);
  if (g->west != MPI_PROC_NULL) {
    tally(link(g_rank - 1, g_rank), "recv", sizeof east_in);
    if (east_in[0] != (float)(g_rank - 1)) fail("the east halo came from another rank");
  }
  MPI_Sendrecv(west_out, kWest, MPI_FLOAT, g->west, 2, west_in, kWest, MPI_FLOAT, g->east, 2, g->cart, &st);
  if (g->west != MPI_PROC_NULL) tally(link(g_rank, g_rank - 1), "send", sizeof west_out);
  if (g->east != MPI_PROC_NULL) {
    tally(link(g_rank + 1, g_rank), "recv", sizeof west_in);
    if (west_in[0] != (float)(g_rank + 1)) fail("the west halo came from another rank");
  }
}

/* The column's MPI_Iallreduce, overlapped with a world message down the column. */
static void column(struct Grid* g) {
  static float cv[kCol], cs[kCol];
  char down[kDown];
  fill(cv, kCol, (float)g_rank);
  memset(down, g_rank, sizeof down);
  MPI_Request q;
  if (g_rank < 2) {
    MPI_Iallreduce(cv, cs, kCol, MPI_FLOAT, MPI_SUM, g->col, &q);
    tally(g->col_label, "iallreduce", sizeof cv);
    MPI_Send(down, kDown, MPI_CHAR, g_rank + 2, 7, MPI_COMM_WORLD);
    tally(link(g_rank, g_rank + 2), "send", kDown);
  } else {
    MPI_Recv(down, kDown, MPI_CHAR, g_rank - 2, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    tally(link(g_rank - 2, g_rank), "recv", kDown);
    if (down[0] != g_rank - 2) fail("the column's message came from another rank");
    MPI_Iallreduce(cv, cs, kCol, MPI_FLOAT, MPI_SUM, g->col, &q);
    tally(g->col_label, "iallreduce", sizeof cv);
  }
  MPI_Wait(&q, MPI_STATUS_IGNORE);
  tally("all", "wait", 0);
  if (cs[0] != (float)(2 * (g_rank % 2) + 2)) fail("the column's allreduce summed other ranks");
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const int iters = argc > 2 ? atoi(argv[2]) : 5;
  if (size != 4 || argc < 2 || iters < 2) {
    if (g_rank == 0) fprintf(stderr, "usage: mpirun -np 4 replay_app_grid PREFIX [ITERS >= 2]\n");
    MPI_Finalize();
    return 2;
  }
  struct Grid g;
  make_grid(&g);
  const int next = (g_rank + 1) % size, prev = (g_rank + size - 1) % size;
  float ring_out[kRing], ring_in[kRing];
  MPI_Request pre = MPI_REQUEST_NULL;
  for (int it = 0; it < iters; ++it) {
    MPI_Pcontrol(1);
    if (it > 0) {
      fill(ring_out, kRing, (float)(g_rank * 100 + it));
      MPI_Send(ring_out, kRing, MPI_FLOAT, next, 9, MPI_COMM_WORLD);
      tally(link(g_rank, next), "send", sizeof ring_out);
      MPI_Wait(&pre, MPI_STATUS_IGNORE); /* posted in the iteration before */
      tally("all", "wait", 0);
      if (ring_in[0] != (float)(prev * 100 + it))
        fail("the ring's message is not the previous rank's of this iteration");
    }
    library_row_halo(&g);
    column(&g);
    if (it + 1 < iters) {
      MPI_Irecv(ring_in, kRing, MPI_FLOAT, prev, 9, MPI_COMM_WORLD, &pre);
      tally(link(prev, g_rank), "irecv", sizeof ring_in);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    tally("all", "barrier", 0);
  }
  write_counts(argv[1]);
  long long calls = 0;
  for (int i = 0; i < g_ncounts; ++i) calls += g_counts[i].calls;
  if (g_rank == 0)
    printf("replay_app_grid: %d iterations, rank 0 made %lld calls of %d kinds, counted in %s.rank*.txt\n", iters,
           calls, g_ncounts, argv[1]);
  MPI_Comm_free(&g.col);
  MPI_Comm_free(&g.row);
  MPI_Comm_free(&g.cart);
  MPI_Comm_free(&g.lib2);
  MPI_Comm_free(&g.lib);
  MPI_Finalize();
  return 0;
}
