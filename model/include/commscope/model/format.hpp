#pragma once
// Number formatting shared by the report: tables, plots and crossover texts.

#include <string>

namespace commscope::analysis {

// Number formatting shared by the subcommands: fixed significant digits, sizes with binary
// suffixes ("32 KiB", "1 MiB", "8 B").
std::string format_number(double value, int significant = 4);
std::string format_bytes(double bytes);
// A range of sizes in words: "at 8 MiB" (one size), "from 8 MiB" (up to `largest`), "8 B to 4 KiB".
std::string format_size_range(double from, double to, double largest);

}  // namespace commscope::analysis
