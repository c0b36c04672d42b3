// Stage 1 of the Kineto import (read.hpp): a trace file -> one rank's events.

#include "read.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <limits>

#include "commscope/profiler/device_records.hpp"
#include "commscope/profiler/json_stream.hpp"

namespace commscope::profiler::kineto {

namespace {

std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out)
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  return out;
}

struct TraceEntry {
  std::string ph, cat, name, pid, tid;
  bool has_ts = false, has_dur = false, bad_time = false;
  std::int64_t ts_ns = 0, dur_ns = 0;
  double ts_us = 0, dur_us = 0;  // the same as doubles, for HTA's rounding
  std::int64_t external = -1, correlation = -1, device = -1, stream = -1, bytes = -1;
  std::string collective, dtype, pg, pg_desc, pg_ranks, input_type;
  std::int64_t in_nelems = -1, out_nelems = -1, seq = -1, input_elems = -1;

  void clear() {
    ph.clear(), cat.clear(), name.clear(), pid.clear(), tid.clear();
    has_ts = has_dur = bad_time = false;
    ts_ns = dur_ns = 0;
    ts_us = dur_us = 0;
    external = correlation = device = stream = bytes = -1;
    collective.clear(), dtype.clear(), pg.clear(), pg_desc.clear(), pg_ranks.clear(), input_type.clear();
    in_nelems = out_nelems = seq = input_elems = -1;
  }
};

// "[0, 1, 2]" (PyTorch's Process Group Ranks) -> {0, 1, 2}; anything else, "[]" included -> {}.
std::vector<int> parse_ranks(std::string_view text) {
  std::vector<int> ranks;
  if (text.size() < 2 || text.front() != '[' || text.back() != ']') return {};
  text = text.substr(1, text.size() - 2);
  while (!text.empty()) {
    while (!text.empty() && text.front() == ' ') text.remove_prefix(1);
    int r = 0;
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), r);
    if (ec != std::errc() || r < 0) return {};
    ranks.push_back(r);
    text.remove_prefix(static_cast<std::size_t>(end - text.data()));
    while (!text.empty() && text.front() == ' ') text.remove_prefix(1);
    if (!text.empty() && text.front() != ',') return {};
    if (!text.empty()) text.remove_prefix(1);
  }
  return ranks;
}

bool is_comm_op_name(std::string_view name) {
  return name == "record_param_comms" || name.starts_with("nccl:");
}

class TraceReader {
 public:
  TraceReader(const std::string& path, StringTable& strings, RankTrace& rank, bool hta_rounding)
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
      } else if (key == "Process Group Ranks") {
        entry_.pg_ranks = read_string_value("Process Group Ranks");
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
    c.pg_ranks = parse_ranks(entry_.pg_ranks);
    if (entry_.in_nelems >= 0 && !entry_.dtype.empty()) {
      c.bytes = std::max(entry_.in_nelems, entry_.out_nelems) * dtype_bytes(entry_.dtype);
    } else if (entry_.input_elems >= 0 && !entry_.input_type.empty()) {
      c.bytes = entry_.input_elems * dtype_bytes(entry_.input_type);
    }
    if (c.collective.empty() && c.pg.empty() && c.bytes < 0 && c.seq < 0) return std::nullopt;
    return c;
  }

  void convert() {
    RankTrace& r = rank_;
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
  RankTrace& rank_;
  JsonReader in_;
  bool hta_rounding_ = false;
  TraceEntry entry_;
  std::size_t depth_before_ = 0;
  std::string key_;
};

}  // namespace

void read_trace(const std::string& path, StringTable& strings, RankTrace& rank, bool hta_rounding) {
  TraceReader(path, strings, rank, hta_rounding).read();
}

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

std::optional<std::int64_t> to_int(std::string_view s) {
  std::int64_t v = 0;
  const auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec == std::errc() && (p == s.data() + s.size() || *p == '.' || *p == 'e' || *p == 'E')) {
    if (p != s.data() + s.size() && *p != '.') return std::nullopt;  // exponent: not an integer id
    return v;
  }
  return std::nullopt;
}

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

}  // namespace commscope::profiler::kineto
