// test_analysis_read_any KIND FILE: reads FILE the way commscope-report does (preflight, then
// the reader). KIND: bench, profile, or auto (bench, else profile when the file says it is one).
// Prints "ok" and exits 0, or prints the InputError's line and exits 2; any other exception
// exits 1. The fuzz test (fuzz_inputs.sh) runs it on damaged files.

#include <cstdio>
#include <exception>
#include <string>
#include <string_view>

#include "commscope/analysis/inputs.hpp"

namespace {

void read_as(const std::string& path, const std::string& kind) {
  commscope::analysis::preflight(path, kind);
  if (kind == "bench") {
    (void)commscope::analysis::read_bench_file(path);
  } else {
    (void)commscope::analysis::read_profile_file(path, true);
  }
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: %s bench|profile|auto FILE\n", argv[0]);
    return 1;
  }
  const std::string kind = argv[1];
  const std::string path = argv[2];
  try {
    if (kind == "auto") {
      try {
        read_as(path, "bench");
      } catch (const commscope::analysis::InputError& e) {
        if (std::string_view(e.what()).find("is a commscope profile") == std::string_view::npos) throw;
        read_as(path, "profile");
      }
    } else {
      read_as(path, kind);
    }
    std::printf("ok\n");
    return 0;
  } catch (const commscope::analysis::InputError& e) {
    std::printf("%s\n", e.what());
    return 2;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "unexpected exception: %s\n", e.what());
    return 1;
  }
}
