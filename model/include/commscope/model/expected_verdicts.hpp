#pragma once
// "Is my number good?": each bench row set against the time its algorithm needs on the run's
// machine model (commscope/model/expected_time.hpp), and a verdict per collective, algorithm and
// size range in words. The rule over tables of values; no I/O (report_bench prints it).
// Thresholds and formulas: docs/verdicts.md.

#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "commscope/model/expected_time.hpp"
#include "commscope/model/machine_model.hpp"

namespace commscope::analysis {

// of_expected = expected time / measured time (= measured busbw / expected busbw):
inline constexpr double kGoodOfExpected = 0.7;         // from here on: good
inline constexpr double kFarBelowOfExpected = 0.4;     // below this: far below (between: below)
inline constexpr double kAboveModelOfExpected = 1.05;  // above this: faster than the model allows

enum class VerdictClass { good, below, far_below, above_model, not_decided };
// "good", "below", "far below", "above the model (...)", "not decided"
std::string_view verdict_class_name(VerdictClass v);
VerdictClass classify_of_expected(double of_expected);  // by the thresholds alone
// of_expected x `scale` at `significant` digits, or at more (up to 6) where fewer would round it
// onto the other side of a threshold: 0.696 is "0.696" (below), not "0.7" (which reads good).
std::string format_of_expected(double of_expected, double scale = 1, int significant = 2);

// What a verdict allows for beside the row's own figure (docs/verdicts.md, "Stable inputs" and "A
// busy machine"): the figure that priced the row moved `spread` over its probe's repeats and `moved`
// between the run's start and end, where it was measured again there (the model keeps the best, so
// the run may have met the machine at a slower moment), and the nodes were busy
// (`contention`: the busiest node's (ranks + other processes' CPUs) / CPUs, 1 where none was busy),
// which slows the run and, where the figure was probed during the run, the figure too.
struct Allowance {
  double spread = 0;            // 0 to below 1
  double moved = 0;             // 0 to below 1
  double contention = 1;        // 1, or kBusyContention and more
  bool figure_probed = false;   // measured by the run's own start-up probes (not given, not the system's)
  bool oversubscribed = false;  // a node ran more ranks than it has CPUs: no margin holds
  // On a busy machine, the part of the expected time that is the probed latency (which a ping-pong
  // waiting for a CPU inflates by a time slice): the expectation may be that much too long.
  double latency_share = 0;
  // The part of the expected time that calls timed back to back may hide (Expectation::hidden_us):
  // the call may beat the model by that much without a figure of it being too low.
  double hidden_share = 0;
  std::string figure;  // "the copy rate of vm", "the latency per message"
  std::string busy;    // "vm: 2 ranks and other processes' 1.3 CPUs on 2 CPUs"; "" not busy
};
// The row's allowance on `model`: the spread of the figure that limits it (the latency where it
// is latency-bound), the busiest node's contention and whether a node is oversubscribed.
Allowance allowance_of(const MachineModel& model, const Expectation& e);
// The range a quiet machine's of_expected could lie in: [of x (1 - latency_share) / contention (a
// probed figure only), of x contention / ((1 - spread) x (1 - moved))]; lo 0 (a probed figure) and
// hi infinite where a node is oversubscribed.
struct OfBand {
  double lo = 0, hi = 0;
};
OfBand band_of(double of_expected, const Allowance& a);
// The verdict that holds over the whole band: above the model where even its low end is over
// kAboveModelOfExpected against the expectation less its hidden share, good where its low end is
// kGoodOfExpected or more, below or far below
// where its high end is under the threshold above, else not decided.
VerdictClass decide(double of_expected, const Allowance& a);

// One measured row of one collective and algorithm.
struct MeasuredRow {
  double bytes = 0;
  double time_us = 0;
  double busbw_GBps = 0;
};

// A row with its expectation; of_expected where the expectation has a time.
struct JudgedRow {
  MeasuredRow measured;
  Expectation expected;
  std::optional<double> of_expected;
};

// The rows of `algorithm` running `c` on `node_of_rank`, each with its expectation.
std::vector<JudgedRow> judge_rows(const MachineModel& model, std::span<const int> node_of_rank, Collective c,
                                  std::string_view algorithm, std::span<const MeasuredRow> rows,
                                  const ExpectationOptions& options = {});

// The verdict lines of one collective and algorithm, one per range of consecutive sizes with the
// same regime (latency-bound or not), limiting link and verdict (`decide`), so that no range's
// figure contradicts its verdict: its figures at its largest size, the median and spread of its
// sizes' of_expected in brackets: "allreduce ring from 8 MiB: busbw 0.11 GB/s =
// 89% of the 0.124 GB/s that host1's link (0.125 GB/s, system: eth0 1000 Mb/s) allows [3 sizes:
// median 88%, 85% to 89%]: good"; latency-bound: "allreduce ring at 8 B: latency-bound, 320 us =
// 94% of the speed of the expected 300 us (latency 300 us): good"; below or far below on a link
// between nodes, the doctor's figures: "...: far below; host2's link measured 0.012 GB/s (doctor),
// the others 0.116"; rows the model cannot price: "allreduce ring: not judged, the model lacks
// host2's link rate (...)".
std::vector<std::string> verdict_lines(std::string_view collective, std::string_view algorithm,
                                       std::span<const JudgedRow> rows, const MachineModel& model);

// Where the expectations' alpha comes from when the model has none (no doctor file): the run's
// own smallest time per message, min over rows at the smallest size of (time - what the model's
// rates price of it, without a latency) / the algorithm's message count (mpi, nccl: the fewest of
// the textbook algorithms'), leaving out rooted collectives whose calls overlapped
// (options.calls_overlap: a call may hide its latency behind the next). nullopt for no such row.
struct RowOfRun {
  Collective collective = Collective::allreduce;
  std::string algorithm;
  int nranks = 0;
  MeasuredRow measured;
};
struct RunLatency {
  double latency_us = 0;
  std::string from;  // "allreduce rhd at 8 B"
};
// The largest array whose time is taken for a message's latency (bytes).
inline constexpr double kLatencySizeBytes = 1024;
std::optional<RunLatency> latency_of_run(std::span<const RowOfRun> rows, const MachineModel& model,
                                         const ExpectationOptions& options = {});
// The report's and the bench's alpha where the model has none: latency_of_run(rows) set into
// `model` (source measured) and returned; nullopt, the model untouched, where the model has a
// latency of its own or the rows give none.
std::optional<RunLatency> fill_latency_from_run(MachineModel& model, std::span<const RowOfRun> rows,
                                                const ExpectationOptions& options = {});

}  // namespace commscope::analysis
