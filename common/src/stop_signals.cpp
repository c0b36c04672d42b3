#include "commscope/common/stop_signals.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <stdexcept>

#include "commscope/common/stop_line.hpp"

namespace commscope::stop {
namespace {

// A slot of the registry. Its state word says who owns it: nobody (kFree), the one filling it
// (kSetup), the handler (kOpen: a stop publishes it), the writer closing it or a stop publishing
// it (kClosing), or nobody until its owner lets it go (kPublished).
enum : int { kFree = 0, kSetup, kOpen, kClosing, kPublished };
struct Slot {
  std::atomic<int> state{kFree};
  std::atomic<std::uint64_t> kept{0};
  void (*hook)() noexcept = nullptr;  // instead of a rename
  const char* unit = nullptr;
  char partial[4096] = {};
  char final_path[4096] = {};
};
constexpr int kSlots = 4;
Slot g_slots[kSlots];
static_assert(std::atomic<int>::is_always_lock_free && std::atomic<std::uint64_t>::is_always_lock_free);

std::atomic<int> g_writing{0};               // WriteGuards alive
std::atomic<int> g_requested{0};             // the first stop signal
std::atomic<int> g_pending{0};               // a signal held back until the writes end
std::atomic<bool> g_publish_pending{false};  // the flag mode's first signal came during a write
Mode g_mode = Mode::kPublishAndDie;
// watch(): rank 0's file, seen from another rank.
std::atomic<bool> g_watching{false};
char g_watch_partial[4096] = "";
char g_watch_final[4096] = "";
int g_rank = 0;
char g_prefix[64] = "";

// Ranks other than 0 hold this long before dying (the header says why).
constexpr timespec kHoldForRank0{0, 500'000'000};

void put(const char* s) noexcept {
  [[maybe_unused]] const ssize_t n = ::write(STDERR_FILENO, s, std::strlen(s));
}

// "<prefix>kept 12 rows in FILE": strcat-like appends and a hand-made decimal (async-signal-safe).
void say_kept(const Slot& s) noexcept {
  char line[4300], digits[24];
  std::uint64_t v = s.kept.load();
  int d = sizeof digits - 1;
  digits[d] = '\0';
  do digits[--d] = static_cast<char>('0' + v % 10), v /= 10;
  while (v > 0 && d > 0);
  line[0] = '\0';
  const char* parts[] = {g_prefix, "kept ", digits + d, " ", s.unit, " in ", s.final_path, "\n"};
  for (const char* part : parts) std::strncat(line, part, sizeof line - std::strlen(line) - 1);
  put(line);
}

bool closing() noexcept {
  for (const Slot& s : g_slots)
    if (s.state.load() == kClosing) return true;
  return false;
}

// Publishes each open slot; marks which in `done`. A slot taken here is not the writer's anymore.
int publish_all(bool done[kSlots]) noexcept {
  int n = 0;
  for (int i = 0; i < kSlots; ++i) {
    Slot& s = g_slots[i];
    int expected = kOpen;
    done[i] = s.state.compare_exchange_strong(expected, kClosing);
    if (!done[i]) continue;
    if (s.hook)
      s.hook();
    else
      ::rename(s.partial, s.final_path);
    s.state.store(kPublished);
    ++n;
  }
  return n;
}

// On a rank other than 0, after its hold: rank 0's rows, where it did not publish them.
void say_unpublished() noexcept {
  if (!g_watching.load() || ::access(g_watch_partial, F_OK) != 0) return;
  char line[8400] = "";
  const char* parts[] = {g_prefix, g_watch_final, " was not published: its rows are in ", g_watch_partial, "\n"};
  for (const char* part : parts) std::strncat(line, part, sizeof line - std::strlen(line) - 1);
  put(line);
}

// Publish before anything else (a launcher's SIGKILL may follow), then say why and where, then
// die of the signal: at once outside a handler, on the handler's return inside one (the signal is
// blocked there until then).
void stop_now(int sig) noexcept {
  bool done[kSlots];
  publish_all(done);
  write_stop_line(g_prefix, sig, current_activity());
  for (int i = 0; i < kSlots; ++i)
    if (done[i] && !g_slots[i].hook && g_slots[i].unit) say_kept(g_slots[i]);
  if (g_rank != 0) {
    ::nanosleep(&kHoldForRank0, nullptr);
    say_unpublished();
  }
  std::signal(sig, SIG_DFL);
  std::raise(sig);
}

// The flag mode's publishing: every tracked file as its last flush left it, and where.
int publish_and_say() noexcept {
  bool done[kSlots];
  const int n = publish_all(done);
  for (int i = 0; i < kSlots; ++i)
    if (done[i] && !g_slots[i].hook && g_slots[i].unit) say_kept(g_slots[i]);
  return n;
}

void deliver_deferred() noexcept {
  if (g_writing.load() > 0 || closing()) return;  // the last writer delivers it
  if (g_publish_pending.exchange(false)) publish_and_say();
  if (const int sig = g_pending.exchange(0)) stop_now(sig);
}

extern "C" void on_signal(int sig) {
  int none = 0;
  const bool first = g_requested.compare_exchange_strong(none, sig);
  if (g_mode == Mode::kRaiseFlag && first) {
    // The files are published now, as their last flush left them: the step in progress may take
    // longer than a launcher waits before its SIGKILL (Open MPI's mpirun: about 1 s after its
    // SIGTERM). A write in progress publishes them when it ends.
    g_publish_pending.store(true);
    bool done[kSlots] = {};
    if (g_writing.load() == 0 && !closing() && g_publish_pending.exchange(false)) publish_all(done);
    write_stop_line(g_prefix, sig, current_activity());
    for (int i = 0; i < kSlots; ++i)
      if (done[i] && !g_slots[i].hook && g_slots[i].unit) say_kept(g_slots[i]);
    if (g_rank == 0) {
      char line[160] = "";
      const char* parts[] = {g_prefix, "stopping after the step in progress (a second signal stops at once)\n"};
      for (const char* part : parts) std::strncat(line, part, sizeof line - std::strlen(line) - 1);
      put(line);
    }
    return;
  }
  if (g_writing.load() > 0 || closing()) {  // the writer stops when it is done
    g_pending.store(sig);
    return;
  }
  stop_now(sig);
}

int claim() {
  for (int i = 0; i < kSlots; ++i) {
    int expected = kFree;
    if (g_slots[i].state.compare_exchange_strong(expected, kSetup)) return i;
  }
  throw std::logic_error("commscope::stop: more than 4 files tracked at once");
}

void release(int slot) noexcept {
  Slot& s = g_slots[slot];
  int expected = kOpen;
  if (!s.state.compare_exchange_strong(expected, kFree)) {  // not while a stop is publishing it
    expected = kPublished;
    s.state.compare_exchange_strong(expected, kFree);
  }
}

}  // namespace

void install(const char* tool, int rank, Mode mode) {
  std::snprintf(g_prefix, sizeof g_prefix, "%s: rank %d: ", tool, rank);
  g_rank = rank;
  g_mode = mode;
  struct sigaction sa {};
  sa.sa_handler = on_signal;
  sa.sa_flags = SA_RESTART;  // the flag mode returns: a write or a wait it cut short goes on
  sigemptyset(&sa.sa_mask);
  // One handler at a time, and no SIGPIPE while saying where the files are to a launcher that
  // has gone.
  for (int sig : {SIGINT, SIGTERM, SIGHUP, SIGPIPE}) sigaddset(&sa.sa_mask, sig);
  for (int sig : {SIGINT, SIGTERM, SIGHUP}) {
    struct sigaction before {};
    if (sigaction(sig, nullptr, &before) == 0 && before.sa_handler == SIG_IGN) continue;
    sigaction(sig, &sa, nullptr);
  }
  ::prctl(PR_SET_PDEATHSIG, SIGHUP);
}

int requested() noexcept {
  return g_requested.load();
}

void request(int sig) noexcept {
  int none = 0;
  g_requested.compare_exchange_strong(none, sig);
}

void check_path(const std::string& path) {
  if (path.size() + 16 > sizeof g_slots[0].partial) throw std::invalid_argument("path too long: " + path.substr(0, 64));
}

void watch(const std::string& partial, const std::string& final_path) {
  check_path(partial);
  check_path(final_path);
  g_watching.store(false);
  std::snprintf(g_watch_partial, sizeof g_watch_partial, "%s", partial.c_str());
  std::snprintf(g_watch_final, sizeof g_watch_final, "%s", final_path.c_str());
  g_watching.store(true);
}

TrackedFile::TrackedFile(const std::string& partial, const std::string& final_path, const char* unit) {
  check_path(partial);
  check_path(final_path);
  slot_ = claim();
  Slot& s = g_slots[slot_];
  std::snprintf(s.partial, sizeof s.partial, "%s", partial.c_str());
  std::snprintf(s.final_path, sizeof s.final_path, "%s", final_path.c_str());
  s.hook = nullptr;
  s.unit = unit;
  s.kept.store(0);
  s.state.store(kOpen);
}

TrackedFile::~TrackedFile() {
  release(slot_);
}

void TrackedFile::set_kept(std::uint64_t n) noexcept {
  g_slots[slot_].kept.store(n);
}

bool TrackedFile::held() const noexcept {
  return g_slots[slot_].state.load() == kOpen;
}

bool TrackedFile::begin_close() noexcept {
  int expected = kOpen;
  return g_slots[slot_].state.compare_exchange_strong(expected, kClosing);
}

void TrackedFile::end_close() noexcept {
  g_slots[slot_].state.store(kFree);
  deliver_deferred();
}

TrackedHook::TrackedHook(void (*publish)() noexcept) : slot_(claim()) {
  g_slots[slot_].hook = publish;
  g_slots[slot_].unit = nullptr;
  g_slots[slot_].state.store(kOpen);
}

TrackedHook::~TrackedHook() {
  release(slot_);
}

WriteGuard::WriteGuard() noexcept {
  g_writing.fetch_add(1);
}

WriteGuard::~WriteGuard() {
  if (g_writing.fetch_sub(1) == 1) deliver_deferred();
}

namespace signal_pipe {
namespace {
constexpr int kMax = 8;
int g_fds[2] = {-1, -1};
int g_signals[kMax];
struct sigaction g_before[kMax];  // the dispositions before ours, restored before re-raising
int g_count = 0;
std::atomic<bool> g_installed{false};

extern "C" void on_piped_signal(int sig) {
  const int saved = errno;
  post(static_cast<unsigned char>(sig));
  errno = saved;
}
}  // namespace

int open() noexcept {
  if (g_fds[0] >= 0) return g_fds[0];
  if (::pipe2(g_fds, O_CLOEXEC) != 0) return g_fds[0] = g_fds[1] = -1;
  ::fcntl(g_fds[1], F_SETFL, O_NONBLOCK);
  return g_fds[0];
}

void install(const int* signals, int n) noexcept {
  struct sigaction ours {};
  ours.sa_handler = on_piped_signal;
  ours.sa_flags = SA_RESTART;
  sigemptyset(&ours.sa_mask);
  g_count = n < kMax ? n : kMax;
  g_installed.store(true);  // before the first handler: the reader restores what it finds
  for (int i = 0; i < g_count; ++i) {
    g_signals[i] = signals[i];
    if (sigaction(signals[i], nullptr, &g_before[i]) != 0 || g_before[i].sa_handler == SIG_IGN) {
      g_before[i].sa_handler = SIG_IGN;
      continue;
    }
    sigaction(signals[i], &ours, nullptr);
  }
}

void restore() noexcept {
  if (!g_installed.exchange(false)) return;
  for (int i = 0; i < g_count; ++i)
    if (g_before[i].sa_handler != SIG_IGN) sigaction(g_signals[i], &g_before[i], nullptr);
}

void post(unsigned char byte) noexcept {
  [[maybe_unused]] const ssize_t n = ::write(g_fds[1], &byte, 1);
}
}  // namespace signal_pipe

int publish_now() noexcept {
  if (g_writing.load() > 0) return 0;
  return publish_and_say();
}

}  // namespace commscope::stop
