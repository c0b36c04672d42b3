// Running gnuplot: found on PATH, run in the output folder, its first error line reported.

#include <fcntl.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <sstream>
#include <string>
#include <system_error>

#include "commscope/analysis/output.hpp"
#include "detail.hpp"

namespace commscope::analysis {
namespace fs = std::filesystem;

namespace {

std::string errno_text(int err) {
  return std::strerror(err);
}

// The executable `name` on PATH (as execvp would find it), or an empty path.
fs::path find_on_path(const std::string& name) {
  const char* env = std::getenv("PATH");
  std::string path = env != nullptr ? env : "/usr/local/bin:/usr/bin:/bin";
  std::size_t start = 0;
  while (start <= path.size()) {
    std::size_t end = path.find(':', start);
    if (end == std::string::npos) end = path.size();
    // An empty entry is the current folder.
    const fs::path dir = end == start ? fs::path(".") : fs::path(path.substr(start, end - start));
    const fs::path candidate = dir / name;
    std::error_code ec;
    if (fs::is_regular_file(candidate, ec) && ::access(candidate.c_str(), X_OK) == 0) return candidate;
    start = end + 1;
  }
  return {};
}

// gnuplot's first error line out of its stderr: the "SCRIPT" line N: ... message that is not a
// warning, else the last non-empty line.
std::string first_error_line(const std::string& err) {
  std::istringstream in(err);
  std::string line, last;
  while (std::getline(in, line)) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.find_first_not_of(" \t^") == std::string::npos) continue;
    if (line.find(" line ") != std::string::npos && line.find("warning:") == std::string::npos) return line;
    last = line;
  }
  return last;
}

}  // namespace

void detail::run_gnuplot(const fs::path& dir, const std::string& script) {
  const fs::path gnuplot = find_on_path("gnuplot");
  if (gnuplot.empty()) throw GnuplotMissing("gnuplot is not installed (Debian: gnuplot-nox)");

  int fds[2];
  if (::pipe(fds) != 0) throw OutputError("cannot run gnuplot: pipe: " + errno_text(errno));
  const int devnull = ::open("/dev/null", O_RDWR | O_CLOEXEC);
  const std::string exe = gnuplot.string(), dir_s = dir.string();
  std::array<char*, 3> argv{const_cast<char*>(exe.c_str()), const_cast<char*>(script.c_str()), nullptr};

  const pid_t pid = ::fork();
  if (pid < 0) {
    const int err = errno;
    ::close(fds[0]);
    ::close(fds[1]);
    if (devnull >= 0) ::close(devnull);
    throw OutputError("cannot run gnuplot: fork: " + errno_text(err));
  }
  if (pid == 0) {  // child: async-signal-safe calls only
    if (::chdir(dir_s.c_str()) != 0) ::_exit(126);
    if (devnull >= 0) {
      ::dup2(devnull, STDIN_FILENO);
      ::dup2(devnull, STDOUT_FILENO);
    }
    ::dup2(fds[1], STDERR_FILENO);
    ::close(fds[0]);
    ::close(fds[1]);
    ::execv(argv[0], argv.data());
    ::_exit(127);
  }
  ::close(fds[1]);
  if (devnull >= 0) ::close(devnull);
  std::string err;
  std::array<char, 4096> buf{};
  for (;;) {
    const ssize_t n = ::read(fds[0], buf.data(), buf.size());
    if (n > 0) {
      if (err.size() < (1U << 20)) err.append(buf.data(), static_cast<std::size_t>(n));
    } else if (n == 0 || errno != EINTR) {
      break;
    }
  }
  ::close(fds[0]);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  const fs::path where = dir / script;
  if (WIFEXITED(status) && WEXITSTATUS(status) == 0) return;
  std::string why;
  if (WIFSIGNALED(status)) {
    why = "killed by signal " + std::to_string(WTERMSIG(status));
  } else if (WEXITSTATUS(status) == 126 && err.empty()) {
    why = "cannot enter the folder";
  } else if (WEXITSTATUS(status) == 127 && err.empty()) {
    why = "cannot execute " + exe;
  } else {
    why = first_error_line(err);
    if (why.empty()) why = "exit status " + std::to_string(WEXITSTATUS(status));
  }
  throw OutputError("gnuplot failed on " + where.string() + ": " + why);
}

}  // namespace commscope::analysis
