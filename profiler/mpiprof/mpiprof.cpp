// libcommscope-mpiprof.so: the breakdown of an MPI program that cannot be changed, through the
// MPI profiling interface (PMPI). Preload it:
//
//   mpirun -np 4 -x LD_PRELOAD=$PWD/build/lib/libcommscope-mpiprof.so ./app
//   commscope-report profile commscope-mpiprof.h5
//
// MPI_Init starts a profiling session over MPI_COMM_WORLD; every wrapped MPI call below is a
// communication event (its collective or operation name, "mpi", its array bytes) and the time
// between two MPI calls of the thread that initialised MPI is host compute (a kernel event named
// "compute"). Collectives on MPI_COMM_WORLD carry a sequence number, so that the session splits
// them into wait and transfer across ranks; calls on other communicators and point-to-point calls
// count as transfer. Iterations: MPI_Pcontrol(1) starts the next one (the first starts at
// MPI_Init), or COMMSCOPE_WINDOW_MS=N cuts the run into slices of N ms (checked at MPI calls);
// neither: the whole run is one iteration. MPI_Finalize writes the profile
// (COMMSCOPE_PROFILE_OUT, default commscope-mpiprof.h5; docs/profiler.md).
//
// The profiler's own MPI calls (clock offsets, gathering, writing) go straight to PMPI.
#include <mpi.h>

#include <unistd.h>

#include <atomic>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <memory>
#include <string>
#include <thread>

#include "commscope/profiler/recorder.hpp"
#include "commscope/profiler/session.hpp"

namespace pf = commscope::profiler;

namespace {

thread_local int t_inside = 0;  // > 0 inside a wrapper or the profiler's own MPI calls
std::unique_ptr<pf::Session> g_session;
// The open iteration and compute events (the scopes' own event calls, held across MPI calls).
pf::detail::ThreadBuffer* g_buffer = nullptr;
pf::Event* g_iteration = nullptr;
pf::Event* g_compute = nullptr;
std::thread::id g_main;
std::int32_t g_step = 0;
std::atomic<std::int64_t> g_world_seq{0};  // threads may call collectives (MPI_THREAD_MULTIPLE)
double g_window_s = 0;
double g_window_start = 0;
pf::NameId g_mpi = 0, g_compute_name = 0;

bool on_main() {
  return std::this_thread::get_id() == g_main;
}

void close(pf::Event*& e) {
  if (e != nullptr && pf::recording()) e->end_ns = pf::ticks();
  e = nullptr;
}

void open_compute() {
  if (pf::recording()) g_compute = pf::detail::open_event(g_buffer, pf::EventKind::kKernel, g_compute_name);
}

void open_iteration() {
  if (!pf::recording()) return;
  pf::detail::g_iteration.store(g_step++, std::memory_order_relaxed);
  g_iteration = pf::detail::open_event(g_buffer, pf::EventKind::kIteration, pf::detail::iteration_name());
}

void next_iteration() {
  close(g_compute);
  close(g_iteration);
  open_iteration();
  open_compute();
}

std::string command_line() {
  std::ifstream in("/proc/self/cmdline", std::ios::binary);
  std::string all((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>()), out;
  for (char c : all) out += c == '\0' ? ' ' : c;
  while (!out.empty() && out.back() == ' ') out.pop_back();
  return out;
}

void start() {
  if (g_session) return;
  ++t_inside;
  try {
    pf::SessionOptions o;
    const char* out = std::getenv("COMMSCOPE_PROFILE_OUT");
    o.output = out && *out ? out : "commscope-mpiprof.h5";
    o.backend = pf::BackendChoice::kHost;
    o.command_line = command_line();
    o.attributes = {{"source", "libcommscope-mpiprof (PMPI)"}};
    if (const char* w = std::getenv("COMMSCOPE_WINDOW_MS")) {
      char* end = nullptr;
      const double ms = std::strtod(w, &end);
      if (end == w || *end != '\0' || !(ms > 0)) {
        std::fprintf(stderr, "libcommscope-mpiprof: COMMSCOPE_WINDOW_MS='%s' is not a positive number: ignored\n", w);
      } else {
        g_window_s = ms / 1e3;
        o.attributes.emplace_back("window_ms", w);
      }
    }
    g_mpi = pf::name_id("mpi");
    g_compute_name = pf::name_id("compute");
    g_main = std::this_thread::get_id();
    g_session = std::make_unique<pf::Session>(MPI_COMM_WORLD, std::move(o));
    g_window_start = PMPI_Wtime();
    next_iteration();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "libcommscope-mpiprof: not profiling: %s\n", e.what());
    g_session.reset();
  }
  --t_inside;
}

void finish() {
  if (!g_session) return;
  ++t_inside;
  close(g_compute);
  close(g_iteration);
  try {
    (void)g_session->finish();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "libcommscope-mpiprof: the profile was not written: %s\n", e.what());
  }
  g_session.reset();
  --t_inside;
}

// The bytes of `count` elements of `type`.
std::int64_t bytes_of(int count, MPI_Datatype type) {
  int size = 0;
  if (count <= 0 || PMPI_Type_size(type, &size) != MPI_SUCCESS) return 0;
  return static_cast<std::int64_t>(count) * size;
}

int comm_size(MPI_Comm comm) {
  int n = 1;
  PMPI_Comm_size(comm, &n);
  return n;
}

bool is_world(MPI_Comm comm) {
  int same = MPI_UNEQUAL;
  return comm == MPI_COMM_WORLD || (PMPI_Comm_compare(comm, MPI_COMM_WORLD, &same) == MPI_SUCCESS && same == MPI_IDENT);
}

// A wrapper's names: its MPI function (an operator, so the report totals calls and time per
// function) and the communication it is ("allreduce", "send", "wait", ...).
struct Names {
  pf::NameId function, comm;
};

// Records one MPI call around `call`: the compute before it ends; an operator event named after
// the MPI function holds the communication event that spans the call.
template <class Call>
int record(const Names& names, std::int64_t bytes, MPI_Comm comm, bool collective, Call&& call) {
  if (t_inside > 0 || !g_session || !pf::recording()) return call();
  ++t_inside;
  const bool main = on_main();
  if (main) {
    close(g_compute);
    if (g_window_s > 0 && PMPI_Wtime() - g_window_start >= g_window_s) {
      g_window_start = PMPI_Wtime();
      close(g_iteration);
      open_iteration();
    }
  }
  const std::int64_t seq =
      collective && comm != MPI_COMM_NULL && is_world(comm) ? g_world_seq.fetch_add(1, std::memory_order_relaxed) : -1;
  int rc;
  {
    pf::OperatorScope op(names.function);
    pf::CommScope scope(names.comm, g_mpi, bytes, seq);
    rc = call();
  }
  if (main) open_compute();
  --t_inside;
  return rc;
}

}  // namespace

extern "C" {

int MPI_Init(int* argc, char*** argv) {
  const int rc = PMPI_Init(argc, argv);
  if (rc == MPI_SUCCESS) start();
  return rc;
}

int MPI_Init_thread(int* argc, char*** argv, int required, int* provided) {
  const int rc = PMPI_Init_thread(argc, argv, required, provided);
  if (rc == MPI_SUCCESS) start();
  return rc;
}

int MPI_Finalize(void) {
  finish();
  return PMPI_Finalize();
}

int MPI_Pcontrol(const int level, ...) {
  if (t_inside == 0 && g_session && on_main() && level != 0) {
    ++t_inside;
    next_iteration();
    --t_inside;
  }
  return MPI_SUCCESS;
}

// --- collectives (bytes: the array, as nccl-tests and the bench count it)

int MPI_Barrier(MPI_Comm comm) {
  static const Names names{pf::name_id("MPI_Barrier"), pf::name_id("barrier")};
  return record(names, 0, comm, true, [&] { return PMPI_Barrier(comm); });
}

int MPI_Bcast(void* buf, int count, MPI_Datatype type, int root, MPI_Comm comm) {
  static const Names names{pf::name_id("MPI_Bcast"), pf::name_id("broadcast")};
  return record(names, bytes_of(count, type), comm, true, [&] { return PMPI_Bcast(buf, count, type, root, comm); });
}

int MPI_Allreduce(const void* send, void* recv, int count, MPI_Datatype type, MPI_Op op, MPI_Comm comm) {
  static const Names names{pf::name_id("MPI_Allreduce"), pf::name_id("allreduce")};
  return record(names, bytes_of(count, type), comm, true,
                [&] { return PMPI_Allreduce(send, recv, count, type, op, comm); });
}

int MPI_Reduce(const void* send, void* recv, int count, MPI_Datatype type, MPI_Op op, int root, MPI_Comm comm) {
  static const Names names{pf::name_id("MPI_Reduce"), pf::name_id("reduce")};
  return record(names, bytes_of(count, type), comm, true,
                [&] { return PMPI_Reduce(send, recv, count, type, op, root, comm); });
}

int MPI_Allgather(const void* send, int scount, MPI_Datatype stype, void* recv, int rcount, MPI_Datatype rtype,
                  MPI_Comm comm) {
  static const Names names{pf::name_id("MPI_Allgather"), pf::name_id("allgather")};
  return record(names, bytes_of(rcount, rtype) * comm_size(comm), comm, true,
                [&] { return PMPI_Allgather(send, scount, stype, recv, rcount, rtype, comm); });
}

int MPI_Allgatherv(const void* send, int scount, MPI_Datatype stype, void* recv, const int rcounts[],
                   const int displs[], MPI_Datatype rtype, MPI_Comm comm) {
  std::int64_t total = 0;
  for (int i = 0, n = comm_size(comm); i < n; ++i) total += bytes_of(rcounts[i], rtype);
  static const Names names{pf::name_id("MPI_Allgatherv"), pf::name_id("allgatherv")};
  return record(names, total, comm, true,
                [&] { return PMPI_Allgatherv(send, scount, stype, recv, rcounts, displs, rtype, comm); });
}

int MPI_Gather(const void* send, int scount, MPI_Datatype stype, void* recv, int rcount, MPI_Datatype rtype, int root,
               MPI_Comm comm) {
  static const Names names{pf::name_id("MPI_Gather"), pf::name_id("gather")};
  return record(names, bytes_of(scount, stype) * comm_size(comm), comm, true,
                [&] { return PMPI_Gather(send, scount, stype, recv, rcount, rtype, root, comm); });
}

int MPI_Scatter(const void* send, int scount, MPI_Datatype stype, void* recv, int rcount, MPI_Datatype rtype, int root,
                MPI_Comm comm) {
  static const Names names{pf::name_id("MPI_Scatter"), pf::name_id("scatter")};
  return record(names, bytes_of(rcount, rtype) * comm_size(comm), comm, true,
                [&] { return PMPI_Scatter(send, scount, stype, recv, rcount, rtype, root, comm); });
}

int MPI_Alltoall(const void* send, int scount, MPI_Datatype stype, void* recv, int rcount, MPI_Datatype rtype,
                 MPI_Comm comm) {
  static const Names names{pf::name_id("MPI_Alltoall"), pf::name_id("alltoall")};
  return record(names, bytes_of(scount, stype) * comm_size(comm), comm, true,
                [&] { return PMPI_Alltoall(send, scount, stype, recv, rcount, rtype, comm); });
}

int MPI_Alltoallv(const void* send, const int scounts[], const int sdispls[], MPI_Datatype stype, void* recv,
                  const int rcounts[], const int rdispls[], MPI_Datatype rtype, MPI_Comm comm) {
  std::int64_t total = 0;
  for (int i = 0, n = comm_size(comm); i < n; ++i) total += bytes_of(scounts[i], stype);
  static const Names names{pf::name_id("MPI_Alltoallv"), pf::name_id("alltoallv")};
  return record(names, total, comm, true,
                [&] { return PMPI_Alltoallv(send, scounts, sdispls, stype, recv, rcounts, rdispls, rtype, comm); });
}

int MPI_Reduce_scatter_block(const void* send, void* recv, int count, MPI_Datatype type, MPI_Op op, MPI_Comm comm) {
  static const Names names{pf::name_id("MPI_Reduce_scatter_block"), pf::name_id("reducescatter")};
  return record(names, bytes_of(count, type) * comm_size(comm), comm, true,
                [&] { return PMPI_Reduce_scatter_block(send, recv, count, type, op, comm); });
}

int MPI_Reduce_scatter(const void* send, void* recv, const int counts[], MPI_Datatype type, MPI_Op op, MPI_Comm comm) {
  std::int64_t total = 0;
  for (int i = 0, n = comm_size(comm); i < n; ++i) total += bytes_of(counts[i], type);
  static const Names names{pf::name_id("MPI_Reduce_scatter"), pf::name_id("reducescatter")};
  return record(names, total, comm, true, [&] { return PMPI_Reduce_scatter(send, recv, counts, type, op, comm); });
}

// --- point to point: blocking calls and waits span their time; posting is instantaneous

int MPI_Send(const void* buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm) {
  static const Names names{pf::name_id("MPI_Send"), pf::name_id("send")};
  return record(names, bytes_of(count, type), comm, false,
                [&] { return PMPI_Send(buf, count, type, dest, tag, comm); });
}

int MPI_Ssend(const void* buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm) {
  static const Names names{pf::name_id("MPI_Ssend"), pf::name_id("send")};
  return record(names, bytes_of(count, type), comm, false,
                [&] { return PMPI_Ssend(buf, count, type, dest, tag, comm); });
}

int MPI_Recv(void* buf, int count, MPI_Datatype type, int source, int tag, MPI_Comm comm, MPI_Status* status) {
  static const Names names{pf::name_id("MPI_Recv"), pf::name_id("recv")};
  return record(names, bytes_of(count, type), comm, false,
                [&] { return PMPI_Recv(buf, count, type, source, tag, comm, status); });
}

int MPI_Sendrecv(const void* sbuf, int scount, MPI_Datatype stype, int dest, int stag, void* rbuf, int rcount,
                 MPI_Datatype rtype, int source, int rtag, MPI_Comm comm, MPI_Status* status) {
  static const Names names{pf::name_id("MPI_Sendrecv"), pf::name_id("sendrecv")};
  return record(names, bytes_of(scount, stype), comm, false, [&] {
    return PMPI_Sendrecv(sbuf, scount, stype, dest, stag, rbuf, rcount, rtype, source, rtag, comm, status);
  });
}

int MPI_Wait(MPI_Request* request, MPI_Status* status) {
  static const Names names{pf::name_id("MPI_Wait"), pf::name_id("wait")};
  return record(names, 0, MPI_COMM_NULL, false, [&] { return PMPI_Wait(request, status); });
}

int MPI_Waitall(int count, MPI_Request requests[], MPI_Status statuses[]) {
  static const Names names{pf::name_id("MPI_Waitall"), pf::name_id("wait")};
  return record(names, 0, MPI_COMM_NULL, false, [&] { return PMPI_Waitall(count, requests, statuses); });
}

int MPI_Waitany(int count, MPI_Request requests[], int* index, MPI_Status* status) {
  static const Names names{pf::name_id("MPI_Waitany"), pf::name_id("wait")};
  return record(names, 0, MPI_COMM_NULL, false, [&] { return PMPI_Waitany(count, requests, index, status); });
}

}  // extern "C"
