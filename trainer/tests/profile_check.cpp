// profile_check FILE ITERATIONS RANKS: the trainer's profile holds ITERATIONS x RANKS breakdown
// rows, each summing exactly to its step time, with kernels and communication in every step.
#include <cstdio>
#include <cstdlib>
#include <set>

#include "commscope/formats/profile_file.hpp"

int main(int argc, char** argv) {
  if (argc != 4) {
    std::fprintf(stderr, "usage: profile_check FILE ITERATIONS RANKS\n");
    return 2;
  }
  const int iterations = std::atoi(argv[2]), ranks = std::atoi(argv[3]);
  try {
    const auto p = commscope::profiler::read_profile(argv[1]);
    int failures = 0;
    std::set<std::pair<int, int>> seen;
    for (const auto& r : p.breakdown) {
      seen.insert({r.rank, r.iteration});
      const long long sum = r.kernel_ns + r.intra_ns + r.inter_ns + r.comm_ns;
      const bool ok = r.identity_ok == 1 && sum == r.window_ns && r.kernel_ns > 0 && r.comm_ns > 0;
      std::printf("rank %d step %d: %.3f ms = kernel %.3f + intra %.3f + inter %.3f + comm %.3f (wait %.3f) %s\n",
                  r.rank, r.iteration, r.window_ns / 1e6, r.kernel_ns / 1e6, r.intra_ns / 1e6, r.inter_ns / 1e6,
                  r.comm_ns / 1e6, r.comm_wait_ns / 1e6, ok ? "ok" : "FAIL");
      failures += ok ? 0 : 1;
    }
    if (p.meta.nranks != ranks || seen.size() != static_cast<std::size_t>(iterations * ranks) ||
        p.breakdown.size() != seen.size()) {
      std::printf("FAIL: %zu rows over %zu (rank, step) pairs and %d ranks; expected %d x %d\n", p.breakdown.size(),
                  seen.size(), p.meta.nranks, iterations, ranks);
      ++failures;
    }
    std::printf("%zu operators totals, %s\n", p.operators.size(), failures ? "FAIL" : "PASS");
    return failures ? 1 : 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "profile_check: %s\n", e.what());
    return 1;
  }
}
