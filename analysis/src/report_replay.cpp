// commscope-report replay: a profile against its replay (commscope-replay): per iteration and
// per collective, recorded against replayed communication, counts and bytes, the projected
// iteration time, and where they differ most (docs/replay.md).

#include <cmath>
#include <string>

#include "commscope/analysis/format.hpp"
#include "commscope/analysis/inputs.hpp"
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
      "communication stays hidden up to the replayed time). calls and bytes: over the compared ranks.");
  Table t({"step", "recorded_comm_ms", "replayed_comm_ms", "replayed/recorded", "recorded_step_ms", "projected_step_ms",
           "calls_recorded", "calls_replayed", "calls_and_bytes"});
  for (const ReplayIterationRow& r : c.by_iteration)
    t.add({std::to_string(r.iteration), fms(r.recorded_comm_ns), fms(r.replayed_comm_ns),
           ratio(r.replayed_comm_ns, r.recorded_comm_ns), fms(r.recorded_step_ns), fms(r.projected_step_ns),
           std::to_string(r.recorded_calls), std::to_string(r.replayed_calls),
           same(r.recorded_calls, r.replayed_calls, r.recorded_bytes, r.replayed_bytes)});
  w.table("replay_iterations", t);
}

void collectives_table(ReportWriter& w, const ReplayComparison& c) {
  w.section("Per collective (summed over ranks and steps; times per rank and step)");
  Table t({"group", "communication", "calls_recorded", "calls_replayed", "bytes_recorded", "bytes_replayed",
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
  double rec = 0, rep = 0, step = 0, projected = 0;
  for (const ReplayIterationRow& r : c.by_iteration)
    rec += r.recorded_comm_ns, rep += r.replayed_comm_ns, step += r.recorded_step_ns, projected += r.projected_step_ns;
  const double n = static_cast<double>(std::max<std::size_t>(1, c.by_iteration.size()));
  std::string text = "Communication per step: recorded " + fms(rec / n) + " ms, replayed " + fms(rep / n) + " ms (x" +
                     ratio(rep, rec) + "); step: recorded " + fms(step / n) + " ms, projected " + fms(projected / n) +
                     " ms (x" + ratio(projected, step) + ").";
  std::size_t differing = 0;
  const ReplayCollectiveRow* most = nullptr;
  for (const ReplayCollectiveRow& r : c.by_collective) {
    if (r.recorded_calls != r.replayed_calls || r.recorded_bytes != r.replayed_bytes) ++differing;
    if (most == nullptr || std::abs(r.replayed_ns - r.recorded_ns) > std::abs(most->replayed_ns - most->recorded_ns))
      most = &r;
  }
  text += differing == 0
              ? " Calls and bytes identical in all " + std::to_string(c.by_collective.size()) + " communications."
              : " Calls or bytes DIFFER in " + std::to_string(differing) + " of " +
                    std::to_string(c.by_collective.size()) + " communications.";
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
  differences(w, c);
  iterations_table(w, c);
  collectives_table(w, c);
  w.finish();
}

}  // namespace commscope::analysis
