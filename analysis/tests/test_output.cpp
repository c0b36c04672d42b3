// Tables, number formatting, gnuplot plots and the SVG/PNG checks of the report's outputs.

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "commscope/analysis/output.hpp"

namespace ca = commscope::analysis;
namespace fs = std::filesystem;

namespace {

fs::path test_dir(const std::string& name) {
  const char* base = std::getenv("COMMSCOPE_TEST_TMP");
  fs::path dir = fs::path(base != nullptr ? base : fs::temp_directory_path().string()) / "output_test" / name;
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

std::string slurp(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

void spit(const fs::path& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary);
  out << text;
}

// Runs the test body with PATH set to `value`, restoring the old PATH afterwards.
class ScopedPath {
 public:
  explicit ScopedPath(const std::string& value) {
    if (const char* old = std::getenv("PATH")) old_ = old;
    ::setenv("PATH", value.c_str(), 1);
  }
  ~ScopedPath() {
    if (old_) {
      ::setenv("PATH", old_->c_str(), 1);
    } else {
      ::unsetenv("PATH");
    }
  }
  ScopedPath(const ScopedPath&) = delete;
  ScopedPath& operator=(const ScopedPath&) = delete;

 private:
  std::optional<std::string> old_;
};

// The OutputError message of `f`, or "" when it does not throw one.
template <typename F>
std::string output_error(F&& f) {
  try {
    f();
  } catch (const ca::OutputError& e) {
    return e.what();
  }
  return "";
}

ca::Table sample_table() {
  ca::Table t({"op", "size", "us"});
  t.add({"ring", "8 B", "1.5"});
  t.add({"a|b", "32 KiB", "12"});
  t.add({"x, \"y\"\nz", "1 MiB", "nan"});
  return t;
}

ca::LinePlot sample_line_plot() {
  ca::LinePlot p;
  p.title = "allreduce_time: 4 ranks & {x}^2 @ 'node'";
  p.xlabel = "message size";
  p.ylabel = "time_us";
  p.logx = p.logy = true;
  p.x_bytes = true;
  ca::Series ring{"ring_allreduce", {}, {}};
  ca::Series tree{"tree", {}, {}};
  ca::Series fit{"alpha_beta fit", {}, {}, false, true};
  for (int e = 3; e <= 30; ++e) {
    const double bytes = std::ldexp(1.0, e);
    ring.x.push_back(bytes);
    ring.y.push_back(5.0 + bytes / 1e4);
    tree.x.push_back(bytes);
    tree.y.push_back(3.0 + bytes / 8e3);
    fit.x.push_back(bytes);
    fit.y.push_back(4.0 + bytes / 9e3);
  }
  ring.x.push_back(0.0);  // not drawable on a log axis: dropped
  ring.y.push_back(1.0);
  tree.x.push_back(64.0);
  tree.y.push_back(-1.0);
  p.series = {ring, tree, fit, ca::Series{"empty", {}, {}}};
  return p;
}

ca::StackedBars sample_bars() {
  ca::StackedBars b;
  b.title = "iteration_breakdown";
  b.xlabel = "step";
  b.ylabel = "ms";
  b.categories = {"step_1", "step 2", "step|3", "step 4", "step 5"};
  b.components = {"forward", "backward", "all_reduce", "optimizer"};
  for (std::size_t c = 0; c < b.components.size(); ++c) {
    std::vector<double> row;
    for (std::size_t k = 0; k < b.categories.size(); ++k) row.push_back(1.0 + static_cast<double>(c + k) * 0.5);
    b.values.push_back(row);
  }
  return b;
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// Tables

TEST(Table, TerminalPadsAndRightAlignsNumbers) {
  const std::string expected =
      "op          size   us\n"
      "--------  ------  ---\n"
      "ring         8 B  1.5\n"
      "a|b       32 KiB   12\n"
      "x, \"y\" z   1 MiB  nan\n";
  EXPECT_EQ(sample_table().terminal(), expected);
}

TEST(Table, MarkdownEscapesPipesAndNewlines) {
  const std::string expected =
      "| op       |   size |  us |\n"
      "| -------- | -----: | --: |\n"
      "| ring     |    8 B | 1.5 |\n"
      "| a\\|b     | 32 KiB |  12 |\n"
      "| x, \"y\" z |  1 MiB | nan |\n";
  EXPECT_EQ(sample_table().markdown(), expected);
}

TEST(Table, CsvQuotesPerRfc4180) {
  const std::string expected =
      "op,size,us\r\n"
      "ring,8 B,1.5\r\n"
      "a|b,32 KiB,12\r\n"
      "\"x, \"\"y\"\"\nz\",1 MiB,nan\r\n";
  EXPECT_EQ(sample_table().csv(), expected);
}

TEST(Table, RowsMustMatchHeaders) {
  ca::Table t({"a", "b"});
  EXPECT_THROW(t.add({"1"}), std::invalid_argument);
  EXPECT_THROW(t.add({"1", "2", "3"}), std::invalid_argument);
  t.add({"1", "2"});
  EXPECT_EQ(t.rows(), 1U);
  EXPECT_EQ(t.headers().size(), 2U);
  EXPECT_EQ(t.cells()[0][1], "2");
}

TEST(Table, TextColumnsStayLeftAligned) {
  ca::Table t({"algorithm", "n"});
  t.add({"tree", "2"});
  t.add({"ring", "16"});
  t.add({"-", "-"});  // a missing value takes its column's alignment
  EXPECT_EQ(t.terminal(),
            "algorithm   n\n"
            "---------  --\n"
            "tree        2\n"
            "ring       16\n"
            "-           -\n");
  EXPECT_EQ(t.markdown(),
            "| algorithm |   n |\n"
            "| --------- | --: |\n"
            "| tree      |   2 |\n"
            "| ring      |  16 |\n"
            "| -         |   - |\n");
}

// ---------------------------------------------------------------------------------------------
// Numbers

TEST(Format, Number) {
  EXPECT_EQ(ca::format_number(3.14159), "3.142");
  EXPECT_EQ(ca::format_number(3.14159, 2), "3.1");
  EXPECT_EQ(ca::format_number(2.5), "2.5");
  EXPECT_EQ(ca::format_number(-2.50), "-2.5");
  EXPECT_EQ(ca::format_number(100.0), "100");
  EXPECT_EQ(ca::format_number(0.1 + 0.2), "0.3");
  EXPECT_EQ(ca::format_number(1234.4), "1234");
  EXPECT_EQ(ca::format_number(123456.0), "123456");
  EXPECT_EQ(ca::format_number(9.99996), "10");
  EXPECT_EQ(ca::format_number(0.000123), "0.000123");
  EXPECT_EQ(ca::format_number(0.0), "0");
  EXPECT_EQ(ca::format_number(-0.0), "0");
  EXPECT_EQ(ca::format_number(1e-5), "1e-05");
  EXPECT_EQ(ca::format_number(1.5e20), "1.5e+20");
  EXPECT_EQ(ca::format_number(std::nan("")), "nan");
  EXPECT_EQ(ca::format_number(std::numeric_limits<double>::infinity()), "inf");
}

TEST(Format, Bytes) {
  EXPECT_EQ(ca::format_bytes(8), "8 B");
  EXPECT_EQ(ca::format_bytes(0), "0 B");
  EXPECT_EQ(ca::format_bytes(1000), "1000 B");
  EXPECT_EQ(ca::format_bytes(1536), "1.5 KiB");
  EXPECT_EQ(ca::format_bytes(32768), "32 KiB");
  EXPECT_EQ(ca::format_bytes(1048576), "1 MiB");
  EXPECT_EQ(ca::format_bytes(1048575), "1 MiB");
  EXPECT_EQ(ca::format_bytes(std::ldexp(1.0, 30)), "1 GiB");
  EXPECT_EQ(ca::format_bytes(3 * std::ldexp(1.0, 40)), "3 TiB");
  EXPECT_EQ(ca::format_bytes(1100), "1.07 KiB");
  EXPECT_EQ(ca::format_bytes(std::nan("")), "nan");
}

// ---------------------------------------------------------------------------------------------
// Plots

TEST(Plot, LogLogLinesWithSizes) {
  const fs::path dir = test_dir("lines") / "sub";  // plot() creates the folder
  ca::plot(sample_line_plot(), dir, "latency");
  for (const char* f : {"latency.dat", "latency.gp", "latency.svg", "latency.png"})
    EXPECT_TRUE(fs::exists(dir / f)) << f;
  EXPECT_TRUE(ca::is_valid_svg(dir / "latency.svg"));
  EXPECT_TRUE(ca::is_valid_png(dir / "latency.png"));
  EXPECT_FALSE(fs::exists(dir / "latency.gp.partial"));

  const std::string gp = slurp(dir / "latency.gp");
  EXPECT_NE(gp.find("set logscale x"), std::string::npos);
  EXPECT_NE(gp.find("set logscale y"), std::string::npos);
  EXPECT_NE(gp.find("set terminal svg size 900,560"), std::string::npos);
  EXPECT_NE(gp.find("set terminal pngcairo size 900,560"), std::string::npos);
  EXPECT_NE(gp.find("'8 B' 8, '64 B' 64, '512 B' 512, '4 KiB' 4096"), std::string::npos) << gp;
  EXPECT_NE(gp.find("'1 GiB' 1073741824)"), std::string::npos) << gp;
  EXPECT_NE(gp.find("dt 2"), std::string::npos);
  EXPECT_NE(gp.find("with lines "), std::string::npos);
  EXPECT_EQ(gp.find("'empty'"), std::string::npos);  // a series without points is left out
  EXPECT_NE(gp.find("@ ''node'''"), std::string::npos) << gp;

  // Three blocks, the non-positive points dropped.
  const std::string dat = slurp(dir / "latency.dat");
  EXPECT_NE(dat.find("\n\n\n# 1: tree"), std::string::npos);
  EXPECT_NE(dat.find("\n\n\n# 2: alpha_beta fit"), std::string::npos);
  EXPECT_EQ(dat.find("# 3"), std::string::npos);
  EXPECT_EQ(dat.find("\n0 1\n"), std::string::npos);
  EXPECT_EQ(dat.find(" -1\n"), std::string::npos);

  // noenhanced: underscores and the other special characters print literally.
  const std::string svg = slurp(dir / "latency.svg");
  EXPECT_NE(svg.find("ring_allreduce"), std::string::npos);
  EXPECT_NE(svg.find("alpha_beta fit"), std::string::npos);
  EXPECT_NE(svg.find("allreduce_time: 4 ranks &amp; {x}^2 @ 'node'"), std::string::npos) << svg.substr(0, 4000);
  EXPECT_NE(svg.find("time_us"), std::string::npos);
  EXPECT_NE(svg.find("32 KiB"), std::string::npos);
}

TEST(Plot, LinearBytesAxisAndPngSize) {
  const fs::path dir = test_dir("linear");
  ca::LinePlot p;
  p.title = "linear";
  p.x_bytes = true;
  p.series = {ca::Series{"s", {0, 262144, 524288, 1048576}, {1, 2, 3, 4}}};
  ca::plot(p, dir, "lin");
  EXPECT_TRUE(ca::is_valid_svg(dir / "lin.svg"));
  ASSERT_TRUE(ca::is_valid_png(dir / "lin.png"));
  const std::string gp = slurp(dir / "lin.gp");
  EXPECT_EQ(gp.find("logscale"), std::string::npos);
  EXPECT_NE(gp.find("'0 B' 0, '128 KiB' 131072"), std::string::npos) << gp;
  EXPECT_NE(gp.find("'1 MiB' 1048576)"), std::string::npos) << gp;
  const std::string png = slurp(dir / "lin.png");
  auto u32 = [&](std::size_t at) {
    std::uint32_t v = 0;
    for (std::size_t i = 0; i < 4; ++i) v = (v << 8) | static_cast<unsigned char>(png[at + i]);
    return v;
  };
  EXPECT_EQ(u32(16), 900U);
  EXPECT_EQ(u32(20), 560U);
}

// The line styles of a .gp file's plot command, one per series: "with ... dt N".
std::vector<std::string> plot_styles(const std::string& gp) {
  std::vector<std::string> styles;
  const std::string svg_part = gp.substr(0, gp.find("set output\n"));
  for (std::size_t at = svg_part.find("using 1:2"); at != std::string::npos; at = svg_part.find("using 1:2", at + 1))
    styles.push_back(svg_part.substr(at, svg_part.find(" title ", at) - at));
  return styles;
}

// Twelve fits (lines, dashed) in one plot: no two drawn alike (colours alone repeat after ten).
TEST(Plot, ManySeriesAreDrawnApart) {
  const fs::path dir = test_dir("styles");
  ca::LinePlot p;
  p.title = "allreduce: time per call";
  p.logx = p.logy = p.x_bytes = true;
  for (int i = 0; i < 12; ++i)
    p.series.push_back({"fit " + std::to_string(i), {8, 512}, {2.0 + i, 9.0 + i}, false, true});
  ca::plot(p, dir, "fits");
  const std::vector<std::string> styles = plot_styles(slurp(dir / "fits.gp"));
  ASSERT_EQ(styles.size(), 12U);
  for (std::size_t i = 0; i < styles.size(); ++i)
    for (std::size_t j = i + 1; j < styles.size(); ++j)
      EXPECT_NE(styles[i], styles[j]) << p.series[i].title << " and " << p.series[j].title << " look alike";
}

// A bench report's time plot: six algorithms, each measured (points), fitted (dashed), three with
// a textbook curve: one colour per algorithm, six colours, 15 styles.
TEST(Plot, GroupsShareAColourAndDifferInDash) {
  const fs::path dir = test_dir("groups");
  ca::LinePlot p;
  p.title = "allreduce: time per call";
  p.logx = p.logy = p.x_bytes = true;
  for (const std::string a : {"mpi", "ring", "tree", "rhd", "shm", "hier"}) {
    p.series.push_back({a + " measured", {8, 64, 512}, {2, 3, 9}, true, false, a});
    p.series.push_back({a + " fit", {8, 512}, {2, 9}, false, true, a});
    if (a == "ring" || a == "tree" || a == "rhd")
      p.series.push_back({a + " textbook", {8, 512}, {1, 8}, false, false, a});
  }
  ca::plot(p, dir, "time");
  const std::vector<std::string> styles = plot_styles(slurp(dir / "time.gp"));
  ASSERT_EQ(styles.size(), 15U);
  std::map<std::string, std::set<std::string>> colours;  // algorithm -> colours
  std::set<std::string> all;
  for (std::size_t i = 0; i < styles.size(); ++i) {
    const std::size_t at = styles[i].find("lc rgb '");
    ASSERT_NE(at, std::string::npos) << styles[i];
    const std::string colour = styles[i].substr(at + 8, 7);
    colours[p.series[i].group].insert(colour);
    all.insert(colour);
    for (std::size_t j = i + 1; j < styles.size(); ++j) EXPECT_NE(styles[i], styles[j]);
  }
  EXPECT_EQ(all.size(), 6U);
  for (const auto& [algo, cs] : colours) EXPECT_EQ(cs.size(), 1U) << algo;
}

// One outlier (a 16 ms call among microseconds) stays off the y axis, and the title says so.
TEST(Plot, AnOutlierDoesNotStretchTheAxis) {
  const fs::path dir = test_dir("outlier");
  ca::LinePlot p;
  p.title = "allreduce: bus bandwidth";
  p.logx = p.logy = p.x_bytes = true;
  ca::Series s{"ring", {}, {}};
  for (int e = 4; e <= 20; e += 2) s.x.push_back(std::ldexp(1.0, e)), s.y.push_back(std::ldexp(1.0, e) * 1e-5);
  s.y[3] = 1e-6;  // 1 KiB
  p.series = {s, ca::Series{"tree", s.x, {1e-4, 6e-4, 3e-3, 1e-2, 4e-2, 0.1, 0.3, 0.9, 2}}};
  ca::plot(p, dir, "bw");
  const std::string gp = slurp(dir / "bw.gp");
  EXPECT_NE(gp.find("set yrange [6.666666666666667e-05:"), std::string::npos) << gp;  // tree 1e-4 / 1.5
  EXPECT_NE(gp.find("(1 outlier off the axis: 1e-06)"), std::string::npos) << gp;
  // A curve over many decades without a spike: its own range, 1.5x either side, and no outlier said.
  p.series.erase(p.series.begin());
  ca::plot(p, dir, "smooth");
  const std::string smooth = slurp(dir / "smooth.gp");
  EXPECT_NE(smooth.find("set yrange [6.666666666666667e-05:3]"), std::string::npos) << smooth;
  EXPECT_EQ(smooth.find("off the axis"), std::string::npos) << smooth;
}

// The plot commands of a .gp file's SVG part, each with its continuation lines.
std::vector<std::string> plot_commands(const std::string& gp) {
  std::vector<std::string> commands;
  const std::string svg_part = gp.substr(0, gp.find("set terminal pngcairo"));
  for (std::size_t at = svg_part.find("\nplot "); at != std::string::npos; at = svg_part.find("\nplot ", at + 1)) {
    std::size_t end = at + 1;
    while ((end = svg_part.find('\n', end)) != std::string::npos && svg_part[end - 1] == '\\') ++end;
    commands.push_back(svg_part.substr(at + 1, end - at - 1));
  }
  return commands;
}

std::size_t count(const std::string& text, const std::string& what) {
  std::size_t n = 0;
  for (std::size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

// A log y axis covers the measurements (points), not a model line far above them: measured times up
// to 2e4 us and a textbook curve to 1e6 us read on an axis to 3e4 (gnuplot's own went to 1e6).
TEST(Plot, LogAxisCoversTheMeasurementsNotAFarLine) {
  const fs::path dir = test_dir("far_line");
  ca::LinePlot p;
  p.title = "allreduce: time per call";
  p.logx = p.logy = p.x_bytes = true;
  const std::vector<double> sizes{8, 64, 512, 4096, 32768, 262144, 2097152};
  p.series = {ca::Series{"ring measured", sizes, {3, 4, 8, 40, 330, 2600, 20000}, true, false, "ring"},
              ca::Series{"ring textbook", sizes, {2, 3, 10, 100, 3000, 60000, 1e6}, false, false, "ring"}};
  ca::plot(p, dir, "time");
  const std::string gp = slurp(dir / "time.gp");
  EXPECT_NE(gp.find("set yrange [2:30000]\n"), std::string::npos) << gp;
  EXPECT_EQ(gp.find("off the axis"), std::string::npos) << gp;  // a line beyond the range is no outlier
}

// Six algorithms' measurements, fits and textbook curves (16 lines) are drawn in six panels, one per
// algorithm, each with its own short legend, their y axes alike; one panel's lines keep one plot.
TEST(Plot, PanelsSplitALegendOfEveryLine) {
  const fs::path dir = test_dir("panels");
  ca::LinePlot p;
  p.title = "allreduce: time per call";
  p.logx = p.logy = p.x_bytes = true;
  for (const std::string a : {"mpi", "ring", "tree", "rhd", "shm", "hier"}) {
    p.series.push_back({a + " measured", {8, 64, 512}, {2, 3, 9}, true, false, a, a});
    p.series.push_back({a + " fit", {8, 512}, {2, 9}, false, true, a, a});
    if (a == "ring" || a == "tree" || a == "rhd" || a == "mpi")
      p.series.push_back({a + " textbook", {8, 512}, {1, 800}, false, false, a, a});
  }
  ca::plot(p, dir, "time");
  ASSERT_TRUE(ca::is_valid_png(dir / "time.png"));
  const std::string gp = slurp(dir / "time.gp");
  EXPECT_NE(gp.find("set multiplot layout 2,3 title 'allreduce: time per call' noenhanced\n"), std::string::npos) << gp;
  EXPECT_EQ(count(gp, "set yrange"), 1U) << gp;  // set once, before the panels: alike
  const std::vector<std::string> commands = plot_commands(gp);
  ASSERT_EQ(commands.size(), 6U) << gp;
  for (const std::string& cmd : commands) EXPECT_LE(count(cmd, " title '"), 3U) << cmd;
  EXPECT_NE(gp.find("set title 'hier' noenhanced\nplot datafile index 14 "), std::string::npos) << gp;
  EXPECT_NE(gp.find("set terminal pngcairo size 1360,840 "), std::string::npos) << gp;
  EXPECT_NE(gp.find("set key outside below"), std::string::npos) << gp;
  EXPECT_NE(gp.find("set bmargin 7\n"), std::string::npos) << gp;  // 3 rows of legend at most
  // Without panels: one plot command, the title on it.
  for (ca::Series& s : p.series) s.panel.clear();
  ca::plot(p, dir, "one");
  const std::string one = slurp(dir / "one.gp");
  EXPECT_EQ(one.find("multiplot"), std::string::npos);
  EXPECT_EQ(plot_commands(one).size(), 1U);
  EXPECT_NE(one.find("set title 'allreduce: time per call' noenhanced"), std::string::npos);
}

// A heatmap's cells without a value (a rank to itself) are grey, not the white that read as the pale
// end of the colour scale, and the scale's label stands clear of its tic labels (it was drawn over them).
TEST(Plot, HeatmapBlankCellsGreyAndItsScaleLabelClear) {
  const fs::path dir = test_dir("heatmap");
  ca::Heatmap hm;
  hm.title = "latency";
  hm.cblabel = "latency (us)";
  hm.labels = {"host1:0", "host1:1", "host2:2"};
  const double blank = std::numeric_limits<double>::quiet_NaN();
  hm.values = {{blank, 1, 20}, {1, blank, 21}, {20, 22, blank}};
  ca::plot(hm, dir, "pairs");
  ASSERT_TRUE(ca::is_valid_png(dir / "pairs.png"));
  const std::string gp = slurp(dir / "pairs.gp");
  EXPECT_NE(gp.find("set cblabel 'latency (us)' noenhanced offset 1.5,0\n"), std::string::npos) << gp;
  EXPECT_NE(gp.find("rectangle from graph 0, graph 0 to graph 1, graph 1 behind fillcolor rgb '#d9d9d9'"),
            std::string::npos)
      << gp;
}

// The SVG's title names the plot, not "Gnuplot".
TEST(Plot, SvgTitleIsThePlotsName) {
  const fs::path dir = test_dir("svg_title");
  ca::plot(sample_line_plot(), dir, "allreduce-time.2");
  const std::string svg = slurp(dir / "allreduce-time.2.svg");
  EXPECT_EQ(svg.find("<title>Gnuplot</title>"), std::string::npos);
  EXPECT_NE(svg.find("<title>allreduce_time_2</title>"), std::string::npos) << svg.substr(0, 600);
}

TEST(Plot, StackedBars) {
  const fs::path dir = test_dir("bars");
  ca::plot(sample_bars(), dir, "breakdown");
  EXPECT_TRUE(ca::is_valid_svg(dir / "breakdown.svg"));
  EXPECT_TRUE(ca::is_valid_png(dir / "breakdown.png"));
  const std::string gp = slurp(dir / "breakdown.gp");
  EXPECT_NE(gp.find("rowstacked"), std::string::npos);
  EXPECT_NE(gp.find("using 5 "), std::string::npos);  // 4 components: columns 2..5
  EXPECT_EQ(gp.find("using 6 "), std::string::npos);
  EXPECT_EQ(gp.find("rotate"), std::string::npos);  // 5 short labels fit upright
  const std::string svg = slurp(dir / "breakdown.svg");
  for (const char* text : {"step_1", "step|3", "all_reduce", "optimizer", "iteration_breakdown"})
    EXPECT_NE(svg.find(text), std::string::npos) << text;
  // One row per category, one column per component after the index.
  const std::string dat = slurp(dir / "breakdown.dat");
  EXPECT_NE(dat.find("\n4 3 3.5 4 4.5  # step 5\n"), std::string::npos) << dat;
}

TEST(Plot, ManyBarsRotateTheirLabels) {
  const fs::path dir = test_dir("manybars");
  ca::StackedBars b;
  b.components = {"only"};
  b.values.resize(1);
  for (int k = 0; k < 12; ++k) {
    b.categories.push_back("run " + std::to_string(k));
    b.values[0].push_back(k == 3 ? std::nan("") : k);  // a missing value draws no segment
  }
  ca::plot(b, dir, "many");
  EXPECT_TRUE(ca::is_valid_svg(dir / "many.svg"));
  EXPECT_TRUE(ca::is_valid_png(dir / "many.png"));
  EXPECT_NE(slurp(dir / "many.gp").find("set xtics rotate"), std::string::npos);
  EXPECT_NE(slurp(dir / "many.dat").find("\n3 0  # run 3\n"), std::string::npos);
}

TEST(Plot, NothingToPlot) {
  const fs::path dir = test_dir("empty");
  ca::LinePlot p;
  EXPECT_NE(output_error([&] { ca::plot(p, dir, "none"); }).find("nothing to plot"), std::string::npos);
  p.logy = true;
  p.series = {ca::Series{"negative", {1, 2}, {-1, 0}}, ca::Series{"empty", {}, {}}};
  EXPECT_NE(output_error([&] { ca::plot(p, dir, "none"); }).find("nothing to plot"), std::string::npos);
  ca::StackedBars b;
  EXPECT_NE(output_error([&] { ca::plot(b, dir, "none"); }).find("nothing to plot"), std::string::npos);
  EXPECT_FALSE(fs::exists(dir / "none.gp"));
  p.series = {ca::Series{"mismatch", {1, 2}, {1}}};
  EXPECT_THROW(ca::plot(p, dir, "none"), std::invalid_argument);
}

TEST(Plot, UnwritableDirectory) {
  // A path below a regular file cannot be a folder, for root as well.
  const fs::path dir = test_dir("unwritable");
  spit(dir / "file", "x");
  const std::string err = output_error([&] { ca::plot(sample_line_plot(), dir / "file" / "sub", "p"); });
  EXPECT_NE(err.find("cannot create output folder"), std::string::npos) << err;
  EXPECT_NE(output_error([&] { ca::make_output_dir(dir / "file"); }), "");
  const std::string w = output_error([&] { ca::write_text(dir / "missing", "a.txt", "text"); });
  EXPECT_NE(w.find("No such file or directory"), std::string::npos) << w;
  if (::geteuid() != 0) {  // permissions do not stop root
    fs::create_directories(dir / "ro");
    fs::permissions(dir / "ro", fs::perms::owner_read | fs::perms::owner_exec);
    EXPECT_NE(output_error([&] { ca::plot(sample_bars(), dir / "ro", "p"); }), "");
    fs::permissions(dir / "ro", fs::perms::owner_all);
  }
}

TEST(Plot, GnuplotMissing) {
  const fs::path dir = test_dir("nognuplot");
  fs::create_directories(dir / "emptybin");
  std::string err;
  {
    ScopedPath path((dir / "emptybin").string());
    err = output_error([&] { ca::plot(sample_line_plot(), dir, "p"); });
  }
  EXPECT_NE(err.find("gnuplot is not installed"), std::string::npos) << err;
  EXPECT_NE(std::getenv("PATH"), nullptr);
  EXPECT_EQ(std::string(std::getenv("PATH")).find("emptybin"), std::string::npos);
}

TEST(Plot, GnuplotFailsOrWritesGarbage) {
  const fs::path dir = test_dir("fakegnuplot");
  const fs::path bin = dir / "bin";
  fs::create_directories(bin);
  const fs::path fake = bin / "gnuplot";
  auto install = [&](const std::string& body) {
    spit(fake, "#!/bin/sh\n" + body);
    fs::permissions(fake, fs::perms::owner_all);
  };
  std::string failed, garbage;
  {
    ScopedPath path(bin.string() + ":/usr/bin:/bin");
    install(
        "echo '\"p.gp\" line 3: warning: something minor' >&2\n"
        "echo '         ^' >&2\n"
        "echo \"\\\"$1\\\" line 7: undefined variable: foo\" >&2\n"
        "echo 'more noise' >&2\nexit 1\n");
    failed = output_error([&] { ca::plot(sample_bars(), dir, "p"); });
    install("echo '<svg width=\"1\">' > p.svg\necho text > p.png\nexit 0\n");
    garbage = output_error([&] { ca::plot(sample_bars(), dir, "p"); });
  }
  EXPECT_NE(failed.find((dir / "p.gp").string()), std::string::npos) << failed;
  EXPECT_NE(failed.find("\"p.gp\" line 7: undefined variable: foo"), std::string::npos) << failed;
  EXPECT_NE(garbage.find("valid SVG"), std::string::npos) << garbage;
}

// ---------------------------------------------------------------------------------------------
// Checks

TEST(Checks, RejectTruncatedAndTextFiles) {
  const fs::path dir = test_dir("checks");
  ca::plot(sample_bars(), dir, "b");
  const std::string svg = slurp(dir / "b.svg"), png = slurp(dir / "b.png");
  ASSERT_TRUE(ca::is_valid_svg(dir / "b.svg"));
  ASSERT_TRUE(ca::is_valid_png(dir / "b.png"));

  spit(dir / "half.svg", svg.substr(0, svg.size() / 2));
  spit(dir / "half.png", png.substr(0, png.size() / 2));
  spit(dir / "noiend.png", png.substr(0, png.size() - 12));
  std::string corrupt = png;
  corrupt[png.size() / 2] = static_cast<char>(corrupt[png.size() / 2] ^ 0x5A);
  spit(dir / "corrupt.png", corrupt);
  spit(dir / "text.txt", "just some text\n");
  EXPECT_FALSE(ca::is_valid_svg(dir / "half.svg"));
  EXPECT_FALSE(ca::is_valid_png(dir / "half.png"));
  EXPECT_FALSE(ca::is_valid_png(dir / "noiend.png"));
  EXPECT_FALSE(ca::is_valid_png(dir / "corrupt.png"));
  EXPECT_FALSE(ca::is_valid_svg(dir / "text.txt"));
  EXPECT_FALSE(ca::is_valid_png(dir / "text.txt"));
  EXPECT_FALSE(ca::is_valid_svg(dir / "b.png"));
  EXPECT_FALSE(ca::is_valid_png(dir / "b.svg"));
  EXPECT_FALSE(ca::is_valid_svg(dir / "does-not-exist.svg"));

  // Hand-written SVGs: the root needs a size and a drawing element.
  spit(dir / "ok.svg", "<?xml version=\"1.0\"?>\n<!-- c -->\n<svg viewBox=\"0 0 10 10\"><rect x=\"1\"/></svg>\n");
  spit(dir / "nosize.svg", "<svg><rect x=\"1\"/></svg>");
  spit(dir / "nodraw.svg", "<svg width=\"10\" height=\"10\"><linearGradient/></svg>");
  spit(dir / "html.svg", "<html width=\"10\" height=\"10\"><rect/></html>");
  EXPECT_TRUE(ca::is_valid_svg(dir / "ok.svg"));
  EXPECT_FALSE(ca::is_valid_svg(dir / "nosize.svg"));
  EXPECT_FALSE(ca::is_valid_svg(dir / "nodraw.svg"));
  EXPECT_FALSE(ca::is_valid_svg(dir / "html.svg"));
}

TEST(Files, WriteTextReplacesAtomically) {
  const fs::path dir = test_dir("write");
  ca::make_output_dir(dir / "a" / "b");
  EXPECT_TRUE(fs::is_directory(dir / "a" / "b"));
  ca::write_text(dir / "a" / "b", "t.md", "first");
  ca::write_text(dir / "a" / "b", "t.md", "second\n");
  EXPECT_EQ(slurp(dir / "a" / "b" / "t.md"), "second\n");
  EXPECT_FALSE(fs::exists(dir / "a" / "b" / "t.md.partial"));
}
