#pragma once
// What every subcommand writes: the terminal report, and with -o DIR a Markdown report, one CSV
// per table and the plots, all named after the section they belong to.

#include <filesystem>
#include <optional>
#include <ostream>
#include <sstream>
#include <string>
#include <vector>

#include "commscope/analysis/output.hpp"
#include "commscope/analysis/report.hpp"

namespace commscope::analysis {

class ReportWriter {
 public:
  ReportWriter(const ReportOptions& options, const std::string& title);

  void section(const std::string& title);
  void text(const std::string& paragraph);
  // Printed, added to the Markdown, and written as DIR/csv_name.csv.
  void table(const std::string& csv_name, const Table& table);
  // Drawn (SVG + PNG) and linked from the Markdown; only with an output folder. Without gnuplot
  // (GPU nodes often lack it) the data and script are kept, the report goes on and finish()
  // says which plots are left to draw.
  void plot(const std::string& name, const LinePlot& plot);
  void plot(const std::string& name, const StackedBars& plot);
  void plot(const std::string& name, const Heatmap& plot);
  // Writes report.md; prints where everything went.
  void finish();

 private:
  std::ostream* terminal_;
  std::optional<std::filesystem::path> dir_;
  std::ostringstream markdown_;
  std::size_t csv_written_ = 0;       // CSV files
  std::size_t plots_written_ = 0;     // plots, each an SVG and a PNG
  std::vector<std::string> undrawn_;  // plots whose .gp waits for gnuplot
  std::string undrawn_reason_;

  // Draws through `draw`; false (and noted in the Markdown) when gnuplot is missing.
  template <class Draw>
  bool try_draw(const std::string& name, const std::string& title, Draw draw);
};

// The sample standard deviation (n - 1); 0 below two values. Percentiles, medians and means
// come from commscope/common/stats.hpp.
double stddev(const std::vector<double>& values);

}  // namespace commscope::analysis
