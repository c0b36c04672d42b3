// Structural checks of the plots gnuplot wrote: a well-formed SVG document, a complete PNG.

#include <algorithm>
#include <array>
#include <cctype>
#include <cstdint>
#include <cstring>
#include <string>

#include "commscope/analysis/output.hpp"
#include "detail.hpp"

namespace commscope::analysis {
namespace fs = std::filesystem;

using detail::read_file;

bool is_valid_svg(const fs::path& path) {
  const std::string doc = read_file(path, std::size_t{256} << 20);
  if (doc.empty()) return false;
  std::size_t i = 0;
  if (doc.compare(0, 3, "\xEF\xBB\xBF") == 0) i = 3;  // UTF-8 byte order mark
  auto skip_space = [&] {
    while (i < doc.size() && std::isspace(static_cast<unsigned char>(doc[i])) != 0) ++i;
  };
  // The prolog: XML declaration, processing instructions, comments, DOCTYPE (with an internal subset).
  for (;;) {
    skip_space();
    if (doc.compare(i, 2, "<?") == 0) {
      const std::size_t e = doc.find("?>", i);
      if (e == std::string::npos) return false;
      i = e + 2;
    } else if (doc.compare(i, 4, "<!--") == 0) {
      const std::size_t e = doc.find("-->", i + 4);
      if (e == std::string::npos) return false;
      i = e + 3;
    } else if (doc.compare(i, 9, "<!DOCTYPE") == 0) {
      std::size_t e = i + 9;
      int bracket = 0;
      while (e < doc.size() && (doc[e] != '>' || bracket > 0)) {
        if (doc[e] == '[') ++bracket;
        if (doc[e] == ']') --bracket;
        ++e;
      }
      if (e >= doc.size()) return false;
      i = e + 1;
    } else {
      break;
    }
  }
  // The root element: <svg ...> with width and height, or a viewBox.
  auto is_name_end = [&](std::size_t at) {
    return at < doc.size() &&
           (std::isspace(static_cast<unsigned char>(doc[at])) != 0 || doc[at] == '>' || doc[at] == '/');
  };
  if (doc.compare(i, 4, "<svg") != 0 || !is_name_end(i + 4)) return false;
  std::size_t tag_end = i + 4;
  char quote = 0;
  for (; tag_end < doc.size(); ++tag_end) {
    const char ch = doc[tag_end];
    if (quote != 0) {
      if (ch == quote) quote = 0;
    } else if (ch == '"' || ch == '\'') {
      quote = ch;
    } else if (ch == '>') {
      break;
    }
  }
  if (tag_end >= doc.size()) return false;
  const std::string tag = doc.substr(i, tag_end - i);
  auto has_attribute = [&](const std::string& attr) {
    for (std::size_t at = tag.find(attr); at != std::string::npos; at = tag.find(attr, at + 1)) {
      const bool starts = std::isspace(static_cast<unsigned char>(tag[at - 1])) != 0;
      std::size_t after = at + attr.size();
      while (after < tag.size() && std::isspace(static_cast<unsigned char>(tag[after])) != 0) ++after;
      if (starts && after < tag.size() && tag[after] == '=') return true;
    }
    return false;
  };
  if (!(has_attribute("viewBox") || (has_attribute("width") && has_attribute("height")))) return false;
  // A drawing element inside, and the document closes with </svg>.
  bool drawing = false;
  for (const char* element : {"<path", "<line", "<polyline", "<polygon", "<rect", "<circle", "<text"}) {
    const std::size_t len = std::strlen(element);
    for (std::size_t at = doc.find(element, tag_end); at != std::string::npos && !drawing;
         at = doc.find(element, at + 1))
      drawing = is_name_end(at + len);
    if (drawing) break;
  }
  if (!drawing) return false;
  std::size_t end = doc.find_last_not_of(" \t\r\n");
  return end != std::string::npos && end + 1 >= 6 && doc.compare(end + 1 - 6, 6, "</svg>") == 0 && end > tag_end;
}

bool is_valid_png(const fs::path& path) {
  const std::string data = read_file(path, std::size_t{512} << 20);
  static constexpr unsigned char kSignature[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1A, '\n'};
  if (data.size() < 8 || std::memcmp(data.data(), kSignature, 8) != 0) return false;
  auto u32 = [&](std::size_t at) {
    return (std::uint32_t{static_cast<unsigned char>(data[at])} << 24) |
           (std::uint32_t{static_cast<unsigned char>(data[at + 1])} << 16) |
           (std::uint32_t{static_cast<unsigned char>(data[at + 2])} << 8) |
           std::uint32_t{static_cast<unsigned char>(data[at + 3])};
  };
  static const auto crc_table = [] {
    std::array<std::uint32_t, 256> t{};
    for (std::uint32_t n = 0; n < 256; ++n) {
      std::uint32_t c = n;
      for (int k = 0; k < 8; ++k) c = (c & 1U) != 0 ? 0xEDB88320U ^ (c >> 1) : c >> 1;
      t[n] = c;
    }
    return t;
  }();
  std::size_t at = 8;
  bool first = true, idat = false;
  while (at + 12 <= data.size()) {
    const std::uint32_t length = u32(at);
    if (length > 0x7FFFFFFFU || data.size() - at - 12 < length) return false;
    const std::string type = data.substr(at + 4, 4);
    if (!std::all_of(type.begin(), type.end(), [](unsigned char c) { return std::isalpha(c) != 0; })) return false;
    std::uint32_t crc = 0xFFFFFFFFU;
    for (std::size_t k = at + 4; k < at + 8 + length; ++k)
      crc = crc_table[(crc ^ static_cast<unsigned char>(data[k])) & 0xFFU] ^ (crc >> 8);
    if ((crc ^ 0xFFFFFFFFU) != u32(at + 8 + length)) return false;
    if (first) {
      if (type != "IHDR" || length != 13 || u32(at + 8) == 0 || u32(at + 12) == 0) return false;
      first = false;
    }
    if (type == "IDAT") idat = true;
    at += 12 + std::size_t{length};
    if (type == "IEND") return length == 0 && at == data.size() && idat;
  }
  return false;
}

}  // namespace commscope::analysis
