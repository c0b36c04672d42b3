// A watchdog's own stop (SIGSTOP, then SIGCONT, as a launcher does when it ends a job whose other
// rank timed out) in a child process: the tests of the bench's watchdog (bench/tests) and the
// flight recorder's (profiler/tests) run the watchdog in the child and read its exit status.
#pragma once

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <thread>

namespace commscope::test {

// Runs `body` in a child; the parent stops it `stop_s` after the start for `stopped_s`, then lets
// it go; the child's exit status (3: a watchdog's timeout), or -1 where it did not exit.
template <class Body>
int stopped_child_status(Body&& body, double stop_s, double stopped_s) {
  const pid_t pid = fork();
  if (pid == 0) {
    body();
    _exit(0);
  }
  std::this_thread::sleep_for(std::chrono::duration<double>(stop_s));
  kill(pid, SIGSTOP);
  std::this_thread::sleep_for(std::chrono::duration<double>(stopped_s));
  kill(pid, SIGCONT);
  int status = 0;
  waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

}  // namespace commscope::test
