// The report's folders and text files: created and checked, written through a .partial file.

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <string>
#include <system_error>

#include "commscope/analysis/output.hpp"
#include "detail.hpp"

namespace commscope::analysis {
namespace fs = std::filesystem;

std::string detail::read_file(const fs::path& path, std::size_t limit) {
  std::error_code ec;
  const std::uintmax_t size = fs::file_size(path, ec);
  if (ec) return {};
  std::ifstream in(path, std::ios::binary);
  if (!in) return {};
  std::string data;
  data.resize(static_cast<std::size_t>(std::min<std::uintmax_t>(size, limit)));
  in.read(data.data(), static_cast<std::streamsize>(data.size()));
  data.resize(static_cast<std::size_t>(in.gcount()));
  return data;
}

// -----------------------------------------------------------------------------------------------
// Folders and files

void make_output_dir(const fs::path& dir) {
  std::error_code ec;
  if (dir.empty()) throw OutputError("cannot create output folder: empty path");
  fs::create_directories(dir, ec);
  if (ec) throw OutputError("cannot create output folder " + dir.string() + ": " + ec.message());
  if (!fs::is_directory(dir, ec)) throw OutputError("cannot create output folder " + dir.string() + ": not a folder");
  if (::access(dir.c_str(), W_OK | X_OK) != 0)
    throw OutputError("output folder " + dir.string() + " is not writable: " + std::strerror(errno));
}

void write_text(const fs::path& dir, const std::string& name, const std::string& text) {
  const fs::path target = dir / name;
  fs::path partial = target;
  partial += ".partial";
  std::FILE* f = std::fopen(partial.c_str(), "wb");
  if (f == nullptr) throw OutputError("cannot write " + target.string() + ": " + std::strerror(errno));
  int err = 0;
  if (!text.empty() && std::fwrite(text.data(), 1, text.size(), f) != text.size()) err = errno;
  if (std::fflush(f) != 0 && err == 0) err = errno;
  if (std::fclose(f) != 0 && err == 0) err = errno;
  if (err == 0 && std::rename(partial.c_str(), target.c_str()) != 0) err = errno;
  if (err != 0) {
    std::remove(partial.c_str());
    throw OutputError("cannot write " + target.string() + ": " + std::strerror(err));
  }
}

}  // namespace commscope::analysis
