// Shared by the report's output files (analysis/src/output/): one-line cells, bounded file
// reads and running gnuplot.
#pragma once

#include <cstddef>
#include <filesystem>
#include <string>

namespace commscope::analysis::detail {

// Display width of a UTF-8 string: code points, not bytes (a 'µs' column lines up).
std::size_t display_width(const std::string& s);
// `s` on one line: each line break (\n, \r or \r\n) becomes a space (a table cell, a plot title).
std::string one_line(const std::string& s);
// Up to `limit` bytes of `path`; empty if it cannot be read.
std::string read_file(const std::filesystem::path& path, std::size_t limit);
// Runs `gnuplot SCRIPT` in `dir`; throws OutputError when gnuplot is missing or fails.
void run_gnuplot(const std::filesystem::path& dir, const std::string& script);

}  // namespace commscope::analysis::detail
