// A size in bytes as the tools take it on their command lines: "8", "64K", "1.5M", "2G" (powers
// of 1024, as nccl-tests reads -b and -e).
#pragma once

#include <cstddef>
#include <string>

namespace commscope {

// Throws std::invalid_argument: "bad size 'x' (use a number of bytes with an optional K, M or G)",
// or "... (out of range)" below 0 or above 1e15.
std::size_t parse_size(const std::string& s);

}  // namespace commscope
