// The bench's command line parsed as main() parses it, for the tests of options and cases.
#pragma once

#include <string>
#include <vector>

#include "commscope/bench/options.hpp"

namespace commscope::bench::test {

// parse({"allreduce", "-b", "8"}): argv without the program name.
inline ParseResult parse(std::vector<std::string> args) {
  args.insert(args.begin(), "commscope-bench");
  std::vector<const char*> argv;
  for (const auto& a : args) argv.push_back(a.c_str());
  return parse_options(static_cast<int>(argv.size()), argv.data());
}

}  // namespace commscope::bench::test
