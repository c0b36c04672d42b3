#include "nccl_tests_flags.hpp"

#include <limits>
#include <string>

#include "commscope/collectives/error.hpp"

namespace commscope::bench {
namespace {

constexpr long long kIntMax = std::numeric_limits<int>::max();  // "no upper bound" for an int option

// "bad -z/--blocking 7 (0 to 3)": one message shape for every integer flag.
long long in_range(const char* flag, long long v, long long lo, long long hi) {
  if (v >= lo && v <= hi) return v;
  std::string range = hi == lo + 1 ? std::to_string(lo) + " or " + std::to_string(hi)
                                   : std::to_string(lo) + " to " + std::to_string(hi);
  if (hi == kIntMax) range = ">= " + std::to_string(lo);
  throw InvalidArgument(std::string("bad ") + flag + " " + std::to_string(v) + " (" + range + ")");
}

bool on_off(const char* flag, long long v) {
  return in_range(flag, v, 0, 1) == 1;
}

}  // namespace

void add_nccl_tests_flags(CLI::App& app, NcclTestsFlags& f) {
  const std::string group = "nccl-tests' flags";
  auto add = [&](const char* names, long long& v, const char* help) {
    app.add_option(names, v, help)->capture_default_str()->group(group);
  };
  add("-z,--blocking", f.blocking,
      "0: calls back to back; 1: wait and barrier after each call; 2: wait after each call; "
      "3: wait and barrier after each iteration, the barrier not timed");
  add("-m,--agg_iters", f.agg_iters, "calls per timed iteration (one NCCL group on cuda)");
  add("-N,--run_cycles", f.run_cycles, "run every case this many times, printing each cycle (0: until interrupted)");
  add("-C,--report_cputime", f.report_cputime, "1: report the host's time to issue the calls (cputime)");
  add("-S,--report_timestamps", f.report_timestamps, "1: end each line with the time it was printed");
  add("-I,--per_iter_timing", f.per_iter_timing, "1: per-iteration i_min i_max i_p99 i_cv% columns");
  add("-K,--per_iter_skip", f.per_iter_skip, "leave this many first iterations out of the per-iteration summaries");
  app.add_option("-J,--output_file", f.output_file,
                 "JSON results file in nccl-tests' layout (an existing name gets .0, .1, ... as nccl-tests does)")
      ->group(group);
}

void apply_nccl_tests_flags(const NcclTestsFlags& f, Options& o) {
  o.blocking = static_cast<int>(in_range("-z/--blocking", f.blocking, 0, 3));
  o.agg_iters = static_cast<int>(in_range("-m/--agg_iters", f.agg_iters, 1, 1 << 20));
  o.run_cycles = static_cast<int>(in_range("-N/--run_cycles", f.run_cycles, 0, kIntMax));
  o.report_cputime = on_off("-C/--report_cputime", f.report_cputime);
  o.report_timestamps = on_off("-S/--report_timestamps", f.report_timestamps);
  o.per_iter_timing = on_off("-I/--per_iter_timing", f.per_iter_timing);
  o.per_iter_skip = static_cast<int>(in_range("-K/--per_iter_skip", f.per_iter_skip, 0, kIntMax));
  o.json_out = f.output_file;
  if (!o.json_out.empty() && o.json_out.back() == '/')
    throw InvalidArgument("-J/--output_file names a directory: '" + o.json_out + "'");
  if (o.per_iter_skip > 0) {
    // nccl-tests drops a -K it cannot honour with a warning; a command line asking for it is
    // told why instead.
    if (!o.per_iter_timing) throw InvalidArgument("-K/--per_iter_skip applies with -I/--per_iter_timing 1");
    if (o.iters == 0) throw InvalidArgument("-K/--per_iter_skip needs a fixed -n/--iters (not 0)");
    if (o.per_iter_skip >= o.iters)
      throw InvalidArgument("-K/--per_iter_skip " + std::to_string(o.per_iter_skip) + " must be below -n/--iters " +
                            std::to_string(o.iters));
  }
}

}  // namespace commscope::bench
