// Checks of a file before HDF5 opens it (kept apart from h5.cpp: <fstream> brings std::quoted,
// which would compete with h5.cpp's own quoted() by argument-dependent lookup).
#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>

#include "commscope/h5/h5.hpp"

namespace commscope::h5 {

bool has_signature(const std::string& path) {
  static constexpr char kSignature[8] = {'\x89', 'H', 'D', 'F', '\r', '\n', '\x1a', '\n'};
  std::ifstream in(path, std::ios::binary);
  if (!in) return false;
  in.seekg(0, std::ios::end);
  const auto size = static_cast<std::uint64_t>(in.tellg());
  for (std::uint64_t offset = 0; offset + sizeof kSignature <= size; offset = offset == 0 ? 512 : offset * 2) {
    char bytes[sizeof kSignature];
    in.seekg(static_cast<std::streamoff>(offset));
    if (!in.read(bytes, sizeof bytes)) return false;
    if (std::equal(bytes, bytes + sizeof bytes, kSignature)) return true;
  }
  return false;
}

std::string file_problem(const std::string& path, std::string_view what) {
  namespace fs = std::filesystem;
  std::error_code ec;
  const fs::file_status status = fs::status(path, ec);
  if (!fs::exists(status)) return "no such file";
  if (fs::is_directory(status)) return "is a directory, not " + std::string(what);
  if (!fs::is_regular_file(status)) return "not a regular file, not " + std::string(what);
  if (!std::ifstream(path, std::ios::binary)) return "cannot be read (permission denied?)";
  const std::uintmax_t size = fs::file_size(path, ec);
  if (ec) return "cannot be read: " + ec.message();
  if (size == 0) return "an empty file: not an HDF5 file";
  if (!has_signature(path)) return "not an HDF5 file";
  return "";
}

}  // namespace commscope::h5
