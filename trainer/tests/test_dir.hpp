#pragma once
// A fresh directory per test under COMMSCOPE_TEST_TMP (or the system's temporary directory),
// removed when the test ends.

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <string>
#include <system_error>

class TestDir {
 public:
  TestDir() {
    namespace fs = std::filesystem;
    const char* env = std::getenv("COMMSCOPE_TEST_TMP");
    const fs::path base = env && *env ? fs::path(env) : fs::temp_directory_path();
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    path_ = base /
            ("trainer-" + std::string(info->test_suite_name()) + "-" + info->name() + "-" + std::to_string(::getpid()));
    fs::remove_all(path_);
    fs::create_directories(path_);
  }
  ~TestDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  TestDir(const TestDir&) = delete;
  TestDir& operator=(const TestDir&) = delete;
  std::filesystem::path operator/(const std::string& name) const { return path_ / name; }
  std::string string() const { return path_.string(); }
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};
