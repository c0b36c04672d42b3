#include "compat/nccl_tests_flags.hpp"

#include <CLI/CLI.hpp>

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
  add("-M,--memory", f.memory,
      "1: memory use in the footer (GPU: NCCL's, ours, the collectives'; host: ours, peak RSS)");
  add("-G,--cudagraph", f.cudagraph,
      "cuda: capture the timed iterations of NCCL's collectives in a CUDA graph and replay it this many times");
  add("-R,--local_register", f.local_register,
      "cuda: 1 register the buffers with ncclCommRegister, 2 as symmetric windows (ncclCommWindowRegister)");
  add("-y,--stream_null", f.stream_null, "cuda: 1 run on the legacy default stream");
  add("-x,--cta_policy", f.cta_policy, "cuda: NCCL's CTA policy 0, 1 or 2 (-1: NCCL's default)");
  add("-t,--nthreads", f.nthreads, "threads per rank: 1 (start more ranks instead)");
  add("-g,--ngpus", f.ngpus, "GPUs per rank: 1 (start one rank per GPU)");
  add("-p,--parallel_init", f.parallel_init, "0 or 1; one thread per rank initialises alone either way");
  add("-D,--device_implementation", f.device_implementation,
      "0: NCCL's collectives (nccl-tests' device kernels: none)");
  add("-V,--device_cta_count", f.device_cta_count, "1 to 128; applies to -D > 0 only, so it changes nothing");
}

namespace {

// -G -R -y -x: only --device cuda with NCCL (not --transport staged) has what they change.
void need_nccl(const char* flag, const Options& o, const char* what) {
  if (o.device != "cuda") throw InvalidArgument(std::string(flag) + " applies to --device cuda (" + what + ")");
  if (o.transport == "staged")
    throw InvalidArgument(std::string(flag) + " needs NCCL, which --transport staged does not start");
}

// nccl-tests runs several threads and GPUs per process; commscope-bench one of each per rank.
void one_per_rank(const NcclTestsFlags& f) {
  if (f.nthreads != 1)
    throw InvalidArgument("-t/--nthreads " + std::to_string(f.nthreads) +
                          ": commscope-bench runs one thread per rank; start " + std::to_string(f.nthreads) +
                          " times as many ranks instead");
  if (f.ngpus != 1)
    throw InvalidArgument("-g/--ngpus " + std::to_string(f.ngpus) +
                          ": commscope-bench drives one GPU per rank; start one rank per GPU instead");
  in_range("-p/--parallel_init", f.parallel_init, 0, 1);
  if (f.device_implementation != 0)
    throw InvalidArgument("-D/--device_implementation " + std::to_string(f.device_implementation) +
                          ": nccl-tests' device-API kernels are not part of commscope-bench (0 only)");
  in_range("-V/--device_cta_count", f.device_cta_count, 1, 128);
}

void apply_cuda_flags(const NcclTestsFlags& f, Options& o) {
  o.cuda_graphs = static_cast<int>(in_range("-G/--cudagraph", f.cudagraph, 0, kIntMax));
  o.local_register = static_cast<int>(in_range("-R/--local_register", f.local_register, 0, 2));
  o.stream_null = on_off("-y/--stream_null", f.stream_null);
  o.cta_policy = static_cast<int>(in_range("-x/--cta_policy", f.cta_policy, -1, 2));
  if (o.local_register) need_nccl("-R/--local_register", o, "it registers device buffers with NCCL");
  if (o.stream_null) need_nccl("-y/--stream_null", o, "the stream NCCL's calls run on");
  if (o.cta_policy >= 0) need_nccl("-x/--cta_policy", o, "NCCL's CTA policy");
  if (o.cuda_graphs == 0) return;
  need_nccl("-G/--cudagraph", o, "it replays NCCL's calls as a CUDA graph");
  for (const std::string& a : o.algos)
    if (a != "nccl")
      throw InvalidArgument("-G/--cudagraph times NCCL's own collectives only: " + a +
                            " waits on the host between steps, which a CUDA graph cannot hold (use --algo nccl)");
  if (o.algos.empty()) o.algos = {"nccl"};
  if (o.blocking != 0) throw InvalidArgument("-G/--cudagraph replays the calls back to back (-z 0 only)");
  if (o.per_iter_timing) throw InvalidArgument("-I/--per_iter_timing cannot time iterations inside a CUDA graph (-G)");
  if (o.stream_null) throw InvalidArgument("-G/--cudagraph cannot capture the legacy default stream (-y 1)");
}

}  // namespace

void apply_nccl_tests_flags(const NcclTestsFlags& f, Options& o) {
  o.blocking = static_cast<int>(in_range("-z/--blocking", f.blocking, 0, 3));
  o.agg_iters = static_cast<int>(in_range("-m/--agg_iters", f.agg_iters, 1, 1 << 20));
  o.run_cycles = static_cast<int>(in_range("-N/--run_cycles", f.run_cycles, 0, kIntMax));
  o.report_cputime = on_off("-C/--report_cputime", f.report_cputime);
  o.report_timestamps = on_off("-S/--report_timestamps", f.report_timestamps);
  o.per_iter_timing = on_off("-I/--per_iter_timing", f.per_iter_timing);
  o.per_iter_skip = static_cast<int>(in_range("-K/--per_iter_skip", f.per_iter_skip, 0, kIntMax));
  o.json_out = f.output_file;
  o.memory_report = on_off("-M/--memory", f.memory);
  one_per_rank(f);
  apply_cuda_flags(f, o);
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
