// Plots: each is a gnuplot script and its data file in the output folder, drawn as SVG and PNG
// and checked.

#include <algorithm>
#include <array>
#include <cctype>
#include <charconv>
#include <cmath>
#include <limits>
#include <set>
#include <string>
#include <system_error>
#include <tuple>
#include <utility>
#include <vector>

#include "commscope/analysis/output.hpp"
#include "detail.hpp"

namespace commscope::analysis {
namespace fs = std::filesystem;

using detail::display_width;
using detail::one_line;
using detail::run_gnuplot;

namespace {

// ---------------------------------------------------------------------------------------------
// gnuplot scripts

// A single-quoted gnuplot string: no escapes inside but '' for a quote; control characters become
// spaces (text is printed with noenhanced, so '_', '^', '@', '&', '{' print literally).
std::string gp_quote(const std::string& s) {
  std::string out = "'";
  for (char ch : s) {
    if (ch == '\'') {
      out += "''";
    } else if (static_cast<unsigned char>(ch) < 0x20 || ch == 0x7f) {
      out += ' ';
    } else {
      out += ch;
    }
  }
  return out + "'";
}

// The shortest text that reads back as `v` (no %.17g noise in the data files).
std::string gp_number(double v) {
  char buf[64];
  const auto res = std::to_chars(buf, buf + sizeof buf, v);
  return std::string(buf, res.ptr);
}

// Colours that stay apart on white (and in grey print), cycled per series.
constexpr std::array<const char*, 10> kColours{"#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd",
                                               "#8c564b", "#e377c2", "#17becf", "#7f7f7f", "#bcbd22"};
constexpr std::array<int, 6> kPointTypes{7, 5, 9, 11, 13, 15};  // filled circle, square, triangles, ...
constexpr std::array<int, 5> kDashTypes{1, 2, 3, 4, 5};         // solid, dashed, dotted, dash-dot, ...

// How a line series is drawn; point 0: a line only.
struct Style {
  const char* colour;
  int dash, point, width;
  auto key() const { return std::tuple(std::string(colour), dash, point, width); }
};

// One style per series, no two alike: a colour per group (in order of first appearance), the
// series' own dash (solid, or dashed) and point; where that is taken in its colour, the next dash
// types, then other points (or, for lines, widths).
std::vector<Style> series_styles(const std::vector<const Series*>& series) {
  std::vector<std::string> groups;
  std::set<std::tuple<std::string, int, int, int>> used;
  std::vector<Style> styles;
  for (std::size_t i = 0; i < series.size(); ++i) {
    const Series& s = *series[i];
    const std::string group = s.group.empty() ? "\x01" + std::to_string(i) : s.group;
    auto it = std::find(groups.begin(), groups.end(), group);
    const auto g = static_cast<std::size_t>(it - groups.begin());
    if (it == groups.end()) groups.push_back(group);
    const std::size_t dash0 = s.dashed ? 1 : 0;
    Style style{};
    for (std::size_t attempt = 0;; ++attempt) {
      const std::size_t round = attempt / kDashTypes.size();
      style = {kColours[g % kColours.size()], kDashTypes[(dash0 + attempt) % kDashTypes.size()],
               s.points ? kPointTypes[(g + round) % kPointTypes.size()] : 0,
               2 + static_cast<int>(s.points ? round / kPointTypes.size() : round)};
      if (used.insert(style.key()).second) break;
    }
    styles.push_back(style);
  }
  return styles;
}

std::string gp_header(const std::string& name, const std::string& title, const std::string& xlabel,
                      const std::string& ylabel) {
  std::string s;
  s += "# Written by commscope-report; redraw with `gnuplot " + name + ".gp` in this folder.\n";
  s += "# Data: " + name + ".dat. Output: " + name + ".svg and " + name + ".png.\n";
  s += "set encoding utf8\n";
  s += "datafile = " + gp_quote(name + ".dat") + "\n";
  if (!title.empty()) s += "set title " + gp_quote(title) + " noenhanced\n";
  if (!xlabel.empty()) s += "set xlabel " + gp_quote(xlabel) + " noenhanced\n";
  if (!ylabel.empty()) s += "set ylabel " + gp_quote(ylabel) + " noenhanced\n";
  s += "set grid xtics ytics lt 1 lc rgb '#e4e4e4' lw 1\n";
  s += "set border 3 lw 1\nset tics nomirror out\n";
  return s;
}

// Draws the plot command twice: SVG first, then PNG.
std::string gp_outputs(const std::string& name, const std::string& plot_command) {
  std::string s;
  std::string svg_name;  // the SVG's <title> (gnuplot's default is "Gnuplot")
  for (char ch : name) svg_name += std::isalnum(static_cast<unsigned char>(ch)) != 0 ? ch : '_';
  s += "\nset terminal svg size 900,560 dynamic enhanced font 'sans,11' background rgb 'white' name '" + svg_name +
       "'\n";
  s += "set output " + gp_quote(name + ".svg") + "\n";
  s += plot_command;
  s += "set output\n\n";
  s += "set terminal pngcairo size 900,560 enhanced font 'sans,10' background rgb 'white'\n";
  s += "set output " + gp_quote(name + ".png") + "\n";
  s += plot_command;
  s += "set output\n";
  return s;
}

// Tics for an axis of sizes in bytes over [lo, hi]: powers of two on a log axis (every 2^k-th
// power so that at most ~10 show: 8 B, 64 B, 512 B, 4 KiB, ... for a wide range), multiples of a
// power-of-two step on a linear one.
std::vector<double> byte_tics(double lo, double hi, bool log) {
  std::vector<double> tics;
  if (log) {
    const int e_lo = static_cast<int>(std::ceil(std::log2(lo) - 1e-9));
    const int e_hi = static_cast<int>(std::floor(std::log2(hi) + 1e-9));
    for (int step : {1, 2, 3, 4, 5, 6, 8, 10, 12, 16, 20}) {
      tics.clear();
      for (int e = e_lo; e <= e_hi; ++e) {
        if (((e % step) + step) % step == 0) tics.push_back(std::ldexp(1.0, e));
      }
      if (tics.size() <= 10) break;
    }
    if (tics.size() < 2) {  // a narrow range: the powers of two around it
      tics.clear();
      const int a = static_cast<int>(std::floor(std::log2(lo) + 1e-9));
      const int b = std::max(a + 1, static_cast<int>(std::ceil(std::log2(hi) - 1e-9)));
      for (int e = a; e <= b; ++e) tics.push_back(std::ldexp(1.0, e));
    }
    return tics;
  }
  const double span = hi - lo;
  if (!(span > 0)) return {lo};
  double step = std::ldexp(1.0, static_cast<int>(std::ceil(std::log2(span / 8.0))));
  if (step < 1) step = 1;
  for (double t = std::ceil(lo / step) * step; t <= hi + step * 1e-9; t += step) tics.push_back(t);
  return tics;
}

struct Range {
  double lo = std::numeric_limits<double>::infinity();
  double hi = -std::numeric_limits<double>::infinity();
  void add(double v) {
    lo = std::min(lo, v);
    hi = std::max(hi, v);
  }
};

// Which points of a series (x, y > 0, in any order) are outliers on a log y axis: more than 10x
// off every straight line, in log-log (log-linear when x is linear), through two of its neighbours
// in x: the one before and the one after, the two before, the two after. So a neighbour of an
// outlier still has a line that misses it. Fewer than 4 points: none.
std::vector<bool> log_outliers(const std::vector<std::pair<double, double>>& points, bool logx) {
  std::vector<bool> out(points.size(), false);
  if (points.size() < 4) return out;
  std::vector<std::size_t> order(points.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::sort(order.begin(), order.end(),
            [&](std::size_t a, std::size_t b) { return points[a].first < points[b].first; });
  auto at = [&](std::ptrdiff_t k) {
    const auto& [x, y] = points[order[static_cast<std::size_t>(k)]];
    return std::pair(logx ? std::log10(x) : x, std::log10(y));
  };
  const auto n = static_cast<std::ptrdiff_t>(order.size());
  for (std::ptrdiff_t k = 0; k < n; ++k) {
    const auto [x, y] = at(k);
    bool near_a_line = false;
    for (const auto& [a, b] : {std::pair(k - 1, k + 1), std::pair(k - 2, k - 1), std::pair(k + 1, k + 2)}) {
      if (a < 0 || b >= n) continue;
      const auto [xa, ya] = at(a);
      const auto [xb, yb] = at(b);
      if (!(xb > xa)) continue;
      near_a_line = near_a_line || std::fabs(y - (ya + (yb - ya) * (x - xa) / (xb - xa))) <= 1.0;
    }
    out[order[static_cast<std::size_t>(k)]] = !near_a_line;
  }
  return out;
}

// The y range of a log axis without the outliers that would stretch it: [lo, hi] of every other
// point, and the outliers beyond it (their count and extremes). Nothing off: no range to set.
struct OffAxis {
  Range shown, off;
  std::size_t count = 0;
};
OffAxis log_range_without_outliers(const std::vector<std::vector<std::pair<double, double>>>& series, bool logx) {
  OffAxis r;
  std::vector<double> outlying;
  for (const auto& points : series) {
    const std::vector<bool> out = log_outliers(points, logx);
    for (std::size_t i = 0; i < points.size(); ++i) {
      if (out[i]) {
        outlying.push_back(points[i].second);
      } else {
        r.shown.add(points[i].second);
      }
    }
  }
  for (double y : outlying)
    if (y < r.shown.lo || y > r.shown.hi) r.off.add(y), ++r.count;
  return r;
}

// "set xtics" at whole numbers over the x values: each value when there are few (ranks 1, 2, 4),
// else a whole step.
std::string integer_tics(const std::vector<double>& xs) {
  std::set<double> whole;
  for (double x : xs) whole.insert(std::round(x));
  if (whole.size() <= 12) {
    std::string s = "set xtics (";
    for (double x : whole) s += (x == *whole.begin() ? "" : ", ") + gp_number(x);
    return s + ")\n";
  }
  const double step = std::max(1.0, std::ceil((*whole.rbegin() - *whole.begin()) / 10));
  return "set xtics " + gp_number(step) + "\nset mxtics 1\n";
}

void check_name(const std::string& name) {
  if (name.empty() || name == "." || name == ".." || name.find('/') != std::string::npos)
    throw OutputError("invalid plot name '" + name + "'");
}

// Draws DIR/NAME.gp and checks what it wrote.
void draw(const fs::path& dir, const std::string& name) {
  for (const char* ext : {".svg", ".png"}) {  // no stale output passes the checks below
    std::error_code ec;
    fs::remove(dir / (name + ext), ec);
  }
  run_gnuplot(dir, name + ".gp");
  const fs::path svg = dir / (name + ".svg"), png = dir / (name + ".png");
  if (!is_valid_svg(svg)) throw OutputError("gnuplot did not write a valid SVG: " + svg.string());
  if (!is_valid_png(png)) throw OutputError("gnuplot did not write a valid PNG: " + png.string());
}

}  // namespace

void plot(const LinePlot& p, const fs::path& dir, const std::string& name) {
  check_name(name);
  struct Drawn {
    const Series* series;
    std::vector<std::pair<double, double>> points;
  };
  std::vector<Drawn> drawn;
  Range xr, yr;
  for (const Series& s : p.series) {
    if (s.x.size() != s.y.size())
      throw std::invalid_argument("plot series '" + s.title + "' has " + std::to_string(s.x.size()) + " x and " +
                                  std::to_string(s.y.size()) + " y values");
    Drawn d{&s, {}};
    for (std::size_t i = 0; i < s.x.size(); ++i) {
      const double x = s.x[i], y = s.y[i];
      if (!std::isfinite(x) || !std::isfinite(y)) continue;
      if ((p.logx && x <= 0) || (p.logy && y <= 0)) continue;  // not drawable on a log axis
      d.points.emplace_back(x, y);
      xr.add(x);
      yr.add(y);
    }
    if (!d.points.empty()) drawn.push_back(std::move(d));
  }
  if (drawn.empty()) throw OutputError("nothing to plot: " + (p.title.empty() ? name : p.title));
  make_output_dir(dir);

  std::string data;
  for (std::size_t i = 0; i < drawn.size(); ++i) {
    if (i > 0) data += "\n\n";
    data += "# " + std::to_string(i) + ": " + one_line(drawn[i].series->title) + "\n";
    for (const auto& [x, y] : drawn[i].points) data += gp_number(x) + ' ' + gp_number(y) + '\n';
  }
  write_text(dir, name + ".dat", data);

  OffAxis off;
  if (p.logy) {
    std::vector<std::vector<std::pair<double, double>>> points;
    for (const Drawn& d : drawn) points.push_back(d.points);
    off = log_range_without_outliers(points, p.logx);
  }
  std::string title = p.title;
  if (off.count > 0)
    title += (title.empty() ? "" : " ") + std::string("(") + std::to_string(off.count) + " outlier" +
             (off.count > 1 ? "s" : "") + " off the axis: " + format_number(off.off.lo, 3) +
             (off.off.hi > off.off.lo ? " to " + format_number(off.off.hi, 3) : "") + ")";
  std::string gp = gp_header(name, title, p.xlabel, p.ylabel);
  gp += "set key outside right top vertical Left reverse noenhanced\n";
  if (off.count > 0) gp += "set yrange [" + gp_number(off.shown.lo / 1.5) + ":" + gp_number(off.shown.hi * 1.5) + "]\n";
  if (p.x_integers) {
    std::vector<double> xs;
    for (const Drawn& d : drawn)
      for (const auto& pt : d.points) xs.push_back(pt.first);
    gp += integer_tics(xs);
  }
  if (p.logx) gp += p.x_bytes ? "set logscale x 2\n" : "set logscale x 10\n";
  if (p.logy) gp += "set logscale y 10\n";
  if (p.x_bytes) {
    double lo = xr.lo, hi = xr.hi;
    const std::vector<double> tics = byte_tics(lo, hi, p.logx);
    if (!tics.empty()) {
      lo = std::min(lo, tics.front());
      hi = std::max(hi, tics.back());
    }
    if (p.logx) {
      if (hi <= lo) hi = lo * 2;
      lo /= 1.2;
      hi *= 1.2;
    } else {
      const double margin = hi > lo ? (hi - lo) * 0.03 : std::max(1.0, std::fabs(lo) * 0.1);
      lo -= margin;
      hi += margin;
    }
    gp += "set xrange [" + gp_number(lo) + ":" + gp_number(hi) + "]\n";
    gp += "set xtics (";
    for (std::size_t i = 0; i < tics.size(); ++i) {
      if (i > 0) gp += ", ";
      gp += gp_quote(format_bytes(tics[i])) + " " + gp_number(tics[i]);
    }
    gp += ")\n";
    if (tics.size() > 12) gp += "set xtics rotate by 45 right\n";
  }
  if (p.logy) gp += "set format y '%g'\n";
  gp += "set offsets 0, 0, graph 0.04, graph 0.04\n";  // points on the frame stay visible

  std::vector<const Series*> shown;
  for (const Drawn& d : drawn) shown.push_back(d.series);
  const std::vector<Style> styles = series_styles(shown);
  std::string cmd = "plot ";
  for (std::size_t i = 0; i < drawn.size(); ++i) {
    const Style& st = styles[i];
    if (i > 0) cmd += ", \\\n     ";
    cmd += "datafile index " + std::to_string(i) + " using 1:2";
    cmd += st.point != 0 ? " with linespoints pt " + std::to_string(st.point) + " ps 0.7" : std::string(" with lines");
    cmd += " lw " + std::to_string(st.width) + " lc rgb '" + st.colour + "' dt " + std::to_string(st.dash);
    cmd += " title " + gp_quote(drawn[i].series->title) + " noenhanced";
  }
  cmd += "\n";
  gp += gp_outputs(name, cmd);
  write_text(dir, name + ".gp", gp);
  draw(dir, name);
}

void plot(const StackedBars& p, const fs::path& dir, const std::string& name) {
  check_name(name);
  if (p.values.size() != p.components.size())
    throw std::invalid_argument("stacked bars: " + std::to_string(p.values.size()) + " value rows for " +
                                std::to_string(p.components.size()) + " components");
  for (const auto& row : p.values)
    if (row.size() != p.categories.size())
      throw std::invalid_argument("stacked bars: a component has " + std::to_string(row.size()) + " values for " +
                                  std::to_string(p.categories.size()) + " categories");
  if (p.categories.empty() || p.components.empty())
    throw OutputError("nothing to plot: " + (p.title.empty() ? name : p.title));
  make_output_dir(dir);

  bool any_negative = false;
  std::string data = "# category";
  for (const auto& c : p.components) data += " | " + one_line(c);
  data += "\n";
  for (std::size_t k = 0; k < p.categories.size(); ++k) {
    data += std::to_string(k);
    for (const auto& row : p.values) {
      const double v = std::isfinite(row[k]) ? row[k] : 0.0;  // missing: no bar segment
      any_negative = any_negative || v < 0;
      data += ' ' + gp_number(v);
    }
    data += "  # " + one_line(p.categories[k]) + "\n";
  }
  write_text(dir, name + ".dat", data);

  std::size_t longest = 0;
  for (const auto& c : p.categories) longest = std::max(longest, display_width(c));
  std::string gp = gp_header(name, p.title, p.xlabel, p.ylabel);
  gp += "set key outside right top vertical Left reverse noenhanced invert\n";
  gp += "set style data histograms\nset style histogram rowstacked\n";
  gp += "set style fill solid 0.85 border rgb '#404040'\nset boxwidth 0.7 relative\n";
  gp += "set grid noxtics ytics\n";
  if (!any_negative) gp += "set yrange [0:*]\n";
  gp += "set xrange [-0.6:" + gp_number(static_cast<double>(p.categories.size()) - 0.4) + "]\n";
  gp += "set xtics noenhanced scale 0 (";
  for (std::size_t k = 0; k < p.categories.size(); ++k) {
    if (k > 0) gp += ", ";
    gp += gp_quote(p.categories[k]) + " " + std::to_string(k);
  }
  gp += ")\n";
  if (p.categories.size() > 8 || (p.categories.size() > 3 && longest > 12) || longest > 24)
    gp += "set xtics rotate by 45 right\n";

  std::string cmd = "plot ";
  for (std::size_t c = 0; c < p.components.size(); ++c) {
    if (c > 0) cmd += ", \\\n     ";
    cmd += (c == 0 ? "datafile" : "''") + std::string(" using ") + std::to_string(c + 2) + " lc rgb '" +
           kColours[c % kColours.size()] + "' title " + gp_quote(p.components[c]) + " noenhanced";
  }
  cmd += "\n";
  gp += gp_outputs(name, cmd);
  write_text(dir, name + ".gp", gp);
  draw(dir, name);
}

void plot(const Heatmap& p, const fs::path& dir, const std::string& name) {
  check_name(name);
  const std::size_t n = p.labels.size();
  if (p.values.size() != n)
    throw std::invalid_argument("heatmap: " + std::to_string(p.values.size()) + " rows for " + std::to_string(n) +
                                " labels");
  bool any = false;
  for (const auto& row : p.values) {
    if (row.size() != n)
      throw std::invalid_argument("heatmap: a row has " + std::to_string(row.size()) + " values for " +
                                  std::to_string(n) + " labels");
    for (double v : row) any = any || std::isfinite(v);
  }
  if (!any) throw OutputError("nothing to plot: " + (p.title.empty() ? name : p.title));
  make_output_dir(dir);

  // One line per cell (column row value): blank cells are simply absent.
  std::string data = "# column row value\n";
  for (std::size_t r = 0; r < n; ++r)
    for (std::size_t c = 0; c < n; ++c)
      if (std::isfinite(p.values[r][c]))
        data += std::to_string(c) + ' ' + std::to_string(r) + ' ' + gp_number(p.values[r][c]) + '\n';
  write_text(dir, name + ".dat", data);

  std::string gp = gp_header(name, p.title, p.xlabel, p.ylabel);
  gp += "unset grid\nset border 15\nset tics nomirror out\n";
  if (!p.cblabel.empty()) gp += "set cblabel " + gp_quote(p.cblabel) + " noenhanced\n";
  if (p.from_zero) gp += "set cbrange [0:*]\n";
  // Dark for the bad end of the scale, light for the good end.
  gp += p.low_is_bad ? "set palette defined (0 '#3b0f70', 0.5 '#de4968', 1 '#fcfdbf')\n"
                     : "set palette defined (0 '#fcfdbf', 0.5 '#de4968', 1 '#3b0f70')\n";
  gp += "set xrange [-0.5:" + gp_number(static_cast<double>(n) - 0.5) + "]\n";
  gp += "set yrange [" + gp_number(static_cast<double>(n) - 0.5) + ":-0.5]\n";  // row 0 on top
  for (const char* axis : {"xtics", "ytics"}) {
    gp += std::string("set ") + axis + " (";
    for (std::size_t k = 0; k < n; ++k) {
      if (k > 0) gp += ", ";
      gp += gp_quote(p.labels[k]) + " " + std::to_string(k);
    }
    gp += ") noenhanced\n";
  }
  if (n > 6) gp += "set xtics rotate by 90 right\n";
  for (std::size_t g : p.groups) {
    if (g == 0 || g >= n) continue;
    const std::string at = gp_number(static_cast<double>(g) - 0.5), lo = "-0.5",
                      hi = gp_number(static_cast<double>(n) - 0.5);
    gp += "set arrow from " + at + "," + lo + " to " + at + "," + hi + " nohead front lw 2 lc rgb 'black'\n";
    gp += "set arrow from " + lo + "," + at + " to " + hi + "," + at + " nohead front lw 2 lc rgb 'black'\n";
  }
  gp += "set size ratio -1\nunset key\n";
  gp += gp_outputs(name, "plot datafile using 1:2:(0.5):(0.5):3 with boxxyerror fs solid 1.0 noborder fc palette\n");
  write_text(dir, name + ".gp", gp);
  draw(dir, name);
}

}  // namespace commscope::analysis
