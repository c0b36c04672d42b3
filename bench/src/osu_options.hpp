// OSU Micro-Benchmarks' point-to-point tests under their own names (osu_latency, osu_bw,
// osu_bibw, osu_mbw_mr) and flags: -m [MIN:]MAX, -i ITER, -x WARMUP, -W WINDOW, -d cuda with
// OSU's buffer placement (`D D`), -R and -p for osu_mbw_mr, -f (min/max columns; OSU's
// collectives have it, its point-to-point tests do not), -h. Defaults are OSU 7.4's.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace commscope::bench {

enum class OsuTest { latency, bw, bibw, mbw_mr };

// "osu_latency", ...
std::string_view to_string(OsuTest t);
// The test for an OSU binary name (osu_latency, or a path ending in it), nullopt for any other.
std::optional<OsuTest> osu_test_named(std::string_view name);

// OSU's iteration counts: sizes above 8 KiB take the large counts.
inline constexpr std::size_t kOsuLargeMessage = 8192;

struct OsuOptions {
  OsuTest test = OsuTest::latency;
  std::size_t min_bytes = 0;                     // -m MIN: (latency starts at 0 B, the others at 1 B)
  std::size_t max_bytes = std::size_t{4} << 20;  // -m MAX
  std::optional<int> iters;                      // -i: every size; nullopt: OSU's small/large counts
  std::optional<int> skip;                       // -x: untimed iterations first
  int window = 64;                               // -W: messages in flight per iteration (bw, bibw, mbw_mr)
  bool full = false;                             // -f: min and max per iteration, and the count
  bool print_rate = true;                        // -R 0|1: osu_mbw_mr's Messages/s column
  int pairs = 0;                                 // -p: osu_mbw_mr's sender/receiver pairs (0: ranks/2)
  bool device = false;                           // -d cuda
  char src = 'H', dst = 'H';                     // rank 0's and rank 1's buffers (`-d cuda D D`: both on the device)
  double timeout_s = 300;                        // -T: how long one size may take before the run ends

  // OSU's counts for one size: timed and untimed iterations.
  int iterations(std::size_t bytes) const;
  int warmup(std::size_t bytes) const;
  // The sizes, OSU's way: from MIN doubling to MAX (0 is followed by 1).
  std::vector<std::size_t> sizes() const;
};

struct OsuParse {
  OsuOptions options;
  int exit_code = -1;   // >= 0: stop with this status (-h: 0, bad usage: 2)
  std::string message;  // the help text or the one-line error
};

// Parse an OSU command line; argv[0] names the test. Never throws for bad input.
OsuParse parse_osu_options(OsuTest test, int argc, const char* const* argv);

}  // namespace commscope::bench
