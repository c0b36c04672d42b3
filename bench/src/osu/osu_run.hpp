// commscope-bench run as one of OSU's tests: installed as osu_latency, osu_bw, osu_bibw,
// osu_mbw_mr, osu_allreduce, ... (links to commscope-bench) or named first (`commscope-bench
// osu_bw -m 1:4M`). MPI is up; every rank calls.
#pragma once

namespace commscope::bench {

// Whether the command line names an OSU test (as the binary or the first argument), ours or
// one refused by name (osu_barrier, osu_iallreduce, ...).
bool osu_called(int argc, const char* const* argv);

// Parse, measure and print OSU's output on rank 0. Returns the exit status: 0, 1 after a size
// with wrong elements (-c), 2 for bad usage (one line on rank 0, every rank alike, before
// anything is measured). A failure mid-run throws.
int osu_main(int argc, const char* const* argv);

}  // namespace commscope::bench
