// Tables: terminal (aligned, numbers right), Markdown and CSV renderings of one Table.

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstddef>
#include <cstdlib>
#include <string>
#include <vector>

#include "commscope/analysis/output.hpp"
#include "detail.hpp"

namespace commscope::analysis {
namespace fs = std::filesystem;

using detail::display_width;
using detail::one_line;

namespace {

// ---------------------------------------------------------------------------------------------
// Tables

}  // namespace

std::size_t detail::display_width(const std::string& s) {
  std::size_t n = 0;
  for (unsigned char c : s)
    if ((c & 0xC0U) != 0x80U) ++n;
  return n;
}

std::string detail::one_line(const std::string& s) {
  std::string out;
  out.reserve(s.size());
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '\r' && i + 1 < s.size() && s[i + 1] == '\n') continue;  // \r\n: one space
    out += (s[i] == '\n' || s[i] == '\r') ? ' ' : s[i];
  }
  return out;
}

namespace {

// A cell is numeric when it is a number, optionally followed by a short unit ("32 KiB", "12.5%",
// "3.1 ms", "1.5x", "nan"): such cells are right-aligned.
bool is_numeric_cell(const std::string& cell) {
  std::size_t b = cell.find_first_not_of(' ');
  if (b == std::string::npos) return false;
  const std::string s = cell.substr(b, cell.find_last_not_of(' ') - b + 1);
  const char* begin = s.c_str();
  char* end = nullptr;
  (void)std::strtod(begin, &end);
  if (end == begin) return false;
  // strtod accepts "inf"/"infinity"/"nan(...)" and hex: only plain decimal forms and nan/inf count.
  const std::string number(begin, static_cast<std::size_t>(end - begin));
  if (number.find_first_of("xX(") != std::string::npos) return false;
  std::string rest(end);
  if (rest.empty()) return true;
  if (rest.front() == ' ') rest.erase(0, 1);
  if (rest.empty() || rest.size() > 6) return false;
  return std::all_of(rest.begin(), rest.end(), [](unsigned char c) {
    return std::isalpha(c) != 0 || c == '%' || c == '/' || c >= 0x80;  // 0x80+: µ
  });
}

// "" and "-" stand for a missing value: they take their column's alignment.
bool is_placeholder(const std::string& cell) {
  return cell.empty() || cell == "-";
}

std::string pad(const std::string& s, std::size_t width, bool right) {
  const std::size_t w = display_width(s);
  if (w >= width) return s;
  return right ? std::string(width - w, ' ') + s : s + std::string(width - w, ' ');
}

void rtrim(std::string& s) {
  while (!s.empty() && s.back() == ' ') s.pop_back();
}

// Per column: every body cell numeric or a placeholder (and at least one numeric): the header and
// the placeholders align right too.
std::vector<bool> numeric_columns(const std::vector<std::string>& headers,
                                  const std::vector<std::vector<std::string>>& rows) {
  std::vector<bool> numeric(headers.size(), false);
  for (std::size_t c = 0; c < headers.size(); ++c) {
    bool any = false, all = true;
    for (const auto& row : rows) {
      if (is_placeholder(row[c])) continue;
      any = true;
      all = all && is_numeric_cell(row[c]);
    }
    numeric[c] = any && all;
  }
  return numeric;
}

std::string markdown_cell(const std::string& s) {
  std::string out;
  for (char ch : one_line(s)) {
    if (ch == '|') out += '\\';
    out += ch;
  }
  return out;
}

std::string csv_cell(const std::string& s) {
  if (s.find_first_of(",\"\r\n") == std::string::npos) return s;
  std::string out = "\"";
  for (char ch : s) {
    if (ch == '"') out += '"';
    out += ch;
  }
  return out + '"';
}

}  // namespace

// -----------------------------------------------------------------------------------------------
// Table

Table::Table(std::vector<std::string> headers) : headers_(std::move(headers)), bytes_(headers_.size(), false) {}

Table& Table::bytes_column(std::size_t column) {
  if (column >= headers_.size())
    throw std::invalid_argument("bytes column " + std::to_string(column) + " of a table of " +
                                std::to_string(headers_.size()) + " columns");
  bytes_[column] = true;
  return *this;
}

std::vector<std::vector<std::string>> Table::shown_rows() const {
  std::vector<std::vector<std::string>> rows = rows_;
  for (auto& row : rows)
    for (std::size_t c = 0; c < row.size(); ++c)
      if (bytes_[c] && !is_placeholder(row[c])) row[c] = format_bytes(std::strtod(row[c].c_str(), nullptr));
  return rows;
}

std::string bytes_cell(double bytes) {
  if (!std::isfinite(bytes)) return "-";
  char buf[64];
  const auto res = std::to_chars(buf, buf + sizeof buf, bytes);
  return std::string(buf, res.ptr);
}

void Table::add(std::vector<std::string> cells) {
  if (cells.size() != headers_.size())
    throw std::invalid_argument("table row has " + std::to_string(cells.size()) + " cells, expected " +
                                std::to_string(headers_.size()));
  rows_.push_back(std::move(cells));
}

std::string Table::terminal() const {
  if (headers_.empty()) return {};
  const std::size_t n = headers_.size();
  const auto shown = shown_rows();  // bytes columns formatted
  const auto numeric = numeric_columns(headers_, shown);
  std::vector<std::size_t> width(n, 0);
  for (std::size_t c = 0; c < n; ++c) width[c] = display_width(one_line(headers_[c]));
  for (const auto& row : shown)
    for (std::size_t c = 0; c < n; ++c) width[c] = std::max(width[c], display_width(one_line(row[c])));

  std::string out, line;
  for (std::size_t c = 0; c < n; ++c) {
    if (c > 0) line += "  ";
    line += pad(one_line(headers_[c]), width[c], numeric[c]);
  }
  rtrim(line);
  out += line + '\n';
  line.clear();
  for (std::size_t c = 0; c < n; ++c) {
    if (c > 0) line += "  ";
    line += std::string(std::max<std::size_t>(width[c], 1), '-');
  }
  out += line + '\n';
  for (const auto& row : shown) {
    line.clear();
    for (std::size_t c = 0; c < n; ++c) {
      if (c > 0) line += "  ";
      const std::string cell = one_line(row[c]);
      line += pad(cell, width[c], is_placeholder(cell) ? numeric[c] : is_numeric_cell(cell));
    }
    rtrim(line);
    out += line + '\n';
  }
  return out;
}

std::string Table::markdown() const {
  if (headers_.empty()) return {};
  const std::size_t n = headers_.size();
  const auto shown = shown_rows();  // bytes columns formatted
  const auto numeric = numeric_columns(headers_, shown);
  std::vector<std::size_t> width(n, 3);
  for (std::size_t c = 0; c < n; ++c) width[c] = std::max(width[c], display_width(markdown_cell(headers_[c])));
  for (const auto& row : shown)
    for (std::size_t c = 0; c < n; ++c) width[c] = std::max(width[c], display_width(markdown_cell(row[c])));

  auto emit = [&](const std::vector<std::string>& cells) {
    std::string line = "|";
    for (std::size_t c = 0; c < n; ++c) line += ' ' + pad(markdown_cell(cells[c]), width[c], numeric[c]) + " |";
    return line + '\n';
  };
  std::string out = emit(headers_);
  out += '|';
  for (std::size_t c = 0; c < n; ++c)
    out += ' ' + (numeric[c] ? std::string(width[c] - 1, '-') + ':' : std::string(width[c], '-')) + " |";
  out += '\n';
  for (const auto& row : shown) out += emit(row);
  return out;
}

std::string Table::csv() const {
  std::string out;
  auto emit = [&](const std::vector<std::string>& cells) {
    for (std::size_t c = 0; c < cells.size(); ++c) {
      if (c > 0) out += ',';
      out += csv_cell(cells[c]);
    }
    out += "\r\n";
  };
  if (headers_.empty()) return out;
  std::vector<std::string> headers = headers_;
  for (std::size_t c = 0; c < headers.size(); ++c)
    if (bytes_[c]) headers[c] += "_bytes";
  emit(headers);
  for (const auto& row : rows_) emit(row);
  return out;
}

}  // namespace commscope::analysis
