#pragma once
// Number formatting shared by the report: tables, plots and crossover texts.

#include <string>

namespace commscope::analysis {

// Number formatting shared by the subcommands: fixed significant digits, sizes with binary
// suffixes ("32 KiB", "1 MiB", "8 B").
std::string format_number(double value, int significant = 4);
std::string format_bytes(double bytes);

}  // namespace commscope::analysis
