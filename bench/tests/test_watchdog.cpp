// The bench's watchdog (bench/src/watchdog.cpp) in a child process that the test stops (SIGSTOP)
// for longer than the timeout and then lets go (SIGCONT), as a launcher does when it ends a job
// whose other rank timed out: the time the child was stopped is its own, not a peer's silence, so
// it must not report a timeout of its own once let go (it did, 2.7 ms after its peer's, in a CI
// run of profiler.flight.hang.bench_own). A call that truly makes no progress still times out.
#include <gtest/gtest.h>

#include <chrono>
#include <thread>

#include "stopped_child.hpp"
#include "watchdog.hpp"

using namespace commscope::bench;
using commscope::test::stopped_child_status;

TEST(Watchdog, ItsOwnStopIsNoTimeout) {
  // -T 2; stopped 0.2 s in, for 3 s; then 1 s more without progress: under -T since it was let go
  // (margins of a second or more either side, for a loaded machine).
  const int status = stopped_child_status(
      [] {
        Watchdog w(2.0, 0);
        w.begin(nullptr, "the test's calls");
        const auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(4200);
        while (std::chrono::steady_clock::now() < until) std::this_thread::sleep_for(std::chrono::milliseconds(20));
        w.end();
      },
      0.2, 3.0);
  EXPECT_EQ(status, 0);
}

TEST(Watchdog, NoProgressStillTimesOut) {
  const int status = stopped_child_status(
      [] {
        Watchdog w(1.0, 0);
        w.begin(nullptr, "the test's calls");
        std::this_thread::sleep_for(std::chrono::seconds(5));
      },
      2.5, 0.1);  // by then the watchdog has ended the child (its stop and its release do nothing)
  EXPECT_EQ(status, 3);
}
