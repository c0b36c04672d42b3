// commscope-bench run as one of OSU's point-to-point tests: installed as osu_latency, osu_bw,
// osu_bibw, osu_mbw_mr (links to commscope-bench) or named first (`commscope-bench osu_bw -m
// 1:4M`). MPI is up; every rank calls.
#pragma once

namespace commscope::bench {

// Whether the command line names an OSU test (as the binary or the first argument).
bool osu_called(int argc, const char* const* argv);

// Parse, measure and print OSU's output on rank 0. Returns the exit status: 0, 2 for bad usage
// (one line on rank 0, every rank alike, before anything is measured). A failure mid-run throws.
int osu_main(int argc, const char* const* argv);

}  // namespace commscope::bench
