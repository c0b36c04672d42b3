// Kineto trace import (kineto_import.hpp). Three stages:
//   1. read: each file streamed through JsonReader; every traceEvents entry is collected into one
//      reused TraceEntry and converted at its closing brace into at most one Event (times kept as
//      absolute ns until all files are read; the epoch is chosen afterwards);
//   2. link (per rank): operators nested by time on their thread, runtime calls put inside
//      them, device activities linked to an operator by correlation id (else External id),
//      collective calls turned into host communication events that share their id with the
//      NCCL kernels they launched, windows made;
//   3. match collective instances across ranks, choose clock offsets, run analyze_ranks.

#include "commscope/profiler/kineto_import.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <filesystem>
#include <limits>
#include <numeric>
#include <optional>
#include <unordered_map>
#include <unordered_set>
#include <utility>

#include "commscope/profiler/breakdown.hpp"
#include "commscope/profiler/device_records.hpp"
#include "commscope/profiler/json_stream.hpp"
#include "commscope/profiler/profile_file.hpp"

namespace commscope::profiler {

namespace {

// --- numbers --------------------------------------------------------------------------------

// A JSON number of microseconds -> integer ns, exactly (decimal arithmetic: a double cannot
// hold 1.7e18 ns to the ns). Rounds half away from zero below 1 ns. False on overflow.
bool us_to_ns(std::string_view s, std::int64_t& out) {
  std::size_t i = 0;
  const bool neg = i < s.size() && s[i] == '-';
  if (neg) ++i;
  std::uint64_t mant = 0;
  int digits = 0, shift = 3;  // value = mant * 10^shift ns
  bool round_up = false, seen_dropped = false;
  auto add_digit = [&](char c, bool fraction) {
    if (mant == 0 && c == '0') {
      if (fraction) --shift;
      return;
    }
    if (digits < 19) {
      mant = mant * 10 + static_cast<std::uint64_t>(c - '0');
      ++digits;
      if (fraction) --shift;
    } else {
      if (!fraction) ++shift;
      if (!seen_dropped) round_up = c >= '5';
      seen_dropped = true;
    }
  };
  for (; i < s.size() && s[i] >= '0' && s[i] <= '9'; ++i) add_digit(s[i], false);
  if (i < s.size() && s[i] == '.')
    for (++i; i < s.size() && s[i] >= '0' && s[i] <= '9'; ++i) add_digit(s[i], true);
  if (i < s.size() && (s[i] == 'e' || s[i] == 'E')) {
    ++i;
    int exp = 0;
    const bool eneg = i < s.size() && s[i] == '-';
    if (i < s.size() && (s[i] == '-' || s[i] == '+')) ++i;
    for (; i < s.size() && s[i] >= '0' && s[i] <= '9'; ++i) exp = std::min(exp * 10 + (s[i] - '0'), 100000);
    shift += eneg ? -exp : exp;
  }
  if (round_up) ++mant;
  constexpr auto kMax = static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max());
  if (mant == 0) {
    out = 0;
    return true;
  }
  if (shift >= 0) {
    for (int k = 0; k < shift; ++k) {
      if (mant > kMax / 10) return false;
      mant *= 10;
    }
  } else {
    if (shift < -19) {
      mant = 0;
    } else {
      std::uint64_t div = 1;
      for (int k = 0; k < -shift; ++k) div *= 10;
      mant = mant / div + (mant % div >= (div + 1) / 2 ? 1 : 0);
    }
  }
  if (mant > kMax) return false;
  out = neg ? -static_cast<std::int64_t>(mant) : static_cast<std::int64_t>(mant);
  return true;
}

// A JSON number -> int64 (a fraction is cut off); nullopt when out of range.
std::optional<std::int64_t> to_int(std::string_view s) {
  std::int64_t v = 0;
  const auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec == std::errc() && (p == s.data() + s.size() || *p == '.' || *p == 'e' || *p == 'E')) {
    if (p != s.data() + s.size() && *p != '.') return std::nullopt;  // exponent: not an integer id
    return v;
  }
  return std::nullopt;
}

std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out)
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  return out;
}

// Bytes of one element of a PyTorch dtype name as the trace writes it ("Float", "float",
// "c10::BFloat16", "long int", ...); 0 when unknown.
std::int64_t dtype_bytes(std::string_view dtype) {
  const std::string d = lower(dtype);
  const auto has = [&](std::string_view w) { return d.find(w) != std::string::npos; };
  if (has("complex") && (has("double") || has("128"))) return 16;
  if (has("double") || has("long") || has("int64") || has("float64") || has("complex")) return 8;
  if (has("bfloat16") || has("half") || has("float16") || has("short") || has("int16")) return 2;
  if (has("float8") || has("byte") || has("char") || has("bool") || has("int8")) return 1;
  if (has("float") || has("int")) return 4;
  return 0;
}

// --- one trace entry, as read --------------------------------------------------------------

struct TraceEntry {
  std::string ph, cat, name, pid, tid;
  bool has_ts = false, has_dur = false, bad_time = false;
  std::int64_t ts_ns = 0, dur_ns = 0;
  double ts_us = 0, dur_us = 0;  // the same as doubles, for HTA's rounding
  std::int64_t external = -1, correlation = -1, device = -1, stream = -1, bytes = -1;
  std::string collective, dtype, pg, pg_desc, input_type;
  std::int64_t in_nelems = -1, out_nelems = -1, seq = -1, input_elems = -1;

  void clear() {
    ph.clear(), cat.clear(), name.clear(), pid.clear(), tid.clear();
    has_ts = has_dur = bad_time = false;
    ts_ns = dur_ns = 0;
    ts_us = dur_us = 0;
    external = correlation = device = stream = bytes = -1;
    collective.clear(), dtype.clear(), pg.clear(), pg_desc.clear(), input_type.clear();
    in_nelems = out_nelems = seq = input_elems = -1;
  }
};

// What a collective call carries (from record_param_comms / nccl:* arguments or an NCCL kernel's).
struct CommInfo {
  std::string collective;
  std::string pg;
  std::int64_t bytes = -1;
  std::int64_t seq = -1;
};

// One rank's trace after reading: events with absolute ns times.
struct RankData {
  KinetoRankReport report;
  bool has_rank = false;
  std::int64_t base_ns = 0;  // baseTimeNanoseconds
  bool has_base = false;
  std::vector<Event> events;
  std::vector<std::int64_t> external;                      // per event: External id, -1 none
  std::unordered_map<std::size_t, CommInfo> comm;          // event index -> collective arguments
  std::unordered_map<std::string, std::uint32_t> threads;  // "pid/tid" -> host thread index
  std::int64_t min_ts = std::numeric_limits<std::int64_t>::max();
  std::uint64_t next_id = 1;
  // After linking:
  std::int64_t epoch_ns = 0;  // subtracted from every time
  std::int64_t offset_ns = 0;
  std::int64_t error_ns = 0;
};

bool is_comm_op_name(std::string_view name) {
  return name == "record_param_comms" || name.starts_with("nccl:");
}

class TraceReader {
 public:
  TraceReader(const std::string& path, StringTable& strings, RankData& rank, bool hta_rounding)
      : path_(path), strings_(strings), rank_(rank), in_(open(path)), hta_rounding_(hta_rounding) {}

  void read() {
    try {
      if (in_.next() != JsonToken::kObjectBegin) fail("not a JSON object (a Chrome trace starts with '{')");
      bool saw_events = false;
      while (in_.next() == JsonToken::kKey) {
        const std::string key(in_.text());
        if (key == "traceEvents") {
          read_events();
          saw_events = true;
        } else if (key == "distributedInfo") {
          read_distributed_info();
        } else if (key == "baseTimeNanoseconds") {
          if (in_.next() != JsonToken::kNumber) fail("baseTimeNanoseconds is not a number");
          const auto v = to_int(in_.text());
          if (!v) fail("baseTimeNanoseconds out of range");
          rank_.base_ns = *v;
          rank_.has_base = true;
        } else {
          in_.skip_value();
        }
      }
      if (in_.next() != JsonToken::kEnd) fail("data after the trace");
      if (!saw_events) fail("no traceEvents array: not a Chrome trace");
    } catch (const JsonError& e) {
      throw KinetoImportError(path_ + ": " + e.what() + " (byte " + std::to_string(e.byte()) + ")");
    }
  }

 private:
  static JsonReader open(const std::string& path) {
    try {
      return JsonReader::open(path);
    } catch (const JsonError& e) {
      throw KinetoImportError(path + ": " + e.what());
    }
  }
  [[noreturn]] void fail(const std::string& what) { throw JsonError(what, in_.token_byte()); }

  std::string read_string_value(const char* what) {
    const JsonToken t = in_.next();
    if (t == JsonToken::kString || t == JsonToken::kNumber) return std::string(in_.text());
    if (t == JsonToken::kObjectBegin || t == JsonToken::kArrayBegin) {
      while (in_.depth() > depth_before_) (void)in_.next();
      fail(std::string(what) + " is not a string");
    }
    return {};
  }
  std::int64_t read_int_value() {
    const JsonToken t = in_.next();
    if (t == JsonToken::kNumber) {
      if (auto v = to_int(in_.text())) return *v;
      return -1;
    }
    if (t == JsonToken::kString) {
      if (auto v = to_int(in_.text())) return *v;
      return -1;
    }
    if (t == JsonToken::kObjectBegin || t == JsonToken::kArrayBegin)
      while (in_.depth() > depth_before_) (void)in_.next();
    return -1;
  }

  void read_distributed_info() {
    if (in_.next() != JsonToken::kObjectBegin) fail("distributedInfo is not an object");
    const std::size_t level = in_.depth();
    while (in_.next() == JsonToken::kKey) {
      const std::string key(in_.text());
      depth_before_ = level;
      if (key == "rank") {
        const std::int64_t r = read_int_value();
        if (r < 0 || r > std::numeric_limits<int>::max()) fail("distributedInfo.rank is not a rank");
        rank_.report.original_rank = static_cast<int>(r);
        rank_.has_rank = true;
      } else if (key == "world_size") {
        const std::int64_t w = read_int_value();
        if (w < 1 || w > std::numeric_limits<int>::max()) fail("distributedInfo.world_size is not a size");
        rank_.report.world_size = static_cast<int>(w);
      } else {
        in_.skip_value();
      }
    }
  }

  void read_events() {
    if (in_.next() != JsonToken::kArrayBegin) fail("traceEvents is not an array");
    for (;;) {
      const JsonToken t = in_.next();
      if (t == JsonToken::kArrayEnd) return;
      ++rank_.report.trace_events;
      if (t != JsonToken::kObjectBegin) {
        if (t == JsonToken::kArrayBegin)
          while (in_.depth() > 2) (void)in_.next();
        ++rank_.report.unknown["(not an object)"];
        continue;
      }
      entry_.clear();
      read_entry();
      convert();
    }
  }

  void read_time(std::int64_t& out, double& out_us, bool& has) {
    const JsonToken t = in_.next();
    if (t == JsonToken::kNumber) {
      has = us_to_ns(in_.text(), out);
      if (!has) entry_.bad_time = true;
    } else if (t == JsonToken::kString) {
      // Some writers quote numbers.
      std::string_view s = in_.text();
      has = !s.empty() && (s[0] == '-' || (s[0] >= '0' && s[0] <= '9')) && us_to_ns(s, out);
      if (!has) entry_.bad_time = true;
    } else {
      if (t == JsonToken::kObjectBegin || t == JsonToken::kArrayBegin)
        while (in_.depth() > depth_before_) (void)in_.next();
      entry_.bad_time = true;
    }
    if (has) {
      const std::string_view s = in_.text();
      std::from_chars(s.data(), s.data() + s.size(), out_us);
    }
  }

  void read_entry() {
    const std::size_t level = in_.depth();
    while (in_.next() == JsonToken::kKey) {
      depth_before_ = level;
      const std::string_view key = in_.text();
      if (key == "ph") {
        entry_.ph = read_string_value("ph");
      } else if (key == "cat") {
        entry_.cat = read_string_value("cat");
      } else if (key == "name") {
        entry_.name = read_string_value("name");
      } else if (key == "pid") {
        entry_.pid = read_string_value("pid");
      } else if (key == "tid") {
        entry_.tid = read_string_value("tid");
      } else if (key == "ts") {
        read_time(entry_.ts_ns, entry_.ts_us, entry_.has_ts);
      } else if (key == "dur") {
        read_time(entry_.dur_ns, entry_.dur_us, entry_.has_dur);
      } else if (key == "args") {
        read_args();
      } else {
        in_.skip_value();
      }
    }
  }

  void read_args() {
    const JsonToken t = in_.next();
    if (t != JsonToken::kObjectBegin) {
      if (t == JsonToken::kArrayBegin)
        while (in_.depth() > depth_before_) (void)in_.next();
      return;
    }
    const std::size_t level = in_.depth();
    while (in_.next() == JsonToken::kKey) {
      depth_before_ = level;
      const std::string_view key = in_.text();
      if (key == "External id") {
        entry_.external = read_int_value();
      } else if (key == "correlation") {
        entry_.correlation = read_int_value();
      } else if (key == "device") {
        entry_.device = read_int_value();
      } else if (key == "stream") {
        entry_.stream = read_int_value();
      } else if (key == "bytes") {
        entry_.bytes = read_int_value();
      } else if (key == "Collective name") {
        entry_.collective = read_string_value("Collective name");
      } else if (key == "dtype") {
        entry_.dtype = read_string_value("dtype");
      } else if (key == "Process Group Name") {
        entry_.pg = read_string_value("Process Group Name");
      } else if (key == "Process Group Description") {
        entry_.pg_desc = read_string_value("Process Group Description");
      } else if (key == "In msg nelems") {
        entry_.in_nelems = read_int_value();
      } else if (key == "Out msg nelems") {
        entry_.out_nelems = read_int_value();
      } else if (key == "Seq" || key == "seq") {
        entry_.seq = read_int_value();
      } else if (key == "Input Dims") {
        read_input_dims();
      } else if (key == "Input type") {
        read_input_type();
      } else {
        in_.skip_value();
      }
    }
  }

  // The next value, when it is an array: true, inside it; any other value is skipped.
  bool open_array(std::size_t level) {
    const JsonToken t = in_.next();
    if (t == JsonToken::kArrayBegin) return true;
    if (t == JsonToken::kObjectBegin)
      while (in_.depth() > level) (void)in_.next();
    return false;
  }

  // "Input Dims": [[d0, d1, ...], ...]: the first tensor's element count.
  void read_input_dims() {
    const std::size_t level = depth_before_;
    if (!open_array(level)) return;
    JsonToken t;
    bool first_done = false;
    while (in_.depth() > level) {
      t = in_.next();
      if (t == JsonToken::kArrayBegin && in_.depth() == level + 2 && !first_done) {
        std::int64_t n = 1;
        bool ok = true;
        while ((t = in_.next()) != JsonToken::kArrayEnd) {
          if (t == JsonToken::kNumber) {
            const auto v = to_int(in_.text());
            if (!v || *v < 0 || (*v > 0 && n > std::numeric_limits<std::int64_t>::max() / *v)) ok = false;
            if (ok) n *= *v;
          } else {
            ok = false;
            if (t == JsonToken::kArrayBegin || t == JsonToken::kObjectBegin)
              while (in_.depth() > level + 2) (void)in_.next();
          }
        }
        first_done = true;
        if (ok) entry_.input_elems = n;
      }
    }
  }

  void read_input_type() {
    const std::size_t level = depth_before_;
    if (!open_array(level)) return;
    JsonToken t;
    bool first = true;
    while (in_.depth() > level) {
      t = in_.next();
      if (t == JsonToken::kString && first && in_.depth() == level + 1) entry_.input_type = in_.text();
      if (t != JsonToken::kArrayEnd) first = false;
    }
  }

  std::uint32_t thread_index() {
    key_.assign(entry_.pid);
    key_ += '/';
    key_ += entry_.tid;
    auto it = rank_.threads.find(key_);
    if (it == rank_.threads.end())
      it = rank_.threads.emplace(key_, static_cast<std::uint32_t>(rank_.threads.size())).first;
    return it->second;
  }

  void add(const Event& e, const char* category) {
    rank_.events.push_back(e);
    rank_.external.push_back(entry_.external);
    rank_.min_ts = std::min(rank_.min_ts, e.start_ns);
    ++rank_.report.imported[category];
  }

  std::optional<CommInfo> comm_info() const {
    CommInfo c;
    c.collective = entry_.collective;
    if (c.collective.empty() && entry_.name.starts_with("nccl:")) c.collective = entry_.name.substr(5);
    c.pg = entry_.pg;
    if (!entry_.pg_desc.empty() && entry_.pg_desc != entry_.pg)
      c.pg += c.pg.empty() ? entry_.pg_desc : " " + entry_.pg_desc;
    c.seq = entry_.seq;
    if (entry_.in_nelems >= 0 && !entry_.dtype.empty()) {
      c.bytes = std::max(entry_.in_nelems, entry_.out_nelems) * dtype_bytes(entry_.dtype);
    } else if (entry_.input_elems >= 0 && !entry_.input_type.empty()) {
      c.bytes = entry_.input_elems * dtype_bytes(entry_.input_type);
    }
    if (c.collective.empty() && c.pg.empty() && c.bytes < 0 && c.seq < 0) return std::nullopt;
    return c;
  }

  void convert() {
    RankData& r = rank_;
    const std::string& ph = entry_.ph;
    const std::string cat = lower(entry_.cat);
    const std::string shown = entry_.cat.empty() ? "(no cat)" : entry_.cat;
    if (ph == "M") {
      ++r.report.skipped["metadata (ph M)"];
      return;
    }
    if (ph == "s" || ph == "f" || ph == "t") {
      // ac2g flows link a runtime call to what it launched: the same correlation id is in both
      // events' args, which is what the import uses.
      ++r.report.skipped[cat == "ac2g" ? "ac2g flows (links read from correlation ids)" : "flows " + shown];
      return;
    }
    if (ph == "i" || ph == "I" || ph == "R" || ph == "n") {
      ++r.report.skipped["instant events"];
      return;
    }
    if (ph != "X") {
      ++r.report.unknown["ph " + (ph.empty() ? std::string("(none)") : ph) + ", cat " + shown];
      return;
    }
    if (cat == "trace") {
      ++r.report.skipped["profiler span (cat Trace)"];
      return;
    }
    if (cat == "gpu_user_annotation") {
      ++r.report.skipped["gpu_user_annotation (device copies of annotations)"];
      return;
    }
    if (!entry_.has_ts || !entry_.has_dur || entry_.bad_time || entry_.dur_ns < 0 ||
        entry_.ts_ns > std::numeric_limits<std::int64_t>::max() - entry_.dur_ns) {
      ++r.report.unknown["ph X without a valid ts/dur, cat " + shown];
      return;
    }
    Event e;
    e.start_ns = entry_.ts_ns;
    e.end_ns = entry_.ts_ns + entry_.dur_ns;
    if (hta_rounding_ && (cat == "kernel" || cat == "gpu_memcpy" || cat == "gpu_memset" || cat == "cuda_sync"))
      round_as_hta(e);
    e.correlation = entry_.correlation >= 0 ? static_cast<std::uint64_t>(entry_.correlation) : 0;

    const bool device_cat = cat == "kernel" || cat == "gpu_memcpy" || cat == "gpu_memset" || cat == "cuda_sync";
    if (device_cat) {
      e.track_kind = TrackKind::kDeviceStream;
      e.track = entry_.stream >= 0 ? static_cast<std::uint32_t>(std::min<std::int64_t>(entry_.stream, UINT32_MAX)) : 0;
      std::int64_t dev = entry_.device;
      if (dev < 0) dev = to_int(entry_.pid).value_or(0);
      e.device = static_cast<std::int16_t>(std::clamp<std::int64_t>(dev, 0, INT16_MAX));
      e.bytes = std::max<std::int64_t>(entry_.bytes, 0);
      if (cat == "kernel") {
        e.name = strings_.intern(entry_.name);
        if (is_nccl_kernel(entry_.name) || lower(entry_.name).find("nccl") != std::string::npos) {
          e.kind = EventKind::kCommunication;
          const std::string_view n = entry_.name;
          e.detail = strings_.intern(n.substr(0, n.find('(')));
          if (auto c = comm_info()) r.comm[r.events.size()] = *c;
          add(e, "kernel (NCCL: communication)");
        } else {
          e.kind = EventKind::kKernel;
          add(e, "kernel");
        }
      } else if (cat == "gpu_memcpy") {
        e.kind = EventKind::kMemcpy;
        e.name = strings_.intern(entry_.name);
        add(e, "gpu_memcpy");
      } else if (cat == "gpu_memset") {
        e.kind = EventKind::kMemset;
        e.name = strings_.intern(entry_.name);
        add(e, "gpu_memset");
      } else {
        e.kind = EventKind::kSync;
        e.name = strings_.intern(entry_.name);
        add(e, "cuda_sync");
      }
      return;
    }

    e.track_kind = TrackKind::kHostThread;
    e.track = thread_index();
    if (cat == "cuda_runtime" || cat == "cuda_driver" || cat == "runtime" || cat == "driver") {
      e.kind = EventKind::kRuntime;
      e.name = strings_.intern(entry_.name);
      add(e, entry_.cat.c_str());
      return;
    }
    if (cat == "cpu_op" || cat == "operator" || cat == "user_annotation" || cat == "python_function") {
      if (entry_.name.starts_with("ProfilerStep#")) {
        const auto step = to_int(std::string_view(entry_.name).substr(13));
        if (step && *step >= 0 && *step <= std::numeric_limits<std::int32_t>::max()) {
          e.kind = EventKind::kIteration;
          e.iteration = static_cast<std::int32_t>(*step);
          e.name = strings_.intern(entry_.name);
          add(e, "ProfilerStep#N (iterations)");
          return;
        }
      }
      e.kind = EventKind::kOperator;
      e.id = r.next_id++;
      e.name = strings_.intern(entry_.name);
      if (is_comm_op_name(entry_.name) || !entry_.collective.empty())
        if (auto c = comm_info()) r.comm[r.events.size()] = *c;
      add(e, entry_.cat.c_str());
      return;
    }
    ++r.report.unknown["ph X, cat " + shown];
  }

  // HTA's whole microseconds, computed as HTA does: in doubles on the trace's own times, the
  // start rounded up and ts + dur down (an event shorter than that becomes empty). A double
  // holds a Unix time in us (1.7e15) to 0.25 us only, so ts 1712195495502095.001 is read as
  // ...095.0 and rounds to ...095, where exact decimals would give ...096.
  void round_as_hta(Event& e) const {
    const double start = std::ceil(entry_.ts_us), end = std::floor(entry_.ts_us + entry_.dur_us);
    constexpr double kMaxUs = 9.0e15;  // whole us * 1000 fits int64
    if (!(std::abs(start) < kMaxUs && std::abs(end) < kMaxUs)) return;
    e.start_ns = static_cast<std::int64_t>(start) * 1000;
    e.end_ns = std::max(e.start_ns, static_cast<std::int64_t>(end) * 1000);
  }

  std::string path_;
  StringTable& strings_;
  RankData& rank_;
  JsonReader in_;
  bool hta_rounding_ = false;
  TraceEntry entry_;
  std::size_t depth_before_ = 0;
  std::string key_;
};

// --- stage 2: links, collectives, windows ----------------------------------------------------

constexpr std::int64_t kUnixUsThreshold = 1'000'000'000'000'000;  // 2001-09-09 in us: earlier is not a Unix time

// Absolute ns on a wall clock when the trace has one (baseTimeNanoseconds + ts, or ts that are
// Unix times), else nullopt.
bool has_wall_clock(const RankData& r) {
  return r.has_base || (r.min_ts != std::numeric_limits<std::int64_t>::max() && r.min_ts / 1000 > kUnixUsThreshold);
}

void link_rank(RankData& r, StringTable& strings) {
  std::vector<Event>& ev = r.events;
  const std::size_t n = ev.size();
  // Operators and runtime calls per host thread, swept in start order (an enclosing operator
  // first: longer first at one start, operators before calls).
  std::vector<std::size_t> host;
  for (std::size_t i = 0; i < n; ++i)
    if (ev[i].track_kind == TrackKind::kHostThread &&
        (ev[i].kind == EventKind::kOperator || ev[i].kind == EventKind::kRuntime))
      host.push_back(i);
  std::stable_sort(host.begin(), host.end(), [&](std::size_t a, std::size_t b) {
    const Event& x = ev[a];
    const Event& y = ev[b];
    if (x.track != y.track) return x.track < y.track;
    if (x.start_ns != y.start_ns) return x.start_ns < y.start_ns;
    if (x.end_ns != y.end_ns) return x.end_ns > y.end_ns;
    return (x.kind == EventKind::kOperator) > (y.kind == EventKind::kOperator);
  });
  std::unordered_map<std::uint64_t, std::size_t> op_index;  // operator id -> event index
  std::unordered_map<std::uint64_t, std::uint64_t> op_of_correlation;
  std::unordered_map<std::int64_t, std::uint64_t> op_of_external;
  std::vector<std::size_t> stack;
  std::uint32_t track = UINT32_MAX;
  for (const std::size_t i : host) {
    Event& e = ev[i];
    if (e.track != track) stack.clear(), track = e.track;
    while (!stack.empty() && ev[stack.back()].end_ns <= e.start_ns) stack.pop_back();
    e.parent = stack.empty() ? 0 : ev[stack.back()].id;
    if (e.kind == EventKind::kOperator) {
      op_index.emplace(e.id, i);
      if (r.external[i] >= 0) op_of_external.try_emplace(r.external[i], e.id);
      stack.push_back(i);
    } else if (e.correlation != 0) {
      op_of_correlation.try_emplace(e.correlation, e.parent);
    }
  }
  // Runtime calls with an External id but outside any operator (rare) keep the External link.
  OperatorTree tree;
  for (const auto& [id, i] : op_index) tree.add(id, ev[i].parent);

  // Collective calls: the outermost record_param_comms / nccl:* operator of a nest.
  auto comm_of = [&](std::size_t i) -> const CommInfo* {
    auto it = r.comm.find(i);
    return it == r.comm.end() ? nullptr : &it->second;
  };
  auto call_for = [&](std::uint64_t op) -> std::uint64_t {
    std::uint64_t call = 0;
    for (int guard = 0; op != 0 && guard < 4096; ++guard) {
      auto it = op_index.find(op);
      if (it == op_index.end()) break;
      if (comm_of(it->second) != nullptr) call = op;
      op = ev[it->second].parent;
    }
    return call;
  };
  // Merged arguments of a call (its own, then its nested comm operators').
  std::unordered_map<std::uint64_t, CommInfo> call_info;
  std::unordered_map<std::uint64_t, std::uint64_t> comm_id_of_call;
  for (std::size_t i = 0; i < n; ++i) {
    if (ev[i].kind != EventKind::kOperator || comm_of(i) == nullptr) continue;
    const std::uint64_t call = call_for(ev[i].id);
    CommInfo& c = call_info[call];
    // The first non-empty value of each field in trace order (the same choice on every rank).
    const CommInfo& mine = *comm_of(i);
    if (c.collective.empty()) c.collective = mine.collective;
    if (c.pg.empty()) c.pg = mine.pg;
    if (c.bytes < 0) c.bytes = mine.bytes;
    if (c.seq < 0) c.seq = mine.seq;
  }
  // One host communication event per call.
  for (auto& [call, info] : call_info) {
    const Event& op = ev[op_index[call]];
    Event c;
    c.start_ns = op.start_ns;
    c.end_ns = op.end_ns;
    c.id = r.next_id++;
    c.parent = call;
    c.bytes = std::max<std::int64_t>(info.bytes, 0);
    c.name = strings.intern(info.collective.empty() ? std::string("collective") : info.collective);
    c.detail = info.pg.empty() ? 0 : strings.intern("process group " + info.pg);
    c.kind = EventKind::kCommunication;
    c.track_kind = TrackKind::kHostThread;
    c.track = op.track;
    comm_id_of_call[call] = c.id;
    ev.push_back(c);
    r.external.push_back(-1);
  }

  // Device activities: the launching operator, and for NCCL kernels the collective call.
  std::unordered_map<std::uint64_t, int> kernels_of_comm;
  for (std::size_t i = 0; i < n; ++i) {
    Event& e = ev[i];
    if (e.track_kind != TrackKind::kDeviceStream) continue;
    std::uint64_t op = 0;
    bool linked = false;
    if (e.correlation != 0)
      if (auto it = op_of_correlation.find(e.correlation); it != op_of_correlation.end())
        op = it->second, linked = true;
    if (!linked && r.external[i] >= 0)
      if (auto it = op_of_external.find(r.external[i]); it != op_of_external.end()) op = it->second, linked = true;
    if (!linked && e.kind != EventKind::kSync) ++r.report.unlinked_device;
    e.parent = op;
    if (e.kind != EventKind::kCommunication) continue;
    const std::uint64_t call = op != 0 ? call_for(op) : 0;
    CommInfo info;
    if (const CommInfo* own = comm_of(i)) info = *own;
    if (call != 0) {
      const CommInfo& ci = call_info[call];
      if (info.collective.empty()) info.collective = ci.collective;
      if (info.pg.empty()) info.pg = ci.pg;
      if (info.bytes < 0) info.bytes = ci.bytes;
      if (info.seq < 0) info.seq = ci.seq;
      e.id = comm_id_of_call[call];
      ++kernels_of_comm[e.id];
    } else {
      e.id = r.next_id++;
    }
    e.bytes = std::max<std::int64_t>(info.bytes, 0);
    e.seq = info.seq;  // the trace's own number; replaced by the cross-rank instance below
    if (!info.collective.empty()) {
      e.name = strings.intern(info.collective);
    } else {
      e.name = strings.intern("nccl");
    }
    // Remember the process group and own sequence number for matching.
    r.comm[i] = info;
  }
  // A call that launched no NCCL kernel in a trace with device activity is no transfer of its
  // own (c10d's "wait", a kernel outside the trace): it stays an operator. Without any device
  // activity (a CPU job, gloo) the host calls are the communication.
  bool any_device = false;
  for (std::size_t i = 0; i < n; ++i)
    any_device |= ev[i].track_kind == TrackKind::kDeviceStream && ev[i].kind != EventKind::kSync;
  std::unordered_map<std::uint64_t, const CommInfo*> info_of_comm;
  for (auto& [call, info] : call_info) info_of_comm[comm_id_of_call[call]] = &info;
  std::vector<Event> calls(ev.begin() + static_cast<std::ptrdiff_t>(n), ev.end());
  ev.resize(n);
  r.external.resize(n);
  for (const Event& c : calls) {
    if (!kernels_of_comm.contains(c.id)) {
      ++r.report.host_comm_without_kernel;
      if (any_device) continue;
    }
    r.comm[ev.size()] = *info_of_comm[c.id];  // the call's arguments, for matching
    ev.push_back(c);
    r.external.push_back(-1);
  }
}

// Iterations (ProfilerStep#N windows) and each event's step.
void make_windows(RankData& r, KinetoWindow window, StringTable& strings) {
  std::vector<Event>& ev = r.events;
  bool have_steps = false;
  for (const Event& e : ev) have_steps |= e.kind == EventKind::kIteration;
  if (window == KinetoWindow::kTrace || !have_steps) {
    r.report.steps_fallback = window == KinetoWindow::kSteps;
    std::int64_t lo = std::numeric_limits<std::int64_t>::max(), hi = std::numeric_limits<std::int64_t>::min();
    bool device = false;
    for (const Event& e : ev) {
      const bool act = e.track_kind == TrackKind::kDeviceStream && e.kind != EventKind::kSync;
      if (act && !device) {
        device = true;
        lo = std::numeric_limits<std::int64_t>::max(), hi = std::numeric_limits<std::int64_t>::min();
      }
      if (act || !device) lo = std::min(lo, e.start_ns), hi = std::max(hi, e.end_ns);
    }
    std::erase_if(ev, [](const Event& e) { return e.kind == EventKind::kIteration; });
    if (lo <= hi) {
      Event w;
      w.start_ns = lo;
      w.end_ns = hi;
      w.iteration = 0;
      w.kind = EventKind::kIteration;
      w.name = strings.intern("trace");
      ev.push_back(w);
    }
  }
  // Each event's step: the window its start (device activities: their launch) falls in.
  std::vector<const Event*> wins;
  for (const Event& e : ev)
    if (e.kind == EventKind::kIteration) wins.push_back(&e);
  std::sort(wins.begin(), wins.end(), [](const Event* a, const Event* b) { return a->start_ns < b->start_ns; });
  std::vector<std::pair<std::int64_t, std::pair<std::int64_t, std::int32_t>>> spans;
  for (const Event* w : wins) spans.push_back({w->start_ns, {w->end_ns, w->iteration}});
  for (Event& e : ev) {
    if (e.kind == EventKind::kIteration) continue;
    auto it = std::upper_bound(spans.begin(), spans.end(), e.start_ns,
                               [](std::int64_t t, const auto& s) { return t < s.first; });
    e.iteration = -1;
    if (it != spans.begin() && e.start_ns < std::prev(it)->second.first) e.iteration = std::prev(it)->second.second;
  }
}

// --- stage 3: collectives across ranks, clocks ------------------------------------------------

struct Instance {
  std::uint64_t id = 0;             // communication id on the rank
  std::string key;                  // process group / collective
  std::int64_t seq = -1;            // the trace's own
  std::int64_t start = 0, end = 0;  // device activities if any, else the host call (absolute ns)
  bool device = false;
};

std::vector<Instance> instances_of(const RankData& r) {
  std::unordered_map<std::uint64_t, Instance> by_id;
  for (std::size_t i = 0; i < r.events.size(); ++i) {
    const Event& e = r.events[i];
    if (e.kind != EventKind::kCommunication || e.id == 0) continue;
    const bool dev = e.track_kind == TrackKind::kDeviceStream;
    auto [it, fresh] = by_id.try_emplace(e.id);
    Instance& in = it->second;
    const auto c = r.comm.find(i);
    if (fresh || (dev && !in.device)) {
      in.id = e.id;
      in.start = e.start_ns, in.end = e.end_ns, in.device = dev;
    } else if (dev == in.device) {
      in.start = std::min(in.start, e.start_ns), in.end = std::max(in.end, e.end_ns);
    }
    if (c != r.comm.end()) {
      if (in.key.empty()) in.key = c->second.pg + "/" + c->second.collective;
      if (in.seq < 0) in.seq = c->second.seq;
    }
  }
  std::vector<Instance> out;
  for (auto& [id, in] : by_id) out.push_back(std::move(in));
  std::sort(out.begin(), out.end(), [](const Instance& a, const Instance& b) {
    return std::tie(a.start, a.end, a.id) < std::tie(b.start, b.end, b.id);
  });
  return out;
}

std::int64_t median(std::vector<std::int64_t> v) {
  if (v.empty()) return 0;
  std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(v.size() / 2), v.end());
  return v[v.size() / 2];
}

// Rank d's clock from its matched collective ends (end on rank 0, end on d; absolute ns): rank
// 0's local time = d's local time + offset, from end_0 = end_d; offset the median of the
// differences, error their median absolute deviation. No matched end measures nothing: offset
// 0 and an unknown error.
void align_clock(RankData& d, std::int64_t epoch0, const std::vector<std::pair<std::int64_t, std::int64_t>>& ends) {
  if (ends.empty()) {
    d.offset_ns = 0, d.error_ns = kUnknownClockError;
    return;
  }
  std::vector<std::int64_t> diffs;
  for (const auto& [e0, ed] : ends) diffs.push_back((e0 - epoch0) - (ed - d.epoch_ns));
  d.offset_ns = median(diffs);
  std::vector<std::int64_t> dev;
  for (const std::int64_t x : diffs) dev.push_back(std::abs(x - d.offset_ns));
  d.error_ns = median(dev);
}

// Per rank, its collective instances with a partner: a global seq (seq_of: comm id -> global
// seq, per rank) that another rank also holds. One rank alone has none.
std::vector<std::int64_t> matched_counts(const std::vector<std::unordered_map<std::uint64_t, std::int64_t>>& seq_of) {
  std::unordered_map<std::int64_t, int> ranks_holding;
  for (const auto& rank_seqs : seq_of) {
    std::unordered_set<std::int64_t> mine;
    for (const auto& [id, s] : rank_seqs) mine.insert(s);
    for (const std::int64_t s : mine) ++ranks_holding[s];
  }
  std::vector<std::int64_t> out;
  for (const auto& rank_seqs : seq_of)
    out.push_back(std::count_if(rank_seqs.begin(), rank_seqs.end(),
                                [&](const auto& is) { return ranks_holding[is.second] > 1; }));
  return out;
}

void write_attribute(Profile& p, const std::string& key, const std::string& value) {
  p.meta.attributes.emplace_back(key, value);
}

std::string counts_text(const std::map<std::string, std::int64_t>& m) {
  std::string s;
  for (const auto& [k, v] : m) s += (s.empty() ? "" : "; ") + k + " " + std::to_string(v);
  return s.empty() ? "none" : s;
}

// The two unions HtaView needs beyond the breakdown, over the rank's windows.
void measure_hta_unions(const std::vector<Event>& ev, HtaView& v) {
  struct Iv {
    std::int64_t s, e;
    int cls;  // 0 compute kernel, 1 communication, 2 memcpy/memset
  };
  std::vector<std::pair<std::int64_t, std::int64_t>> windows;
  for (const Event& e : ev)
    if (e.kind == EventKind::kIteration && e.end_ns > e.start_ns) windows.push_back({e.start_ns, e.end_ns});
  std::vector<Iv> all;
  for (const Event& e : ev) {
    if (e.track_kind != TrackKind::kDeviceStream || e.end_ns <= e.start_ns) continue;
    int cls = -1;
    if (e.kind == EventKind::kKernel) cls = 0;
    if (e.kind == EventKind::kCommunication) cls = 1;
    if (e.kind == EventKind::kMemcpy || e.kind == EventKind::kMemset) cls = 2;
    if (cls >= 0) all.push_back({e.start_ns, e.end_ns, cls});
  }
  for (const auto& [ws, we] : windows) {
    std::vector<std::pair<std::int64_t, int>> steps;  // (t, cls: begin; cls + 3: end)
    for (const Iv& i : all) {
      const std::int64_t s = std::max(i.s, ws), e = std::min(i.e, we);
      if (s >= e) continue;
      steps.push_back({s, i.cls});
      steps.push_back({e, i.cls + 3});
    }
    std::sort(steps.begin(), steps.end());
    int count[3] = {0, 0, 0};
    for (std::size_t k = 0; k < steps.size();) {
      const std::int64_t t = steps[k].first;
      for (; k < steps.size() && steps[k].first == t; ++k) count[steps[k].second % 3] += steps[k].second < 3 ? 1 : -1;
      if (k == steps.size()) break;
      const std::int64_t len = steps[k].first - t;
      if (count[0] > 0 && count[1] > 0) v.compute_comm_ns += len;
      if (count[2] > 0 && count[0] == 0 && count[1] == 0) v.memory_only_ns += len;
    }
  }
}

}  // namespace

std::vector<std::string> kineto_files_in(const std::string& dir) {
  std::vector<std::string> out;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(dir, ec)) {
    const std::string name = entry.path().filename().string();
    if (entry.is_regular_file(ec) && (name.ends_with(".json") || name.ends_with(".json.gz")))
      out.push_back(entry.path().string());
  }
  if (ec) throw KinetoImportError(dir + ": " + ec.message());
  std::sort(out.begin(), out.end());
  return out;
}

KinetoImport import_kineto(const KinetoImportOptions& options) {
  if (options.files.empty()) throw KinetoImportError("no trace files given");
  StringTable strings;
  std::vector<RankData> ranks(options.files.size());
  for (std::size_t f = 0; f < options.files.size(); ++f) {
    ranks[f].report.path = options.files[f];
    TraceReader(options.files[f], strings, ranks[f], options.hta_rounding).read();
  }

  // Ranks: by distributedInfo.rank; a file without it is rank 0 of 1, alone.
  for (const RankData& r : ranks)
    if (!r.has_rank && ranks.size() > 1)
      throw KinetoImportError(r.report.path +
                              ": no distributedInfo.rank (with several files every file must name its rank)");
  std::sort(ranks.begin(), ranks.end(),
            [](const RankData& a, const RankData& b) { return a.report.original_rank < b.report.original_rank; });
  for (std::size_t i = 1; i < ranks.size(); ++i)
    if (ranks[i].report.original_rank == ranks[i - 1].report.original_rank)
      throw KinetoImportError(ranks[i].report.path + ": rank " + std::to_string(ranks[i].report.original_rank) +
                              " again (also " + ranks[i - 1].report.path + ")");

  // Absolute times: baseTimeNanoseconds + ts when the trace gives a base.
  for (RankData& r : ranks) {
    if (!r.has_base) continue;
    for (Event& e : r.events) e.start_ns += r.base_ns, e.end_ns += r.base_ns;
    if (r.min_ts != std::numeric_limits<std::int64_t>::max()) r.min_ts += r.base_ns;
  }
  for (RankData& r : ranks) {
    link_rank(r, strings);
    make_windows(r, options.window, strings);
  }

  KinetoImport out;
  // Clocks: shared (one epoch, offsets 0) or aligned from matched collective ends.
  bool shared = options.clock == KinetoClock::kShared;
  if (options.clock == KinetoClock::kAuto)
    shared = ranks.size() == 1 || std::all_of(ranks.begin(), ranks.end(), has_wall_clock);

  // Collective instances: (process group, seq) when every instance has one; else on a shared
  // clock the instances of one collective whose device intervals overlap rank 0's; else order.
  std::vector<std::vector<Instance>> inst(ranks.size());
  bool all_seq = true;
  std::size_t total = 0;
  for (std::size_t r = 0; r < ranks.size(); ++r) {
    inst[r] = instances_of(ranks[r]);
    total += inst[r].size();
    for (const Instance& i : inst[r]) all_seq &= i.seq >= 0;
  }
  all_seq &= total > 0;
  std::vector<std::unordered_map<std::uint64_t, std::int64_t>> seq_of(ranks.size());           // comm id -> global seq
  std::vector<std::vector<std::pair<std::int64_t, std::int64_t>>> matched_ends(ranks.size());  // (end_0, end_r)
  if (all_seq) {
    out.matching = "by process group and sequence number";
    std::map<std::pair<std::string, std::int64_t>, std::int64_t> global;
    for (auto& rank_inst : inst)
      for (const Instance& i : rank_inst) global.try_emplace({i.key, i.seq}, 0);
    std::int64_t k = 0;
    for (auto& [key, g] : global) g = k++;
    std::map<std::pair<std::string, std::int64_t>, std::int64_t> end0;
    for (const Instance& i : inst[0]) end0[{i.key, i.seq}] = i.end;
    for (std::size_t r = 0; r < ranks.size(); ++r)
      for (const Instance& i : inst[r]) {
        seq_of[r][i.id] = global[{i.key, i.seq}];
        if (auto it = end0.find({i.key, i.seq}); it != end0.end()) matched_ends[r].push_back({it->second, i.end});
      }
  } else {
    out.matching = shared ? "by collective and process group, overlapping device intervals on the shared clock"
                          : "by collective and process group, in order";
    std::map<std::string, std::vector<const Instance*>> ref;
    for (std::size_t k = 0; k < inst[0].size(); ++k) {
      seq_of[0][inst[0][k].id] = static_cast<std::int64_t>(k);
      ref[inst[0][k].key].push_back(&inst[0][k]);
    }
    for (std::size_t r = 1; r < ranks.size(); ++r) {
      std::map<std::string, std::vector<const Instance*>> mine;
      for (const Instance& i : inst[r]) mine[i.key].push_back(&i);
      for (auto& [key, list] : mine) {
        const auto rit = ref.find(key);
        if (rit == ref.end()) continue;
        const auto& rl = rit->second;
        if (!shared) {
          for (std::size_t k = 0; k < list.size() && k < rl.size(); ++k) {
            seq_of[r][list[k]->id] = seq_of[0][rl[k]->id];
            matched_ends[r].push_back({rl[k]->end, list[k]->end});
          }
          continue;
        }
        // Two sorted lists: pair overlapping intervals, skip the earlier-ending one otherwise.
        std::size_t a = 0, b = 0;
        while (a < rl.size() && b < list.size()) {
          const Instance& x = *rl[a];
          const Instance& y = *list[b];
          if (x.start < y.end && y.start < x.end) {
            seq_of[r][y.id] = seq_of[0][x.id];
            matched_ends[r].push_back({x.end, y.end});
            ++a, ++b;
          } else if (x.end <= y.end) {
            ++a;
          } else {
            ++b;
          }
        }
      }
    }
  }

  // Epochs and offsets.
  std::int64_t common = std::numeric_limits<std::int64_t>::max();
  for (const RankData& r : ranks) common = std::min(common, r.min_ts);
  if (common == std::numeric_limits<std::int64_t>::max()) common = 0;
  std::int64_t aligned_from = 0;
  for (std::size_t r = 0; r < ranks.size(); ++r) {
    RankData& d = ranks[r];
    if (shared || r == 0) {
      d.epoch_ns = shared ? common : (d.min_ts == std::numeric_limits<std::int64_t>::max() ? 0 : d.min_ts);
      d.offset_ns = 0;
      continue;
    }
    d.epoch_ns = d.min_ts == std::numeric_limits<std::int64_t>::max() ? 0 : d.min_ts;
    align_clock(d, ranks[0].epoch_ns, matched_ends[r]);
    if (matched_ends[r].empty())
      out.warnings.push_back("rank " + std::to_string(r) + " (" + d.report.path +
                             ") shares no collective with rank 0: its clock offset is unknown (0 stored, error -1)");
    aligned_from += static_cast<std::int64_t>(matched_ends[r].size());
  }
  out.clock_method = shared ? (ranks.size() == 1 ? "one rank" : "shared (the traces' wall-clock times)")
                            : "aligned from " + std::to_string(aligned_from) +
                                  " matched collective ends (offset = median of end differences, error = their "
                                  "median absolute deviation)";

  // Rank-local times; communication events get their instance's global seq.
  for (std::size_t r = 0; r < ranks.size(); ++r) {
    RankData& d = ranks[r];
    d.report.collectives = static_cast<std::int64_t>(inst[r].size());
    for (Event& e : d.events) {
      e.start_ns -= d.epoch_ns, e.end_ns -= d.epoch_ns;
      if (e.kind == EventKind::kCommunication) {
        const auto it = seq_of[r].find(e.id);
        e.seq = it == seq_of[r].end() ? -1 : it->second;
      }
    }
  }
  const std::vector<std::int64_t> matched = matched_counts(seq_of);
  for (std::size_t r = 0; r < ranks.size(); ++r) ranks[r].report.collectives_matched = matched[r];

  // The breakdown, as the live profiler computes it.
  Profile& p = out.profile;
  std::vector<std::vector<Event>> events(ranks.size());
  std::vector<std::int64_t> offsets(ranks.size());
  for (std::size_t r = 0; r < ranks.size(); ++r) {
    events[r] = std::move(ranks[r].events);
    offsets[r] = ranks[r].offset_ns;
  }
  const std::vector<RankBreakdown> bd = analyze_ranks(events, offsets, Timeline::kDevice);
  for (const RankBreakdown& b : bd) {
    p.breakdown.insert(p.breakdown.end(), b.rows.begin(), b.rows.end());
    p.operators.insert(p.operators.end(), b.operators.begin(), b.operators.end());
  }

  ProfileMeta& meta = p.meta;
  meta.version = COMMSCOPE_VERSION;
  meta.command_line = options.command_line;
  meta.clock = shared ? "kineto (shared)" : "kineto (aligned)";
  const bool wall = has_wall_clock(ranks[0]);
  meta.epoch_unix_ns = wall ? ranks[0].epoch_ns : 0;
  meta.nranks = static_cast<std::int32_t>(ranks.size());
  meta.events_layout = "single";
  write_attribute(p, "source", "commscope-import kineto");
  write_attribute(p, "kineto.window", options.window == KinetoWindow::kTrace ? "trace" : "steps");
  write_attribute(p, "kineto.clock", out.clock_method);
  write_attribute(p, "kineto.matching", out.matching);
  write_attribute(p, "kineto.time_rounding", options.hta_rounding ? "hta (device activities to whole us)" : "none");
  for (std::size_t r = 0; r < ranks.size(); ++r) {
    RankData& d = ranks[r];
    KinetoRankReport& rep = d.report;
    HtaView& h = rep.hta;
    for (const BreakdownRow& row : bd[r].rows) {
      h.window_ns += row.window_ns, h.kernel_ns += row.kernel_ns, h.intra_ns += row.intra_ns;
      h.inter_ns += row.inter_ns, h.comm_ns += row.comm_ns;
    }
    measure_hta_unions(events[r], h);
    const std::string k = "kineto.rank" + std::to_string(r) + ".";
    write_attribute(p, k + "file", std::filesystem::path(rep.path).filename().string());
    write_attribute(p, k + "original_rank", std::to_string(rep.original_rank));
    write_attribute(p, k + "world_size", std::to_string(rep.world_size));
    write_attribute(p, k + "imported", counts_text(rep.imported));
    write_attribute(p, k + "skipped", counts_text(rep.skipped));
    write_attribute(p, k + "unknown", counts_text(rep.unknown));
    write_attribute(p, k + "unlinked_device_activities", std::to_string(rep.unlinked_device));
    write_attribute(p, k + "collectives", std::to_string(rep.collectives));
    write_attribute(p, k + "collectives_matched", std::to_string(rep.collectives_matched));
    write_attribute(p, k + "hta_compute_comm_ns", std::to_string(h.compute_comm_ns));
    write_attribute(p, k + "hta_memory_only_ns", std::to_string(h.memory_only_ns));
    RankInfo info;
    info.rank = static_cast<std::int32_t>(r);
    info.host = std::filesystem::path(rep.path).filename().string().substr(0, 63);
    info.clock_offset_ns = d.offset_ns;
    info.clock_error_ns = d.error_ns;
    info.backend = "cupti";
    info.events = static_cast<std::int64_t>(events[r].size());
    info.dropped_events = 0;
    p.ranks.push_back(info);
    out.ranks.push_back(rep);
  }
  p.strings = strings.strings();
  p.events = std::move(events);
  return out;
}

}  // namespace commscope::profiler
