// nccl-tests' flags beyond sizes, iterations, types and ops (which options.cpp parses with
// ours): how the timed calls run (-z -m -N), what is reported (-C -S -I -K -J -M), the CUDA
// settings (-G -R -y -x), and those that exist for nccl-tests' threads and device kernels
// (-t -g -p -D -V: the values that mean what commscope-bench does are accepted). Spelled as
// nccl-tests spells them, short and long; every value is checked and a bad one, or one that
// cannot apply to the device, is a one-line InvalidArgument naming the flag and why.
#pragma once

#include "commscope/bench/options.hpp"

// CLI11's App, declared only: CLI11 is the heaviest header of the build (7-16 s a translation
// unit), read by the files that parse, not by every one that names a flag's result.
namespace CLI {
class App;
}  // namespace CLI

namespace commscope::bench {

// The raw values, as typed (nccl-tests parses them as integers).
struct NcclTestsFlags {
  long long blocking = 0, agg_iters = 1, run_cycles = 1;
  long long report_cputime = 0, report_timestamps = 0, per_iter_timing = 0, per_iter_skip = 0;
  std::string output_file;
  long long memory = 0, cudagraph = 0, local_register = 0, stream_null = 0, cta_policy = -1;
  long long nthreads = 1, ngpus = 1, parallel_init = 0, device_implementation = 0, device_cta_count = 16;
};

void add_nccl_tests_flags(CLI::App& app, NcclTestsFlags& f);

// Check the values against each other and the rest of `o` (parsed before), then store them in o.
void apply_nccl_tests_flags(const NcclTestsFlags& f, Options& o);

}  // namespace commscope::bench
