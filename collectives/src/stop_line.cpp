#include <unistd.h>

#include <csignal>
#include <cstddef>
#include <cstring>

#include "commscope/collectives/error.hpp"

namespace commscope {
namespace {

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

}  // namespace commscope
