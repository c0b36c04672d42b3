#include "commscope/common/stop_line.hpp"

#include <unistd.h>

#include <atomic>
#include <csignal>
#include <cstddef>
#include <cstring>

namespace commscope {
namespace {

// The marked activity: the marker fills the buffer not shown, then shows it.
char g_activity[2][512];
std::atomic<const char*> g_current{""};
std::atomic<int> g_next{0};

void append(char* buf, std::size_t& n, std::size_t cap, const char* s) noexcept {
  const std::size_t len = std::strlen(s);
  const std::size_t take = len < cap - n ? len : cap - n;
  std::memcpy(buf + n, s, take);
  n += take;
}

}  // namespace

void write_stop_line(const char* prefix, int sig, const char* doing) noexcept {
  char buf[800];
  std::size_t n = 0;
  constexpr std::size_t cap = sizeof buf - 1;  // room for the newline
  const char* name = sig == SIGTERM ? "SIGTERM" : sig == SIGINT ? "SIGINT" : sig == SIGHUP ? "SIGHUP" : "a signal";
  append(buf, n, cap, prefix);
  append(buf, n, cap, "stopped by ");
  append(buf, n, cap, name);
  const bool in_collective = doing != nullptr && doing[0] != '\0';
  append(buf, n, cap, in_collective ? " while in " : " outside any collective");
  if (in_collective) append(buf, n, cap, doing);
  buf[n++] = '\n';
  [[maybe_unused]] const ssize_t written = ::write(STDERR_FILENO, buf, n);
}

const char* current_activity() noexcept {
  return g_current.load();
}

ActivityMarker::ActivityMarker(const char* text) noexcept {
  char* buf = g_activity[g_next.fetch_xor(1)];
  std::size_t n = 0;
  append(buf, n, sizeof g_activity[0] - 1, text != nullptr ? text : "");
  buf[n] = '\0';
  g_current.store(buf);
}

ActivityMarker::~ActivityMarker() {
  g_current.store("");
}

}  // namespace commscope
