#pragma once
// The report's outputs: terminal tables, Markdown, CSV and plots (gnuplot: SVG and PNG).

#include <cstddef>
#include <filesystem>
#include <iosfwd>
#include <stdexcept>
#include <string>
#include <vector>

#include "commscope/model/format.hpp"

namespace commscope::analysis {

// The report cannot write its output (folder, gnuplot missing or failing). One line.
class OutputError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// gnuplot is not on the PATH: the plot's data and script were written, its SVG/PNG were not.
class GnuplotMissing : public OutputError {
 public:
  using OutputError::OutputError;
};

// A table of text cells; numbers are formatted by the caller.
class Table {
 public:
  explicit Table(std::vector<std::string> headers);
  void add(std::vector<std::string> cells);  // as many cells as headers (std::invalid_argument otherwise)
  // Column `column` holds sizes in bytes: its cells are plain numbers (bytes_cell; "" or "-" for
  // none), shown as "8 KiB" in the terminal and Markdown and written as numbers to the CSV, whose
  // header gains "_bytes" ("size" -> "size_bytes"), so that a spreadsheet can sort and plot them.
  Table& bytes_column(std::size_t column);
  std::size_t rows() const noexcept { return rows_.size(); }
  const std::vector<std::string>& headers() const noexcept { return headers_; }
  const std::vector<std::vector<std::string>>& cells() const noexcept { return rows_; }

  // Columns padded to width, numbers right-aligned (cells that parse as numbers, optionally with a
  // short unit: "12.5", "32 KiB", "40%"; "" and "-" take their column's alignment), a rule under
  // the header. Newlines in cells print as spaces.
  std::string terminal() const;
  // A GitHub-flavoured Markdown table ('|' in cells escaped as '\|', newlines as spaces; numeric
  // columns right-aligned with "---:").
  std::string markdown() const;
  // RFC 4180 CSV (cells with ',', '"' or newlines quoted, CRLF line ends).
  std::string csv() const;

 private:
  std::vector<std::string> headers_;
  std::vector<std::vector<std::string>> rows_;
  std::vector<bool> bytes_;  // per column: sizes in bytes

  // The rows as the terminal and Markdown show them: bytes columns formatted.
  std::vector<std::vector<std::string>> shown_rows() const;
};

// A bytes column's cell: the exact number ("8192", "1.5"); "-" when not finite.
std::string bytes_cell(double bytes);

// One line series of a plot.
struct Series {
  std::string title;
  std::vector<double> x, y;
  bool points = true;  // points and lines; false: a line only (fits, textbook curves)
  bool dashed = false;
  // Series of one group share a colour (an algorithm's measurement, fit and textbook curve) and
  // differ in dash and point; an empty group is a group of its own.
  std::string group = {};
  // Series of one panel are drawn together: a plot whose series name two or more panels draws one
  // per panel (an algorithm's measurements, fits and textbook curve), titled by its name, the
  // panels' axes alike, so that no legend lists every algorithm's every line.
  std::string panel = {};
};

struct LinePlot {
  std::string title, xlabel, ylabel;
  bool logx = false, logy = false;
  bool x_bytes = false;  // x tics as sizes (8 B ... 1 GiB)
  std::vector<Series> series;
  bool x_integers = false;  // x tics at whole numbers only (ranks)
  std::string note = {};    // said in parentheses after the title on the plot only (not in report.md)
};

// Bars stacked per category (x), e.g. an iteration's breakdown per step.
struct StackedBars {
  std::string title, xlabel, ylabel;
  std::vector<std::string> categories;
  std::vector<std::string> components;      // bottom to top
  std::vector<std::vector<double>> values;  // [component][category]
};

// A matrix of cells coloured by value (e.g. bandwidth between every pair of ranks): row r,
// column c is values[r][c]; non-finite cells are left blank. `groups` (optional) lists where a
// new group starts along both axes (e.g. the first rank of every node): lines are drawn there.
struct Heatmap {
  std::string title, xlabel, ylabel, cblabel;
  std::vector<std::string> labels;          // one per row and column
  std::vector<std::vector<double>> values;  // labels.size() rows of labels.size() values
  std::vector<std::size_t> groups;
  bool low_is_bad = true;  // colours: dark for the bad end (low bandwidth; high latency when false)
  // The colour scale from 0 to the largest value: a 3% spread then shows as 3% of it, not as the
  // whole scale from bad to good. false: from the smallest value to the largest.
  bool from_zero = false;
};

// Writes DIR/NAME.svg and DIR/NAME.png with gnuplot (the data file DIR/NAME.dat and the script
// DIR/NAME.gp are kept, so a plot can be redrawn or restyled by hand); DIR is created. Points that
// are not finite, or not positive on a log axis, are dropped; series left empty are skipped. No
// two series of a line plot share colour, dash and point. A log y axis covers the measurements
// (the series with points; all when none has them), 1.5x either side: a line beyond (a model far
// off) leaves the frame; a point more than 10x off every straight line through its series'
// neighbours (an outlier) is left outside the range, which the title says, so that it does not
// squash the other curves. The SVG's title is NAME (its letters, digits and '_').
// Throws OutputError when nothing is left to plot, gnuplot fails, or an output is not valid
// (GnuplotMissing, after writing the .dat and .gp, when gnuplot is not installed); std::invalid_argument when a series'
// x and y (or the bars' values) do not match in size.
void plot(const LinePlot& plot, const std::filesystem::path& dir, const std::string& name);
void plot(const StackedBars& plot, const std::filesystem::path& dir, const std::string& name);
void plot(const Heatmap& plot, const std::filesystem::path& dir, const std::string& name);

// Structural checks of what gnuplot wrote (also used by the tests): an SVG document with an
// <svg> root and drawing elements; a PNG with its signature, IHDR and IEND chunks and non-zero size.
bool is_valid_svg(const std::filesystem::path& path);
bool is_valid_png(const std::filesystem::path& path);

// Creates `dir` (and parents); throws OutputError with a one-line reason when it cannot.
void make_output_dir(const std::filesystem::path& dir);
// Writes `text` to dir/name through a .partial file; throws OutputError.
void write_text(const std::filesystem::path& dir, const std::string& name, const std::string& text);

}  // namespace commscope::analysis
