#include "commscope/common/byte_size.hpp"

#include <stdexcept>

namespace commscope {

std::size_t parse_size(const std::string& s) {
  const std::string usage = "bad size '" + s + "' (use a number of bytes with an optional K, M or G)";
  std::size_t pos = 0;
  double v = 0;
  try {
    v = std::stod(s, &pos);
  } catch (const std::exception&) {
    throw std::invalid_argument(usage);
  }
  const std::string suffix = s.substr(pos);
  double mult = 1;
  if (suffix == "K" || suffix == "k")
    mult = 1024;
  else if (suffix == "M" || suffix == "m")
    mult = 1024.0 * 1024;
  else if (suffix == "G" || suffix == "g")
    mult = 1024.0 * 1024 * 1024;
  else if (!suffix.empty())
    throw std::invalid_argument(usage);
  const double bytes = v * mult;
  if (!(bytes >= 0) || bytes > 1e15) throw std::invalid_argument("bad size '" + s + "' (out of range)");
  return static_cast<std::size_t>(bytes);
}

}  // namespace commscope
