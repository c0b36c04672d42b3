// A folder of this process's own under the system's temporary folder, for a program's scratch
// files (the unit tests'): PREFIX-PID, made on first use and removed with everything in it when
// the process that made it exits normally (not a forked child's exit, not a kill).
#pragma once

#include <unistd.h>

#include <filesystem>
#include <map>
#include <string>
#include <system_error>

namespace commscope {

// NAME in this process's PREFIX-PID folder.
inline std::string temp_file(const std::string& prefix, const std::string& name) {
  struct Folder {
    std::filesystem::path path;
    pid_t owner = ::getpid();
    ~Folder() {
      std::error_code ignored;
      if (::getpid() == owner) std::filesystem::remove_all(path, ignored);
    }
  };
  static std::map<std::string, Folder> folders;
  Folder& f = folders[prefix];
  if (f.path.empty()) f.path = std::filesystem::temp_directory_path() / (prefix + "-" + std::to_string(::getpid()));
  std::filesystem::create_directories(f.path);
  return (f.path / name).string();
}

}  // namespace commscope
