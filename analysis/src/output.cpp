// The report's outputs: tables, number formatting, gnuplot plots and their structural checks.

#include "commscope/analysis/output.hpp"

#include <fcntl.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <limits>
#include <sstream>
#include <system_error>
#include <utility>

namespace commscope::analysis {
namespace fs = std::filesystem;

namespace {

// ---------------------------------------------------------------------------------------------
// Tables

// Display width of a UTF-8 string: code points, not bytes (a 'µs' column lines up).
std::size_t display_width(const std::string& s) {
  std::size_t n = 0;
  for (unsigned char c : s)
    if ((c & 0xC0U) != 0x80U) ++n;
  return n;
}

std::string one_line(const std::string& s) {
  std::string out;
  out.reserve(s.size());
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '\r' && i + 1 < s.size() && s[i + 1] == '\n') continue;  // \r\n: one space
    out += (s[i] == '\n' || s[i] == '\r') ? ' ' : s[i];
  }
  return out;
}

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

// ---------------------------------------------------------------------------------------------
// Files and processes

std::string errno_text(int err) {
  return std::strerror(err);
}

std::string read_file(const fs::path& path, std::size_t limit) {
  std::error_code ec;
  const std::uintmax_t size = fs::file_size(path, ec);
  if (ec) return {};
  std::ifstream in(path, std::ios::binary);
  if (!in) return {};
  std::string data;
  data.resize(static_cast<std::size_t>(std::min<std::uintmax_t>(size, limit)));
  in.read(data.data(), static_cast<std::streamsize>(data.size()));
  data.resize(static_cast<std::size_t>(in.gcount()));
  return data;
}

// The executable `name` on PATH (as execvp would find it), or an empty path.
fs::path find_on_path(const std::string& name) {
  const char* env = std::getenv("PATH");
  std::string path = env != nullptr ? env : "/usr/local/bin:/usr/bin:/bin";
  std::size_t start = 0;
  while (start <= path.size()) {
    std::size_t end = path.find(':', start);
    if (end == std::string::npos) end = path.size();
    std::string dir = path.substr(start, end - start);
    if (dir.empty()) dir = ".";
    const fs::path candidate = fs::path(dir) / name;
    std::error_code ec;
    if (fs::is_regular_file(candidate, ec) && ::access(candidate.c_str(), X_OK) == 0) return candidate;
    start = end + 1;
  }
  return {};
}

// gnuplot's first error line out of its stderr: the "SCRIPT" line N: ... message that is not a
// warning, else the last non-empty line.
std::string first_error_line(const std::string& err) {
  std::istringstream in(err);
  std::string line, last;
  while (std::getline(in, line)) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.find_first_not_of(" \t^") == std::string::npos) continue;
    if (line.find(" line ") != std::string::npos && line.find("warning:") == std::string::npos) return line;
    last = line;
  }
  return last;
}

// Runs `gnuplot SCRIPT` in `dir`; throws OutputError when gnuplot is missing or fails.
void run_gnuplot(const fs::path& dir, const std::string& script) {
  const fs::path gnuplot = find_on_path("gnuplot");
  if (gnuplot.empty()) throw GnuplotMissing("gnuplot is not installed (Debian: gnuplot-nox)");

  int fds[2];
  if (::pipe(fds) != 0) throw OutputError("cannot run gnuplot: pipe: " + errno_text(errno));
  const int devnull = ::open("/dev/null", O_RDWR | O_CLOEXEC);
  const std::string exe = gnuplot.string(), dir_s = dir.string();
  std::array<char*, 3> argv{const_cast<char*>(exe.c_str()), const_cast<char*>(script.c_str()), nullptr};

  const pid_t pid = ::fork();
  if (pid < 0) {
    const int err = errno;
    ::close(fds[0]);
    ::close(fds[1]);
    if (devnull >= 0) ::close(devnull);
    throw OutputError("cannot run gnuplot: fork: " + errno_text(err));
  }
  if (pid == 0) {  // child: async-signal-safe calls only
    if (::chdir(dir_s.c_str()) != 0) ::_exit(126);
    if (devnull >= 0) {
      ::dup2(devnull, STDIN_FILENO);
      ::dup2(devnull, STDOUT_FILENO);
    }
    ::dup2(fds[1], STDERR_FILENO);
    ::close(fds[0]);
    ::close(fds[1]);
    ::execv(argv[0], argv.data());
    ::_exit(127);
  }
  ::close(fds[1]);
  if (devnull >= 0) ::close(devnull);
  std::string err;
  std::array<char, 4096> buf{};
  for (;;) {
    const ssize_t n = ::read(fds[0], buf.data(), buf.size());
    if (n > 0) {
      if (err.size() < (1U << 20)) err.append(buf.data(), static_cast<std::size_t>(n));
    } else if (n == 0 || errno != EINTR) {
      break;
    }
  }
  ::close(fds[0]);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  const fs::path where = dir / script;
  if (WIFEXITED(status) && WEXITSTATUS(status) == 0) return;
  std::string why;
  if (WIFSIGNALED(status)) {
    why = "killed by signal " + std::to_string(WTERMSIG(status));
  } else if (WEXITSTATUS(status) == 126 && err.empty()) {
    why = "cannot enter the folder";
  } else if (WEXITSTATUS(status) == 127 && err.empty()) {
    why = "cannot execute " + exe;
  } else {
    why = first_error_line(err);
    if (why.empty()) why = "exit status " + std::to_string(WEXITSTATUS(status));
  }
  throw OutputError("gnuplot failed on " + where.string() + ": " + why);
}

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
  s += "\nset terminal svg size 900,560 dynamic enhanced font 'sans,11' background rgb 'white'\n";
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

}  // namespace

// -----------------------------------------------------------------------------------------------
// Table

Table::Table(std::vector<std::string> headers) : headers_(std::move(headers)) {}

void Table::add(std::vector<std::string> cells) {
  if (cells.size() != headers_.size())
    throw std::invalid_argument("table row has " + std::to_string(cells.size()) + " cells, expected " +
                                std::to_string(headers_.size()));
  rows_.push_back(std::move(cells));
}

std::string Table::terminal() const {
  if (headers_.empty()) return {};
  const std::size_t n = headers_.size();
  const auto numeric = numeric_columns(headers_, rows_);
  std::vector<std::size_t> width(n, 0);
  for (std::size_t c = 0; c < n; ++c) width[c] = display_width(one_line(headers_[c]));
  for (const auto& row : rows_)
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
  for (const auto& row : rows_) {
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
  const auto numeric = numeric_columns(headers_, rows_);
  std::vector<std::size_t> width(n, 3);
  for (std::size_t c = 0; c < n; ++c) width[c] = std::max(width[c], display_width(markdown_cell(headers_[c])));
  for (const auto& row : rows_)
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
  for (const auto& row : rows_) out += emit(row);
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
  emit(headers_);
  for (const auto& row : rows_) emit(row);
  return out;
}

// -----------------------------------------------------------------------------------------------
// Numbers

// -----------------------------------------------------------------------------------------------
// Folders and files

void make_output_dir(const fs::path& dir) {
  std::error_code ec;
  if (dir.empty()) throw OutputError("cannot create output folder: empty path");
  fs::create_directories(dir, ec);
  if (ec) throw OutputError("cannot create output folder " + dir.string() + ": " + ec.message());
  if (!fs::is_directory(dir, ec)) throw OutputError("cannot create output folder " + dir.string() + ": not a folder");
  if (::access(dir.c_str(), W_OK | X_OK) != 0)
    throw OutputError("output folder " + dir.string() + " is not writable: " + errno_text(errno));
}

void write_text(const fs::path& dir, const std::string& name, const std::string& text) {
  const fs::path target = dir / name;
  fs::path partial = target;
  partial += ".partial";
  std::FILE* f = std::fopen(partial.c_str(), "wb");
  if (f == nullptr) throw OutputError("cannot write " + target.string() + ": " + errno_text(errno));
  int err = 0;
  if (!text.empty() && std::fwrite(text.data(), 1, text.size(), f) != text.size()) err = errno;
  if (std::fflush(f) != 0 && err == 0) err = errno;
  if (std::fclose(f) != 0 && err == 0) err = errno;
  if (err == 0 && std::rename(partial.c_str(), target.c_str()) != 0) err = errno;
  if (err != 0) {
    std::remove(partial.c_str());
    throw OutputError("cannot write " + target.string() + ": " + errno_text(err));
  }
}

// -----------------------------------------------------------------------------------------------
// Plots

namespace {

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

  std::string gp = gp_header(name, p.title, p.xlabel, p.ylabel);
  gp += "set key outside right top vertical Left reverse noenhanced\n";
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

  std::string cmd = "plot ";
  for (std::size_t i = 0; i < drawn.size(); ++i) {
    const Series& s = *drawn[i].series;
    if (i > 0) cmd += ", \\\n     ";
    cmd += "datafile index " + std::to_string(i) + " using 1:2";
    cmd += s.points ? " with linespoints pt " + std::to_string(kPointTypes[i % kPointTypes.size()]) + " ps 0.7"
                    : std::string(" with lines");
    cmd += " lw 2 lc rgb '" + std::string(kColours[i % kColours.size()]) + "'";
    cmd += s.dashed ? " dt 2" : " dt 1";
    cmd += " title " + gp_quote(s.title) + " noenhanced";
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

// -----------------------------------------------------------------------------------------------
// Checks

bool is_valid_svg(const fs::path& path) {
  const std::string doc = read_file(path, std::size_t{256} << 20);
  if (doc.empty()) return false;
  std::size_t i = 0;
  if (doc.compare(0, 3, "\xEF\xBB\xBF") == 0) i = 3;  // UTF-8 byte order mark
  auto skip_space = [&] {
    while (i < doc.size() && std::isspace(static_cast<unsigned char>(doc[i])) != 0) ++i;
  };
  // The prolog: XML declaration, processing instructions, comments, DOCTYPE (with an internal subset).
  for (;;) {
    skip_space();
    if (doc.compare(i, 2, "<?") == 0) {
      const std::size_t e = doc.find("?>", i);
      if (e == std::string::npos) return false;
      i = e + 2;
    } else if (doc.compare(i, 4, "<!--") == 0) {
      const std::size_t e = doc.find("-->", i + 4);
      if (e == std::string::npos) return false;
      i = e + 3;
    } else if (doc.compare(i, 9, "<!DOCTYPE") == 0) {
      std::size_t e = i + 9;
      int bracket = 0;
      while (e < doc.size() && (doc[e] != '>' || bracket > 0)) {
        if (doc[e] == '[') ++bracket;
        if (doc[e] == ']') --bracket;
        ++e;
      }
      if (e >= doc.size()) return false;
      i = e + 1;
    } else {
      break;
    }
  }
  // The root element: <svg ...> with width and height, or a viewBox.
  auto is_name_end = [&](std::size_t at) {
    return at < doc.size() &&
           (std::isspace(static_cast<unsigned char>(doc[at])) != 0 || doc[at] == '>' || doc[at] == '/');
  };
  if (doc.compare(i, 4, "<svg") != 0 || !is_name_end(i + 4)) return false;
  std::size_t tag_end = i + 4;
  char quote = 0;
  for (; tag_end < doc.size(); ++tag_end) {
    const char ch = doc[tag_end];
    if (quote != 0) {
      if (ch == quote) quote = 0;
    } else if (ch == '"' || ch == '\'') {
      quote = ch;
    } else if (ch == '>') {
      break;
    }
  }
  if (tag_end >= doc.size()) return false;
  const std::string tag = doc.substr(i, tag_end - i);
  auto has_attribute = [&](const std::string& attr) {
    for (std::size_t at = tag.find(attr); at != std::string::npos; at = tag.find(attr, at + 1)) {
      const bool starts = std::isspace(static_cast<unsigned char>(tag[at - 1])) != 0;
      std::size_t after = at + attr.size();
      while (after < tag.size() && std::isspace(static_cast<unsigned char>(tag[after])) != 0) ++after;
      if (starts && after < tag.size() && tag[after] == '=') return true;
    }
    return false;
  };
  if (!(has_attribute("viewBox") || (has_attribute("width") && has_attribute("height")))) return false;
  // A drawing element inside, and the document closes with </svg>.
  bool drawing = false;
  for (const char* element : {"<path", "<line", "<polyline", "<polygon", "<rect", "<circle", "<text"}) {
    const std::size_t len = std::strlen(element);
    for (std::size_t at = doc.find(element, tag_end); at != std::string::npos && !drawing;
         at = doc.find(element, at + 1))
      drawing = is_name_end(at + len);
    if (drawing) break;
  }
  if (!drawing) return false;
  std::size_t end = doc.find_last_not_of(" \t\r\n");
  return end != std::string::npos && end + 1 >= 6 && doc.compare(end + 1 - 6, 6, "</svg>") == 0 && end > tag_end;
}

bool is_valid_png(const fs::path& path) {
  const std::string data = read_file(path, std::size_t{512} << 20);
  static constexpr unsigned char kSignature[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1A, '\n'};
  if (data.size() < 8 || std::memcmp(data.data(), kSignature, 8) != 0) return false;
  auto u32 = [&](std::size_t at) {
    return (std::uint32_t{static_cast<unsigned char>(data[at])} << 24) |
           (std::uint32_t{static_cast<unsigned char>(data[at + 1])} << 16) |
           (std::uint32_t{static_cast<unsigned char>(data[at + 2])} << 8) |
           std::uint32_t{static_cast<unsigned char>(data[at + 3])};
  };
  static const auto crc_table = [] {
    std::array<std::uint32_t, 256> t{};
    for (std::uint32_t n = 0; n < 256; ++n) {
      std::uint32_t c = n;
      for (int k = 0; k < 8; ++k) c = (c & 1U) != 0 ? 0xEDB88320U ^ (c >> 1) : c >> 1;
      t[n] = c;
    }
    return t;
  }();
  std::size_t at = 8;
  bool first = true, idat = false;
  while (at + 12 <= data.size()) {
    const std::uint32_t length = u32(at);
    if (length > 0x7FFFFFFFU || data.size() - at - 12 < length) return false;
    const std::string type = data.substr(at + 4, 4);
    if (!std::all_of(type.begin(), type.end(), [](unsigned char c) { return std::isalpha(c) != 0; })) return false;
    std::uint32_t crc = 0xFFFFFFFFU;
    for (std::size_t k = at + 4; k < at + 8 + length; ++k)
      crc = crc_table[(crc ^ static_cast<unsigned char>(data[k])) & 0xFFU] ^ (crc >> 8);
    if ((crc ^ 0xFFFFFFFFU) != u32(at + 8 + length)) return false;
    if (first) {
      if (type != "IHDR" || length != 13 || u32(at + 8) == 0 || u32(at + 12) == 0) return false;
      first = false;
    }
    if (type == "IDAT") idat = true;
    at += 12 + std::size_t{length};
    if (type == "IEND") return length == 0 && at == data.size() && idat;
  }
  return false;
}

}  // namespace commscope::analysis
