// Whether a tool can write its output file at a path, asked before anything is measured or
// read, so that a bad path is one line at the start instead of a failure after the run.
#pragma once

#include <string>

namespace commscope {

// "" when `path` names a file that can be created: not an existing folder, in an existing folder
// that we may write. Otherwise the reason in one line for the caller to prefix with the path and
// the option: "it is a directory", "folder 'x' does not exist".
// An existing file is no problem (each tool decides whether to replace it or move aside).
std::string output_path_problem(const std::string& path);

}  // namespace commscope
