// commscope-trace: a profile file (docs/profile-format.md) -> Chrome trace JSON, for
// chrome://tracing and ui.perfetto.dev.
//
//   commscope-trace PROFILE.h5 -o trace.json     (-o - writes to stdout)
//
// Exit status 0 on success; on any error one line "commscope-trace: <reason>" on stderr and 2.
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <exception>
#include <fstream>
#include <iostream>
#include <stdexcept>
#include <string>

#include <CLI/CLI.hpp>

#include "commscope/common/output_path.hpp"
#include "commscope/formats/profile_file.hpp"
#include "commscope/h5/h5.hpp"
#include "commscope/profiler/chrome_trace.hpp"

namespace {

constexpr const char* kTool = "commscope-trace";

int fail(const std::string& reason) {
  std::cerr << kTool << ": " << commscope::h5::one_line(reason) << '\n';
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{
      "Convert a commscope profile (HDF5, schema commscope.profile/1) to a Chrome trace (JSON) for "
      "chrome://tracing or ui.perfetto.dev: one process per rank, one track per host thread and per device "
      "stream, communication and iterations on tracks of their own, times on rank 0's clock in us.",
      kTool};
  std::string input;
  std::string output;
  app.add_option("profile", input, "profile file written by the profiler (its per-rank events files are read too)")
      ->required();
  app.add_option("-o,--output", output, "trace file to write (JSON); - writes to stdout")->required();
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == static_cast<int>(CLI::ExitCodes::Success)) return app.exit(e);  // --help
    return fail(std::string(e.what()) + " (see --help)");
  }

  // A bad output path is said before the profile is read, not after the trace is made.
  if (output != "-") {
    if (const std::string problem = commscope::output_path_problem(output); !problem.empty())
      return fail("cannot write -o '" + output + "': " + problem);
  }
  try {
    // Read it once in a child first: a damaged file can crash HDF5 or send it into an endless loop.
    if (const std::string problem = commscope::h5::read_in_child(input, [&] {
          (void)commscope::profiler::read_profile(input, true);
        });
        !problem.empty()) {
      return fail(problem.starts_with(input + ": ") ? problem : input + ": " + problem);
    }
    const commscope::profiler::Profile profile = commscope::profiler::read_profile(input, true);
    const std::size_t slices = commscope::profiler::write_chrome_trace_file(profile, output);
    std::cerr << kTool << ": wrote " << slices << " slices (" << profile.meta.nranks << " ranks) to "
              << (output == "-" ? std::string("stdout") : output) << '\n';
    return 0;
  } catch (const std::exception& e) {
    return fail(e.what());
  }
}
