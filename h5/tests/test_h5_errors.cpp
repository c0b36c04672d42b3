// commscope::h5's errors in one line: a file that cannot be created, a write past what the system
// allows (the full-disk case), an absent attribute and a truncated file each say the file and the
// cause, not HDF5's stack of ten entries; and a file whose write failed closes without a crash.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/resource.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "commscope/common/temp_folder.hpp"
#include "commscope/h5/h5.hpp"

namespace fs = std::filesystem;
using namespace commscope::h5;

namespace {

std::string temp_path(const std::string& name) {
  return commscope::temp_file("commscope-h5-errors", name);
}

template <class F>
std::string message_of(F&& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "(no error)";
}

void expect_one_short_line(const std::string& what) {
  EXPECT_EQ(what.find('\n'), std::string::npos) << what;
  EXPECT_LT(what.size(), 200u) << what;
  EXPECT_EQ(what.find(" / "), std::string::npos) << what;  // no stack joined
}

}  // namespace

TEST(H5Errors, CauseIsTheSystemMessageElseTheInnermostEntry) {
  EXPECT_EQ(failure_cause({"unable to create file", "open failed",
                           "unable to open file: name = 'x', errno = 2, error message = 'No such file or "
                           "directory', flags = 13"}),
            "No such file or directory");
  EXPECT_EQ(failure_cause({"unable to open attribute: 'a'", "can't locate attribute: 'a'"}),
            "can't locate attribute: 'a'");
  EXPECT_EQ(failure_cause({}), "HDF5 gave no reason");
}

TEST(H5Errors, CreateInAMissingFolderIsOneLine) {
  const std::string what = message_of([] { (void)File::create("/nonexistent-commscope/dir/r.h5"); });
  expect_one_short_line(what);
  EXPECT_NE(what.find("/nonexistent-commscope/dir/r.h5"), std::string::npos) << what;
  EXPECT_NE(what.find("No such file or directory"), std::string::npos) << what;
}

TEST(H5Errors, AbsentAttributeAndTruncatedFileAreOneLine) {
  const std::string path = temp_path("a.h5");
  {
    File f = File::create(path);
    f.set_attr("x", 1.0);
    write_vector(f, "v", std::vector<double>(1000, 2.0));
  }
  const std::string absent = message_of([&] { (void)File::open(path).attr_int("absent"); });
  expect_one_short_line(absent);
  EXPECT_NE(absent.find("'absent'"), std::string::npos) << absent;
  EXPECT_NE(absent.find(path), std::string::npos) << absent;

  const std::string cut = temp_path("cut.h5");
  {
    std::ifstream in(path, std::ios::binary);
    std::string bytes(100, '\0');
    in.read(bytes.data(), 100);
    std::ofstream(cut, std::ios::binary) << bytes;
  }
  const std::string truncated = message_of([&] { (void)File::open(cut); });
  expect_one_short_line(truncated);
  EXPECT_NE(truncated.find("truncated file: eof = 100"), std::string::npos) << truncated;
}

// The full-disk case, made with a file size limit: HDF5's write fails with "bytes actually written =
// 18446744073709551615" deep in a 13-entry stack. In a child process (the limit is process-wide);
// before the fix the file's close after the failed write crashed in H5Fget_name.
// Writes past a file size limit and exits 0 when the error is one short line without HDF5's byte
// count.
[[noreturn]] void write_past_the_limit(const std::string& path) {
  ::signal(SIGXFSZ, SIG_IGN);
  const rlimit limit{200000, 200000};
  ::setrlimit(RLIMIT_FSIZE, &limit);
  const std::string what = message_of([&] {
    File f = File::create(path);
    write_vector(f, "v", std::vector<double>(100000, 1.0));
    f.close();
  });
  std::fprintf(stderr, "[%s]\n", what.c_str());
  const bool ok = what.find('\n') == std::string::npos && what.size() < 200 &&
                  what.find("18446744073709551615") == std::string::npos;
  std::exit(ok ? 0 : 1);
}

TEST(H5Errors, WriteBeyondTheSystemsLimitIsOneLineAndDoesNotCrash) {
  const std::string path = temp_path("big.h5");
  EXPECT_EXIT(write_past_the_limit(path), ::testing::ExitedWithCode(0), "big\\.h5.*: File too large\\]");
}
