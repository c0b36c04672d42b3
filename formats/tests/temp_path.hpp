// The formats tests' files: NAME in a folder of this process's own under the temporary directory.
#pragma once

#include <unistd.h>

#include <filesystem>
#include <string>

inline std::string temp_path(const std::string& name) {
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() / ("commscope-formats-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  return (dir / name).string();
}
