// The flight recorder's watchdog (profiler/src/flight.cpp) in a child process that the test stops
// (SIGSTOP) for longer than COMMSCOPE_HANG_TIMEOUT and then lets go (SIGCONT), as a launcher does
// when it ends a job whose other rank hung: the time the child was stopped is its own, not a
// silence of MPI's, so it must not write a flight record and end (COMMSCOPE_HANG_EXIT=1, status 3)
// once let go. A rank that truly makes no progress still does.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <thread>

#include "commscope/profiler/flight.hpp"
#include "stopped_child.hpp"

namespace fl = commscope::profiler::flight;
using commscope::test::stopped_child_status;

namespace {

// A directory of the test's own for the flight records.
std::string fresh_dir(const std::string& name) {
  const char* tmp = std::getenv("COMMSCOPE_TEST_TMP");
  const std::filesystem::path dir = std::filesystem::path(tmp != nullptr && *tmp ? tmp : "/tmp") / name;
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir.string();
}

// The recorder on, its watchdog at `timeout` seconds ending the process on a hang, no MPI call
// completing for `for_s` seconds; then stopped.
void idle_recorder(const std::string& dir, const char* timeout, double for_s) {
  setenv("COMMSCOPE_HANG_TIMEOUT", timeout, 1);
  setenv("COMMSCOPE_HANG_EXIT", "1", 1);
  setenv("COMMSCOPE_FLIGHT_DIR", dir.c_str(), 1);
  (void)fl::start(0, 1, dir + "/run.h5", {"here"}, "test_flight_watchdog", false);
  const auto until = std::chrono::steady_clock::now() + std::chrono::duration<double>(for_s);
  while (std::chrono::steady_clock::now() < until) std::this_thread::sleep_for(std::chrono::milliseconds(20));
  fl::stop();
}

bool empty(const std::string& dir) {
  return std::filesystem::is_empty(dir);
}

}  // namespace

TEST(FlightWatchdog, ItsOwnStopIsNoHang) {
  // Timeout 2 s; stopped 0.2 s in, for 3 s; then 1 s more without a call: under 2 s since it was
  // let go (margins of a second or more either side, for a loaded machine).
  const std::string dir = fresh_dir("flight-own-stop");
  EXPECT_EQ(stopped_child_status([&] { idle_recorder(dir, "2", 4.2); }, 0.2, 3.0), 0);
  EXPECT_TRUE(empty(dir)) << "a flight record was written in " << dir;
}

TEST(FlightWatchdog, NoProgressStillEndsTheRank) {
  const std::string dir = fresh_dir("flight-no-progress");
  EXPECT_EQ(stopped_child_status([&] { idle_recorder(dir, "1", 5); }, 2.5, 0.1), 3);
  EXPECT_FALSE(empty(dir)) << "no flight record in " << dir;
}
