#pragma once
// One parse of a CLI11 command line for the bench's tools (commscope-bench and OSU's names): help
// and usage errors become the result's exit code and one message instead of exceptions.
#include <CLI/CLI.hpp>

#include <string>

namespace commscope::bench {

// Parses argv into app. False when the caller must stop with result.exit_code and
// result.message: --help (0, the help text) or bad usage (2, "PROGRAM: what (see HELP_FLAG)").
template <class Result>
bool parse_command_line(CLI::App& app, int argc, const char* const* argv, const std::string& program,
                        const std::string& help_flag, Result& result) {
  try {
    app.parse(argc, argv);
    return true;
  } catch (const CLI::CallForHelp&) {
    result.exit_code = 0;
    result.message = app.help();
  } catch (const CLI::ParseError& e) {
    result.exit_code = 2;
    result.message = program + ": " + e.what() + " (see " + help_flag + ")";
  }
  return false;
}

}  // namespace commscope::bench
