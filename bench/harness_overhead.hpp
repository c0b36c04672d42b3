// `commscope-microbench harness`: the time commscope's harness adds to one MPI collective
// call (see harness_overhead.cpp).
#pragma once

namespace commscope::bench {

// argv[0] is "harness"; returns the process exit status (2 for bad usage).
int harness_main(int argc, char** argv);

}  // namespace commscope::bench
