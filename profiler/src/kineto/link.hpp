// Stage 2 of the Kineto import, on one rank: operators nested by time on their thread, runtime
// calls put inside them, device activities linked to an operator by correlation id (else
// External id), collective calls turned into host communication events that share their id with
// the NCCL kernels they launched; then the windows (iterations) and each event's step.
#pragma once

#include "commscope/formats/events.hpp"
#include "commscope/profiler/kineto_import.hpp"
#include "rank_trace.hpp"

namespace commscope::profiler::kineto {

// Whether the rank's times are on a wall clock: baseTimeNanoseconds + ts, or ts that are Unix
// times (after 2001-09-09).
bool has_wall_clock(const RankTrace& r);

// Parents, links and communication events, in place; counts unlinked device activities and
// collective calls without a kernel in r.report.
void link_rank(RankTrace& r, StringTable& strings);

// The windows (one per ProfilerStep#N, or one over the trace: --window trace, or a rank without
// steps) and each event's iteration: the window its start falls in, -1 outside every window.
void make_windows(RankTrace& r, KinetoWindow window, StringTable& strings);

}  // namespace commscope::profiler::kineto
