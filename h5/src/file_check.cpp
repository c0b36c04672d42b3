// Checks of a file before HDF5 opens it (kept apart from h5.cpp: <fstream> brings std::quoted,
// which would compete with h5.cpp's own quoted() by argument-dependent lookup).
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>
#include <string_view>

#include "commscope/h5/h5.hpp"

namespace commscope::h5 {

namespace {

// Length of the valid UTF-8 sequence starting at text[at] (2..4), or 0 if it is not one.
std::size_t utf8_length(std::string_view text, std::size_t at) {
  const auto byte = [&](std::size_t i) { return static_cast<unsigned char>(text[i]); };
  const unsigned char lead = byte(at);
  std::size_t length = 0;
  char32_t code = 0;
  if (lead >= 0xC2 && lead <= 0xDF) {
    length = 2;
    code = lead & 0x1Fu;
  } else if (lead >= 0xE0 && lead <= 0xEF) {
    length = 3;
    code = lead & 0x0Fu;
  } else if (lead >= 0xF0 && lead <= 0xF4) {
    length = 4;
    code = lead & 0x07u;
  } else {
    return 0;
  }
  if (at + length > text.size()) return 0;
  for (std::size_t i = 1; i < length; ++i) {
    if ((byte(at + i) & 0xC0u) != 0x80u) return 0;
    code = (code << 6) | (byte(at + i) & 0x3Fu);
  }
  static constexpr char32_t kSmallest[] = {0, 0, 0x80, 0x800, 0x10000};
  if (code < kSmallest[length] || code > 0x10FFFF || (code >= 0xD800 && code <= 0xDFFF)) return 0;
  if (code == 0x85 || code == 0x2028 || code == 0x2029) return 0;  // line breaks to some readers
  return length;
}

}  // namespace

std::string one_line(std::string_view text) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string line;
  line.reserve(text.size());
  for (std::size_t at = 0; at < text.size();) {
    const auto c = static_cast<unsigned char>(text[at]);
    if (c == '\n' || c == '\r') {
      line += ' ';
      ++at;
    } else if (c >= 0x20 && c < 0x7F) {
      line += static_cast<char>(c);
      ++at;
    } else if (const std::size_t length = c >= 0x80 ? utf8_length(text, at) : 0; length > 0) {
      line.append(text.substr(at, length));
      at += length;
    } else {
      line += "\\x";
      line += kHex[c >> 4];
      line += kHex[c & 0xF];
      ++at;
    }
  }
  return line;
}

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
  if (!fs::exists(status)) {
    // A writer stopped before its rename (File::create writes PATH.partial) left what it wrote.
    if (fs::is_regular_file(path + ".partial", ec))
      return "no such file: it was not completed (its writer stopped before renaming it: killed?); what it "
             "wrote is in " +
             path + ".partial (read that, incomplete)";
    return "no such file";
  }
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
