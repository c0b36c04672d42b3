// nccl-tests' flags beyond sizes, iterations, types and ops (which options.cpp parses with
// ours): how the timed calls run (-z -m -N), what is reported (-C -S -I -K -J). Spelled as
// nccl-tests spells them, short and long; every value is checked and a bad one is a one-line
// InvalidArgument naming the flag.
#pragma once

#include <CLI/CLI.hpp>

#include "commscope/bench/options.hpp"

namespace commscope::bench {

// The raw values, as typed (nccl-tests parses them as integers).
struct NcclTestsFlags {
  long long blocking = 0, agg_iters = 1, run_cycles = 1;
  long long report_cputime = 0, report_timestamps = 0, per_iter_timing = 0, per_iter_skip = 0;
  std::string output_file;
};

void add_nccl_tests_flags(CLI::App& app, NcclTestsFlags& f);

// Check the values against each other and the rest of `o` (parsed before), then store them in o.
void apply_nccl_tests_flags(const NcclTestsFlags& f, Options& o);

}  // namespace commscope::bench
