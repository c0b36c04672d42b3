// The machine model's text form (machine_model.hpp): one line per node, key=value fields, and the
// rates people write (tc's bits, bytes with a slash).
#include "commscope/model/machine_model.hpp"

#include <algorithm>
#include <array>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <map>
#include <string>
#include <system_error>

#include "commscope/common/memory_headroom.hpp"
#include "commscope/model/format.hpp"

namespace commscope {
namespace {

[[noreturn]] void fail(int line, const std::string& what) {
  throw MachineModelError(line > 0 ? "line " + std::to_string(line) + ": " + what : what);
}

// The rate fields of a node, by key.
struct RateKey {
  std::string_view key;
  Rate NodeModel::*rate;
};
constexpr std::array<RateKey, 10> kRates{{{"copy", &NodeModel::copy},
                                          {"copy_in", &NodeModel::copy_in},
                                          {"copy_out", &NodeModel::copy_out},
                                          {"reduce", &NodeModel::reduce},
                                          {"reduce_slot", &NodeModel::reduce_slot},
                                          {"intra", &NodeModel::intra},
                                          {"intra_one", &NodeModel::intra_one},
                                          {"self_exchange", &NodeModel::self_exchange},
                                          {"nic", &NodeModel::nic},
                                          {"nic_measured", &NodeModel::nic_measured}}};
struct CountKey {
  std::string_view key;
  int NodeModel::*count;
};
constexpr std::array<CountKey, 3> kCounts{
    {{"ranks", &NodeModel::ranks}, {"cpus", &NodeModel::cpus}, {"gpus", &NodeModel::gpus}}};

constexpr std::array<std::string_view, 5> kSources{"none", "measured", "system", "user", "doctor"};

// The load fields of a node, by key.
struct LoadKey {
  std::string_view key;
  double NodeLoad::*value;
};
constexpr std::array<LoadKey, 7> kLoads{{{"load.seconds", &NodeLoad::seconds},
                                         {"load.others_cpus", &NodeLoad::others_cpus},
                                         {"load.loadavg_start", &NodeLoad::loadavg_start},
                                         {"load.loadavg_end", &NodeLoad::loadavg_end},
                                         {"load.ranks_cpus", &NodeLoad::ranks_cpus},
                                         {"load.ranks_queued", &NodeLoad::ranks_queued},
                                         {"load.ranks_yield", &NodeLoad::ranks_yield}}};

// The shortest text std::from_chars reads back as the same double.
std::string number_text(double v) {
  char buf[64];
  const auto [end, ec] = std::to_chars(buf, buf + sizeof buf, v);
  return std::string(buf, ec == std::errc() ? end : buf);
}

// A finite number of a field; `what` says what it should be.
double parse_number(std::string_view key, const std::string& v, int line, const char* what) {
  double x = 0;
  const auto [end, ec] = std::from_chars(v.data(), v.data() + v.size(), x);
  if (ec != std::errc() || end != v.data() + v.size() || !std::isfinite(x))
    fail(line, std::string(key) + "=" + v + ": expected " + what);
  return x;
}

// A spread: a fraction from 0 to below 1.
double parse_spread(std::string_view key, const std::string& v, int line) {
  const double x = parse_number(key, v, line, "a fraction from 0 to below 1");
  if (x < 0 || x >= 1) fail(line, std::string(key) + "=" + v + ": expected a fraction from 0 to below 1");
  return x;
}

// A rate's unit: its name and GB/s per one of it. Bits are tc's (SI: 1gbit = 1e9 bit/s).
struct Unit {
  std::string_view name;
  double gbytes_per_s;
};
constexpr std::array<Unit, 14> kUnits{{{"bit", 1e-9 / 8},
                                       {"kbit", 1e-6 / 8},
                                       {"mbit", 1e-3 / 8},
                                       {"gbit", 1.0 / 8},
                                       {"tbit", 1e3 / 8},
                                       {"Kb/s", 1e-6 / 8},
                                       {"Mb/s", 1e-3 / 8},
                                       {"Gb/s", 1.0 / 8},
                                       {"Tb/s", 1e3 / 8},
                                       {"B/s", 1e-9},
                                       {"KB/s", 1e-6},
                                       {"MB/s", 1e-3},
                                       {"GB/s", 1.0},
                                       {"TB/s", 1e3}}};

bool same_unit(std::string_view written, std::string_view unit) {
  // tc's names are case-insensitive (1Gbit); the slashed ones tell bits (b) from bytes (B).
  if (unit.find('/') != std::string_view::npos) return written == unit;
  if (written.size() != unit.size()) return false;
  for (std::size_t i = 0; i < unit.size(); ++i)
    if (std::tolower(static_cast<unsigned char>(written[i])) != unit[i]) return false;
  return true;
}

bool needs_quotes(std::string_view v) {
  if (v.empty()) return true;
  for (char c : v)
    if (std::isspace(static_cast<unsigned char>(c)) || c == '"' || c == '\\' || c == '#' || c == '=') return true;
  return false;
}

std::string quoted(std::string_view v) {
  if (!needs_quotes(v)) return std::string(v);
  std::string out = "\"";
  for (char c : v) {
    if (c == '"' || c == '\\') out += '\\';
    if (c == '\n') {
      out += "\\n";
      continue;
    }
    out += c;
  }
  return out + '"';
}

int parse_count(std::string_view key, const std::string& v, int line) {
  int n = -1;
  const auto [end, ec] = std::from_chars(v.data(), v.data() + v.size(), n);
  if (ec != std::errc() || end != v.data() + v.size() || n < 0)
    fail(line, std::string(key) + "=" + v + ": expected a count (0 or more)");
  return n;
}

FigureSource parse_source(std::string_view key, const std::string& v, int line) {
  for (std::size_t i = 0; i < kSources.size(); ++i)
    if (v == kSources[i]) return static_cast<FigureSource>(i);
  fail(line, std::string(key) + "=" + v + ": expected none, measured, system, user or doctor");
}

// The fields of one line after `node`: key=value tokens, values maybe quoted.
std::vector<std::pair<std::string, std::string>> split_fields(std::string_view s, int line) {
  std::vector<std::pair<std::string, std::string>> out;
  std::size_t i = 0;
  while (true) {
    while (i < s.size() && std::isspace(static_cast<unsigned char>(s[i]))) ++i;
    if (i == s.size() || s[i] == '#') break;
    const std::size_t eq = s.find('=', i);
    const std::size_t blank = s.find_first_of(" \t", i);
    if (eq == std::string_view::npos || eq > blank) {
      std::string what(1, '\'');
      what.append(s.substr(i, blank == std::string_view::npos ? s.npos : blank - i)).append("': expected key=value");
      fail(line, what);
    }
    std::string key(s.substr(i, eq - i)), value;
    i = eq + 1;
    if (i < s.size() && s[i] == '"') {
      for (++i;; ++i) {
        if (i >= s.size()) fail(line, key + ": unterminated quote");
        if (s[i] == '"') break;
        if (s[i] == '\\' && i + 1 < s.size()) {
          ++i;
          value += s[i] == 'n' ? '\n' : s[i];
        } else {
          value += s[i];
        }
      }
      ++i;
    } else {
      while (i < s.size() && !std::isspace(static_cast<unsigned char>(s[i])) && s[i] != '#') value += s[i++];
    }
    out.emplace_back(std::move(key), std::move(value));
  }
  return out;
}

// The keys of a `machine` line.
constexpr std::array<std::string_view, 5> kMachineKeys{"latency_us", "latency.source", "latency.detail",
                                                       "latency.spread", "latency.moved"};

bool known_machine_key(std::string_view key) {
  return std::find(kMachineKeys.begin(), kMachineKeys.end(), key) != kMachineKeys.end();
}

// A line's kind: "node" or "machine" followed by a blank or the end; "" otherwise.
std::string_view line_kind(std::string_view s) {
  for (std::string_view kind : {std::string_view("node"), std::string_view("machine")})
    if (s.starts_with(kind) && (s.size() == kind.size() || std::isspace(static_cast<unsigned char>(s[kind.size()]))))
      return kind;
  return {};
}

bool known_key(std::string_view key) {
  for (const CountKey& c : kCounts)
    if (key == c.key) return true;
  for (const LoadKey& l : kLoads)
    if (key == l.key) return true;
  for (const RateKey& r : kRates) {
    if (key == r.key) return true;
    const std::string_view rest = key.starts_with(r.key) ? key.substr(r.key.size()) : std::string_view();
    if (rest == ".source" || rest == ".detail" || rest == ".spread" || rest == ".bytes" || rest == ".curve")
      return true;
  }
  return false;
}

// How much more CPU the ranks wanted than they had. Where their run delay is known
// (load.ranks_queued, from /proc/PID/task/*/schedstat): (the CPU they had + the time they waited
// for one) / the CPU they had. Else (files from before it): ranks / the CPU open to them (what they
// had, or what the other processes left, the larger), where others ran. Either way a rank that
// waited in a blocking call had little CPU beside idle CPUs and is not short of any (1 rank that
// had 0.15 CPUs beside others' 0.43 on 2 CPUs is 1, not 6.7). Where the ranks yield when idle
// (load.ranks_yield), their run delay counts their waits for messages too (a yielding thread stays
// ready to run), and what they had says how much they yielded: a rank with work does not yield and
// has its share of the CPUs beside the other processes, (ranks + others' CPUs) / CPUs (3 ranks
// yielding on 2 CPUs, one of them left 0.12 CPUs of the 1 it was ready to use, moved a 1 MiB
// allreduce as fast as when it had 0.62). contention() and describe_load().
double short_of_cpu(const NodeModel& n) {
  if (n.load.ranks_yield > 0 && n.cpus > 0)
    return std::max(1.0, (n.ranks + std::max(0.0, n.load.others_cpus)) / n.cpus);
  if (n.load.ranks_queued >= 0 && n.load.ranks_cpus > 0)
    return std::max(1.0, (n.load.ranks_cpus + n.load.ranks_queued) / n.load.ranks_cpus);
  const double others = std::max(0.0, n.load.others_cpus);
  if (others < 0.05 || !(n.load.ranks_cpus > 0)) return 1;
  const double open = std::max(n.load.ranks_cpus, n.cpus - others);
  return std::max(1.0, n.ranks / open);
}

// 1 - slower / faster of two figures of one thing at two moments; 0 where either is unknown.
double moved_between(double a, double b) {
  return a > 0 && b > 0 ? 1 - std::min(a, b) / std::max(a, b) : 0;
}

}  // namespace

std::string curve_text(const std::vector<CurvePoint>& curve) {
  std::string out;
  for (const CurvePoint& p : curve) {
    out.append(out.empty() ? "" : ",").append(number_text(p.bytes)).append(":").append(number_text(p.gbytes_per_s));
    if (p.moved > 0) out.append(":").append(number_text(p.moved));
  }
  return out;
}

std::vector<CurvePoint> parse_curve(std::string_view text) {
  std::vector<CurvePoint> curve;
  std::size_t at = 0;
  while (at < text.size()) {
    std::size_t end = text.find(',', at);
    if (end == std::string_view::npos) end = text.size();
    const std::string_view point = text.substr(at, end - at);
    // BYTES:GB/s, or BYTES:GB/s:MOVED
    const std::size_t colon = point.find(':');
    const std::size_t second = colon == std::string_view::npos ? colon : point.find(':', colon + 1);
    const char* rate_end = point.data() + (second == std::string_view::npos ? point.size() : second);
    CurvePoint p;
    bool ok = colon != std::string_view::npos;
    if (ok) {
      const auto [e1, c1] = std::from_chars(point.data(), point.data() + colon, p.bytes);
      const auto [e2, c2] = std::from_chars(point.data() + colon + 1, rate_end, p.gbytes_per_s);
      ok = c1 == std::errc() && e1 == point.data() + colon && c2 == std::errc() && e2 == rate_end && p.bytes > 0 &&
           p.gbytes_per_s > 0 && std::isfinite(p.bytes) && std::isfinite(p.gbytes_per_s);
    }
    if (ok && second != std::string_view::npos) {
      const auto [e3, c3] = std::from_chars(rate_end + 1, point.data() + point.size(), p.moved);
      ok = c3 == std::errc() && e3 == point.data() + point.size() && p.moved >= 0 && p.moved < 1;
    }
    if (!ok)
      throw MachineModelError(
          "'" + std::string(point) +
          "': expected BYTES:GB/s (16384:36.5), or BYTES:GB/s:MOVED (a fraction from 0 to below 1)");
    if (!curve.empty() && !(p.bytes > curve.back().bytes))
      throw MachineModelError("'" + std::string(point) + "': sizes must ascend");
    curve.push_back(p);
    at = end + 1;
  }
  return curve;
}

double rate_at(const Rate& r, double bytes) {
  const std::vector<CurvePoint>& c = r.curve;
  if (c.empty()) return r.gbytes_per_s;
  if (!(bytes > c.front().bytes)) return c.front().gbytes_per_s;
  if (!(bytes < c.back().bytes)) return c.back().gbytes_per_s;
  std::size_t i = 1;
  while (c[i].bytes < bytes) ++i;
  const double t = std::log2(bytes / c[i - 1].bytes) / std::log2(c[i].bytes / c[i - 1].bytes);
  return c[i - 1].gbytes_per_s + t * (c[i].gbytes_per_s - c[i - 1].gbytes_per_s);
}

double moved_at(const Rate& r, double bytes) {
  const std::vector<CurvePoint>& c = r.curve;
  if (c.empty()) return 0;
  if (!(bytes > c.front().bytes)) return c.front().moved;
  if (!(bytes < c.back().bytes)) return c.back().moved;
  std::size_t i = 1;
  while (c[i].bytes < bytes) ++i;
  return c[i].bytes == bytes ? c[i].moved : std::max(c[i - 1].moved, c[i].moved);
}

bool keep_faster(Rate& r, const Rate& again) {
  if (r.curve.empty() || r.curve.size() != again.curve.size()) return false;
  for (std::size_t i = 0; i < r.curve.size(); ++i)
    if (r.curve[i].bytes != again.curve[i].bytes || !(again.curve[i].gbytes_per_s > 0)) return false;
  for (std::size_t i = 0; i < r.curve.size(); ++i) {
    CurvePoint& p = r.curve[i];
    const CurvePoint& q = again.curve[i];
    p.moved = std::max({p.moved, q.moved, moved_between(p.gbytes_per_s, q.gbytes_per_s)});
    p.gbytes_per_s = std::max(p.gbytes_per_s, q.gbytes_per_s);
  }
  r.gbytes_per_s = std::max(r.gbytes_per_s, again.gbytes_per_s);  // a rate's one figure, where it was measured again
  r.spread = std::max(r.spread, again.spread);
  return true;
}

bool keep_faster_latency(MachineModel& m, const MachineModel& again, std::string_view note) {
  if (m.latency_source != FigureSource::measured || again.latency_source != FigureSource::measured ||
      !(m.latency_us > 0) || !(again.latency_us > 0))
    return false;
  m.latency_moved = std::max({m.latency_moved, again.latency_moved, moved_between(m.latency_us, again.latency_us)});
  m.latency_us = std::min(m.latency_us, again.latency_us);
  m.latency_spread = std::max(m.latency_spread, again.latency_spread);
  m.latency_detail += note;
  return true;
}

void keep_faster(NodeModel& n, const NodeModel& again, std::string_view note) {
  for (const RateKey& r : kRates)
    if (keep_faster(n.*r.rate, again.*r.rate)) (n.*r.rate).detail += note;
}

double contention(const NodeModel& n) {
  if (!n.load.known() || n.cpus <= 0) return 1;
  if (n.load.ranks_yield > 0 || (n.load.ranks_queued >= 0 && n.load.ranks_cpus > 0))
    return short_of_cpu(n);  // the run delay says it all, or the ranks' share where they yield
  const double others = std::max(0.0, n.load.others_cpus);
  const double shared = (n.ranks + others) / n.cpus;
  return std::max({1.0, shared, short_of_cpu(n)});
}

std::string describe_moved(const NodeModel& n) {
  std::vector<std::pair<std::string_view, const CurvePoint*>> most;  // each rate's point that moved most
  for (const RateKey& r : kRates) {
    const CurvePoint* top = nullptr;
    for (const CurvePoint& p : (n.*r.rate).curve)
      if (p.moved > 0 && (!top || p.moved > top->moved)) top = &p;
    if (top) most.emplace_back(r.key, top);
  }
  std::stable_sort(most.begin(), most.end(),
                   [](const auto& a, const auto& b) { return a.second->moved > b.second->moved; });
  std::string out;
  for (const auto& [key, p] : most) {
    const bool first = out.empty();
    out.append(first ? "" : ", ")
        .append(key)
        .append(first ? " moved up to " : " ")
        .append(analysis::format_number(100 * p->moved, 2))
        .append("% (at ")
        .append(bytes_text(static_cast<std::uint64_t>(p->bytes)))
        .append(" a rank, ")
        .append(analysis::format_number(p->gbytes_per_s, 3))
        .append(first ? " GB/s at its faster moment)" : " GB/s)");
  }
  return out;
}

std::string describe_load(const NodeModel& n) {
  if (!n.load.known()) return "";
  char others[32];
  std::snprintf(others, sizeof others, "%.2g", n.load.others_cpus);
  std::string ranks = std::to_string(n.ranks) + (n.ranks == 1 ? " rank" : " ranks");
  if (short_of_cpu(n) > 1.05 && n.load.ranks_cpus >= 0) {
    char had[32];
    std::snprintf(had, sizeof had, "%.2g", n.load.ranks_cpus);
    ranks += std::string(" (which had ") + had + (std::string_view(had) == "1" ? " CPU" : " CPUs");
    if (n.load.ranks_yield > 0) {
      ranks += ", yielding the CPU while idle";
    } else if (n.load.ranks_queued >= 0) {
      char ready[32];
      std::snprintf(ready, sizeof ready, "%.2g", n.load.ranks_cpus + n.load.ranks_queued);
      ranks += std::string(" of the ") + ready + (n.ranks == 1 ? " it was" : " they were") + " ready to use";
    }
    ranks += ")";
  }
  const std::string cpus = " on " + std::to_string(n.cpus) + (n.cpus == 1 ? " CPU" : " CPUs");
  if (n.load.others_cpus < 0.05) return ranks + cpus;
  return ranks + " and other processes' " + others + (std::string_view(others) == "1" ? " CPU" : " CPUs") + cpus;
}

std::string_view to_string(FigureSource s) {
  const auto i = static_cast<std::size_t>(s);
  return i < kSources.size() ? kSources[i] : "?";
}

double parse_rate(std::string_view text) {
  const std::string t(text);
  double v = 0;
  const auto [end, ec] = std::from_chars(t.data(), t.data() + t.size(), v);
  const std::string_view unit(end, static_cast<std::size_t>(t.data() + t.size() - end));
  const std::string usage = " (a rate like 1gbit, 100mbit, 25Gb/s or 12.5GB/s)";
  if (ec != std::errc() || end == t.data()) throw MachineModelError("bad rate '" + t + "'" + usage);
  if (unit.empty()) throw MachineModelError("rate '" + t + "' has no unit" + usage);
  for (const Unit& u : kUnits) {
    if (!same_unit(unit, u.name)) continue;
    if (!(v > 0) || !std::isfinite(v)) throw MachineModelError("rate '" + t + "' must be positive");
    return v * u.gbytes_per_s;
  }
  throw MachineModelError("rate '" + t + "': unknown unit '" + std::string(unit) + "'" + usage);
}

std::string rate_text(double gbytes_per_s) {
  char buf[64];
  const auto [end, ec] = std::to_chars(buf, buf + sizeof buf, gbytes_per_s);
  return std::string(buf, ec == std::errc() ? end : buf) + "GB/s";
}

std::vector<MachineEntry> parse_machine_entries(std::string_view text, bool unknown_keys_ok) {
  std::vector<MachineEntry> out;
  int line = 0;
  std::size_t at = 0;
  while (at <= text.size()) {
    std::size_t nl = text.find('\n', at);
    if (nl == std::string_view::npos) nl = text.size();
    std::string_view s = text.substr(at, nl - at);
    at = nl + 1;
    ++line;
    while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
    if (s.empty() || s.front() == '#') continue;
    const std::string_view kind = line_kind(s);
    if (kind.empty()) fail(line, "expected 'node host=NAME key=value ...' or 'machine key=value ...'");
    MachineEntry e;
    e.line = line;
    e.machine = kind == "machine";
    for (auto& [k, v] : split_fields(s.substr(kind.size()), line)) {
      if (e.machine) {
        if (known_machine_key(k))
          e.fields.emplace_back(k, v);
        else if (!unknown_keys_ok)
          fail(line, "unknown key '" + k +
                         "' of a machine line (latency_us, latency.source, latency.detail, latency.spread, "
                         "latency.moved)");
      } else if (k == "host") {
        if (v.empty()) fail(line, "host= is empty");
        e.host = v;
      } else if (known_key(k)) {
        e.fields.emplace_back(k, v);
      } else if (!unknown_keys_ok) {
        std::string rates;
        for (const RateKey& r : kRates) rates += std::string(r.key) + " ";
        fail(line, "unknown key '" + k + "' (host ranks cpus gpus, " + rates +
                       "and their .source, .detail and .spread, .bytes, .curve, load.seconds load.others_cpus "
                       "load.loadavg_start load.loadavg_end load.ranks_cpus load.ranks_queued load.ranks_yield)");
      }
    }
    if (!e.machine && e.host.empty()) fail(line, "no host= (a host name, or * for every node)");
    out.push_back(std::move(e));
  }
  return out;
}

void apply_entry(NodeModel& node, const MachineEntry& entry, const std::string& origin) {
  // Rates first, then their sources and details, whatever the order written.
  for (const auto& [k, v] : entry.fields) {
    for (const CountKey& c : kCounts)
      if (k == c.key) node.*c.count = parse_count(k, v, entry.line);
    for (const RateKey& r : kRates) {
      if (k != r.key) continue;
      try {
        (node.*r.rate).gbytes_per_s = parse_rate(v);
      } catch (const MachineModelError& e) {
        fail(entry.line, k + "=" + v + ": " + e.what());
      }
      (node.*r.rate).source = FigureSource::user;
      (node.*r.rate).detail = origin;
      (node.*r.rate).spread = 0;  // a given figure did not move
      (node.*r.rate).at_bytes = 0;
      (node.*r.rate).curve.clear();  // a given rate prices every size
    }
  }
  for (const auto& [k, v] : entry.fields) {
    for (const RateKey& r : kRates) {
      if (!k.starts_with(r.key)) continue;
      const std::string_view rest = std::string_view(k).substr(r.key.size());
      if (rest == ".source") (node.*r.rate).source = parse_source(k, v, entry.line);
      if (rest == ".detail") (node.*r.rate).detail = v;
      if (rest == ".spread") (node.*r.rate).spread = parse_spread(k, v, entry.line);
      if (rest == ".bytes") (node.*r.rate).at_bytes = parse_number(k, v, entry.line, "a size in bytes");
      if (rest == ".curve") {
        try {
          (node.*r.rate).curve = parse_curve(v);
        } catch (const MachineModelError& e) {
          fail(entry.line, k + ": " + e.what());
        }
      }
    }
    for (const LoadKey& l : kLoads)
      if (k == l.key) node.load.*l.value = parse_number(k, v, entry.line, "a number");
  }
}

void apply_machine_entry(MachineModel& model, const MachineEntry& entry, const std::string& origin) {
  for (const auto& [k, v] : entry.fields) {
    if (k != "latency_us") continue;
    double us = 0;
    const auto [end, ec] = std::from_chars(v.data(), v.data() + v.size(), us);
    if (ec != std::errc() || end != v.data() + v.size() || !(us > 0) || !std::isfinite(us))
      fail(entry.line, "latency_us=" + v + ": expected the latency per message in microseconds (above 0)");
    model.latency_us = us;
    model.latency_source = FigureSource::user;
    model.latency_detail = origin;
    model.latency_spread = 0;
    model.latency_moved = 0;
  }
  for (const auto& [k, v] : entry.fields) {
    if (k == "latency.source") model.latency_source = parse_source(k, v, entry.line);
    if (k == "latency.detail") model.latency_detail = v;
    if (k == "latency.spread") model.latency_spread = parse_spread(k, v, entry.line);
    if (k == "latency.moved") model.latency_moved = parse_spread(k, v, entry.line);
  }
}

bool entry_names(const MachineEntry& entry, std::string_view host) {
  if (entry.machine) return false;
  if (entry.host == "*" || entry.host == host) return true;
  auto shortname = [](std::string_view h) { return h.substr(0, h.find('.')); };
  return shortname(entry.host) == shortname(host);
}

std::string to_text(const MachineModel& model) {
  std::string out;
  for (const NodeModel& n : model.nodes) {
    out += "node host=" + quoted(n.host);
    for (const CountKey& c : kCounts) out.append(" ").append(c.key).append("=").append(std::to_string(n.*c.count));
    for (const RateKey& r : kRates) {
      const Rate& rate = n.*r.rate;
      if (rate.source == FigureSource::none && rate.gbytes_per_s == 0 && rate.detail.empty()) continue;
      const std::string key(r.key);
      if (rate.gbytes_per_s > 0) out += " " + key + "=" + rate_text(rate.gbytes_per_s);
      out += " " + key + ".source=" + std::string(to_string(rate.source));
      if (!rate.detail.empty()) out += " " + key + ".detail=" + quoted(rate.detail);
      if (rate.spread > 0) out += " " + key + ".spread=" + number_text(rate.spread);
      if (rate.at_bytes > 0) out += " " + key + ".bytes=" + number_text(rate.at_bytes);
      if (!rate.curve.empty()) out += " " + key + ".curve=" + curve_text(rate.curve);
    }
    if (n.load.known())
      for (const LoadKey& l : kLoads) out.append(" ").append(l.key).append("=").append(number_text(n.load.*l.value));
    out += "\n";
  }
  if (model.latency_source != FigureSource::none || model.latency_us > 0 || !model.latency_detail.empty()) {
    out += "machine";
    if (model.latency_us > 0) out += " latency_us=" + number_text(model.latency_us);
    out += " latency.source=" + std::string(to_string(model.latency_source));
    if (!model.latency_detail.empty()) out += " latency.detail=" + quoted(model.latency_detail);
    if (model.latency_spread > 0) out += " latency.spread=" + number_text(model.latency_spread);
    if (model.latency_moved > 0) out += " latency.moved=" + number_text(model.latency_moved);
    out += "\n";
  }
  return out;
}

MachineModel from_text(std::string_view text) {
  MachineModel model;
  for (const MachineEntry& e : parse_machine_entries(text, true)) {
    if (e.machine) {
      apply_machine_entry(model, e, "");
      continue;
    }
    NodeModel node;
    node.host = e.host;
    apply_entry(node, e, "");
    model.nodes.push_back(std::move(node));
  }
  return model;
}

std::vector<std::string> apply_entries(MachineModel& model, const std::vector<MachineEntry>& entries,
                                       const std::vector<std::string>& origins) {
  std::vector<std::string> warnings;
  for (std::size_t i = 0; i < entries.size(); ++i) {
    if (entries[i].machine) {
      apply_machine_entry(model, entries[i], i < origins.size() ? origins[i] : std::string());
      continue;
    }
    bool named = false;
    for (NodeModel& n : model.nodes) {
      if (!entry_names(entries[i], n.host)) continue;
      apply_entry(n, entries[i], i < origins.size() ? origins[i] : std::string());
      named = true;
    }
    if (!named)
      warnings.push_back((i < origins.size() ? origins[i] : std::string("an entry")) + " names host '" +
                         entries[i].host + "', which this run has not");
  }
  return warnings;
}

}  // namespace commscope
