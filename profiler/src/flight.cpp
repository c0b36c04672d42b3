#include "commscope/profiler/flight.hpp"

#include <pthread.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <mutex>
#include <thread>

#include "commscope/common/stop_signals.hpp"
#include "commscope/common/timing.hpp"
#include "commscope/profiler/clock.hpp"
#include "commscope/profiler/recorder.hpp"

namespace commscope::profiler::flight {
namespace {

namespace pf = commscope::profiler;

constexpr int kMaxRings = 1024;  // communicators recorded; later ones go unrecorded (said in the file)
constexpr int kDefaultCalls = 64;

// One call. Written by the thread that makes it, read by the dump: `posted` last on posting and
// `completed` on completion, each a release store, so the dump sees a whole entry or its older one.
struct Entry {
  std::int64_t seq = -1;
  std::uint32_t op = 0, link = 0;
  std::int64_t bytes = 0;
  int peer = -1;
  Detail detail;
  std::atomic<std::int64_t> posted{0};     // now()'s clock; 0: empty
  std::atomic<std::int64_t> completed{0};  // 0: not (yet)
  // A nonblocking call's request (track_request): when a wait or test first looked at it, when
  // one returned it done (0: not yet).
  std::atomic<bool> nonblocking{false};
  std::atomic<std::int64_t> checked{0}, done{0};
};

// A tracked request: its key, its call's slot and that slot's posting time (a ring that wrapped
// around since holds another call there: then the request's marks are not written).
struct Pending {
  std::uint64_t key = 0;
  Handle h;
  std::int64_t posted = 0;
  bool used = false;
};

struct Ring {
  std::uint32_t label = 0;
  std::vector<int> members;
  std::unique_ptr<Entry[]> entries;
  std::atomic<std::uint64_t> next{0};  // calls posted so far
};

struct State {
  int rank = -1, size = 0, calls = kDefaultCalls;
  std::string dir, host, tool;
  std::vector<std::string> hosts;  // every world rank's
  double timeout_s = 0;
  bool exit_on_hang = false;
  std::mutex mutex;            // open_ring, dump
  bool error_written = false;  // an "error" record was written: no later dump replaces it (under mutex)
  Ring rings[kMaxRings];
  std::atomic<int> used{0};
  std::atomic<int> refused{0};
  std::atomic<std::int64_t> last_done{0};  // ticks: when a call last completed (or MPI_Init)
  std::atomic<std::uint64_t> progress{0};  // calls completed (an estimate under threads: no RMW)
  std::atomic<std::uint32_t> phase{0};     // enter_phase's: a name id (0: none), since when (ticks)
  std::atomic<std::int64_t> phase_since{0};
  std::int64_t ticks0 = 0;  // a calibration pair of the raw clock and the wall clock
  double wall0 = 0;
  // Requests of nonblocking calls not yet done: slots [0, pending_high) hold the used ones (few
  // at once in practice, so a scan is short); under pending_mutex, pending_count read without it.
  Pending pending[kMaxPending];
  int pending_high = 0;
  std::mutex pending_mutex;
  std::atomic<int> pending_count{0};
  std::thread watchdog;
  std::mutex wait_mutex;
  std::condition_variable wake;
  bool stopping = false;
};
State* g = nullptr;

double wall_now() {
  timespec ts{};
  clock_gettime(CLOCK_REALTIME, &ts);
  return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
}

// Raw ticks to wall-clock seconds, by the pair taken at start and one taken now (the TSC's rate
// over the run; CLOCK_MONOTONIC's ns one to one).
struct ToWall {
  double now_wall;
  std::int64_t now_ticks;
  double seconds_per_tick;
  ToWall() : now_wall(wall_now()), now_ticks(now()) {
    const double dt = static_cast<double>(now_ticks - g->ticks0);
    seconds_per_tick = dt > 1e6 ? (now_wall - g->wall0) / dt : 1e-9;
  }
  double operator()(std::int64_t t) const {
    return t == 0 ? 0 : now_wall - static_cast<double>(now_ticks - t) * seconds_per_tick;
  }
};

std::string name_of(std::uint32_t id) {
  if (id == 0) return "-";
  try {
    return pf::process_names().at(id);
  } catch (const std::exception&) {
    return "?";
  }
}

// The watchdog: once per stall (no call completed for timeout_s), this rank's file.
void watch() {
  std::uint64_t dumped_at = ~std::uint64_t{0};
  std::unique_lock lock(g->wait_mutex);
  const auto tick = std::chrono::duration<double>(std::min(1.0, g->timeout_s / 4));
  // A tick far later than asked: this rank itself was not running (timing::Ticks), so a stall
  // counts from its return, not from its last call.
  timing::Ticks ticks(tick.count());
  double resumed_wall = 0;
  while (!g->stopping) {
    g->wake.wait_for(lock, tick);
    if (g->stopping) break;
    const bool late = ticks.late();
    const std::uint64_t progress = g->progress.load();
    const ToWall wall;
    if (late) resumed_wall = wall.now_wall;
    const double since = wall.now_wall - std::max(wall(g->last_done.load()), resumed_wall);
    if (progress == dumped_at || since < g->timeout_s) continue;
    dumped_at = progress;
    lock.unlock();
    const std::string path = dump("watchdog");
    if (g->exit_on_hang) {
      std::fprintf(stderr, "%s: rank %d: no MPI progress for %g s (COMMSCOPE_HANG_EXIT=1): ending\n", g->tool.c_str(),
                   g->rank, g->timeout_s);
      std::fflush(stderr);
      _exit(3);
    }
    lock.lock();
  }
}

std::string default_dir(const std::string& profile) {
  const std::string stem = profile.ends_with(".h5") ? profile.substr(0, profile.size() - 3) : profile;
  return stem + ".flight";
}

}  // namespace

std::string start(int world_rank, int world_size, const std::string& profile, std::vector<std::string> hosts,
                  std::string tool, bool profiler_clock) {
  if (g != nullptr) return "";
  std::string warning;
  // COMMSCOPE_FLIGHT_CALLS=0: no recorder (what it costs a call is then measurable beside it).
  if (const char* v = std::getenv("COMMSCOPE_FLIGHT_CALLS"); v != nullptr && std::strcmp(v, "0") == 0) return "";
  g = new State;
  g->rank = world_rank, g->size = world_size;
  g->tool = std::move(tool);
  g->host = world_rank < static_cast<int>(hosts.size()) ? hosts[static_cast<std::size_t>(world_rank)] : "";
  g->hosts = std::move(hosts);
  if (const char* v = std::getenv("COMMSCOPE_FLIGHT_CALLS"); v != nullptr && *v) {
    char* end = nullptr;
    const long n = std::strtol(v, &end, 10);
    if (end == v || *end != '\0' || n < 1 || n > 1 << 20)
      warning =
          std::string("COMMSCOPE_FLIGHT_CALLS='") + v + "' is not 0 (off) or 1 to 1048576: 64 calls a communicator";
    else
      g->calls = static_cast<int>(n);
  }
  const char* dir = std::getenv("COMMSCOPE_FLIGHT_DIR");
  g->dir = dir != nullptr && *dir ? dir : default_dir(profile);
  if (const char* v = std::getenv("COMMSCOPE_HANG_TIMEOUT"); v != nullptr && *v) {
    char* end = nullptr;
    const double s = std::strtod(v, &end);
    if (end == v || *end != '\0' || !(s > 0))
      warning = std::string("COMMSCOPE_HANG_TIMEOUT='") + v + "' is not a positive number of seconds: no watchdog";
    else
      g->timeout_s = s;
  }
  const char* ex = std::getenv("COMMSCOPE_HANG_EXIT");
  g->exit_on_hang = ex != nullptr && std::strcmp(ex, "1") == 0;
  detail::g_tsc.store(profiler_clock ? pf::detail::g_use_tsc.load() : pf::tsc_usable());
  g->ticks0 = now(), g->wall0 = wall_now();
  g->last_done.store(g->ticks0);
  std::vector<int> all(static_cast<std::size_t>(world_size));
  for (int r = 0; r < world_size; ++r) all[static_cast<std::size_t>(r)] = r;
  open_ring(0, std::move(all));  // ring 0: MPI_COMM_WORLD
  if (g->timeout_s > 0) g->watchdog = std::thread(watch);
  pf::detail::g_flight_phases.store(true, std::memory_order_relaxed);
  return warning;
}

void stop() {
  if (g == nullptr) return;
  {
    std::lock_guard lock(g->wait_mutex);
    g->stopping = true;
  }
  g->wake.notify_all();
  if (g->watchdog.joinable()) g->watchdog.join();
}

bool on() {
  return g != nullptr;
}

int open_ring(std::uint32_t label, std::vector<int> members) {
  if (g == nullptr) return -1;
  std::lock_guard lock(g->mutex);
  const int i = g->used.load();
  if (i >= kMaxRings) {
    g->refused.fetch_add(1);
    return -1;
  }
  Ring& r = g->rings[i];
  r.label = label;
  r.members = std::move(members);
  r.entries = std::make_unique<Entry[]>(static_cast<std::size_t>(g->calls));
  g->used.store(i + 1, std::memory_order_release);
  return i;
}

int ring_of(std::uint32_t label) {
  if (g == nullptr) return -1;
  std::lock_guard lock(g->mutex);
  for (int i = 1; i < g->used.load(); ++i)
    if (g->rings[i].label == label) return i;
  return -1;
}

Handle posted(int ring, std::int64_t seq, std::uint32_t op, std::int64_t bytes, int peer, std::uint32_t link,
              std::int64_t ticks, const Detail& detail) {
  if (g == nullptr || ring < 0 || ring >= g->used.load(std::memory_order_acquire)) return {};
  Ring& r = g->rings[ring];
  const std::uint64_t at = r.next.fetch_add(1, std::memory_order_relaxed);
  Entry& e = r.entries[at % static_cast<std::uint64_t>(g->calls)];
  e.posted.store(0, std::memory_order_relaxed);
  e.completed.store(0, std::memory_order_relaxed);
  e.nonblocking.store(false, std::memory_order_relaxed);
  e.checked.store(0, std::memory_order_relaxed);
  e.done.store(0, std::memory_order_relaxed);
  e.seq = seq, e.op = op, e.bytes = bytes, e.peer = peer, e.link = link, e.detail = detail;
  e.posted.store(ticks, std::memory_order_release);
  return {ring, at};
}

void completed(Handle h, std::int64_t ticks) {
  if (g == nullptr || h.ring < 0) return;
  Ring& r = g->rings[h.ring];
  r.entries[h.at % static_cast<std::uint64_t>(g->calls)].completed.store(ticks, std::memory_order_release);
  g->last_done.store(ticks, std::memory_order_relaxed);
  g->progress.store(g->progress.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
}

namespace {

// The entry of a tracked request's call, or null where the ring has moved past it.
Entry* entry_of(const Pending& p) {
  if (p.h.ring < 0) return nullptr;
  Entry& e = g->rings[p.h.ring].entries[p.h.at % static_cast<std::uint64_t>(g->calls)];
  return e.posted.load(std::memory_order_acquire) == p.posted ? &e : nullptr;
}

// The slot tracking `key`, or -1 (under pending_mutex).
int pending_slot(std::uint64_t key) {
  for (int i = 0; i < g->pending_high; ++i)
    if (g->pending[i].used && g->pending[i].key == key) return i;
  return -1;
}

}  // namespace

void track_request(std::uint64_t key, Handle h) {
  if (g == nullptr || h.ring < 0) return;
  Entry& e = g->rings[h.ring].entries[h.at % static_cast<std::uint64_t>(g->calls)];
  std::lock_guard lock(g->pending_mutex);
  int slot = pending_slot(key);  // a key seen again: its request was freed unseen, the handle reused
  for (int i = 0; slot < 0 && i < kMaxPending; ++i)
    if (!g->pending[i].used) slot = i;
  if (slot < 0) return;  // full: this call reads as a blocking one
  if (!g->pending[slot].used) g->pending_count.fetch_add(1, std::memory_order_relaxed);
  g->pending[slot] = {key, h, e.posted.load(std::memory_order_relaxed), true};
  g->pending_high = std::max(g->pending_high, slot + 1);
  e.nonblocking.store(true, std::memory_order_release);
}

bool tracking() {
  return g != nullptr && g->pending_count.load(std::memory_order_relaxed) > 0;
}

bool check_request(std::uint64_t key, std::int64_t ticks) {
  if (!tracking()) return false;
  std::lock_guard lock(g->pending_mutex);
  const int slot = pending_slot(key);
  if (slot < 0) return false;
  if (Entry* e = entry_of(g->pending[slot]); e != nullptr && e->checked.load(std::memory_order_relaxed) == 0)
    e->checked.store(ticks, std::memory_order_release);
  return true;
}

void finish_request(std::uint64_t key, std::int64_t ticks, bool freed) {
  if (!tracking()) return;
  std::lock_guard lock(g->pending_mutex);
  const int slot = pending_slot(key);
  if (slot < 0) return;
  if (Entry* e = entry_of(g->pending[slot]); e != nullptr) {
    if (freed)
      e->nonblocking.store(false, std::memory_order_release);  // no claim on it: read as its post alone
    else
      e->done.store(ticks, std::memory_order_release);
  }
  g->pending[slot].used = false;
  g->pending_count.fetch_sub(1, std::memory_order_relaxed);
  while (g->pending_high > 0 && !g->pending[g->pending_high - 1].used) --g->pending_high;
}

void enter_phase(std::uint32_t name, std::int64_t ticks) {
  if (g == nullptr) return;
  g->phase_since.store(ticks, std::memory_order_relaxed);
  g->phase.store(name, std::memory_order_release);
}

}  // namespace commscope::profiler::flight

void commscope::profiler::detail::flight_phase(NameId name) noexcept {
  flight::enter_phase(name, flight::now());
}

namespace commscope::profiler::flight {

void watch_sigusr1() {
  static bool watching = false;  // once a process
  if (g == nullptr || watching) return;
  const int fd = commscope::stop::signal_pipe::open();  // the handler only writes the signal's number there
  if (fd < 0) return;
  watching = true;
  // The thread takes no signal: a process-directed one lands on the program's threads.
  sigset_t all, old;
  sigfillset(&all);
  pthread_sigmask(SIG_BLOCK, &all, &old);
  std::thread([fd] {
    for (;;) {
      unsigned char byte = 0;
      const ssize_t n = read(fd, &byte, 1);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0 || byte == 0) return;
      (void)dump("signal");
    }
  }).detach();
  pthread_sigmask(SIG_SETMASK, &old, nullptr);
  static const int kSignals[] = {SIGUSR1};
  commscope::stop::signal_pipe::install(kSignals, 1);
}

std::string dump(const char* reason, const std::string& error) {
  if (g == nullptr) return "";
  std::lock_guard lock(g->mutex);
  // The record of an error stays: the end of the job that follows it (the launcher's SIGTERM)
  // would only replace it with the same calls and without the error.
  if (g->error_written) return "";
  if (!error.empty()) g->error_written = true;
  if (mkdir(g->dir.c_str(), 0777) != 0 && errno != EEXIST) {
    std::fprintf(stderr, "%s: rank %d: no flight record: cannot create %s: %s\n", g->tool.c_str(), g->rank,
                 g->dir.c_str(), std::strerror(errno));
    return "";
  }
  char name[64];
  std::snprintf(name, sizeof name, "/rank%05d.flight", g->rank);
  const std::string path = g->dir + name, partial = path + ".partial";
  FILE* f = std::fopen(partial.c_str(), "w");
  if (f == nullptr) {
    std::fprintf(stderr, "%s: rank %d: no flight record: cannot write %s: %s\n", g->tool.c_str(), g->rank,
                 partial.c_str(), std::strerror(errno));
    return "";
  }
  const ToWall wall;
  std::fprintf(f, "commscope-flight 1\nrank %d\nsize %d\nhost %s\npid %d\nreason %s\nwritten %.6f\nlast_done %.6f\n",
               g->rank, g->size, g->host.c_str(), static_cast<int>(getpid()), reason, wall.now_wall,
               wall(g->last_done.load()));
  if (!error.empty()) {  // one line
    std::string line = error;
    std::replace(line.begin(), line.end(), '\n', ' ');
    std::fprintf(f, "error %s\n", line.c_str());
  }
  std::fprintf(f, "tool %s\n", g->tool.c_str());
  if (const std::uint32_t phase = g->phase.load(std::memory_order_acquire); phase != 0)
    std::fprintf(f, "phase %s %.6f\n", name_of(phase).c_str(), wall(g->phase_since.load(std::memory_order_relaxed)));
  // Every world rank's host, in rank order ("-" for a name it did not give).
  std::fprintf(f, "hosts");
  for (const std::string& h : g->hosts) std::fprintf(f, " %s", h.empty() ? "-" : h.c_str());
  std::fprintf(f, "\n");
  std::fprintf(f, "unrecorded_communicators %d\n", g->refused.load());
  const int used = g->used.load(std::memory_order_acquire);
  for (int i = 0; i < used; ++i) {
    Ring& r = g->rings[i];
    std::string members;
    for (int m : r.members) {
      if (!members.empty()) members += ',';
      members += std::to_string(m);
    }
    const std::uint64_t next = r.next.load(std::memory_order_acquire);
    std::fprintf(f, "comm %s %s %llu\n", i == 0 ? "world" : name_of(r.label).c_str(), members.c_str(),
                 static_cast<unsigned long long>(next));
    const std::uint64_t n = static_cast<std::uint64_t>(g->calls);
    for (std::uint64_t at = next > n ? next - n : 0; at < next; ++at) {
      const Entry& e = r.entries[at % n];
      const std::int64_t posted_ticks = e.posted.load(std::memory_order_acquire);
      if (posted_ticks == 0) continue;  // being written
      const double posted = wall(posted_ticks), completed = wall(e.completed.load(std::memory_order_acquire));
      // A collective's root as its world rank (the ring's members are the communicator's, by rank).
      const int root = e.detail.root >= 0 && e.detail.root < static_cast<int>(r.members.size())
                           ? r.members[static_cast<std::size_t>(e.detail.root)]
                           : -1;
      // A nonblocking call's request: when a wait or test first looked at it, when it was done
      // (0: not); "- -" for a blocking call.
      char request[64] = "- -";
      if (e.nonblocking.load(std::memory_order_acquire))
        std::snprintf(request, sizeof request, "%.6f %.6f", wall(e.checked.load(std::memory_order_acquire)),
                      wall(e.done.load(std::memory_order_acquire)));
      std::fprintf(f, "call %lld %s %lld %d %s %.6f %.6f %s %s %d %s\n", static_cast<long long>(e.seq),
                   name_of(e.op).c_str(), static_cast<long long>(e.bytes), e.peer, name_of(e.link).c_str(), posted,
                   completed, name_of(e.detail.type).c_str(), name_of(e.detail.reduction).c_str(), root, request);
    }
  }
  const bool ok = std::fflush(f) == 0 && std::ferror(f) == 0;
  std::fclose(f);
  if (!ok || std::rename(partial.c_str(), path.c_str()) != 0) {
    std::fprintf(stderr, "%s: rank %d: no flight record: cannot write %s\n", g->tool.c_str(), g->rank, path.c_str());
    std::remove(partial.c_str());
    return "";
  }
  std::fprintf(stderr, "%s: rank %d: %s: flight record written to %s\n", g->tool.c_str(), g->rank, reason,
               path.c_str());
  return path;
}

}  // namespace commscope::profiler::flight
