// Plots: each is a gnuplot script and its data file in the output folder, drawn as SVG and PNG
// and checked.

#include <algorithm>
#include <array>
#include <cctype>
#include <charconv>
#include <cmath>
#include <initializer_list>
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

// One style per series, no two alike in a panel: a colour per group (in order of first appearance
// over the whole plot, so that a group has one colour in every panel), the series' own dash (solid,
// or dashed) and point; where that is taken in its colour and panel, the next dash types, then other
// points (or, for lines, widths).
std::vector<Style> series_styles(const std::vector<const Series*>& series) {
  std::vector<std::string> groups;
  std::set<std::tuple<std::string, std::string, int, int, int>> used;  // panel, then the style
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
      if (used.insert(std::tuple_cat(std::tuple(s.panel), style.key())).second) break;
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

// Draws the plot command twice: SVG first, then PNG, both `size` ("900,560") pixels.
std::string gp_outputs(const std::string& name, const std::string& plot_command, const std::string& size = "900,560") {
  std::string s;
  std::string svg_name;  // the SVG's <title> (gnuplot's default is "Gnuplot")
  for (char ch : name) svg_name += std::isalnum(static_cast<unsigned char>(ch)) != 0 ? ch : '_';
  s += "\nset terminal svg size " + size + " dynamic enhanced font 'sans,11' background rgb 'white' name '" + svg_name +
       "'\n";
  s += "set output " + gp_quote(name + ".svg") + "\n";
  s += plot_command;
  s += "set output\n\n";
  s += "set terminal pngcairo size " + size + " enhanced font 'sans,10' background rgb 'white'\n";
  s += "set output " + gp_quote(name + ".png") + "\n";
  s += plot_command;
  s += "set output\n";
  return s;
}

// Tics for an axis of sizes in bytes over [lo, hi]: powers of two on a log axis (every 2^k-th
// power so that at most `most` show: 8 B, 64 B, 512 B, 4 KiB, ... for a wide range), multiples of a
// power-of-two step on a linear one.
std::vector<double> byte_tics(double lo, double hi, bool log, std::size_t most) {
  std::vector<double> tics;
  if (log) {
    const int e_lo = static_cast<int>(std::ceil(std::log2(lo) - 1e-9));
    const int e_hi = static_cast<int>(std::floor(std::log2(hi) + 1e-9));
    for (int step : {1, 2, 3, 4, 5, 6, 8, 10, 12, 16, 20}) {
      tics.clear();
      for (int e = e_lo; e <= e_hi; ++e) {
        if (((e % step) + step) % step == 0) tics.push_back(std::ldexp(1.0, e));
      }
      if (tics.size() <= most) break;
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

// A log y axis runs 1.5x beyond the points it covers either side (points on the frame stay clear).
constexpr double kLogPad = 1.5;

// The y range of a log axis without the outliers that would stretch it: [lo, hi] of every other
// point, and the outliers beyond it, kLogPad included (their count and extremes: an outlier inside
// the padded range is drawn, and not said to be off the axis).
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
    if (y < r.shown.lo / kLogPad || y > r.shown.hi * kLogPad) r.off.add(y), ++r.count;
  return r;
}

// "set ytics" for a log axis over [lo, hi] too narrow for gnuplot's own labels, one per decade (12 to
// 890 us showed "100" alone): 1, 2 and 5 times the powers of ten, or every digit's where that is still
// fewer than three. Empty where three decades or more are labelled.
std::string log_tics(double lo, double hi) {
  auto tics = [&](std::initializer_list<int> digits) {
    std::vector<double> t;
    for (int e = static_cast<int>(std::floor(std::log10(lo))); e <= static_cast<int>(std::ceil(std::log10(hi))); ++e)
      for (int d : digits) {
        const double v = e >= 0 ? d * std::pow(10.0, e) : d / std::pow(10.0, -e);  // 0.3, not 0.30000000000000004
        if (v >= lo && v <= hi) t.push_back(v);
      }
    return t;
  };
  if (tics({1}).size() >= 3) return {};
  std::vector<double> t = tics({1, 2, 5});
  if (t.size() < 3) t = tics({1, 2, 3, 4, 5, 6, 7, 8, 9});
  std::string s = "set ytics (";
  for (std::size_t i = 0; i < t.size(); ++i) s += (i > 0 ? ", " : "") + gp_number(t[i]);
  return s + ")\n";
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

// A line plot's series with the points it draws (finite; positive on a log axis).
struct Drawn {
  const Series* series;
  std::vector<std::pair<double, double>> points;
};

// The y range of a log axis: the measurements' values (the series with points; every series' when none
// has points) without their outliers (log_range_without_outliers). A line beyond it (a fit carried
// past the measurements, a textbook curve far off them) leaves the frame rather than stretch the
// axis decades past the data.
OffAxis log_y_range(const std::vector<Drawn>& drawn, bool logx) {
  const bool any_points = std::any_of(drawn.begin(), drawn.end(), [](const Drawn& d) { return d.series->points; });
  std::vector<std::vector<std::pair<double, double>>> measured;
  for (const Drawn& d : drawn)
    if (d.series->points || !any_points) measured.push_back(d.points);
  return log_range_without_outliers(measured, logx);
}

// The x axis of sizes in bytes over `xr`: its range and byte_tics' labels ("8 B", "4 KiB"), at most
// `most` of them.
std::string byte_axis(const Range& xr, bool logx, std::size_t most) {
  double lo = xr.lo, hi = xr.hi;
  const std::vector<double> tics = byte_tics(lo, hi, logx, most);
  if (!tics.empty()) {
    lo = std::min(lo, tics.front());
    hi = std::max(hi, tics.back());
  }
  if (logx) {
    if (hi <= lo) hi = lo * 2;
    lo /= 1.2;
    hi *= 1.2;
  } else {
    const double margin = hi > lo ? (hi - lo) * 0.03 : std::max(1.0, std::fabs(lo) * 0.1);
    lo -= margin;
    hi += margin;
  }
  std::string gp = "set xrange [" + gp_number(lo) + ":" + gp_number(hi) + "]\n";
  gp += "set xtics (";
  for (std::size_t i = 0; i < tics.size(); ++i) {
    if (i > 0) gp += ", ";
    gp += gp_quote(format_bytes(tics[i])) + " " + gp_number(tics[i]);
  }
  gp += ")\n";
  if (tics.size() > 12) gp += "set xtics rotate by 45 right\n";
  return gp;
}

// The plot command of the series `which` (indices into drawn: the data file's blocks).
std::string plot_command(const std::vector<Drawn>& drawn, const std::vector<Style>& styles,
                         const std::vector<std::size_t>& which) {
  std::string cmd = "plot ";
  for (std::size_t k = 0; k < which.size(); ++k) {
    const std::size_t i = which[k];
    const Style& st = styles[i];
    if (k > 0) cmd += ", \\\n     ";
    cmd += "datafile index " + std::to_string(i) + " using 1:2";
    cmd += st.point != 0 ? " with linespoints pt " + std::to_string(st.point) + " ps 0.7" : std::string(" with lines");
    cmd += " lw " + std::to_string(st.width) + " lc rgb '" + st.colour + "' dt " + std::to_string(st.dash);
    cmd += " title " + gp_quote(drawn[i].series->title) + " noenhanced";
  }
  return cmd + "\n";
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
  std::vector<Drawn> drawn;
  Range xr;
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

  const OffAxis off = p.logy ? log_y_range(drawn, p.logx) : OffAxis{};
  std::string title = p.title;
  if (off.count > 0)
    title += (title.empty() ? "" : " ") + std::string("(") + std::to_string(off.count) + " outlier" +
             (off.count > 1 ? "s" : "") + " off the axis: " + format_number(off.off.lo, 3) +
             (off.off.hi > off.off.lo ? " to " + format_number(off.off.hi, 3) : "") + ")";
  if (!p.note.empty()) title += (title.empty() ? "(" : " (") + p.note + ")";
  std::vector<std::string> panels;  // in order of first appearance
  for (const Drawn& d : drawn)
    if (std::find(panels.begin(), panels.end(), d.series->panel) == panels.end()) panels.push_back(d.series->panel);
  const bool several = panels.size() > 1;

  std::string gp = gp_header(name, several ? std::string() : title, p.xlabel, p.ylabel);
  if (several) {
    // Each panel's legend under it, in up to 4 rows, over a bottom margin alike in every panel so that
    // their frames line up (inside, a legend hid a panel's measurements).
    std::size_t most = 0;
    for (const std::string& panel : panels)
      most = std::max<std::size_t>(
          most, std::count_if(drawn.begin(), drawn.end(), [&](const Drawn& d) { return d.series->panel == panel; }));
    gp += "set key outside below center vertical Left reverse noenhanced samplen 2 font ',8' maxrows 4\n";
    gp += "set bmargin " + std::to_string(4 + std::min<std::size_t>(most, 4)) + "\n";
  } else {
    gp += "set key outside right top vertical Left reverse noenhanced\n";
  }
  if (p.logy) {
    const double lo = off.shown.lo / kLogPad, hi = off.shown.hi * kLogPad;
    gp += "set yrange [" + gp_number(lo) + ":" + gp_number(hi) + "]\n" + log_tics(lo, hi);
  }
  if (p.x_integers) {
    std::vector<double> xs;
    for (const Drawn& d : drawn)
      for (const auto& pt : d.points) xs.push_back(pt.first);
    gp += integer_tics(xs);
  }
  if (p.logx) gp += p.x_bytes ? "set logscale x 2\n" : "set logscale x 10\n";
  if (p.logy) gp += "set logscale y 10\n";
  if (p.x_bytes) gp += byte_axis(xr, p.logx, several ? 5 : 10);  // a panel is a third as wide
  if (p.logy) gp += "set format y '%g'\n";
  // A linear y axis of values that cannot go below zero (a speedup) starts at zero, so that its
  // heights compare (a speedup of 0.3 against 1 drawn from 0.2 looked like a tenth).
  const bool from_zero = !p.logy && std::all_of(drawn.begin(), drawn.end(), [](const Drawn& d) {
    return std::all_of(d.points.begin(), d.points.end(), [](const auto& pt) { return pt.second >= 0; });
  });
  if (from_zero) gp += "set yrange [0:*]\n";
  // Points on the frame stay visible; a few whole-number x values (ranks) sit inside it too.
  gp += std::string("set offsets ") + (p.x_integers ? "graph 0.04, graph 0.04" : "0, 0") + ", graph 0.04, " +
        (from_zero ? "0" : "graph 0.04") + "\n";

  std::vector<const Series*> shown;
  for (const Drawn& d : drawn) shown.push_back(d.series);
  const std::vector<Style> styles = series_styles(shown);
  if (!several) {
    std::vector<std::size_t> all(drawn.size());
    for (std::size_t i = 0; i < all.size(); ++i) all[i] = i;
    gp += gp_outputs(name, plot_command(drawn, styles, all));
  } else {
    // One panel per name, side by side (3 to a row; 2 for 2 or 4), their axes alike.
    const std::size_t cols = panels.size() == 2 || panels.size() == 4 ? 2 : 3;
    const std::size_t rows = (panels.size() + cols - 1) / cols;
    std::string cmd = "set multiplot layout " + std::to_string(rows) + "," + std::to_string(cols) + " title " +
                      gp_quote(title) + " noenhanced\n";
    for (const std::string& panel : panels) {
      std::vector<std::size_t> in;
      for (std::size_t i = 0; i < drawn.size(); ++i)
        if (drawn[i].series->panel == panel) in.push_back(i);
      cmd += "set title " + gp_quote(panel) + " noenhanced\n" + plot_command(drawn, styles, in);
    }
    cmd += "unset multiplot\n";
    gp += gp_outputs(name, cmd, std::to_string(440 * cols + 40) + "," + std::to_string(400 * rows + 40));
  }
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
  // The colour bar's label clear of its tic labels (it was drawn over them).
  if (!p.cblabel.empty()) gp += "set cblabel " + gp_quote(p.cblabel) + " noenhanced offset 1.5,0\n";
  // Cells without a value (a rank to itself) grey, not white: white read as the pale end of the scale.
  gp +=
      "set object 1 rectangle from graph 0, graph 0 to graph 1, graph 1 behind fillcolor rgb '#d9d9d9' "
      "fillstyle solid 1.0 noborder\n";
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
