#include "report_writer.hpp"

#include <algorithm>
#include <cmath>
#include <iostream>
#include <numeric>

#include "commscope/analysis/fastest.hpp"
#include "commscope/common/counted.hpp"
#include "commscope/common/stats.hpp"

namespace commscope::analysis {

ReportWriter::ReportWriter(const ReportOptions& options, const std::string& title)
    : terminal_(options.terminal), dir_(options.out_dir) {
  if (dir_) make_output_dir(*dir_);
  if (terminal_) *terminal_ << title << "\n" << std::string(title.size(), '=') << "\n";
  markdown_ << "# " << title << "\n\n";
}

void ReportWriter::section(const std::string& title) {
  if (terminal_) *terminal_ << "\n" << title << "\n" << std::string(title.size(), '-') << "\n";
  markdown_ << "\n## " << title << "\n\n";
}

void ReportWriter::text(const std::string& paragraph) {
  if (terminal_) *terminal_ << paragraph << "\n";
  markdown_ << paragraph << "\n\n";
}

void ReportWriter::table(const std::string& csv_name, const Table& t) {
  if (terminal_) *terminal_ << t.terminal();
  markdown_ << t.markdown() << "\n";
  if (dir_) {
    write_text(*dir_, csv_name + ".csv", t.csv());
    ++csv_written_;
    markdown_ << "([" << csv_name << ".csv](" << csv_name << ".csv))\n\n";
  }
}

void ReportWriter::plot(const std::string& name, const LinePlot& p) {
  if (!dir_) return;
  // A plot with no point to draw (e.g. busbw on one rank: 0 on a log axis) is left out, said so.
  const bool drawable = std::any_of(p.series.begin(), p.series.end(), [&](const Series& s) {
    for (std::size_t i = 0; i < s.x.size() && i < s.y.size(); ++i)
      if (std::isfinite(s.x[i]) && std::isfinite(s.y[i]) && (!p.logx || s.x[i] > 0) && (!p.logy || s.y[i] > 0))
        return true;
    return false;
  });
  if (!drawable) {
    markdown_ << "(" << p.title << ": nothing to draw)\n\n";
    return;
  }
  try_draw(name, p.title, [&] { analysis::plot(p, *dir_, name); });
}

void ReportWriter::plot(const std::string& name, const StackedBars& p) {
  if (!dir_) return;
  try_draw(name, p.title, [&] { analysis::plot(p, *dir_, name); });
}

void ReportWriter::plot(const std::string& name, const Heatmap& p) {
  if (!dir_) return;
  const bool drawable = std::any_of(p.values.begin(), p.values.end(), [](const std::vector<double>& row) {
    return std::any_of(row.begin(), row.end(), [](double v) { return std::isfinite(v); });
  });
  if (!drawable) {
    markdown_ << "(" << p.title << ": nothing to draw)\n\n";
    return;
  }
  try_draw(name, p.title, [&] { analysis::plot(p, *dir_, name); });
}

template <class Draw>
bool ReportWriter::try_draw(const std::string& name, const std::string& title, Draw draw) {
  try {
    draw();
  } catch (const GnuplotMissing& e) {
    undrawn_.push_back(name);
    undrawn_reason_ = e.what();
    markdown_ << "(" << title << ": not drawn, " << e.what() << "; `gnuplot " << name
              << ".gp` in this folder draws it)\n\n";
    return false;
  }
  ++plots_written_;
  markdown_ << "![" << title << "](" << name << ".svg)\n\n";
  return true;
}

void ReportWriter::finish() {
  if (!dir_) return;
  write_text(*dir_, "report.md", markdown_.str());
  if (terminal_)
    *terminal_ << "\nwrote " << (*dir_ / "report.md").string() << " with " << counted(csv_written_, "CSV file")
               << " and " << counted(plots_written_, "plot") << (plots_written_ > 0 ? " (each an SVG and a PNG)" : "")
               << "\n";
  if (!undrawn_.empty())
    std::cerr << "commscope-report: " << undrawn_.size() << " plots not drawn (" << undrawn_reason_
              << "): their data and gnuplot scripts are in " << dir_->string() << "\n";
}

double stddev(const std::vector<double>& values) {
  if (values.size() < 2) return 0;
  const double m = stats::mean(values);
  double ss = 0;
  for (double v : values) ss += (v - m) * (v - m);
  return std::sqrt(ss / static_cast<double>(values.size() - 1));
}

}  // namespace commscope::analysis
