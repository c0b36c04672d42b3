// The stop path (stop_signals.hpp) in one process: a tracked file published and named, a write
// guard holding a stop back until the write ends, the flag mode, and a writer closing a file a
// stop has published. Each case that installs handlers or stops runs in a death test's child.
#include <gtest/gtest.h>
#include <unistd.h>

#include <csignal>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

#include "commscope/common/stop_signals.hpp"
#include "commscope/common/temp_folder.hpp"

namespace fs = std::filesystem;
namespace stop = commscope::stop;

namespace {

// A fresh FOLDER/NAME.partial holding "rows", and its final name.
struct Files {
  std::string partial, final_path;
  explicit Files(const std::string& name) {
    final_path = commscope::temp_file("commscope-stop", name);
    partial = final_path + ".partial";
    fs::remove(final_path);
    std::ofstream(partial) << "rows";
  }
};

}  // namespace

TEST(StopSignals, PublishNowRenamesAndSaysWhere) {
  const Files f("publish.h5");
  stop::TrackedFile tracked(f.partial, f.final_path, "rows");
  tracked.set_kept(7);
  EXPECT_TRUE(tracked.held());
  testing::internal::CaptureStderr();
  EXPECT_EQ(stop::publish_now(), 1);
  const std::string said = testing::internal::GetCapturedStderr();
  EXPECT_TRUE(fs::exists(f.final_path));
  EXPECT_FALSE(fs::exists(f.partial));
  EXPECT_NE(said.find("kept 7 rows in " + f.final_path + "\n"), std::string::npos) << said;
  EXPECT_FALSE(tracked.held());
  EXPECT_FALSE(tracked.begin_close());  // the writer must not rename it again
  EXPECT_EQ(stop::publish_now(), 0);    // once
}

TEST(StopSignals, WriteGuardHoldsPublishingBack) {
  const Files f("guard.h5");
  stop::TrackedFile tracked(f.partial, f.final_path);
  {
    const stop::WriteGuard writing;
    EXPECT_EQ(stop::publish_now(), 0);
    EXPECT_TRUE(fs::exists(f.partial));
  }
  testing::internal::CaptureStderr();
  EXPECT_EQ(stop::publish_now(), 1);
  testing::internal::GetCapturedStderr();
  EXPECT_TRUE(fs::exists(f.final_path));
}

TEST(StopSignals, CloseTakesTheFileFromTheHandler) {
  const Files f("close.h5");
  stop::TrackedFile tracked(f.partial, f.final_path);
  ASSERT_TRUE(tracked.begin_close());
  EXPECT_EQ(stop::publish_now(), 0);  // the writer closes it
  EXPECT_TRUE(fs::exists(f.partial));
  tracked.end_close();
}

TEST(StopSignals, HookEndsItsFile) {
  static int called = 0;
  const stop::TrackedHook hook([]() noexcept { ++called; });
  EXPECT_EQ(stop::publish_now(), 1);
  EXPECT_EQ(stop::publish_now(), 0);
  EXPECT_EQ(called, 1);
}

TEST(StopSignalsDeathTest, SignalDuringAWriteWaitsThenPublishesAndDies) {
  const Files f("signal.h5");
  EXPECT_EXIT(
      {
        stop::install("test-tool", 0, stop::Mode::kPublishAndDie);
        stop::TrackedFile tracked(f.partial, f.final_path, "rows");
        tracked.set_kept(3);
        {
          const stop::WriteGuard writing;
          std::raise(SIGTERM);  // held back: the file is being written
          if (fs::exists(f.final_path)) std::_Exit(10);
          std::fprintf(stderr, "write ended\n");
        }
        std::_Exit(11);  // never: the stop comes when the guard ends
      },
      testing::KilledBySignal(SIGTERM),
      "write ended\n(.|\n)*test-tool: rank 0: stopped by SIGTERM outside any collective\ntest-tool: rank 0: kept 3 "
      "rows "
      "in .*signal.h5\n");
  EXPECT_TRUE(fs::exists(f.final_path));
  EXPECT_FALSE(fs::exists(f.partial));
}

TEST(StopSignalsDeathTest, FlagModePublishesAtOnceStopsAtTheCallersPointThenASecondSignalAtOnce) {
  const Files f("flag.h5");
  EXPECT_EXIT(
      {
        stop::install("test-train", 0, stop::Mode::kRaiseFlag);
        stop::TrackedFile tracked(f.partial, f.final_path, "steps");
        tracked.set_kept(5);
        if (stop::requested() != 0) std::_Exit(10);
        std::raise(SIGINT);
        if (stop::requested() != SIGINT) std::_Exit(11);                  // raised, and still running
        if (!fs::exists(f.final_path) || tracked.held()) std::_Exit(12);  // published before the step's end
        std::fprintf(stderr, "still running\n");
        std::raise(SIGINT);  // the second: die
        std::_Exit(13);
      },
      testing::KilledBySignal(SIGINT),
      "test-train: rank 0: kept 5 steps in .*flag.h5\ntest-train: rank 0: stopping after the step in "
      "progress(.|\n)*still running\n");
  EXPECT_TRUE(fs::exists(f.final_path));
  EXPECT_FALSE(fs::exists(f.partial));
}

TEST(StopSignalsDeathTest, FlagModeSignalDuringAWritePublishesWhenItEndsAndGoesOn) {
  const Files f("flag-write.h5");
  EXPECT_EXIT(
      {
        stop::install("test-train", 0, stop::Mode::kRaiseFlag);
        stop::TrackedFile tracked(f.partial, f.final_path, "steps");
        {
          const stop::WriteGuard writing;
          std::raise(SIGTERM);
          if (fs::exists(f.final_path) || !tracked.held()) std::_Exit(10);  // not under a write
          tracked.set_kept(6);
          std::fprintf(stderr, "write ended\n");
        }
        if (!fs::exists(f.final_path) || tracked.held()) std::_Exit(11);
        std::_Exit(0);  // the flag mode goes on to the caller's stop
      },
      testing::ExitedWithCode(0), "write ended\ntest-train: rank 0: kept 6 steps in .*flag-write.h5\n");
  EXPECT_TRUE(fs::exists(f.final_path));
}

// Another rank than 0 watching rank 0's file: after its hold, it says where the rows are when
// rank 0 did not publish them (killed first), and nothing when it did.
TEST(StopSignalsDeathTest, AnotherRankSaysWhereUnpublishedRowsAre) {
  const Files f("watched.h5");
  EXPECT_EXIT(
      {
        stop::install("test-bench", 1, stop::Mode::kPublishAndDie);
        stop::watch(f.partial, f.final_path);
        std::raise(SIGTERM);
      },
      testing::KilledBySignal(SIGTERM),
      "test-bench: rank 1: .*watched.h5 was not published: its rows are in .*watched.h5.partial\n");
  fs::rename(f.partial, f.final_path);  // published
  EXPECT_EXIT(
      {
        stop::install("test-bench", 1, stop::Mode::kPublishAndDie);
        stop::watch(f.partial, f.final_path);
        std::fprintf(stderr, "before\n");
        std::raise(SIGTERM);
      },
      testing::KilledBySignal(SIGTERM), "before\ntest-bench: rank 1: stopped by SIGTERM outside any collective\n$");
}

namespace {

int g_before = 0;

// In a death test's child: the exit code says which step failed (0: none).
int signal_pipe_round_trip() {
  std::signal(SIGUSR2, [](int) { g_before = 1; });
  std::signal(SIGUSR1, SIG_IGN);  // stays ignored
  const int fd = stop::signal_pipe::open();
  if (fd < 0) return 10;
  const int signals[] = {SIGUSR1, SIGUSR2};
  stop::signal_pipe::install(signals, 2);
  std::raise(SIGUSR2);
  unsigned char byte = 0;
  if (::read(fd, &byte, 1) != 1 || byte != SIGUSR2 || g_before != 0) return 11;
  stop::signal_pipe::restore();
  std::raise(SIGUSR2);  // the handler before ours again
  std::raise(SIGUSR1);  // ignored, as before
  if (g_before != 1) return 12;
  stop::signal_pipe::post(0);
  if (::read(fd, &byte, 1) != 1 || byte != 0) return 13;
  return 0;
}

}  // namespace

TEST(StopSignalsDeathTest, SignalPipeHandsTheSignalToAReaderAndRestores) {
  EXPECT_EXIT(std::_Exit(signal_pipe_round_trip()), testing::ExitedWithCode(0), "");
}
