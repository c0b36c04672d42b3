#include "commscope/model/format.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <string>

namespace commscope::analysis {

std::string format_number(double value, int significant) {
  if (std::isnan(value)) return "nan";
  if (std::isinf(value)) return value > 0 ? "inf" : "-inf";
  significant = std::clamp(significant, 1, 17);
  if (value == 0) return "0";
  const double mag = std::fabs(value);
  char buf[64];
  if (mag >= 1e15 || mag < 1e-4) {
    std::snprintf(buf, sizeof buf, "%.*e", significant - 1, value);
    std::string s = buf;
    const std::size_t e = s.find('e');
    std::string mant = s.substr(0, e), exp = s.substr(e);
    if (mant.find('.') != std::string::npos) {
      while (mant.back() == '0') mant.pop_back();
      if (mant.back() == '.') mant.pop_back();
    }
    return mant + exp;
  }
  const int exponent = static_cast<int>(std::floor(std::log10(mag)));
  const int decimals = std::max(0, significant - 1 - exponent);
  std::snprintf(buf, sizeof buf, "%.*f", decimals, value);
  std::string s = buf;
  if (s.find('.') != std::string::npos) {
    while (s.back() == '0') s.pop_back();
    if (s.back() == '.') s.pop_back();
  }
  if (s == "-0") s = "0";
  return s;
}

std::string format_bytes(double bytes) {
  if (std::isnan(bytes)) return "nan";
  if (std::isinf(bytes)) return bytes > 0 ? "inf B" : "-inf B";
  static constexpr std::array<const char*, 7> kUnits{"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
  const double mag = std::fabs(bytes);
  std::size_t unit = 0;
  double scaled = mag;
  while (unit + 1 < kUnits.size() && scaled >= 1024.0) {
    scaled /= 1024.0;
    ++unit;
  }
  // Rounding may reach the next unit (1048575 B is 1023.999 KiB): show that as "1 MiB".
  if (unit + 1 < kUnits.size() && scaled >= 1023.95 && unit > 0) {
    scaled /= 1024.0;
    ++unit;
  }
  std::string text = format_number(scaled, unit == 0 ? 17 : 3);
  return (bytes < 0 ? "-" : "") + text + " " + kUnits[unit];
}

std::string format_size_range(double from, double to, double largest) {
  if (from == to) return "at " + format_bytes(from);
  if (to == largest) return "from " + format_bytes(from);
  return format_bytes(from) + " to " + format_bytes(to);
}

}  // namespace commscope::analysis
