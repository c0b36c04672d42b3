// check_outputs DIR: a report folder holds report.md, at least one CSV, and only valid plots
// (every .svg and .png passes the structural checks); prints what it found.
#include <cstdio>
#include <filesystem>

#include "commscope/analysis/output.hpp"

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: check_outputs DIR\n");
    return 2;
  }
  namespace fs = std::filesystem;
  const fs::path dir = argv[1];
  int svg = 0, png = 0, csv = 0, bad = 0;
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
    }
  }
  std::printf("%s: report.md, %d CSV, %d SVG, %d PNG\n", dir.c_str(), csv, svg, png);
  if (csv == 0 || svg != png) ++bad;
  return bad ? 1 : 0;
}
