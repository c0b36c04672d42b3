// Reading a file HDF5 may not survive: in a forked child, with a time limit (see h5.hpp).

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <filesystem>
#include <functional>
#include <stdexcept>
#include <string>

#include "commscope/h5/h5.hpp"

namespace commscope::h5 {
namespace {

constexpr const char* kReadTimeoutVariable = "COMMSCOPE_READ_TIMEOUT";
constexpr int kChildOk = 0;
constexpr int kChildError = 3;

void write_all(int fd, const std::string& text) {
  std::size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;
    done += static_cast<std::size_t>(n);
  }
}

// The child: run `read`, report on `fd`, and _exit (no atexit handlers, no flushing of the
// parent's stdio buffers, no destructors of the parent's objects).
[[noreturn]] void child(const std::function<void()>& read, int fd) {
  const int devnull = ::open("/dev/null", O_WRONLY);
  if (devnull >= 0) {
    ::dup2(devnull, STDERR_FILENO);  // HDF5 (or a sanitizer) may talk about the damage
    ::close(devnull);
  }
  const rlimit no_core{0, 0};
  ::setrlimit(RLIMIT_CORE, &no_core);  // a crash here is expected, a core dump is not wanted
  int status = kChildOk;
  try {
    read();
  } catch (const std::exception& e) {
    write_all(fd, e.what());
    status = kChildError;
  } catch (...) {
    write_all(fd, "unknown error");
    status = kChildError;
  }
  ::close(fd);
  ::_exit(status);
}

std::string seconds_text(double seconds) {
  char text[32];
  std::snprintf(text, sizeof text, "%g", seconds);
  return text;
}

}  // namespace

double read_time_limit_s(const std::string& path) {
  if (const char* text = std::getenv(kReadTimeoutVariable); text != nullptr && *text != '\0') {
    char* end = nullptr;
    const double seconds = std::strtod(text, &end);
    if (end == text || *end != '\0' || !(seconds > 0) || seconds > 1e6) {
      std::string message = kReadTimeoutVariable;
      message += "='";
      message += text;
      message += "': expected a number of seconds greater than 0";
      throw std::invalid_argument(message);
    }
    return seconds;
  }
  std::error_code ec;
  const auto size = std::filesystem::file_size(path, ec);
  return 60.0 + (ec ? 0.0 : static_cast<double>(size) / 10e6);
}

std::string read_in_child(const std::string& path, const std::function<void()>& read) {
  const double limit_s = read_time_limit_s(path);
  int fds[2];
  if (::pipe(fds) != 0) return std::string("could not check it: pipe failed: ") + std::strerror(errno);
  std::fflush(nullptr);  // nothing buffered in stdio is written twice by the child
  const pid_t pid = ::fork();
  if (pid < 0) {
    const int error = errno;
    ::close(fds[0]);
    ::close(fds[1]);
    return std::string("could not check it: fork failed: ") + std::strerror(error);
  }
  if (pid == 0) {
    ::close(fds[0]);
    child(read, fds[1]);
  }
  ::close(fds[1]);
  // Read the message before waiting: a message longer than the pipe's buffer would otherwise
  // block the child, and the wait with it. The pipe reaches end-of-file when the child exits.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(limit_s);
  std::string message;
  bool finished = false;
  for (;;) {
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now()).count();
    if (left <= 0) break;
    pollfd ready{fds[0], POLLIN, 0};
    const int polled = ::poll(&ready, 1, static_cast<int>(std::min<std::int64_t>(left, 1000)));
    if (polled < 0 && errno != EINTR) break;
    if (polled <= 0) continue;
    char buffer[4096];
    const ssize_t n = ::read(fds[0], buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      finished = true;
      break;
    }
    message.append(buffer, static_cast<std::size_t>(n));
  }
  ::close(fds[0]);
  if (!finished) ::kill(pid, SIGKILL);
  int status = 0;
  pid_t waited = 0;
  do {
    waited = ::waitpid(pid, &status, 0);
  } while (waited < 0 && errno == EINTR);
  if (waited < 0) return std::string("could not check it: waitpid failed: ") + std::strerror(errno);

  if (!finished) {
    return "the HDF5 library did not finish reading it in " + seconds_text(limit_s) + " s: a damaged file? (" +
           kReadTimeoutVariable + " sets the limit in seconds)";
  }
  if (WIFEXITED(status) && WEXITSTATUS(status) == kChildOk) return {};
  if (WIFEXITED(status) && WEXITSTATUS(status) == kChildError && !message.empty()) return one_line(message);
  if (WIFSIGNALED(status)) {
    return "the HDF5 library failed reading it (signal " + std::to_string(WTERMSIG(status)) + "): a damaged file?";
  }
  return "the HDF5 library failed reading it (exit status " +
         std::to_string(WIFEXITED(status) ? WEXITSTATUS(status) : -1) + "): a damaged file?";
}

}  // namespace commscope::h5
