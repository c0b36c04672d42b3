// Text without the white space (std::isspace's) at its two ends.
#pragma once

#include <cctype>
#include <string_view>

namespace commscope {

inline std::string_view trimmed(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

}  // namespace commscope
