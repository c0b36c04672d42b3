// The formats tests' files: NAME in a folder of this process's own under the temporary directory,
// removed when the tests end.
#pragma once

#include <string>

#include "commscope/common/temp_folder.hpp"

inline std::string temp_path(const std::string& name) {
  return commscope::temp_file("commscope-formats", name);
}
