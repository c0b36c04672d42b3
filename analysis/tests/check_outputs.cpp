// check_outputs DIR: a report folder holds report.md, at least one CSV, and only valid plots
// (every .svg and .png passes the structural checks), each drawn so that a reader can read it
// (every .gp script with its .dat): at most kMaxKeyEntries titled series per plot or panel; a log
// y axis set to the measurements' range (not gnuplot's decades past them: allreduce's time plot
// once ran to 1e6 us for measurements under 4e4); no line with two points at one x (a vertical
// segment joining two runs of one rank count). Prints what it found, and each failure.
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <limits>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "commscope/analysis/output.hpp"

namespace {

namespace fs = std::filesystem;

constexpr int kMaxKeyEntries = 8;

std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

// The data file's blocks (gnuplot's `index`: separated by two blank lines), each its (x, y) rows.
std::vector<std::vector<std::pair<double, double>>> data_blocks(const std::string& dat) {
  std::vector<std::vector<std::pair<double, double>>> blocks(1);
  std::istringstream in(dat);
  std::string line;
  int blank = 0;
  while (std::getline(in, line)) {
    if (line.empty()) {
      if (++blank == 2 && !blocks.back().empty()) blocks.emplace_back();
      continue;
    }
    blank = 0;
    if (line[0] == '#') continue;
    std::istringstream fields(line);
    double x = 0, y = 0;
    if (fields >> x >> y) blocks.back().emplace_back(x, y);
  }
  return blocks;
}

// What a reader would misread in the plot script `gp` (the SVG's part: the PNG draws the same) over
// its data file `dat`; one line per problem.
std::vector<std::string> plot_problems(const std::string& gp, const std::string& dat) {
  std::vector<std::string> problems;
  const std::string svg = gp.substr(0, gp.find("set terminal pngcairo"));
  const auto blocks = data_blocks(dat);
  // Each plot command (its continuation lines joined): the titled series and the blocks drawn.
  std::vector<std::string> commands;
  std::istringstream in(svg);
  std::string line;
  bool continued = false;
  while (std::getline(in, line)) {
    if (continued) {
      commands.back() += line;
    } else if (line.rfind("plot ", 0) == 0) {
      commands.push_back(line);
    } else {
      continue;
    }
    continued = !line.empty() && line.back() == '\\';
  }
  const std::regex series_re(R"(index (\d+) using 1:2 with (linespoints|lines))");
  std::set<std::size_t> measured;  // the blocks drawn with points
  std::size_t lines_drawn = 0;
  for (const std::string& cmd : commands) {
    int titled = 0;
    for (std::size_t at = cmd.find(" title '"); at != std::string::npos; at = cmd.find(" title '", at + 1)) ++titled;
    if (titled > kMaxKeyEntries)
      problems.push_back(std::to_string(titled) + " titled series in one plot (at most " +
                         std::to_string(kMaxKeyEntries) + ")");
    for (std::sregex_iterator it(cmd.begin(), cmd.end(), series_re), end; it != end; ++it) {
      const auto block = static_cast<std::size_t>(std::stoul((*it)[1]));
      ++lines_drawn;
      if ((*it)[2] == "linespoints") measured.insert(block);
      if (block >= blocks.size()) {
        problems.push_back("index " + std::to_string(block) + " is not in the data file");
        continue;
      }
      std::set<double> xs;
      for (const auto& [x, y] : blocks[block])
        if (!xs.insert(x).second)
          problems.push_back("series " + std::to_string(block) + " has two points at x = " + std::to_string(x) +
                             ": its line joins them with a vertical segment");
    }
  }
  if (svg.find("set logscale y") != std::string::npos && lines_drawn > 0) {
    double lo = std::numeric_limits<double>::infinity(), hi = 0;
    for (std::size_t b = 0; b < blocks.size(); ++b)
      if (measured.empty() || measured.contains(b))
        for (const auto& [x, y] : blocks[b]) lo = std::min(lo, y), hi = std::max(hi, y);
    std::smatch m;
    const std::regex range_re(R"(set yrange \[([^:\]]+):([^\]]+)\])");
    if (!std::regex_search(svg, m, range_re)) {
      problems.push_back("a log y axis left to gnuplot's autoscale (whole decades, stretched by any line far off " +
                         std::string("the measurements, ") + std::to_string(lo) + " to " + std::to_string(hi) + ")");
    } else {
      const double from = std::stod(m[1]), to = std::stod(m[2]);
      if (to > 2 * hi || from < lo / 2)
        problems.push_back("y axis " + std::string(m[1]) + " to " + std::string(m[2]) + " for measurements " +
                           std::to_string(lo) + " to " + std::to_string(hi));
    }
  }
  return problems;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: check_outputs DIR\n");
    return 2;
  }
  const fs::path dir = argv[1];
  int svg = 0, png = 0, csv = 0, gp = 0, bad = 0;
  if (!fs::is_regular_file(dir / "report.md") || fs::file_size(dir / "report.md") == 0) {
    std::printf("FAIL: no report.md in %s\n", dir.c_str());
    return 1;
  }
  for (const auto& e : fs::directory_iterator(dir)) {
    const auto ext = e.path().extension();
    if (ext == ".svg") {
      ++svg;
      if (!commscope::analysis::is_valid_svg(e.path()))
        std::printf("FAIL: %s is not a valid SVG\n", e.path().c_str()), ++bad;
    } else if (ext == ".png") {
      ++png;
      if (!commscope::analysis::is_valid_png(e.path()))
        std::printf("FAIL: %s is not a valid PNG\n", e.path().c_str()), ++bad;
    } else if (ext == ".csv") {
      ++csv;
    } else if (ext == ".gp") {
      ++gp;
      fs::path dat = e.path();
      dat.replace_extension(".dat");
      for (const std::string& problem : plot_problems(slurp(e.path()), slurp(dat)))
        std::printf("FAIL: %s: %s\n", e.path().c_str(), problem.c_str()), ++bad;
    }
  }
  std::printf("%s: report.md, %d CSV, %d SVG, %d PNG, %d plot scripts\n", dir.c_str(), csv, svg, png, gp);
  if (csv == 0 || svg != png) ++bad;
  return bad ? 1 : 0;
}
