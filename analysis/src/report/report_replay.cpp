// commscope-report replay: a profile against its replay (commscope-replay): per iteration and
// per collective, recorded against replayed communication, counts and bytes, the projected
// iteration time, and where they differ most (docs/replay.md).

#include <algorithm>
#include <cmath>
#include <string>

#include "commscope/analysis/inputs.hpp"
#include "commscope/analysis/outliers.hpp"
#include "commscope/model/format.hpp"
#include "commscope/profiler/placement.hpp"
#include "replay_compare.hpp"
#include "report_writer.hpp"

namespace commscope::analysis {
namespace {

std::string fms(double ns) {
  return format_number(ns / 1e6);
}
std::string ratio(double replayed, double recorded) {
  return recorded > 0 ? format_number(replayed / recorded, 3) : "-";
}
std::string same(std::int64_t calls_a, std::int64_t calls_b, std::int64_t bytes_a, std::int64_t bytes_b) {
  return calls_a == calls_b && bytes_a == bytes_b ? "identical" : "DIFFERS";
}

void iterations_table(ReportWriter& w, const ReplayComparison& c) {
  w.section("Per iteration (mean over ranks)");
  w.text(
      "comm: the union of a rank's communication in the step. projected: the recorded step with its communication "
      "replaced by the replay's (recorded compute + replayed communication; compute that overlapped "
      "communication stays hidden up to the replayed time). calls and bytes: over the compared ranks. wait and "
      "transfer: comm split at the arrival of the last rank at each collective (wait + transfer = comm).");
  Table t({"step", "recorded_comm_ms", "replayed_comm_ms", "replayed/recorded", "recorded_step_ms", "projected_step_ms",
           "calls_recorded", "calls_replayed", "calls_and_bytes", "recorded_wait_ms", "replayed_wait_ms",
           "recorded_transfer_ms", "replayed_transfer_ms"});
  for (const ReplayIterationRow& r : c.by_iteration)
    t.add({std::to_string(r.iteration), fms(r.recorded_comm_ns), fms(r.replayed_comm_ns),
           ratio(r.replayed_comm_ns, r.recorded_comm_ns), fms(r.recorded_step_ns), fms(r.projected_step_ns),
           std::to_string(r.recorded_calls), std::to_string(r.replayed_calls),
           same(r.recorded_calls, r.replayed_calls, r.recorded_bytes, r.replayed_bytes), fms(r.recorded_wait_ns),
           fms(r.replayed_wait_ns), fms(r.recorded_transfer_ns), fms(r.replayed_transfer_ns)});
  w.table("replay_iterations", t);
}

void collectives_table(ReportWriter& w, const ReplayComparison& c) {
  w.section("Per communicator and call (summed over ranks and steps; times per rank and step)");
  w.text(std::string("Calls and bytes counted from each file's own events, per communicator") +
         (c.outside_iterations ? ", those outside the steps included" : "") +
         ": a call the replay lost or added makes its row DIFFERS.");
  Table t({"communicator", "communication", "calls_recorded", "calls_replayed", "bytes_recorded", "bytes_replayed",
           "calls_and_bytes", "recorded_ms", "replayed_ms", "replayed/recorded"});
  t.bytes_column(4).bytes_column(5);
  for (const ReplayCollectiveRow& r : c.by_collective)
    t.add({r.group, r.name, std::to_string(r.recorded_calls), std::to_string(r.replayed_calls),
           std::to_string(r.recorded_bytes), std::to_string(r.replayed_bytes),
           same(r.recorded_calls, r.replayed_calls, r.recorded_bytes, r.replayed_bytes), fms(r.recorded_ns),
           fms(r.replayed_ns), ratio(r.replayed_ns, r.recorded_ns)});
  w.table("replay_collectives", t);
}

void differences(ReportWriter& w, const ReplayComparison& c) {
  // Medians over the steps after the first (it warms up buffers and communicators; a replay's
  // first step ran 1.6x its recorded time where the others ran 1.3x), over all with 2 or fewer.
  const std::size_t skip = c.by_iteration.size() > 2 ? 1 : 0;
  const auto median = [&](double ReplayIterationRow::*field) {
    std::vector<double> v;
    for (std::size_t i = skip; i < c.by_iteration.size(); ++i) v.push_back(c.by_iteration[i].*field);
    return v.empty() ? 0.0 : finite_median(v);
  };
  using R = ReplayIterationRow;
  const double rec = median(&R::recorded_comm_ns), rep = median(&R::replayed_comm_ns);
  const double step = median(&R::recorded_step_ns), projected = median(&R::projected_step_ns);
  const double rec_wait = median(&R::recorded_wait_ns), rep_wait = median(&R::replayed_wait_ns);
  const double rec_xfer = median(&R::recorded_transfer_ns), rep_xfer = median(&R::replayed_transfer_ns);
  const std::string over = skip == 0 ? "all " + std::to_string(c.by_iteration.size())
                                     : "steps " + std::to_string(c.by_iteration[1].iteration) + " to " +
                                           std::to_string(c.by_iteration.back().iteration) + "; the first warms up";
  std::string text = "Per step (median over " + over + "): communication recorded " + fms(rec) + " ms, replayed " +
                     fms(rep) + " ms (x" + ratio(rep, rec) + "); step recorded " + fms(step) + " ms, projected " +
                     fms(projected) + " ms (x" + ratio(projected, step) + ").";
  // Which part moved: waiting for the last rank (the gaps, a late rank) or the transfers.
  text += " Of the communication, waiting for the last rank to arrive: " + fms(rec_wait) + " ms recorded, " +
          fms(rep_wait) + " replayed (x" + ratio(rep_wait, rec_wait) + "); the transfers after it: " + fms(rec_xfer) +
          " recorded, " + fms(rep_xfer) + " replayed (x" + ratio(rep_xfer, rec_xfer) + ").";
  // A PMPI profile's messages are all transfer, the replay's split: the two waits differ by that.
  if (c.recorded_messages.unnumbered > 0 && c.replayed_messages.numbered > 0)
    text += " The recorded messages (" + std::to_string(c.recorded_messages.unnumbered) +
            " sends and receives) are not split into wait and transfer (the profiler cannot tell which send a "
            "receive took: all transfer), where the replay's are: the replayed wait holds their waiting, the "
            "recorded one does not.";
  std::size_t differing = 0;
  std::int64_t recorded_calls = 0, replayed_calls = 0, missing = 0, extra = 0;
  const ReplayCollectiveRow* most = nullptr;
  for (const ReplayCollectiveRow& r : c.by_collective) {
    if (r.recorded_calls != r.replayed_calls || r.recorded_bytes != r.replayed_bytes) ++differing;
    recorded_calls += r.recorded_calls, replayed_calls += r.replayed_calls;
    missing += std::max<std::int64_t>(0, r.recorded_calls - r.replayed_calls);
    extra += std::max<std::int64_t>(0, r.replayed_calls - r.recorded_calls);
    if (most == nullptr || std::abs(r.replayed_ns - r.recorded_ns) > std::abs(most->replayed_ns - most->recorded_ns))
      most = &r;
  }
  text += differing == 0
              ? " Calls and bytes identical in all " + std::to_string(c.by_collective.size()) + " communications."
              : " Calls or bytes DIFFER in " + std::to_string(differing) + " of " +
                    std::to_string(c.by_collective.size()) + " communications: " + std::to_string(recorded_calls) +
                    " calls recorded, " + std::to_string(replayed_calls) + " replayed; " + std::to_string(missing) +
                    " not replayed, " + std::to_string(extra) + " replayed that were not recorded.";
  if (most != nullptr)
    text += " Differs most: " + most->name + " (" + most->group + "), " + fms(most->recorded_ns) + " ms recorded, " +
            fms(most->replayed_ns) + " ms replayed per rank and step.";
  const ReplayIterationRow* worst = nullptr;
  for (const ReplayIterationRow& r : c.by_iteration)
    if (worst == nullptr ||
        std::abs(r.replayed_comm_ns - r.recorded_comm_ns) > std::abs(worst->replayed_comm_ns - worst->recorded_comm_ns))
      worst = &r;
  if (worst != nullptr)
    text += " Step differing most: " + std::to_string(worst->iteration) + " (" + fms(worst->recorded_comm_ns) +
            " ms recorded, " + fms(worst->replayed_comm_ns) + " ms replayed).";
  w.section("Summary");
  w.text(text);
}

// Where each ran, and whether that makes their times comparable (placement.hpp).
std::string placements(const profiler::Profile& original, const profiler::Profile& replay) {
  const profiler::PlacementSummary a = profiler::summarize_placement(original.ranks);
  const profiler::PlacementSummary b = profiler::summarize_placement(replay.ranks);
  std::string text = "Placement of the recording: " + a.text + "; of the replay: " + b.text + ".";
  if (a.shared_unbound || b.shared_unbound)
    text += std::string(" ") +
            (a.shared_unbound && b.shared_unbound ? "Both"
             : a.shared_unbound                   ? "The recording"
                                                  : "The replay") +
            " ran more ranks than CPUs, unbound: " + profiler::kSharedUnboundNote + ".";
  return text;
}

}  // namespace

void report_replay(const std::string& original_file, const std::string& replay_file, const ReportOptions& options) {
  preflight(original_file, "profile");
  preflight(replay_file, "profile");
  const profiler::Profile original = read_profile_file(original_file, true);
  const profiler::Profile replay = read_profile_file(replay_file, true);
  ReplayComparison c;
  try {
    c = compare_replay(original, replay);
  } catch (const std::invalid_argument& e) {
    throw InputError(replay_file + " against " + original_file + ": " + e.what());
  }
  ReportWriter w(options, "commscope replay report: " + original_file + " replayed as " + replay_file);
  const std::string algo = value_of(replay.meta.attributes, "replay_algo");
  const std::string mapping = value_of(replay.meta.attributes, "replay_mapping");
  w.text(std::to_string(c.ranks.size()) + (c.ranks.size() == 1 ? " rank, " : " ranks, ") +
         std::to_string(c.iterations.size()) + " of " + std::to_string(c.recorded_iterations) +
         " recorded steps compared" +
         (algo.empty() ? std::string()
                       : "; replayed with " + algo + ", gaps " + value_of(replay.meta.attributes, "replay_gaps")) +
         (mapping.empty() ? std::string() : "; mapping: " + mapping) + ". Times in ms.");
  w.text(placements(original, replay));
  differences(w, c);
  iterations_table(w, c);
  collectives_table(w, c);
  w.finish();
}

}  // namespace commscope::analysis
