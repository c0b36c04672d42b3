// The tools with subcommands (commscope-report, commscope-import): a first word that names none
// of them, said in one line with the valid ones. Header only, over CLI11, which the including tool
// links; common itself depends on nothing.
#pragma once

#include <CLI/CLI.hpp>

#include <string>

namespace commscope {

// "" unless the first argument is a word that is not one of app's subcommands; then the one line
// that names it and the valid ones (CLI11 alone says "A subcommand is required").
inline std::string unknown_subcommand(CLI::App& app, int argc, char** argv) {
  if (argc < 2 || argv[1][0] == '-') return "";
  std::string names;
  for (CLI::App* sub : app.get_subcommands([](CLI::App*) { return true; })) {
    if (sub->check_name(argv[1])) return "";
    names += (names.empty() ? "" : ", ") + sub->get_name();
  }
  return "unknown subcommand '" + std::string(argv[1]) + "' (one of: " + names + "; see --help)";
}

}  // namespace commscope
