// Chrome trace event format export (docs/profile-format.md, "Chrome trace export"). Streams one
// line per trace event; nothing but the current line and the track tables is held in memory.
#include "commscope/profiler/chrome_trace.hpp"

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iostream>
#include <limits>
#include <ostream>
#include <stdexcept>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "commscope/common/json_string.hpp"
#include "commscope/profiler/run_description.hpp"

namespace commscope::profiler {
namespace {

// Track ids (tid) within a rank's process (pid = rank):
//   host thread t                      t                                   "thread t"
//   iterations (any track)             999998                              "iterations"
//   host communication                 999999                              "communication"
//   device d, stream s                 1000000 + d * 65536 + s             "GPU d stream s"
//   device d communication             1000000 + d * 65536 + 65535         "GPU d communication"
// valid for t < 999998, 0 <= d < 512 and s < 65535 (so every tid < 2^31). A track outside those
// ranges gets the next free tid from 2^30 up, in order of first appearance in the rank's events.
constexpr std::int64_t kIterationsTid = 999998;
constexpr std::int64_t kHostCommTid = 999999;
constexpr std::int64_t kDeviceTidBase = 1000000;
constexpr std::int64_t kTidsPerDevice = 65536;
constexpr std::uint32_t kDeviceCommStream = 65535;
constexpr int kMaxDevices = 512;
constexpr std::int64_t kOverflowTidBase = std::int64_t{1} << 30;

enum class TrackClass : std::uint8_t { kHostThread, kIterations, kHostComm, kDeviceStream, kDeviceComm };

struct TrackKey {
  TrackClass cls;
  std::int16_t device;
  std::uint32_t track;

  std::uint64_t packed() const noexcept {
    return (std::uint64_t{static_cast<std::uint8_t>(cls)} << 48) |
           (std::uint64_t{static_cast<std::uint16_t>(device)} << 32) | track;
  }
};

TrackKey track_of(const Event& e) {
  const bool device = e.track_kind == TrackKind::kDeviceStream;
  if (e.kind == EventKind::kIteration) return {TrackClass::kIterations, 0, 0};
  if (e.kind == EventKind::kCommunication) {
    return device ? TrackKey{TrackClass::kDeviceComm, e.device, 0} : TrackKey{TrackClass::kHostComm, 0, 0};
  }
  return device ? TrackKey{TrackClass::kDeviceStream, e.device, e.track}
                : TrackKey{TrackClass::kHostThread, 0, e.track};
}

// The formula's tid, or -1 when the track does not fit it.
std::int64_t formula_tid(const TrackKey& key) {
  const bool device_fits = key.device >= 0 && key.device < kMaxDevices;
  switch (key.cls) {
    case TrackClass::kHostThread:
      return key.track < kIterationsTid ? std::int64_t{key.track} : -1;
    case TrackClass::kIterations:
      return kIterationsTid;
    case TrackClass::kHostComm:
      return kHostCommTid;
    case TrackClass::kDeviceStream:
      return device_fits && key.track < kDeviceCommStream ? kDeviceTidBase + key.device * kTidsPerDevice + key.track
                                                          : -1;
    case TrackClass::kDeviceComm:
      return device_fits ? kDeviceTidBase + key.device * kTidsPerDevice + kDeviceCommStream : -1;
  }
  return -1;
}

// --- output: a line buffer handed to the stream in large pieces

class Out {
 public:
  explicit Out(std::ostream& os) : os_(os) { buf_.reserve(kFlushBytes + 4096); }
  ~Out() { flush(); }
  Out(const Out&) = delete;
  Out& operator=(const Out&) = delete;

  void flush() {
    if (!buf_.empty()) os_.write(buf_.data(), static_cast<std::streamsize>(buf_.size()));
    buf_.clear();
  }
  void maybe_flush() {
    if (buf_.size() >= kFlushBytes) flush();
  }

  Out& raw(std::string_view text) {
    buf_ += text;
    return *this;
  }
  Out& raw(char c) {
    buf_ += c;
    return *this;
  }

  template <class I>
  Out& integer(I value) {
    char digits[24];
    const auto result = std::to_chars(digits, digits + sizeof digits, value);
    buf_.append(digits, result.ptr);
    return *this;
  }

  // ns as us with exactly three decimals ("-1.500", "1235.567"): integer arithmetic only.
  Out& micros(std::int64_t ns) {
    std::uint64_t magnitude = static_cast<std::uint64_t>(ns);
    if (ns < 0) {
      buf_ += '-';
      magnitude = 0 - magnitude;
    }
    integer(magnitude / 1000);
    const auto frac = static_cast<unsigned>(magnitude % 1000);
    buf_ += '.';
    buf_ += static_cast<char>('0' + frac / 100);
    buf_ += static_cast<char>('0' + frac / 10 % 10);
    buf_ += static_cast<char>('0' + frac % 10);
    return *this;
  }

  // A JSON string (commscope/common/json_string.hpp: escapes, and U+FFFD for bytes that are not
  // valid UTF-8), so that the output is valid JSON whatever the names hold.
  Out& string(std::string_view s) {
    json::append_string(buf_, s);
    return *this;
  }

  Out& key(std::string_view name) {
    buf_ += '"';
    buf_ += name;  // our own keys: plain ASCII
    buf_ += "\":";
    return *this;
  }

 private:
  static constexpr std::size_t kFlushBytes = std::size_t{1} << 16;

  std::ostream& os_;
  std::string buf_;
};

std::int64_t saturating_add(std::int64_t a, std::int64_t b) {
  std::int64_t sum = 0;
  if (!__builtin_add_overflow(a, b, &sum)) return sum;
  return b > 0 ? std::numeric_limits<std::int64_t>::max() : std::numeric_limits<std::int64_t>::min();
}

// end - start, 0 when end < start, saturated on overflow.
std::int64_t duration(const Event& e) {
  if (e.end_ns <= e.start_ns) return 0;
  std::int64_t d = 0;
  if (__builtin_sub_overflow(e.end_ns, e.start_ns, &d)) return std::numeric_limits<std::int64_t>::max();
  return d;
}

class TraceWriter {
 public:
  TraceWriter(const Profile& profile, std::ostream& os) : p_(profile), out_(os) {}

  std::size_t write() {
    const std::size_t nranks =
        std::max({static_cast<std::size_t>(std::max(p_.meta.nranks, 0)), p_.ranks.size(), p_.events.size()});
    std::vector<const RankInfo*> info(nranks, nullptr);
    for (const RankInfo& r : p_.ranks) {
      if (r.rank >= 0 && static_cast<std::size_t>(r.rank) < nranks) info[static_cast<std::size_t>(r.rank)] = &r;
    }

    out_.raw("{\"displayTimeUnit\":\"ns\",\"otherData\":{");
    out_.key("schema").string(p_.meta.schema).raw(',');
    out_.key("version").string(p_.meta.version).raw(',');
    out_.key("command_line").string(p_.meta.command_line).raw(',');
    out_.key("clock").string(p_.meta.clock).raw(',');
    out_.key("epoch_unix_ns").integer(p_.meta.epoch_unix_ns).raw(',');
    out_.key("nranks").integer(nranks).raw(',');
    out_.key("events_layout").string(p_.meta.events_layout).raw(',');
    out_.key("attributes").raw('{');
    for (std::size_t i = 0; i < p_.meta.attributes.size(); ++i) {
      if (i > 0) out_.raw(',');
      out_.string(p_.meta.attributes[i].first).raw(':').string(p_.meta.attributes[i].second);
    }
    out_.raw("}},\n\"traceEvents\":[");

    // A 3D-parallel job (the trainer's tp and pp attributes): each rank's stage and group ranks.
    const RunDescription run = read_run_description(p_.meta.attributes);
    const int tp = std::max(1, run.tp), pp = std::max(1, run.pp);
    for (std::size_t r = 0; r < nranks; ++r) {
      const RankInfo* rank = info[r];
      std::string name = "rank " + std::to_string(r);
      if (rank != nullptr && !rank->host.empty()) name += " (" + rank->host + ")";
      if (tp > 1 || pp > 1) {
        const GridPlace g = grid_place(static_cast<int>(r), static_cast<int>(nranks), tp, pp);
        name += ": stage " + std::to_string(g.pp_rank) + ", tp " + std::to_string(g.tp_rank) + ", dp " +
                std::to_string(g.dp_rank);
      }
      begin_event();
      out_.raw("\"ph\":\"M\",\"name\":\"process_name\",\"pid\":").integer(r).raw(",\"tid\":0,\"args\":{");
      out_.key("name").string(name).raw("}}");
      begin_event();
      out_.raw("\"ph\":\"M\",\"name\":\"process_sort_index\",\"pid\":").integer(r).raw(",\"tid\":0,\"args\":{");
      out_.key("sort_index").integer(r).raw("}}");
    }

    std::size_t slices = 0;
    for (std::size_t r = 0; r < p_.events.size(); ++r) {
      const std::int64_t offset = info[r] != nullptr ? info[r]->clock_offset_ns : 0;
      tids_.clear();
      next_overflow_tid_ = kOverflowTidBase;
      have_last_ = false;
      for (const Event& e : p_.events[r]) {
        const std::int64_t tid = tid_of(r, track_of(e));
        write_slice(r, tid, offset, e);
        ++slices;
      }
    }
    out_.raw("\n]}\n");
    out_.flush();
    return slices;
  }

 private:
  void begin_event() {
    out_.raw(first_ ? "\n{" : ",\n{");
    first_ = false;
    out_.maybe_flush();
  }

  std::string_view text(std::uint32_t id) const {
    if (id < p_.strings.size()) return p_.strings[id];
    missing_ = "<string " + std::to_string(id) + ">";
    return missing_;
  }

  // The track's tid; names the track (thread_name, thread_sort_index) the first time.
  std::int64_t tid_of(std::size_t rank, const TrackKey& key) {
    const std::uint64_t packed = key.packed();
    if (have_last_ && packed == last_key_) return last_tid_;
    auto it = tids_.find(packed);
    if (it == tids_.end()) {
      std::int64_t tid = formula_tid(key);
      if (tid < 0) tid = next_overflow_tid_++;
      it = tids_.emplace(packed, tid).first;
      name_track(rank, key, tid);
    }
    have_last_ = true;
    last_key_ = packed;
    last_tid_ = it->second;
    return it->second;
  }

  void name_track(std::size_t rank, const TrackKey& key, std::int64_t tid) {
    std::string name;
    switch (key.cls) {
      case TrackClass::kHostThread:
        name = "thread " + std::to_string(key.track);
        break;
      case TrackClass::kIterations:
        name = "iterations";
        break;
      case TrackClass::kHostComm:
        name = "communication";
        break;
      case TrackClass::kDeviceStream:
        name = "GPU " + std::to_string(key.device) + " stream " + std::to_string(key.track);
        break;
      case TrackClass::kDeviceComm:
        name = "GPU " + std::to_string(key.device) + " communication";
        break;
    }
    begin_event();
    out_.raw("\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":").integer(rank).raw(",\"tid\":").integer(tid);
    out_.raw(",\"args\":{").key("name").string(name).raw("}}");
    begin_event();
    out_.raw("\"ph\":\"M\",\"name\":\"thread_sort_index\",\"pid\":").integer(rank).raw(",\"tid\":").integer(tid);
    out_.raw(",\"args\":{").key("sort_index").integer(key.cls == TrackClass::kIterations ? -1 : tid).raw("}}");
    have_last_ = false;
  }

  void write_slice(std::size_t rank, std::int64_t tid, std::int64_t offset, const Event& e) {
    begin_event();
    out_.raw("\"ph\":\"X\",\"pid\":").integer(rank).raw(",\"tid\":").integer(tid);
    out_.raw(",\"ts\":").micros(saturating_add(e.start_ns, offset));
    out_.raw(",\"dur\":").micros(duration(e));
    out_.raw(",\"name\":").string(text(e.name));
    out_.raw(",\"cat\":").string(to_string(e.kind));
    out_.raw(",\"args\":{");
    out_.key("iteration").integer(e.iteration).raw(',');
    out_.key("id").integer(e.id).raw(',');
    out_.key("parent").integer(e.parent);
    switch (e.kind) {
      case EventKind::kCommunication:
        out_.raw(',').key("bytes").integer(e.bytes);
        out_.raw(',').key("seq").integer(e.seq);
        out_.raw(',').key("algorithm").string(text(e.detail));
        out_.raw(',').key("group").string(communication_group(text(e.name)));
        if (e.communicator != 0) out_.raw(',').key("communicator").string(text(e.communicator));
        break;
      case EventKind::kKernel:
      case EventKind::kMemcpy:
      case EventKind::kMemset:
        out_.raw(',').key("correlation").integer(e.correlation);
        if (e.bytes != 0) out_.raw(',').key("bytes").integer(e.bytes);
        if (e.detail != 0) out_.raw(',').key("detail").string(text(e.detail));
        break;
      default:
        if (e.correlation != 0) out_.raw(',').key("correlation").integer(e.correlation);
        if (e.detail != 0) out_.raw(',').key("detail").string(text(e.detail));
        break;
    }
    if (e.track_kind == TrackKind::kDeviceStream) {
      out_.raw(',').key("device").integer(e.device);
      out_.raw(',').key("stream").integer(e.track);
    }
    out_.raw("}}");
  }

  const Profile& p_;
  Out out_;
  bool first_ = true;
  mutable std::string missing_;
  std::unordered_map<std::uint64_t, std::int64_t> tids_;
  std::int64_t next_overflow_tid_ = kOverflowTidBase;
  bool have_last_ = false;
  std::uint64_t last_key_ = 0;
  std::int64_t last_tid_ = 0;
};

}  // namespace

std::size_t write_chrome_trace(const Profile& profile, std::ostream& out) {
  return TraceWriter(profile, out).write();
}

// Writes the trace to `path` through path.partial, renamed when complete; returns the slices.
std::size_t write_chrome_trace_file(const Profile& profile, const std::string& path) {
  if (path == "-") {
    const std::size_t slices = write_chrome_trace(profile, std::cout);
    std::cout.flush();
    if (!std::cout) throw std::runtime_error("writing the trace to stdout failed");
    return slices;
  }
  const std::string partial = path + ".partial";
  std::ofstream out(partial, std::ios::binary | std::ios::trunc);
  if (!out) throw std::runtime_error("cannot write '" + path + "': " + std::strerror(errno));
  const std::size_t slices = write_chrome_trace(profile, out);
  out.close();
  if (!out) {
    const int error = errno;
    std::remove(partial.c_str());
    throw std::runtime_error("writing '" + path + "' failed: " + std::strerror(error));
  }
  if (std::rename(partial.c_str(), path.c_str()) != 0) {
    const int error = errno;
    std::remove(partial.c_str());
    throw std::runtime_error("renaming '" + partial + "' to '" + path + "': " + std::strerror(error));
  }
  return slices;
}

}  // namespace commscope::profiler
