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
// Nonblocking calls: posting (MPI_Isend, MPI_Iallreduce, ...) is a short communication event of
// its own ("isend", "iallreduce", with its bytes) and unnumbered: a post's arrival says nothing of
// when the operation's wait ends, which is spent in MPI_Wait* / MPI_Test* ("wait", "test").
//
// Signals: SIGTERM, SIGINT and SIGUSR1 make the rank that receives one write a profile of its own
// (Session::finish_local: no MPI, the other ranks may be gone) to NAME.signal.rankNNNNN.h5 next to
// COMMSCOPE_PROFILE_OUT, then end as the signal would have ended it. The handler only writes the
// signal's number to a pipe; a watcher thread does the rest. COMMSCOPE_SIGNALS=0: no handlers.
//
// The profiler's own MPI calls (clock offsets, gathering, writing) go straight to PMPI.
#include <mpi.h>

#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <memory>
#include <string>
#include <thread>

#include "commscope/profiler/profile_file.hpp"
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

// Polling: a loop of MPI_Test* calls makes millions of calls (HPL's panel broadcast polls with
// MPI_Testany between pieces of its update). On the main thread, a call of a polling function
// that follows one of the same function within kPollGapNs continues that call's events (one
// operator and one "test" event for the whole run, the short gaps inside it included: the
// polling loop) instead of adding three events per call.
constexpr std::int64_t kPollGapNs = 5000;
struct PollRun {
  pf::Event* op = nullptr;  // the run's events; nullptr: the last MPI call was no poll
  pf::Event* comm = nullptr;
  pf::NameId function = 0;
  std::int64_t end_ticks = 0;  // when its last call returned
  std::chrono::steady_clock::time_point end;
};
PollRun g_poll;

// Ends the compute since the last MPI call: its open event or, after a poll run (which opens
// none, since the run may go on), an event for the time since the run's last call.
void close_compute() {
  if (g_poll.op == nullptr) return close(g_compute);
  if (pf::recording())
    if (pf::Event* e = pf::detail::open_event(g_buffer, pf::EventKind::kKernel, g_compute_name)) {
      e->start_ns = g_poll.end_ticks;
      e->end_ns = pf::ticks();
    }
  g_poll = {};
}

void next_iteration() {
  close_compute();
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

// --- writing at a signal (the self-pipe pattern: nothing but write() in the handler)

constexpr int kSignals[] = {SIGTERM, SIGINT, SIGUSR1};
constexpr int kNumSignals = static_cast<int>(sizeof kSignals / sizeof kSignals[0]);
struct sigaction g_previous[kNumSignals];  // the dispositions before ours, restored before re-raising
std::atomic<bool> g_handling{false};       // our handlers are installed
int g_pipe[2] = {-1, -1};                  // the handler writes the signal's number; 0 asks the watcher to stop
bool g_watching = false;                   // the watcher was started
std::atomic<bool> g_watcher_done{false};   // ... and has returned
std::string g_signal_path;                 // this rank's profile at a signal
// Who finishes the session: MPI_Finalize (collective) or the watcher at a signal (local), not both.
enum : int { kRunning, kSignalled, kFinishing };
std::atomic<int> g_state{kRunning};

const char* signal_name(int sig) {
  switch (sig) {
    case SIGTERM:
      return "SIGTERM";
    case SIGINT:
      return "SIGINT";
    case SIGUSR1:
      return "SIGUSR1";
    default:
      return "signal";
  }
}

extern "C" void on_signal(int sig) {
  const int saved = errno;
  const auto byte = static_cast<unsigned char>(sig);
  [[maybe_unused]] const ssize_t n = write(g_pipe[1], &byte, 1);
  errno = saved;
}

void restore_handlers() {
  if (!g_handling.exchange(false)) return;
  for (int i = 0; i < kNumSignals; ++i)
    if (g_previous[i].sa_handler != SIG_IGN) sigaction(kSignals[i], &g_previous[i], nullptr);
}

// The watcher: at a signal, this rank's profile, then the signal again under the disposition it
// had before MPI_Init (by default: the end of the process). Runs with every signal blocked, so a
// process-directed signal lands on another thread.
void watch_once() {
  for (;;) {
    unsigned char byte = 0;
    const ssize_t n = read(g_pipe[0], &byte, 1);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0 || byte == 0) return;  // MPI_Finalize
    const int sig = byte;
    int expected = kRunning;
    if (g_state.compare_exchange_strong(expected, kSignalled)) {
      try {
        const int rank = g_session->rank();
        if (g_session->finish_local(g_signal_path, {{"signal", signal_name(sig)}}))
          std::fprintf(stderr, "libcommscope-mpiprof: rank %d: %s: this rank's profile written to %s\n", rank,
                       signal_name(sig), g_signal_path.c_str());
      } catch (const std::exception& e) {
        std::fprintf(stderr, "libcommscope-mpiprof: %s: the profile was not written: %s\n", signal_name(sig), e.what());
      }
    }
    restore_handlers();
    // A launcher that sees one rank end by a signal may kill the others at once (Open MPI's does,
    // without waiting for its own SIGKILL timeout): linger a moment so that peers signalled at the
    // same time finish their files first.
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    kill(getpid(), sig);
    return;
  }
}

// Detached, so that a program leaving without MPI_Finalize does not end in std::terminate.
void watch() {
  watch_once();
  g_watcher_done.store(true);
  g_watcher_done.notify_all();
}

// COMMSCOPE_SIGNALS: "1" (the default) or "0".
bool signals_wanted() {
  const char* v = std::getenv("COMMSCOPE_SIGNALS");
  if (v == nullptr || std::strcmp(v, "1") == 0) return true;
  if (std::strcmp(v, "0") == 0) return false;
  std::fprintf(stderr, "libcommscope-mpiprof: COMMSCOPE_SIGNALS='%s' is not 0 or 1: signals handled\n", v);
  return true;
}

void install_handlers(const std::string& output) {
  if (!signals_wanted()) return;
  const std::string stem = output.ends_with(".h5") ? output.substr(0, output.size() - 3) : output;
  g_signal_path = pf::rank_event_file_name(stem + ".signal", g_session->rank());
  if (pipe2(g_pipe, O_CLOEXEC) != 0) {
    std::fprintf(stderr, "libcommscope-mpiprof: no profile at a signal: pipe: %s\n", std::strerror(errno));
    return;
  }
  fcntl(g_pipe[1], F_SETFL, O_NONBLOCK);  // the handler never blocks
  sigset_t all, old;
  sigfillset(&all);
  pthread_sigmask(SIG_SETMASK, &all, &old);
  try {
    std::thread(watch).detach();
    g_watching = true;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "libcommscope-mpiprof: no profile at a signal: %s\n", e.what());
  }
  pthread_sigmask(SIG_SETMASK, &old, nullptr);
  if (!g_watching) return;
  struct sigaction ours {};
  ours.sa_handler = on_signal;
  ours.sa_flags = SA_RESTART;
  sigemptyset(&ours.sa_mask);
  g_handling.store(true);  // before the first handler: the watcher restores what it finds
  for (int i = 0; i < kNumSignals; ++i) {
    // An ignored signal stays ignored (nohup, a background job's SIGINT).
    if (sigaction(kSignals[i], nullptr, &g_previous[i]) != 0 || g_previous[i].sa_handler == SIG_IGN) {
      g_previous[i].sa_handler = SIG_IGN;
      continue;
    }
    sigaction(kSignals[i], &ours, nullptr);
  }
}

// At MPI_Finalize: the handlers back as they were, and the watcher ended (or, after a signal,
// waited for: it is writing this rank's profile).
// The pipe stays open: a handler already running on another thread may still write to it.
void stop_watcher() {
  restore_handlers();
  if (!g_watching) return;
  g_watching = false;
  const unsigned char stop = 0;
  [[maybe_unused]] const ssize_t n = write(g_pipe[1], &stop, 1);
  g_watcher_done.wait(false);
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
    const std::string output = o.output;
    g_session = std::make_unique<pf::Session>(MPI_COMM_WORLD, std::move(o));
    g_window_start = PMPI_Wtime();
    next_iteration();
    install_handlers(output);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "libcommscope-mpiprof: not profiling: %s\n", e.what());
    g_session.reset();
  }
  --t_inside;
}

void finish() {
  if (!g_session) return;
  ++t_inside;
  int expected = kRunning;
  const bool collective = g_state.compare_exchange_strong(expected, kFinishing);
  stop_watcher();  // after a signal: waits for this rank's own profile
  if (collective) {
    close_compute();
    close(g_iteration);
    try {
      (void)g_session->finish();
    } catch (const std::exception& e) {
      std::fprintf(stderr, "libcommscope-mpiprof: the profile was not written: %s\n", e.what());
    }
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
  bool poll = false;  // MPI_Test*: runs of calls coalesce (PollRun)
};

// Records one MPI call around `call`: the compute before it ends; an operator event named after
// the MPI function holds the communication event that spans the call.
template <class Call>
int record(const Names& names, std::int64_t bytes, MPI_Comm comm, bool collective, Call&& call) {
  if (t_inside > 0 || !g_session || !pf::recording()) return call();
  ++t_inside;
  const bool main = on_main();
  if (main) {
    const bool cut = g_window_s > 0 && PMPI_Wtime() - g_window_start >= g_window_s;
    if (names.poll && g_poll.op != nullptr && g_poll.function == names.function && !cut &&
        std::chrono::steady_clock::now() - g_poll.end < std::chrono::nanoseconds(kPollGapNs)) {
      const int rc = call();  // the run goes on: its events now end here
      g_poll.end_ticks = g_poll.op->end_ns = g_poll.comm->end_ns = pf::ticks();
      g_poll.end = std::chrono::steady_clock::now();
      --t_inside;
      return rc;
    }
    close_compute();
    if (cut) {
      g_window_start = PMPI_Wtime();
      close(g_iteration);
      open_iteration();
    }
  }
  const std::int64_t seq =
      collective && comm != MPI_COMM_NULL && is_world(comm) ? g_world_seq.fetch_add(1, std::memory_order_relaxed) : -1;
  int rc;
  if (main && names.poll) {
    // A poll starts a run: its events stay reachable, so later calls of the run extend them.
    pf::Event* op = pf::detail::open_event(g_buffer, pf::EventKind::kOperator, names.function);
    pf::Event* ev = op ? pf::detail::open_event(g_buffer, pf::EventKind::kCommunication, names.comm) : nullptr;
    if (ev != nullptr) {
      op->id = g_buffer->new_id();
      ev->id = g_buffer->new_id();
      ev->parent = op->id;
      ev->detail = g_mpi;
      ev->start_ns = pf::ticks();
    }
    rc = call();
    if (op != nullptr && ev == nullptr) op->end_ns = pf::ticks();  // its communication was dropped
    if (ev != nullptr) {
      g_poll = {op, ev, names.function, pf::ticks(), std::chrono::steady_clock::now()};
      op->end_ns = ev->end_ns = g_poll.end_ticks;
      --t_inside;
      return rc;  // no compute event yet: the run may go on (close_compute makes it)
    }
  } else {
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

// --- nonblocking collectives: the post, unnumbered (its wait is in MPI_Wait* / MPI_Test*)

int MPI_Ibarrier(MPI_Comm comm, MPI_Request* request) {
  static const Names names{pf::name_id("MPI_Ibarrier"), pf::name_id("ibarrier")};
  return record(names, 0, comm, false, [&] { return PMPI_Ibarrier(comm, request); });
}

int MPI_Ibcast(void* buf, int count, MPI_Datatype type, int root, MPI_Comm comm, MPI_Request* request) {
  static const Names names{pf::name_id("MPI_Ibcast"), pf::name_id("ibroadcast")};
  return record(names, bytes_of(count, type), comm, false,
                [&] { return PMPI_Ibcast(buf, count, type, root, comm, request); });
}

int MPI_Iallreduce(const void* send, void* recv, int count, MPI_Datatype type, MPI_Op op, MPI_Comm comm,
                   MPI_Request* request) {
  static const Names names{pf::name_id("MPI_Iallreduce"), pf::name_id("iallreduce")};
  return record(names, bytes_of(count, type), comm, false,
                [&] { return PMPI_Iallreduce(send, recv, count, type, op, comm, request); });
}

int MPI_Ireduce(const void* send, void* recv, int count, MPI_Datatype type, MPI_Op op, int root, MPI_Comm comm,
                MPI_Request* request) {
  static const Names names{pf::name_id("MPI_Ireduce"), pf::name_id("ireduce")};
  return record(names, bytes_of(count, type), comm, false,
                [&] { return PMPI_Ireduce(send, recv, count, type, op, root, comm, request); });
}

int MPI_Iallgather(const void* send, int scount, MPI_Datatype stype, void* recv, int rcount, MPI_Datatype rtype,
                   MPI_Comm comm, MPI_Request* request) {
  static const Names names{pf::name_id("MPI_Iallgather"), pf::name_id("iallgather")};
  return record(names, bytes_of(rcount, rtype) * comm_size(comm), comm, false,
                [&] { return PMPI_Iallgather(send, scount, stype, recv, rcount, rtype, comm, request); });
}

int MPI_Igather(const void* send, int scount, MPI_Datatype stype, void* recv, int rcount, MPI_Datatype rtype, int root,
                MPI_Comm comm, MPI_Request* request) {
  static const Names names{pf::name_id("MPI_Igather"), pf::name_id("igather")};
  return record(names, bytes_of(scount, stype) * comm_size(comm), comm, false,
                [&] { return PMPI_Igather(send, scount, stype, recv, rcount, rtype, root, comm, request); });
}

int MPI_Iscatter(const void* send, int scount, MPI_Datatype stype, void* recv, int rcount, MPI_Datatype rtype, int root,
                 MPI_Comm comm, MPI_Request* request) {
  static const Names names{pf::name_id("MPI_Iscatter"), pf::name_id("iscatter")};
  return record(names, bytes_of(rcount, rtype) * comm_size(comm), comm, false,
                [&] { return PMPI_Iscatter(send, scount, stype, recv, rcount, rtype, root, comm, request); });
}

int MPI_Ialltoall(const void* send, int scount, MPI_Datatype stype, void* recv, int rcount, MPI_Datatype rtype,
                  MPI_Comm comm, MPI_Request* request) {
  static const Names names{pf::name_id("MPI_Ialltoall"), pf::name_id("ialltoall")};
  return record(names, bytes_of(scount, stype) * comm_size(comm), comm, false,
                [&] { return PMPI_Ialltoall(send, scount, stype, recv, rcount, rtype, comm, request); });
}

int MPI_Ireduce_scatter_block(const void* send, void* recv, int count, MPI_Datatype type, MPI_Op op, MPI_Comm comm,
                              MPI_Request* request) {
  static const Names names{pf::name_id("MPI_Ireduce_scatter_block"), pf::name_id("ireducescatter")};
  return record(names, bytes_of(count, type) * comm_size(comm), comm, false,
                [&] { return PMPI_Ireduce_scatter_block(send, recv, count, type, op, comm, request); });
}

// --- point to point: the blocking calls span their time, posts (Isend, Irecv) their own call

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

int MPI_Isend(const void* buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm, MPI_Request* request) {
  static const Names names{pf::name_id("MPI_Isend"), pf::name_id("isend")};
  return record(names, bytes_of(count, type), comm, false,
                [&] { return PMPI_Isend(buf, count, type, dest, tag, comm, request); });
}

int MPI_Issend(const void* buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm, MPI_Request* request) {
  static const Names names{pf::name_id("MPI_Issend"), pf::name_id("isend")};
  return record(names, bytes_of(count, type), comm, false,
                [&] { return PMPI_Issend(buf, count, type, dest, tag, comm, request); });
}

int MPI_Irecv(void* buf, int count, MPI_Datatype type, int source, int tag, MPI_Comm comm, MPI_Request* request) {
  static const Names names{pf::name_id("MPI_Irecv"), pf::name_id("irecv")};
  return record(names, bytes_of(count, type), comm, false,
                [&] { return PMPI_Irecv(buf, count, type, source, tag, comm, request); });
}

// --- completion: "wait" and "test" events span the call

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

int MPI_Waitsome(int incount, MPI_Request requests[], int* outcount, int indices[], MPI_Status statuses[]) {
  static const Names names{pf::name_id("MPI_Waitsome"), pf::name_id("wait")};
  return record(names, 0, MPI_COMM_NULL, false,
                [&] { return PMPI_Waitsome(incount, requests, outcount, indices, statuses); });
}

int MPI_Test(MPI_Request* request, int* flag, MPI_Status* status) {
  static const Names names{pf::name_id("MPI_Test"), pf::name_id("test"), true};
  return record(names, 0, MPI_COMM_NULL, false, [&] { return PMPI_Test(request, flag, status); });
}

int MPI_Testall(int count, MPI_Request requests[], int* flag, MPI_Status statuses[]) {
  static const Names names{pf::name_id("MPI_Testall"), pf::name_id("test"), true};
  return record(names, 0, MPI_COMM_NULL, false, [&] { return PMPI_Testall(count, requests, flag, statuses); });
}

int MPI_Testany(int count, MPI_Request requests[], int* index, int* flag, MPI_Status* status) {
  static const Names names{pf::name_id("MPI_Testany"), pf::name_id("test"), true};
  return record(names, 0, MPI_COMM_NULL, false, [&] { return PMPI_Testany(count, requests, index, flag, status); });
}

int MPI_Testsome(int incount, MPI_Request requests[], int* outcount, int indices[], MPI_Status statuses[]) {
  static const Names names{pf::name_id("MPI_Testsome"), pf::name_id("test"), true};
  return record(names, 0, MPI_COMM_NULL, false,
                [&] { return PMPI_Testsome(incount, requests, outcount, indices, statuses); });
}

}  // extern "C"
