// libcommscope-mpiprof.so: the breakdown of an MPI program that cannot be changed, through the
// MPI profiling interface (PMPI). Preload it:
//
//   mpirun -np 4 -x LD_PRELOAD=$PWD/build/lib/libcommscope-mpiprof.so ./app
//   commscope-report profile commscope-mpiprof.h5
//
// MPI_Init starts a profiling session over MPI_COMM_WORLD; every wrapped MPI call (collectives.cpp,
// point_to_point.cpp; this file records them) is a communication event (its collective or
// operation name, "mpi", its bytes as bytes.hpp counts them) and the time
// between two MPI calls of the thread that initialised MPI is host compute (a kernel event named
// "compute"). Collectives on MPI_COMM_WORLD carry a sequence number, so that the session splits
// them into wait and transfer across ranks, and so do collectives on every other communicator,
// under its label: its members' world ranks and which communicator of them it is ("mpi[0,2]",
// "mpi[0,2]#1"; communicators.hpp, numbered at creation by comm_create.cpp); point-to-point
// calls count as transfer. Iterations: MPI_Pcontrol(1) starts the next one (the first starts at
// MPI_Init), or COMMSCOPE_WINDOW_MS=N cuts the run into slices of N ms (checked at MPI calls);
// neither: the whole run is one iteration. MPI_Finalize writes the profile
// (COMMSCOPE_PROFILE_OUT, default commscope-mpiprof.h5; docs/profiler.md).
//
// Nonblocking calls: posting (MPI_Isend, MPI_Iallreduce, ...) is a short communication event of
// its own ("isend", "iallreduce", with its bytes); a collective's post is numbered on its
// communicator as the blocking ones are (so the replay runs it there), a message's is not. The
// operation's wait is spent in MPI_Wait* / MPI_Test* ("wait", "test").
//
// Signals: SIGTERM and SIGINT make the rank that receives one write a profile of its own
// (Session::finish_local: no MPI, the other ranks may be gone) to NAME.signal.rankNNNNN.h5 next to
// COMMSCOPE_PROFILE_OUT, then end as the signal would have ended it. SIGUSR1 writes the rank's
// flight record (flight.hpp: its last calls on each communicator, NAME.flight/rankNNNNN.flight;
// `commscope-report hang` reads them) and the job goes on; so does the watchdog's
// (COMMSCOPE_HANG_TIMEOUT=SECONDS without progress). The handler (the stop path's signal pipe,
// commscope/common/stop_signals.hpp) only writes the signal's number to a pipe; a watcher thread
// does the rest. COMMSCOPE_SIGNALS=0: no handlers.
//
// The profiler's own MPI calls (clock offsets, gathering, writing) go straight to PMPI.
#include <mpi.h>

#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <memory>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "commscope/common/stop_signals.hpp"
#include "commscope/formats/profile_file.hpp"
#include "commscope/profiler/flight.hpp"
#include "commscope/profiler/flight_watch.hpp"
#include "commscope/profiler/recorder.hpp"
#include "commscope/profiler/session.hpp"
#include "communicators.hpp"
#include "record.hpp"

namespace pf = commscope::profiler;
namespace mpiprof = commscope::mpiprof;
namespace flight = commscope::profiler::flight;
namespace stop = commscope::stop;

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
pf::NameId g_mpi = 0, g_compute_name = 0, g_other_threads = 0;

// Compute on the program's other threads during a collective (a helper thread streaming memory,
// an OpenMP team left running): the process's CPU time less the calling thread's over the call,
// read for collectives of kOtherThreadsBytes or more (four CPU-clock reads, about 1 us, are under
// 1% of such a call). Recorded as a compute event "other threads" from the call's start, as long
// as that CPU time (at most the call): the breakdown counts it as compute overlapping the call,
// and commscope-report profile --bench the call's transfer beyond alone as contention.
constexpr std::int64_t kOtherThreadsBytes = 64 * 1024;
struct CpuClocks {
  std::int64_t process = 0, thread = 0, wall = 0;
};
std::int64_t clock_ns(clockid_t id) {
  timespec t{};
  clock_gettime(id, &t);
  return static_cast<std::int64_t>(t.tv_sec) * 1'000'000'000 + t.tv_nsec;
}
CpuClocks cpu_clocks() {
  return {clock_ns(CLOCK_PROCESS_CPUTIME_ID), clock_ns(CLOCK_THREAD_CPUTIME_ID), clock_ns(CLOCK_MONOTONIC)};
}
// The "other threads" event of a call [start, end) (ticks) that began at `before`.
void record_other_threads(const CpuClocks& before, std::int64_t start, std::int64_t end) {
  const CpuClocks after = cpu_clocks();
  const std::int64_t others = (after.process - before.process) - (after.thread - before.thread);
  const std::int64_t wall = after.wall - before.wall;
  if (others <= 0 || wall <= 0 || end <= start || !pf::recording()) return;
  pf::detail::ThreadBuffer* buffer = nullptr;
  if (pf::Event* e = pf::detail::open_event(buffer, pf::EventKind::kKernel, g_other_threads)) {
    const double share = std::min(1.0, static_cast<double>(others) / static_cast<double>(wall));
    e->start_ns = start;
    e->end_ns = start + std::llround(share * static_cast<double>(end - start));
  }
}

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

// --- writing at a signal (the stop path's signal pipe, commscope/common/stop_signals.hpp: nothing
// but write() in the handler)

constexpr int kSignals[] = {SIGTERM, SIGINT, SIGUSR1};
int g_pipe = -1;                          // the pipe's read end: the signal's number; 0 asks the watcher to stop
bool g_watching = false;                  // the watcher was started
std::atomic<bool> g_watcher_done{false};  // ... and has returned
std::string g_signal_path;                // this rank's profile at a signal
// Who finishes the session: MPI_Finalize (collective) or the watcher at a signal (local), not both.
enum : int { kRunning, kSignalled, kFinishing };
std::atomic<int> g_state{kRunning};

const char* signal_name(int sig) {
  switch (sig) {
    case SIGTERM:
      return "SIGTERM";
    case SIGINT:
      return "SIGINT";
    default:
      return "signal";
  }
}

// The watcher: at a signal, this rank's profile, then the signal again under the disposition it
// had before MPI_Init (by default: the end of the process). Runs with every signal blocked, so a
// process-directed signal lands on another thread.
void watch_once() {
  for (;;) {
    unsigned char byte = 0;
    const ssize_t n = read(g_pipe, &byte, 1);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0 || byte == 0) return;  // MPI_Finalize
    const int sig = byte;
    if (sig == SIGUSR1) {  // the flight record (flight.hpp), and the job goes on
      (void)flight::dump("signal");
      continue;
    }
    // The job ends (a launcher ending it after another rank's error, a user's Ctrl-C): where
    // this rank was, first (a few hundred bytes), then its profile.
    (void)flight::dump("signal");
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
    stop::signal_pipe::restore();
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
  if ((g_pipe = stop::signal_pipe::open()) < 0) {
    std::fprintf(stderr, "libcommscope-mpiprof: no profile at a signal: pipe: %s\n", std::strerror(errno));
    return;
  }
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
  if (g_watching) stop::signal_pipe::install(kSignals, static_cast<int>(std::size(kSignals)));
}

// At MPI_Finalize: the handlers back as they were, and the watcher ended (or, after a signal,
// waited for: it is writing this rank's profile).
// The pipe stays open: a handler already running on another thread may still write to it.
void stop_watcher() {
  stop::signal_pipe::restore();
  if (!g_watching) return;
  g_watching = false;
  stop::signal_pipe::post(0);
  g_watcher_done.wait(false);
}

// An MPI error where the program left errors fatal: this rank's flight record (its call in
// progress, the one that failed, with the error's text), then the end MPI_ERRORS_ARE_FATAL makes.
void fatal_error(MPI_Comm* comm, int* code, ...) {
  char text[MPI_MAX_ERROR_STRING + 1] = {}, name[MPI_MAX_ERROR_STRING + 1] = {};
  int len = 0, error_class = 0;
  PMPI_Error_string(*code, text, &len);
  PMPI_Error_class(*code, &error_class);
  PMPI_Error_string(error_class, name, &len);
  std::string error = text;
  if (std::strcmp(text, name) != 0) error += " (" + std::string(name) + ")";
  for (char& c : error)
    if (c == '\n') c = ' ';
  (void)flight::dump("error", error);
  std::fprintf(stderr, "libcommscope-mpiprof: MPI error: %s: the job ends (errors are fatal)\n", error.c_str());
  PMPI_Abort(comm != nullptr ? *comm : MPI_COMM_WORLD, *code);
}

// MPI_COMM_WORLD's handler, where it is the default (fatal), becomes fatal_error, which the
// communicators made from world inherit; a program's own handler is left alone.
void catch_fatal_errors() {
  MPI_Errhandler current = MPI_ERRHANDLER_NULL;
  if (PMPI_Comm_get_errhandler(MPI_COMM_WORLD, &current) != MPI_SUCCESS) return;
  if (current != MPI_ERRORS_ARE_FATAL) {
    if (current != MPI_ERRHANDLER_NULL && current != MPI_ERRORS_RETURN) PMPI_Errhandler_free(&current);
    return;
  }
  MPI_Errhandler handler = MPI_ERRHANDLER_NULL;
  if (PMPI_Comm_create_errhandler(fatal_error, &handler) != MPI_SUCCESS) return;
  PMPI_Comm_set_errhandler(MPI_COMM_WORLD, handler);
  PMPI_Errhandler_free(&handler);
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
    g_other_threads = pf::name_id("other threads");
    g_main = std::this_thread::get_id();
    const std::string output = o.output;
    g_session = std::make_unique<pf::Session>(MPI_COMM_WORLD, std::move(o));
    g_window_start = PMPI_Wtime();
    next_iteration();
    // Every world rank's host for the flight records: one allgather on MPI_COMM_WORLD inside
    // MPI_Init, which every rank makes there before the program's first call.
    const std::string warning =
        flight::start(g_session->rank(), g_session->size(), output,
                      flight::world_hosts(PMPI_Allgather, PMPI_Get_processor_name), "libcommscope-mpiprof", true);
    if (!warning.empty()) std::fprintf(stderr, "libcommscope-mpiprof: %s\n", warning.c_str());
    if (flight::on()) catch_fatal_errors();
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

bool is_world(MPI_Comm comm) {
  int same = MPI_UNEQUAL;
  return comm == MPI_COMM_WORLD || (PMPI_Comm_compare(comm, MPI_COMM_WORLD, &same) == MPI_SUCCESS && same == MPI_IDENT);
}

// The main thread's call that goes on a polling run (PollRun): it extends the run's events.
bool continues_poll(const mpiprof::Names& names, bool cut) {
  return names.poll && g_poll.op != nullptr && g_poll.function == names.function && !cut &&
         std::chrono::steady_clock::now() - g_poll.end < std::chrono::nanoseconds(kPollGapNs);
}

// The main thread before a call: the compute since the last call ends, and a window's iteration
// when its time is up. Returns whether the call continues a polling run (nothing else done).
bool before_call(const mpiprof::Names& names) {
  const bool cut = g_window_s > 0 && PMPI_Wtime() - g_window_start >= g_window_s;
  if (continues_poll(names, cut)) return true;
  close_compute();
  if (cut) {
    g_window_start = PMPI_Wtime();
    close(g_iteration);
    open_iteration();
  }
  return false;
}

}  // namespace

bool mpiprof::recording_program_call() {
  return t_inside == 0 && g_session && pf::recording();
}

namespace {

thread_local flight::Detail t_detail;           // set_detail's, for this thread's next recorded call
thread_local MPI_Request* t_request = nullptr;  // set_request's, alike

// RequestWatch's requests of this thread's current completion call: their index in the call's
// array and their key (no allocation per call).
constexpr int kMaxWatched = 1024;
struct Watched {
  int index;
  std::uint64_t key;
};
thread_local std::array<Watched, kMaxWatched> t_watched;

// A predefined handle's name: a short table, compared by value (no MPI call).
template <class Handle>
struct Named {
  Handle handle;
  const char* name;
};
template <class Handle, std::size_t N>
std::uint32_t name_in(const Named<Handle> (&table)[N], Handle h, const char* other) {
  static std::array<pf::NameId, N> ids = [&] {
    std::array<pf::NameId, N> out{};
    for (std::size_t i = 0; i < N; ++i) out[i] = pf::name_id(table[i].name);
    return out;
  }();
  static const pf::NameId other_id = pf::name_id(other);
  for (std::size_t i = 0; i < N; ++i)
    if (table[i].handle == h) return ids[i];
  return other_id;
}

std::uint32_t type_name(MPI_Datatype t) {
  static const Named<MPI_Datatype> kTypes[] = {{MPI_FLOAT, "float"},
                                               {MPI_DOUBLE, "double"},
                                               {MPI_INT, "int"},
                                               {MPI_LONG, "long"},
                                               {MPI_LONG_LONG, "long_long"},
                                               {MPI_UNSIGNED, "unsigned"},
                                               {MPI_UNSIGNED_LONG, "unsigned_long"},
                                               {MPI_CHAR, "char"},
                                               {MPI_BYTE, "byte"},
                                               {MPI_SHORT, "short"},
                                               {MPI_INT8_T, "int8"},
                                               {MPI_UINT8_T, "uint8"},
                                               {MPI_INT32_T, "int32"},
                                               {MPI_UINT32_T, "uint32"},
                                               {MPI_INT64_T, "int64"},
                                               {MPI_UINT64_T, "uint64"},
                                               {MPI_C_BOOL, "bool"},
                                               {MPI_LONG_DOUBLE, "long_double"},
                                               {MPI_DOUBLE_INT, "double_int"},
                                               {MPI_2INT, "2int"},
                                               {MPI_FLOAT_INT, "float_int"}};
  return t == MPI_DATATYPE_NULL ? 0 : name_in(kTypes, t, "derived");
}

std::uint32_t op_name(MPI_Op op) {
  static const Named<MPI_Op> kOps[] = {
      {MPI_SUM, "sum"},       {MPI_PROD, "prod"},     {MPI_MAX, "max"},        {MPI_MIN, "min"},   {MPI_LAND, "land"},
      {MPI_LOR, "lor"},       {MPI_BAND, "band"},     {MPI_BOR, "bor"},        {MPI_LXOR, "lxor"}, {MPI_BXOR, "bxor"},
      {MPI_MAXLOC, "maxloc"}, {MPI_MINLOC, "minloc"}, {MPI_REPLACE, "replace"}};
  return op == MPI_OP_NULL ? 0 : name_in(kOps, op, "user");
}

}  // namespace

void mpiprof::set_detail(MPI_Datatype type, MPI_Op op, int root) {
  if (!recording_program_call()) return;
  t_detail = {type_name(type), op_name(op), root};
}

void mpiprof::set_request(MPI_Request* request) {
  if (!recording_program_call()) return;
  t_request = request;
}

mpiprof::RequestWatch::RequestWatch(const MPI_Request* requests, int count) {
  if (requests == nullptr || !flight::tracking() || !recording_program_call()) return;
  const std::int64_t now = pf::ticks();
  for (int i = 0; i < count; ++i) {
    if (requests[i] == MPI_REQUEST_NULL) continue;
    const std::uint64_t key = request_key(requests[i]);
    if (flight::check_request(key, now) && n_ < kMaxWatched) t_watched[static_cast<std::size_t>(n_++)] = {i, key};
  }
}

void mpiprof::RequestWatch::after(const MPI_Request* requests, bool freed) const {
  if (n_ == 0) return;
  const std::int64_t now = pf::ticks();
  for (int k = 0; k < n_; ++k) {
    const Watched& w = t_watched[static_cast<std::size_t>(k)];
    if (freed || requests[w.index] == MPI_REQUEST_NULL) flight::finish_request(w.key, now, freed);
  }
}

int mpiprof::record_call(const Names& names, std::span<const Part> parts, MPI_Comm comm, Kind kind, int (*call)(void*),
                         void* ctx) {
  const flight::Detail detail = std::exchange(t_detail, {});
  MPI_Request* const request = std::exchange(t_request, nullptr);
  if (t_inside > 0 || !g_session || !pf::recording()) return call(ctx);
  ++t_inside;
  const bool main = on_main();
  if (main && before_call(names)) {
    const int rc = call(ctx);  // the run goes on: its events now end here
    g_poll.end_ticks = g_poll.op->end_ns = g_poll.comm->end_ns = pf::ticks();
    g_poll.end = std::chrono::steady_clock::now();
    --t_inside;
    return rc;
  }
  // Collectives are numbered per communicator: MPI_COMM_WORLD's as the session's own (label 0),
  // the others' under their label ("mpi[0,2]", "mpi[0,2]#1"; communicators.hpp).
  mpiprof::CollectiveInstance instance;
  if (kind == Kind::kCollective && comm != MPI_COMM_NULL)
    instance = is_world(comm) ? mpiprof::CollectiveInstance{0, g_world_seq.fetch_add(1, std::memory_order_relaxed), 0}
                              : mpiprof::next_collective(comm);
  // The function's operator holding its communication; not the scopes, since a receive's bytes
  // and a polling run's end are written after the call.
  pf::detail::ThreadBuffer* buffer = nullptr;
  pf::Event* op = pf::detail::open_event(buffer, pf::EventKind::kOperator, names.function);
  constexpr std::size_t kMaxParts = 2;
  std::array<pf::Event*, kMaxParts> events{};
  const std::size_t n = std::min(parts.size(), kMaxParts);
  if (op != nullptr) op->id = buffer->new_id();
  for (std::size_t i = 0; i < n && op != nullptr; ++i) {
    pf::Event* ev = events[i] = pf::detail::open_event(buffer, pf::EventKind::kCommunication, parts[i].comm);
    if (ev == nullptr) break;
    ev->id = buffer->new_id();
    ev->parent = op->id;
    ev->detail = g_mpi;
    ev->bytes = parts[i].bytes;
    ev->seq = instance.seq;
    ev->communicator = instance.label;
  }
  const std::int64_t start = pf::ticks();
  for (pf::Event* ev : events)
    if (ev != nullptr) ev->start_ns = start;
  // The flight recorder's slot (flight.hpp): the first part's bytes and link.
  const int ring = kind == Kind::kCollective ? instance.ring : mpiprof::flight_ring(comm);
  const flight::Handle flown = flight::posted(ring, instance.seq, names.comm, n > 0 ? parts[0].bytes : 0, -1,
                                              n > 0 && parts[0].link != nullptr ? *parts[0].link : 0, start, detail);
  const bool others = kind == Kind::kCollective && n > 0 && parts[0].bytes >= kOtherThreadsBytes;
  const CpuClocks before = others ? cpu_clocks() : CpuClocks{};
  const int rc = call(ctx);
  const std::int64_t end = pf::ticks();
  flight::completed(flown, end);
  if (request != nullptr && rc == MPI_SUCCESS && *request != MPI_REQUEST_NULL)
    flight::track_request(mpiprof::request_key(*request), flown);
  if (others) record_other_threads(before, start, end);
  if (pf::recording()) {  // not when a signal ended the session during the call
    if (op != nullptr) op->end_ns = end;
    for (std::size_t i = 0; i < n; ++i) {
      pf::Event* ev = events[i];
      if (ev == nullptr) continue;
      ev->end_ns = end;
      if (parts[i].received != nullptr) ev->bytes = *parts[i].received;
      if (parts[i].link != nullptr && *parts[i].link != 0) ev->communicator = *parts[i].link;
    }
  }
  if (main && names.poll && events[0] != nullptr) {
    g_poll = {op, events[0], names.function, end, std::chrono::steady_clock::now()};  // the run may go on
  } else if (main) {
    open_compute();
  }
  --t_inside;
  return rc;
}

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
  // In the flight record as a call on MPI_COMM_WORLD until it returns: a rank that finished waits
  // here for the others, and the watchdog still watches.
  static const pf::NameId finalize = pf::name_id("finalize");
  const flight::Handle h = flight::posted(0, -1, finalize, 0, -1, 0, pf::ticks());
  finish();
  const int rc = PMPI_Finalize();
  flight::completed(h, pf::ticks());
  flight::stop();
  return rc;
}

int MPI_Pcontrol(const int level, ...) {
  if (t_inside == 0 && g_session && on_main() && level != 0) {
    ++t_inside;
    next_iteration();
    --t_inside;
  }
  return MPI_SUCCESS;
}

}  // extern "C"

// Whether this library's flight recorder is on: commscope's own tools, run under the library, keep
// theirs off then (profiler/flight_watch.hpp), so that one recorder writes each rank's file.
extern "C" __attribute__((visibility("default"))) int commscope_mpiprof_flight() {
  return flight::on() ? 1 : 0;
}
