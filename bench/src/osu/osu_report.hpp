// OSU 7.4's output, so that scripts written for OSU read ours: a blank line, "# OSU MPI
// Latency Test v7.4" (osu_mbw_mr: its title and "# [ pairs: 1 ] [ window size: 64 ]", no blank
// line; osu_allreduce: "# OSU MPI Allreduce Latency Test v7.4"), then per datatype (-T) "#
// Datatype: MPI_CHAR." and the column titles, then one line per size: the size left-aligned in
// 10 characters, each value right-aligned in 18 with 2 decimals. Our own '#' line after the
// title says what ran; -f adds min, max and the iteration count, -c a Validation column (Pass
// or Fail), last.
#pragma once

#include <cstdio>

#include "osu/osu_options.hpp"
#include "osu/osu_pt2pt.hpp"

namespace commscope::bench {

void print_osu_header(std::FILE* out, const OsuOptions& o, int nranks, int pairs);
// "# Datatype: MPI_INT." and the column titles.
void print_osu_columns(std::FILE* out, const OsuOptions& o, OsuType type);
void print_osu_line(std::FILE* out, const OsuOptions& o, const OsuLine& line);

}  // namespace commscope::bench
