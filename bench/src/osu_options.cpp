#include "osu_options.hpp"

#include <CLI/CLI.hpp>

#include <limits>

#include "cli_parse.hpp"
#include "commscope/bench/options.hpp"
#include "commscope/collectives/error.hpp"

namespace commscope::bench {

namespace {

constexpr OsuTest kOsuTests[] = {OsuTest::latency, OsuTest::bw, OsuTest::bibw, OsuTest::mbw_mr};

// Each buffer is one message; a larger one is a typo more often than a plan (OSU's own limit is
// 512 MiB of buffers).
constexpr std::size_t kOsuMaxBytes = std::size_t{1} << 30;

bool windowed(OsuTest t) {
  return t != OsuTest::latency;
}

constexpr int kNotGiven = std::numeric_limits<int>::min();

// The raw values, as typed.
struct OsuFlags {
  std::string sizes, accel;
  int iters = 0, skip = 0, window = 64, rate = 1;
  int pairs = kNotGiven;
  std::vector<std::string> buffers;
};

void add_osu_flags(CLI::App& app, OsuTest test, OsuFlags& f, OsuOptions& o) {
  app.add_option("-m,--message-size", f.sizes,
                 "[MIN:]MAX: sizes from MIN doubling to MAX bytes (K, M, G suffixes; -m 128, -m 2:128, -m 2:)");
  app.add_option("-i,--iterations", f.iters,
                 windowed(test) ? "timed iterations per size (default 100, 20 above 8 KiB)"
                                : "timed iterations per size (default 10000, 1000 above 8 KiB)");
  app.add_option("-x,--warmup", f.skip,
                 windowed(test) ? "untimed iterations first (default 10, 2 above 8 KiB)"
                                : "untimed iterations first (default 100, 10 above 8 KiB)");
  // osu_latency has no window: -W is taken (hidden) to say so rather than "not expected".
  auto* window = app.add_option("-W,--window-size", f.window, "messages in flight per iteration");
  if (windowed(test))
    window->capture_default_str();
  else
    window->group("");
  if (test == OsuTest::mbw_mr) {
    app.add_option("-R,--print-rate", f.rate, "1: the Messages/s column, 0: MB/s only")->capture_default_str();
    app.add_option("-p,--num-pairs", f.pairs, "sender/receiver pairs (default: ranks / 2)");
  }
  app.add_flag("-f,--full", o.full,
               test == OsuTest::latency ? "Min and Max Latency(us) of single iterations, and Iterations"
                                        : "Min and Max bandwidth of single iterations, and Iterations");
  app.add_option("-d,--accelerator", f.accel, "cuda: buffers in device memory (SRC DST say which: D D, D H, H D)");
  app.add_option("--timeout", o.timeout_s, "seconds one size may take before the run ends (0: never)")
      ->capture_default_str();
  app.add_option("buffers", f.buffers, "SRC DST: H (host) or D (device) for rank 0's and rank 1's buffers");
}

// -m: "MAX", "MIN:MAX", "MIN:" or ":MAX", as OSU reads it.
void apply_sizes(const std::string& text, OsuOptions& o) {
  if (text.empty()) return;
  const std::size_t colon = text.find(':');
  if (colon == std::string::npos) {
    o.max_bytes = parse_size(text);
  } else {
    if (text.find(':', colon + 1) != std::string::npos || text.size() == 1)
      throw InvalidArgument("bad -m '" + text + "' (MAX, MIN:MAX, MIN: or :MAX)");
    if (colon > 0) o.min_bytes = parse_size(text.substr(0, colon));
    if (colon + 1 < text.size()) o.max_bytes = parse_size(text.substr(colon + 1));
  }
  if (o.max_bytes > kOsuMaxBytes) throw InvalidArgument("-m " + text + ": messages of at most 1G bytes");
  if (o.min_bytes > o.max_bytes) throw InvalidArgument("-m " + text + ": MIN is larger than MAX");
}

// -d cuda with OSU's `SRC DST` (D or H each); without them (or without -d) both stay on the host.
void apply_buffers(const OsuFlags& f, OsuOptions& o) {
  if (!f.accel.empty()) {
    if (f.accel != "cuda")
      throw InvalidArgument("-d " + f.accel + ": only cuda buffers here (OSU's managed, rocm, openacc are not)");
#ifndef COMMSCOPE_WITH_CUDA
    throw InvalidArgument("-d cuda: this build has no CUDA (configure where nvcc is found)");
#endif
    o.device = true;  // the buffers stay on the host unless SRC DST say D, as OSU 7.4's do
  }
  if (f.buffers.empty()) return;
  if (f.buffers.size() != 2) throw InvalidArgument("give both buffers, SRC DST (D or H each), or neither");
  if (!o.device) throw InvalidArgument("SRC DST buffers (" + f.buffers[0] + " ...) need -d cuda");
  for (std::size_t i = 0; i < 2; ++i) {
    if (f.buffers[i] != "D" && f.buffers[i] != "H")
      throw InvalidArgument("bad buffer '" + f.buffers[i] + "' (D: device, H: host; managed memory is not here)");
    (i == 0 ? o.src : o.dst) = f.buffers[i][0];
  }
}

void apply_osu_flags(CLI::App& app, const OsuFlags& f, OsuOptions& o) {
  apply_sizes(f.sizes, o);
  if (app.count("-i") > 0) {
    if (f.iters < 1) throw InvalidArgument("-i must be >= 1");
    o.iters = f.iters;
  }
  if (app.count("-x") > 0) {
    if (f.skip < 0) throw InvalidArgument("-x must be >= 0");
    o.skip = f.skip;
  }
  if (!windowed(o.test) && app.count("-W") > 0)
    throw InvalidArgument("-W: osu_latency sends one message at a time (osu_bw, osu_bibw, osu_mbw_mr have a window)");
  if (f.window < 1) throw InvalidArgument("-W must be >= 1");
  if (f.rate != 0 && f.rate != 1) throw InvalidArgument("-R must be 0 or 1");
  if (f.pairs != kNotGiven && f.pairs < 1) throw InvalidArgument("-p must be >= 1");
  o.window = f.window;
  o.print_rate = f.rate == 1;
  o.pairs = f.pairs == kNotGiven ? 0 : f.pairs;
  if (!(o.timeout_s >= 0)) throw InvalidArgument("--timeout must be >= 0 seconds");
  apply_buffers(f, o);
}

}  // namespace

std::string_view to_string(OsuTest t) {
  switch (t) {
    case OsuTest::latency:
      return "osu_latency";
    case OsuTest::bw:
      return "osu_bw";
    case OsuTest::bibw:
      return "osu_bibw";
    case OsuTest::mbw_mr:
      return "osu_mbw_mr";
  }
  return "?";
}

std::optional<OsuTest> osu_test_named(std::string_view name) {
  if (const std::size_t slash = name.rfind('/'); slash != std::string_view::npos) name.remove_prefix(slash + 1);
  for (OsuTest t : kOsuTests)
    if (name == to_string(t)) return t;
  return std::nullopt;
}

int OsuOptions::iterations(std::size_t bytes) const {
  if (iters) return *iters;
  if (test == OsuTest::latency) return bytes > kOsuLargeMessage ? 1000 : 10000;
  return bytes > kOsuLargeMessage ? 20 : 100;
}

int OsuOptions::warmup(std::size_t bytes) const {
  if (skip) return *skip;
  if (test == OsuTest::latency) return bytes > kOsuLargeMessage ? 10 : 100;
  return bytes > kOsuLargeMessage ? 2 : 10;
}

std::vector<std::size_t> OsuOptions::sizes() const {
  std::vector<std::size_t> out;
  for (std::size_t s = min_bytes; s <= max_bytes; s = s ? s * 2 : 1) out.push_back(s);
  return out;
}

OsuParse parse_osu_options(OsuTest test, int argc, const char* const* argv) {
  OsuParse r;
  OsuOptions& o = r.options;
  o.test = test;
  if (test != OsuTest::latency) o.min_bytes = 1;
  const std::string name(to_string(test));
  CLI::App app{name + ": OSU Micro-Benchmarks' " + name +
                   " with its flags and output (OSU 7.4's loops; run under mpirun with 2 ranks" +
                   (test == OsuTest::mbw_mr ? " or more" : "") + ")",
               name};
  OsuFlags f;
  add_osu_flags(app, test, f, o);
  if (!parse_command_line(app, argc, argv, name, "-h", r)) return r;
  try {
    apply_osu_flags(app, f, o);
  } catch (const Error& e) {
    r.exit_code = 2;
    r.message = name + ": " + e.what();
  }
  return r;
}

}  // namespace commscope::bench
