// commscope-import: other profilers' traces -> a commscope profile (docs/profile-format.md).
//
//   commscope-import kineto FILE... | DIR -o profile.h5 [--window steps|trace] [--clock auto|shared|align]
//   commscope-import chakra PREFIX | FILE... -o profile.h5
//
// One PyTorch profiler (Kineto) trace per rank, plain or gzip JSON; a folder means its *.json and
// *.json.gz files. Prints per rank what was imported, left out and not understood, how clocks and
// collectives were matched, and HTA's temporal breakdown and overlap computed from the profile
// (docs/profiler.md). Chakra execution traces: PREFIX.0.et, PREFIX.1.et, ... or the files, one
// per rank (docs/chakra.md). Exit status 0 on success; any error is one line "commscope-import: <reason>"
// on stderr and exit status 2.
#include <cstdio>
#include <exception>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "commscope/common/cli_subcommand.hpp"
#include "commscope/common/output_path.hpp"
#include "commscope/formats/profile_file.hpp"
#include "commscope/h5/h5.hpp"
#include "commscope/profiler/chakra.hpp"
#include "commscope/profiler/kineto_import.hpp"

namespace {

namespace prof = commscope::profiler;
constexpr const char* kTool = "commscope-import";

int fail(const std::string& reason) {
  std::fprintf(stderr, "%s: %s\n", kTool, commscope::h5::one_line(reason).c_str());
  return 2;
}

std::string ms(std::int64_t ns) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.3f ms", static_cast<double>(ns) / 1e6);
  return buf;
}

std::string pct(std::int64_t part, std::int64_t whole) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2f%%",
                whole > 0 ? 100.0 * static_cast<double>(part) / static_cast<double>(whole) : 0.0);
  return buf;
}

std::string counts(const std::map<std::string, std::int64_t>& m) {
  std::string s;
  for (const auto& [k, v] : m) s += (s.empty() ? "" : ", ") + k + " " + std::to_string(v);
  return s.empty() ? "none" : s;
}

void print_summary(const prof::KinetoImport& im, const std::string& output, const std::string& window) {
  for (std::size_t r = 0; r < im.ranks.size(); ++r) {
    const prof::KinetoRankReport& rep = im.ranks[r];
    std::printf("%s: %s: rank %zu", kTool, rep.path.c_str(), r);
    if (rep.original_rank >= 0 && rep.world_size > 0) {
      std::printf(" (trace rank %d of %d)", rep.original_rank, rep.world_size);
    } else if (rep.original_rank >= 0) {
      std::printf(" (trace rank %d)", rep.original_rank);
    }
    std::printf(", %lld trace events\n", static_cast<long long>(rep.trace_events));
    std::printf("  imported: %s\n", counts(rep.imported).c_str());
    std::printf("  left out: %s\n", counts(rep.skipped).c_str());
    std::printf("  not understood: %s\n", counts(rep.unknown).c_str());
    std::printf(
        "  device activities without a launching operator: %lld; collective calls without an NCCL kernel: %lld\n",
        static_cast<long long>(rep.unlinked_device), static_cast<long long>(rep.host_comm_without_kernel));
    std::printf("  collective instances: %lld, matched across ranks: %lld%s\n", static_cast<long long>(rep.collectives),
                static_cast<long long>(rep.collectives_matched),
                rep.steps_fallback ? "; no ProfilerStep#N: one window over the trace" : "");
  }
  std::printf("%s: clocks: %s; collectives matched %s\n", kTool, im.clock_method.c_str(), im.matching.c_str());
  for (std::size_t r = 0; r < im.ranks.size(); ++r) {
    const prof::HtaView& h = im.ranks[r].hta;
    std::printf(
        "%s: rank %zu in HTA's terms (%s windows): idle %s (%s), compute %s (%s), non-compute %s (%s), total %s; "
        "compute-communication overlap %.2f%%\n",
        kTool, r, window.c_str(), ms(h.idle_ns()).c_str(), pct(h.idle_ns(), h.window_ns).c_str(),
        ms(h.compute_ns()).c_str(), pct(h.compute_ns(), h.window_ns).c_str(), ms(h.non_compute_ns()).c_str(),
        pct(h.non_compute_ns(), h.window_ns).c_str(), ms(h.window_ns).c_str(), h.overlap_pct());
  }
  const auto& p = im.profile;
  std::printf("%s: wrote %s (%d ranks, %zu (rank, iteration) rows)\n", kTool, output.c_str(), p.meta.nranks,
              p.breakdown.size());
}

void print_chakra_summary(const prof::ChakraImport& im, const std::string& output) {
  for (std::size_t r = 0; r < im.ranks.size(); ++r) {
    const prof::ChakraImportRank& rep = im.ranks[r];
    std::printf("%s: %s: rank %zu, Chakra %s, %lld nodes%s\n", kTool, rep.path.c_str(), r,
                rep.version.empty() ? "(no version)" : rep.version.c_str(), static_cast<long long>(rep.nodes),
                rep.exported ? " (written by commscope-export)" : "");
    std::printf("  imported: %s\n", counts(rep.imported).c_str());
    std::printf("  left out: %s\n", counts(rep.left_out).c_str());
  }
  std::printf(
      "%s: times %s\n", kTool,
      im.synthetic_times ? "synthetic (no start times: nodes one after another in dependency order)" : "as recorded");
  std::printf("%s: wrote %s (%d ranks, %zu (rank, iteration) rows)\n", kTool, output.c_str(), im.profile.meta.nranks,
              im.profile.breakdown.size());
}

int import_chakra_traces(const std::vector<std::string>& inputs, const std::string& output, int argc, char** argv) {
  prof::ChakraImportOptions options;
  for (const std::string& in : inputs) {
    const std::vector<std::string> files = prof::chakra_files_of(in);
    options.files.insert(options.files.end(), files.begin(), files.end());
  }
  for (int i = 0; i < argc; ++i) options.command_line += (i ? " " : "") + std::string(argv[i]);
  const prof::ChakraImport im = prof::import_chakra(options);
  prof::write_profile_file(im.profile, output);
  print_chakra_summary(im, output);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{
      "Import other profilers' traces into a commscope profile (HDF5, schema commscope.profile/1) for "
      "commscope-report and commscope-trace.",
      kTool};
  app.require_subcommand(1, 1);
  std::vector<std::string> inputs;
  std::string output;
  std::string window = "steps";
  std::string clock = "auto";
  bool hta_rounding = false;
  auto* kineto = app.add_subcommand(
      "kineto",
      "PyTorch profiler (Kineto) Chrome traces, plain or gzip JSON, one file per rank (distributedInfo.rank); "
      "a folder means its *.json and *.json.gz files");
  kineto->add_option("traces", inputs, "trace files or folders")->required()->expected(1, -1);
  kineto->add_option("-o,--output", output, "profile file to write")->required();
  kineto
      ->add_option("--window", window,
                   "steps: one window per ProfilerStep#N; trace: one window per rank, first to "
                   "last device activity")
      ->check(CLI::IsMember({"steps", "trace"}));
  kineto
      ->add_option("--clock", clock,
                   "auto: shared when the traces have wall-clock times; shared; align: offsets "
                   "from matched collective ends")
      ->check(CLI::IsMember({"auto", "shared", "align"}));
  kineto->add_flag("--hta-rounding", hta_rounding,
                   "round device activities to whole us as Holistic Trace Analysis does (start up, end down), "
                   "to compare with its figures");
  auto* chakra = app.add_subcommand(
      "chakra",
      "Chakra execution traces (protobuf), one file per rank: a prefix (PREFIX.0.et, PREFIX.1.et, ...) or the files");
  chakra->add_option("traces", inputs, "trace prefixes or files")->required()->expected(1, -1);
  chakra->add_option("-o,--output", output, "profile file to write")->required();
  if (const std::string bad = commscope::unknown_subcommand(app, argc, argv); !bad.empty()) return fail(bad);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == static_cast<int>(CLI::ExitCodes::Success)) return app.exit(e);  // --help
    return fail(std::string(e.what()) + " (see --help)");
  }

  // A bad output path is said before the traces are read, not after they are imported.
  if (const std::string problem = commscope::output_path_problem(output); !problem.empty())
    return fail("cannot write -o '" + output + "': " + problem);
  try {
    if (chakra->parsed()) return import_chakra_traces(inputs, output, argc, argv);
    prof::KinetoImportOptions options;
    for (const std::string& in : inputs) {
      std::error_code ec;
      if (std::filesystem::is_directory(in, ec)) {
        const std::vector<std::string> found = prof::kineto_files_in(in);
        if (found.empty()) return fail(in + ": no *.json or *.json.gz files in the folder");
        options.files.insert(options.files.end(), found.begin(), found.end());
      } else {
        options.files.push_back(in);
      }
    }
    options.hta_rounding = hta_rounding;
    options.window = window == "trace" ? prof::KinetoWindow::kTrace : prof::KinetoWindow::kSteps;
    options.clock = clock == "shared"  ? prof::KinetoClock::kShared
                    : clock == "align" ? prof::KinetoClock::kAlign
                                       : prof::KinetoClock::kAuto;
    for (int i = 0; i < argc; ++i) options.command_line += (i ? " " : "") + std::string(argv[i]);
    const prof::KinetoImport im = prof::import_kineto(options);
    if (im.profile.breakdown.empty()) return fail("the traces hold no device or host activity to make a window of");
    prof::write_profile_file(im.profile, output);
    print_summary(im, output, window);
    for (const std::string& w : im.warnings) std::fprintf(stderr, "%s: warning: %s\n", kTool, w.c_str());
    return 0;
  } catch (const std::exception& e) {
    return fail(e.what());
  }
}
