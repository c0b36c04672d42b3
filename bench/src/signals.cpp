#include "signals.hpp"

#include <signal.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <csignal>
#include <cstdio>

#include "commscope/collectives/error.hpp"
#include "commscope/common/stop_line.hpp"
#include "json_results.hpp"

namespace commscope::bench {
namespace {

// What a signal handler needs to publish the file: fixed buffers and one state word.
enum : int { kNone = 0, kOpen = 1, kWriting = 2 };
std::atomic<int> g_state{kNone};
std::atomic<int> g_pending_signal{0};
char g_partial[4096];
char g_final[4096];
static_assert(std::atomic<int>::is_always_lock_free);

void die_of(int sig) {
  std::signal(sig, SIG_DFL);
  std::raise(sig);
}

// What the handler says: "commscope-bench: rank N: " and the case in progress (the activity
// measure() marks).
char g_signal_prefix[64] = "commscope-bench: ";

// Ranks other than 0 have no file to publish, and wait this long before dying of the signal.
// Open MPI's mpirun SIGKILLs every rank within milliseconds of one dying of its SIGTERM, so a
// rank 1 dying at once left rank 0 no time to publish when it got the CPU late (a loaded node,
// or a row being written): FILE.partial stayed behind. mpirun SIGKILLs the waiting ranks as
// soon as rank 0 has published and died, and every rank 1 s after its SIGTERM in any case.
constexpr timespec kHoldForRank0{0, 500'000'000};
bool g_hold_for_rank0 = false;

extern "C" void on_signal(int sig) {
  write_stop_line(g_signal_prefix, sig, current_activity());
  if (g_state.load() == kWriting || json_results_busy()) {  // the writer publishes when it is done
    g_pending_signal.store(sig);
    return;
  }
  publish_results_file_now();
  if (g_hold_for_rank0) ::nanosleep(&kHoldForRank0, nullptr);
  die_of(sig);
}

}  // namespace

void check_trackable_path(const std::string& path) {
  if (path.size() + 16 > sizeof g_partial) throw InvalidArgument("--out path too long");
}

void track_results_file(const std::string& partial_path, const std::string& final_path) {
  std::snprintf(g_partial, sizeof g_partial, "%s", partial_path.c_str());
  std::snprintf(g_final, sizeof g_final, "%s", final_path.c_str());
  g_state.store(kOpen);
}

bool results_file_tracked() noexcept {
  return g_state.load() != kNone;
}

ResultsWriteGuard::ResultsWriteGuard() noexcept {
  g_state.store(kWriting);
}

ResultsWriteGuard::~ResultsWriteGuard() {
  g_state.store(kOpen);
  deliver_deferred_signal();
}

bool begin_results_close() noexcept {
  int expected = kOpen;
  return g_state.compare_exchange_strong(expected, kWriting);
}

void end_results_close() noexcept {
  g_state.store(kNone);
  deliver_deferred_signal();
}

void deliver_deferred_signal() noexcept {
  if (g_state.load() == kWriting || json_results_busy()) return;  // the other writer delivers it
  if (const int sig = g_pending_signal.exchange(0)) {
    publish_results_file_now();
    die_of(sig);
  }
}

void publish_results_file_now() noexcept {
  close_json_results_now();
  int expected = kOpen;
  if (g_state.compare_exchange_strong(expected, kNone)) ::rename(g_partial, g_final);
}

void install_signal_handlers(int rank) {
  std::snprintf(g_signal_prefix, sizeof g_signal_prefix, "commscope-bench: rank %d: ", rank);
  g_hold_for_rank0 = rank != 0;
  for (int sig : {SIGINT, SIGTERM, SIGHUP}) {
    struct sigaction sa {};
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    sigaction(sig, &sa, nullptr);
  }
}

}  // namespace commscope::bench
