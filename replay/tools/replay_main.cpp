// commscope-replay: a profiled job's communication run again on the ranks it is given, with
// the bench's algorithms, its gaps as nothing, waits or compute; the output is a profile of the
// replay (docs/replay.md).
//
//   mpirun -np 4 commscope-replay run.h5 --algo ring --gaps busy -o replay.h5
//   commscope-report replay run.h5 replay.h5
//
// Exit status 0 on success; bad usage or input (a file that cannot be read, a profile without
// communication, groups that cannot be rebuilt on the ranks given): one line
// "commscope-replay: <reason>" on rank 0's stderr, exit 2, and no output file; a failed call
// during the replay, or a wait that lasted --timeout seconds (the replay cannot finish: watch.hpp),
// one line and exit 1.
#include <mpi.h>

#include <chrono>
#include <cstdlib>
#include <exception>
#include <iostream>
#include <string>
#include <thread>
#include <vector>

#include <CLI/CLI.hpp>

#include "commscope/collectives/algorithm.hpp"
#include "commscope/collectives/communicator.hpp"
#include "commscope/collectives/error.hpp"
#include "commscope/common/counted.hpp"
#include "commscope/common/output_path.hpp"
#include "commscope/formats/profile_file.hpp"
#include "commscope/h5/h5.hpp"
#include "commscope/profiler/flight_watch.hpp"
#include "commscope/replay/heap.hpp"
#include "commscope/replay/plan.hpp"
#include "runner.hpp"

namespace {

namespace rp = commscope::replay;
using commscope::counted;
constexpr const char* kTool = "commscope-replay";

// Before MPI_Init the launcher's variables say which rank this is: only rank 0 speaks.
std::string launcher_rank() {
  for (const char* name : {"OMPI_COMM_WORLD_RANK", "PMI_RANK", "PMIX_RANK", "SLURM_PROCID"})
    if (const char* v = std::getenv(name)) return v;
  return "0";
}

int fail(const std::string& reason, bool speak, int status = 2) {
  if (speak) std::cerr << kTool << ": " << commscope::h5::one_line(reason) << '\n';
  return status;
}

// How long a rank other than 0 that failed before MPI started waits for rank 0 to say why.
constexpr auto kQuietRankWait = std::chrono::seconds(20);

// A failure before MPI starts, which every rank meets alike (bad options, an unreadable file).
// Only rank 0 speaks, but the launcher ends the whole job when any rank exits non-zero: another
// rank that exited at once had rank 0 killed before it said why whenever rank 0 got there over
// a second later (a busy machine). So the other ranks wait for rank 0 to fail and the launcher to
// end them; one still running after kQuietRankWait (rank 0 did not fail: a file that only some
// nodes have) says why itself.
int fail_before_mpi(const std::string& reason, bool speak) {
  if (speak) return fail(reason, true);
  std::this_thread::sleep_for(kQuietRankWait);
  return fail("rank " + launcher_rank() + " (before MPI started): " + reason, true);
}

struct Cli {
  std::string input, output, algo = "mpi", device = "cpu", gaps = "none";
  int iterations = 0;
  std::vector<int> ranks;
  double timeout_s = 300;
};

std::string joined(int argc, char** argv) {
  std::string out;
  for (int i = 0; i < argc; ++i) out += (i == 0 ? "" : " ") + std::string(argv[i]);
  return out;
}

// The original's attributes (model, layout: every report reads the replay as it read the
// run), then what the replay was.
std::vector<std::pair<std::string, std::string>> attributes(const commscope::profiler::Profile& original,
                                                            const Cli& cli, const rp::RankMapping& mapping) {
  std::vector<std::pair<std::string, std::string>> out;
  // Not the machine model the original run measured (commscope-train --machine-probe): the replay
  // may run elsewhere, and a report on it would price its calls on another machine's figures.
  for (const auto& [key, value] : original.meta.attributes)
    if (!key.starts_with("replay_") && key != "machine_model") out.emplace_back(key, key == "algo" ? cli.algo : value);
  out.emplace_back("replay_of", cli.input);
  out.emplace_back("replay_algo", cli.algo);
  out.emplace_back("replay_device", cli.device);
  out.emplace_back("replay_gaps", cli.gaps);
  out.emplace_back("replay_mapping", mapping.describe());
  std::string ranks;  // by replay rank, the recorded rank it played: what the report compares
  for (const int r : mapping.recorded) ranks += (ranks.empty() ? "" : ",") + std::to_string(r);
  out.emplace_back("replay_ranks", ranks);
  return out;
}

int replay(const Cli& cli, int argc, char** argv) {
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const bool speak = rank == 0;
  rp::ReplayPlan plan;
  rp::RankMapping mapping;
  rp::RunOptions options;
  try {
    if (cli.algo == "nccl" && cli.device != "cuda") throw commscope::InvalidArgument("--algo nccl needs --device cuda");
    if (cli.algo != "nccl") (void)commscope::find_algorithm(cli.algo);
    const commscope::profiler::Profile original = commscope::profiler::read_profile(cli.input, true);
    plan = rp::make_plan(original, cli.iterations);
    mapping = rp::map_ranks(plan.recorded_ranks, size, cli.ranks);
    rp::harmonize(plan, mapping);
    options.attributes = attributes(original, cli, mapping);
  } catch (const std::exception& e) {
    return fail(e.what(), speak);
  }
  options.output = cli.output;
  options.algo = cli.algo;
  options.device = cli.device;
  options.gaps = cli.gaps == "wait" ? rp::GapMode::kWait : cli.gaps == "busy" ? rp::GapMode::kBusy : rp::GapMode::kNone;
  options.timeout_s = cli.timeout_s;
  options.command_line = joined(argc, argv);
  const rp::RankPlan& mine = plan.ranks[static_cast<std::size_t>(mapping.recorded[static_cast<std::size_t>(rank)])];
  if (speak) {
    std::cout << "replay of " << cli.input << ": " << counted(plan.recorded_ranks, "recorded rank") << ", "
              << counted(plan.ops(), "communication") << " in "
              << counted(static_cast<std::int64_t>(plan.groups.size()), "group") << "; algo " << cli.algo << ", gaps "
              << cli.gaps << "\nmapping: " << mapping.describe() << '\n';
    if (plan.resized > 0)
      std::cout << "resized: " << plan.resized
                << " calls whose group's members recorded other bytes replay the largest of them\n";
    for (const auto& [name, n] : mine.skipped) std::cout << "not replayed (rank 0): " << n << " x " << name << '\n';
  }
  // The flight recorder (docs/hang.md): the rebuilt groups' calls; SIGUSR1, COMMSCOPE_HANG_TIMEOUT
  // and --timeout write where each rank is.
  (void)commscope::profiler::flight::start_tool("commscope-replay", cli.output);
  rp::RunCounts counts;
  try {
    counts = rp::run_replay(plan, mapping, options);
  } catch (const commscope::InvalidArgument& e) {  // no GPU, a build without CUDA: before anything ran
    return fail(e.what(), speak);
  } catch (const std::exception& e) {
    std::cerr << kTool << ": rank " << rank << ": " << commscope::h5::one_line(e.what()) << '\n';
    (void)commscope::profiler::flight::dump("error", e.what());
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  std::int64_t dropped = counts.dropped_messages, all = 0;
  MPI_Reduce(&counts.dropped_messages, &all, 1, MPI_INT64_T, MPI_SUM, 0, MPI_COMM_WORLD);
  dropped = all;
  if (!speak) return 0;
  for (const auto& [collective, n] : counts.fallback)
    std::cout << "ran with mpi (" << cli.algo << " has no " << collective << "): " << n << " calls on rank 0\n";
  if (dropped > 0) std::cout << "dropped: " << dropped << " messages to or from ranks nobody plays\n";
  std::cout << "placement: " << counts.placement.text
            << (counts.placement.shared_unbound ? std::string(": ") + commscope::profiler::kSharedUnboundNote : "")
            << '\n';
  if (!counts.written) return fail("the replay's profile was not written to '" + cli.output + "'", true, 1);
  std::cout << "wrote " << cli.output << " (" << counts.ops << " communications replayed on rank 0)\n";
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  const bool speak = launcher_rank() == "0";
  CLI::App app{
      "Replay a profiled job's communication (a commscope.profile/1 file from commscope-train, commscope-import "
      "or libcommscope-mpiprof.so) under mpirun: its collectives and messages in each rank's recorded order, on "
      "groups rebuilt from the recorded ones, with the gaps between them as nothing, waits or compute. The "
      "output is a profile of the replay; compare them with 'commscope-report replay ORIGINAL REPLAY'.",
      kTool};
  Cli cli;
  app.add_option("profile", cli.input, "the recorded profile")->required();
  app.add_option("-o,--output", cli.output, "the replay's profile (HDF5)")->required();
  app.add_option("--algo", cli.algo,
                 "the collectives' algorithm: mpi, ring, tree, rhd, shm, hier; nccl (--device cuda)");
  app.add_option("--device", cli.device,
                 "where the collectives' buffers live: cpu, or cuda (one GPU per rank; messages stay on the host)")
      ->check(CLI::IsMember({"cpu", "cuda"}));
  app.add_option("--gaps", cli.gaps,
                 "the recorded time between communications: none, wait (asleep) or busy (computing)")
      ->check(CLI::IsMember({"none", "wait", "busy"}));
  app.add_option("--iterations", cli.iterations, "replay the first N recorded iterations (default: all)")
      ->check(CLI::NonNegativeNumber);
  app.add_option("--ranks", cli.ranks, "fewer ranks than recorded: the recorded ranks they play, by replay rank")
      ->delimiter(',');
  app.add_option("--timeout", cli.timeout_s,
                 "seconds any one wait may take (a collective, a message, a completion, the barrier between "
                 "iterations): then the replay ends, saying where each rank waits (0: forever)")
      ->check(CLI::NonNegativeNumber);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == static_cast<int>(CLI::ExitCodes::Success)) return speak ? app.exit(e) : 0;
    return fail_before_mpi(std::string(e.what()) + " (see --help)", speak);
  }
  if (const std::string problem = commscope::output_path_problem(cli.output); !problem.empty())
    return fail_before_mpi("cannot write -o '" + cli.output + "': " + problem, speak);
  // Read once in a child first (before MPI starts: no fork under MPI): a damaged file can crash
  // HDF5 or send it into an endless loop.
  if (const std::string problem =
          commscope::h5::read_in_child(cli.input, [&] { (void)commscope::profiler::read_profile(cli.input, true); });
      !problem.empty())
    return fail_before_mpi(problem.starts_with(cli.input + ": ") ? problem : cli.input + ": " + problem, speak);
  // The MPI library's temporaries reused, not faulted in again each call (heap.hpp).
  (void)rp::keep_freed_heap();
  commscope::MpiRuntime mpi(argc, argv);
  return replay(cli, argc, argv);
}
