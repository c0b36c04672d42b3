#include "commscope/common/output_path.hpp"

#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <system_error>

namespace commscope {

std::string output_path_problem(const std::string& path) {
  namespace fs = std::filesystem;
  if (path.empty()) return "the path is empty";
  std::error_code ec;
  const fs::path p(path);
  if (fs::is_directory(p, ec)) return "it is a directory";
  const fs::path dir = p.has_parent_path() ? p.parent_path() : fs::path(".");
  if (!fs::is_directory(dir, ec)) return "folder '" + dir.string() + "' does not exist";
  if (access(dir.c_str(), W_OK | X_OK) != 0)
    return "folder '" + dir.string() + "' is not writable (" + std::strerror(errno) + ")";
  return "";
}

}  // namespace commscope
