// A count and its noun in words, for the suite's messages: "1 rank", "4 ranks", "0 plots".
#pragma once

#include <concepts>
#include <string>

namespace commscope {

template <std::integral N>
std::string counted(N n, const std::string& what) {
  return std::to_string(n) + " " + what + (n == 1 ? "" : "s");
}

}  // namespace commscope
