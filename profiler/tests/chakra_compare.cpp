// test_chakra_compare ORIGINAL.h5 IMPORTED.h5: whether a profile exported to Chakra traces and
// imported again holds the same communication per rank (name, bytes, communicator, instance
// number, iteration, in order; chakra_sequence.hpp). Prints the count, or the first difference and
// exits 1; 2 on a file it cannot read.
#include <cstdio>
#include <exception>

#include "chakra_sequence.hpp"
#include "commscope/formats/profile_file.hpp"

namespace cp = commscope::profiler;

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: test_chakra_compare ORIGINAL.h5 IMPORTED.h5\n");
    return 2;
  }
  try {
    const auto a = cp::testing::communication_sequence(cp::read_profile(argv[1]));
    const auto b = cp::testing::communication_sequence(cp::read_profile(argv[2]));
    if (a.size() != b.size()) {
      std::printf("different: %zu ranks against %zu\n", a.size(), b.size());
      return 1;
    }
    std::size_t steps = 0;
    for (std::size_t r = 0; r < a.size(); ++r) {
      for (std::size_t i = 0; i < std::max(a[r].size(), b[r].size()); ++i) {
        if (i < a[r].size() && i < b[r].size() && a[r][i] == b[r][i]) continue;
        std::printf("different: rank %zu step %zu: %s against %s\n", r, i,
                    i < a[r].size() ? cp::testing::describe(a[r][i]).c_str() : "nothing",
                    i < b[r].size() ? cp::testing::describe(b[r][i]).c_str() : "nothing");
        return 1;
      }
      steps += a[r].size();
    }
    std::printf("same communication: %zu steps over %zu ranks\n", steps, a.size());
    return steps > 0 ? 0 : 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "test_chakra_compare: %s\n", e.what());
    return 2;
  }
}
