// commscope-bench: nccl-tests' flags and table over Google Benchmark, every algorithm side by
// side, per-iteration statistics, and an HDF5 results file.
//
//   mpirun -np 4 build/bin/commscope-bench allreduce --algo all -b 8 -e 128M -f 2 --out r.h5
//
// Google Benchmark drives the loop. Each (collective, algorithm, type, op, size, in-place)
// case is a benchmark registered at run time; a case measures `state.max_iterations` calls
// collectively and hands Google Benchmark the combined time (the max over ranks by default),
// identical on every rank, so every rank takes the same decisions and runs the same calls.
// Rank 0 reports: the table on stdout, Google Benchmark's file output, the HDF5 file.
#include <benchmark/benchmark.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "backends/backend.hpp"
#include "commscope/bench/environment.hpp"
#include "commscope/bench/options.hpp"
#include "commscope/collectives/collectives.hpp"
#include "commscope/collectives/mpi_transport.hpp"
#include "commscope/common/memory_headroom.hpp"
#include "commscope/common/stop_signals.hpp"
#include "commscope/machine/machine_detect.hpp"
#include "commscope/profiler/flight_watch.hpp"
#include "commscope/profiler/vocabulary.hpp"
#include "compat/imb_flags.hpp"
#include "compat/nccl_tests_header.hpp"
#include "expectations.hpp"
#include "from_profile.hpp"
#include "measure.hpp"
#include "nccl_tuning.hpp"
#include "osu/osu_run.hpp"
#include "run/output_files.hpp"
#include "run/preflight.hpp"
#include "run/reporter.hpp"
#include "run/run_lines.hpp"
#include "run/run_machine.hpp"
#include "table.hpp"
#include "watchdog.hpp"

namespace commscope::bench {
namespace {

// Rank 0's value of environment variable `name` (set or not) on every rank of `comm`: what
// decides a collective step (which of the machine's figures are measured) must not differ
// between ranks whose launcher passed different environments.
void share_rank0_variable(const char* name, MPI_Comm comm) {
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  std::string value;
  int length = -1;  // -1: unset
  if (rank == 0)
    if (const char* v = std::getenv(name)) value = v, length = static_cast<int>(value.size());
  MPI_Bcast(&length, 1, MPI_INT, 0, comm);
  if (length > 0) {
    value.resize(static_cast<std::size_t>(length));
    MPI_Bcast(value.data(), length, MPI_CHAR, 0, comm);
  }
  if (length < 0)
    ::unsetenv(name);
  else
    ::setenv(name, value.c_str(), 1);
}

class Bench {
 public:
  Bench(const Options& o, int argc, char** argv)
      : o_(o), args_(argv, argv + argc), comm_(MPI_COMM_WORLD, comm_options(o)) {
    rank_ = comm_.rank();
    // IMB-MPI1's -npmin P runs on P, 2P, ... ranks too; here every run takes them all.
    if (const std::string why = imb_npmin_problem(o_.imb_npmin, comm_.size()); !why.empty()) throw InvalidArgument(why);
    // The shm switch the library takes here, so the header and the results file say it.
    o_.shm_two_shot_bytes =
        shm_two_shot_switch(comm_options(o).algo.get<ShmOptions>(), comm_.local_size(), comm_.oversubscribed());
    stop::install("commscope-bench", rank_, stop::Mode::kPublishAndDie);
    // The flight recorder (docs/hang.md): the run's calls; SIGUSR1, -T and COMMSCOPE_HANG_TIMEOUT
    // write where each rank is.
    if (profiler::flight::start_tool("commscope-bench", o_.out)) profiler::flight::watch(comm_, "");
    // NCCL's tuning log, before its first communicator (rank 0 of each logs the choices).
    if (o_.device == "cuda" && rank_ == 0) nccl_log_.start(temp_dir());
    backend_ = o_.device == "cuda" ? make_cuda_backend(comm_, o_) : make_cpu_backend(comm_, o_);
    cases_ = make_cases(o_, comm_.size(), *backend_, o_.device != "cuda");
    make_groups();
    check_host_memory(o_, cases_, comm_);
    env_ = capture_environment(MPI_COMM_WORLD, argc, argv);
    check_output_paths(o_, comm_.mpi_comm());  // a bad path ends the run before the machine's probes
    machine_ = std::make_unique<RunMachine>(o_, comm_.mpi_comm());
    if (rank_ == 0) env_.machine_model = to_text(machine_->model());
    out_ = open_output_files(o_, env_, args_, cases_.size(), backend_->device_info(), comm_.mpi_comm());
    // Our algorithms throw TimeoutError at T; the watchdog is the backstop for blocking
    // MPI/NCCL calls and a little later, so the more precise message wins when both fire.
    dog_ = std::make_unique<Watchdog>(o_.timeout_s > 0 ? o_.timeout_s + 2 : 0, rank_);
  }

  int run(char* argv0) {
    if (rank_ == 0) {
      print_environment(stdout, env_, "commscope-bench");
      for (const std::string& line : machine::machine_lines(machine_->model())) std::printf("%s\n", line.c_str());
      for (const std::string& w : machine_->warnings()) std::printf("# machine: WARNING: %s\n", w.c_str());
      std::printf("%s\n", nccl_tests_run_line(o_).c_str());
      std::printf(
          "# device %s, %d ranks, sizes %zu..%zu B (%zu sizes), %s iterations, %d warm-up, %d checked, "
          "time = %s over ranks, timeout %g s\n",
          backend_->device().c_str(), comm_.size(), o_.min_bytes, o_.max_bytes, size_list(o_).size(),
          o_.iters > 0 ? std::to_string(o_.iters).c_str() : "auto", o_.warmup, o_.check_iters,
          std::string(to_string(o_.combine)).c_str(), o_.timeout_s);
      for (const std::string& line : loop_shape_lines(o_)) std::printf("%s\n", line.c_str());
      if (const std::string shm = shm_shape_line(o_, *backend_, comm_.local_size()); !shm.empty())
        std::printf("%s\n", shm.c_str());
      std::printf("%s", groups_line_.c_str());
      // nccl-tests' device list, each rank's line as nccl-tests prints it.
      std::printf("#\n# Using devices\n");
      for (const RankInfo& r : out_.ranks) std::printf("%s\n", nccl_tests_rank_line(r).c_str());
      if (out_.json) std::printf("# Writing JSON output to %s\n", out_.json->path().c_str());
      // Said now: a second Ctrl-C kills mpirun before anything the ranks print later can reach
      // the terminal, while the file is still published (docs/suite.md).
      if (out_.file)
        std::printf("# Writing results to %s (finished rows are kept there if the run is stopped)\n", o_.out.c_str());
      std::fflush(stdout);
    }
    table_ = std::make_unique<Table>(stdout, TableStyle{.stats = o_.stats,
                                                        .per_iter = o_.per_iter_timing,
                                                        .cputime = o_.report_cputime,
                                                        .timestamps = o_.report_timestamps,
                                                        .checked = o_.check_iters > 0,
                                                        .algo_column = !one_algorithm(),
                                                        .ranks = comm_.size()});
    if (rank_ == 0) {
      expected_ = std::make_unique<RunExpectations>(
          env_.machine_model, comm_.size(), env_var("NCCL_ALGO"), o_.run_cycles != 0,
          run_expectation_options(static_cast<double>(o_.segment_bytes), static_cast<double>(o_.shm_adapt_bytes),
                                  static_cast<double>(o_.blocking)));
      if (o_.out.empty() && o_.json_out.empty()) expected_->set_figures_not_measured();
      reporter_ = std::make_unique<Reporter>(cases_, *table_, out_.file.get(), out_.json.get(), *expected_);
    }

    // Google Benchmark's flags; only rank 0 writes Google Benchmark's output file.
    std::vector<std::string> gb_args{argv0};
    for (const std::string& f : o_.benchmark_flags)
      if (rank_ == 0 || f.rfind("--benchmark_out", 0) != 0) gb_args.push_back(f);
    std::vector<char*> gb_argv;
    for (std::string& s : gb_args) gb_argv.push_back(s.data());
    gb_argv.push_back(nullptr);
    int gb_argc = static_cast<int>(gb_args.size());
    benchmark::Initialize(&gb_argc, gb_argv.data());
    if (gb_argc > 1) throw InvalidArgument(std::string("unknown Google Benchmark flag '") + gb_argv[1] + "'");

    for (const Case& c : cases_) {
      auto* b = benchmark::RegisterBenchmark(c.name.c_str(), [this, &c](benchmark::State& st) { run_case(st, c); });
      b->UseManualTime()->Unit(benchmark::kMicrosecond);
      if (o_.iters > 0) b->Iterations(o_.iters);
    }
    NullReporter null;
    auto* reporter = rank_ == 0 ? static_cast<benchmark::BenchmarkReporter*>(reporter_.get()) : &null;
    std::size_t ran = 0;
    // -N: every case again, cycle after cycle (0: until a signal ends the run).
    for (int cycle = 0; o_.run_cycles == 0 || cycle < o_.run_cycles; ++cycle) {
      if (rank_ == 0) reporter_->start_cycle(cycle);
      ran = benchmark::RunSpecifiedBenchmarks(reporter);
      if (ran == 0) break;
    }
    benchmark::Shutdown();
    const std::string memory = o_.memory_report ? memory_line(*backend_, comm_.mpi_comm()) : std::string();
    record_load();

    if (rank_ == 0) {
      reporter_->flush_pending();
      table_->footer();
      for (const std::string& line : machine::load_lines(machine_->model())) std::printf("%s\n", line.c_str());
      for (const std::string& line : machine::moved_lines(machine_->model())) std::printf("%s\n", line.c_str());
      print_verdicts();
      if (!memory.empty()) std::printf("%s\n#\n", memory.c_str());
      const std::string nccl = nccl_choices();
      if (out_.json) out_.json->finish("");
      if (out_.file) {
        if (!nccl.empty()) out_.file->set_meta("nccl_choices", nccl);
        out_.file->finish("complete");
        std::printf("# results: %s (%zu rows)\n", o_.out.c_str(), out_.file->rows_written());
      }
    }
    if (ran == 0) {
      if (rank_ == 0) std::fprintf(stderr, "commscope-bench: no case matched --benchmark_filter\n");
      return 2;
    }
    return wrong_ > 0 ? 1 : 0;
  }

 private:
  // The run's value of a recorded environment variable ("" where unset).
  std::string env_var(const std::string& name) const {
    for (const auto& [k, v] : env_.env_vars)
      if (k == name) return v;
    return "";
  }

  // What NCCL ran per collective and size, from its tuning log, printed as a '#' line; "" where
  // no nccl row ran. Where the log was not read, the line says why.
  std::string nccl_choices() const {
    if (o_.device != "cuda") return "";
    const std::vector<NcclChoice> choices = nccl_log_.read();
    const std::string text = choices.empty() ? (nccl_log_.note().empty() ? "none logged" : nccl_log_.note())
                                             : summarize_nccl_choices(choices);
    std::printf("# NCCL's choices (its tuning log): %s\n#\n", text.c_str());
    return choices.empty() ? "" : text;
  }

  static std::string temp_dir() {
    const char* t = std::getenv("TMPDIR");
    return t && *t ? t : "/tmp";
  }

  // Collective: each node's load over the run into rank 0's model (and, for a run of minutes, its
  // rates by size again), which the results header then records (its machine_model rewritten)
  // and the verdicts allow for.
  void record_load() {
    machine_->finish(comm_.mpi_comm());
    if (rank_ != 0 || machine_->model().nodes.empty()) return;
    env_.machine_model = to_text(machine_->model());
    if (out_.file) out_.file->set_meta("machine_model", env_.machine_model);
    if (expected_) expected_->set_model(env_.machine_model);
  }

  // After nccl-tests' closing lines, a '#' line per verdict (docs/verdicts.md), which parsers of
  // nccl-tests' output skip: the lines commscope-report bench prints for the results file.
  void print_verdicts() const {
    std::vector<std::string> lines;
    try {
      lines = expected_->verdict_lines();
    } catch (const std::exception& e) {  // the run and its files are complete: said, not fatal
      lines = {std::string("no verdicts, ") + e.what()};
    }
    if (lines.empty()) return;
    std::printf("# %s\n", verdict_thresholds().c_str());
    for (const std::string& line : lines) std::printf("# Verdict: %s.\n", line.c_str());
    std::printf("#\n");
    std::fflush(stdout);
  }

  // Whether every case runs the same algorithm (as under nccl-tests' names without --algo): the
  // table's header names it; with several, each line ends with its algorithm.
  bool one_algorithm() const {
    return std::all_of(cases_.begin(), cases_.end(), [&](const Case& c) { return c.algo == cases_.front().algo; });
  }

  // --from-profile's calls on communicators smaller than the run's: per size, this rank's group
  // (group_colors: the profile's groups, all at once) and a backend over it. Collective.
  void make_groups() {
    for (const Case& c : cases_) {
      if (c.nranks == comm_.size() || groups_.contains(c.nranks)) continue;
      const std::vector<int> colors = *group_colors(o_.profile_calls, c.nranks, comm_.size());
      MPI_Comm split = MPI_COMM_NULL;
      COMMSCOPE_MPI_CHECK(MPI_Comm_split(comm_.mpi_comm(), colors[static_cast<std::size_t>(rank_)], rank_, &split));
      Group& g = groups_[c.nranks];
      g.comm = std::make_unique<Communicator>(split, comm_options(o_));
      MPI_Comm_free(&split);
      std::map<int, std::vector<int>> sets;  // each group's world ranks, by color
      for (std::size_t r = 0; r < colors.size(); ++r) sets[colors[r]].push_back(static_cast<int>(r));
      profiler::flight::watch(*g.comm,
                              profiler::communicator_label("group", sets.at(colors[static_cast<std::size_t>(rank_)])));
      g.backend = make_cpu_backend(*g.comm, o_);
      groups_line_.append("# groups: the profile's calls on ").append(std::to_string(c.nranks));
      groups_line_.append("-rank communicators run on ").append(std::to_string(sets.size())).append(" groups at once:");
      for (const auto& [color, set] : sets) groups_line_.append(" ").append(profiler::communicator_label("group", set));
      groups_line_.append("; rows of rank 0's group\n");
    }
  }

  static CommOptions comm_options(const Options& o) {
    CommOptions c;
    c.algo.segment_bytes = o.segment_bytes;
    c.algo.set(ShmOptions{.two_shot_bytes = o.shm_two_shot_bytes,
                          .chunk_bytes = o.shm_chunk_bytes,
                          .direct_bytes = o.shm_direct_bytes,
                          .adapt_bytes = o.shm_adapt_bytes});
    c.timeout_s = o.timeout_s;  // 0: no deadline
    return c;
  }

  void run_case(benchmark::State& st, const Case& c) {
    try {
      const bool world = c.nranks == comm_.size();
      Backend& backend = world ? *backend_ : *groups_.at(c.nranks).backend;
      Measurement m = measure(backend, world ? comm_ : *groups_.at(c.nranks).comm, c, st.max_iterations, o_, *dog_);
      for (auto _ : st) st.SetIterationTime(m.time_s);
      // Google Benchmark's counters are the result row's fields (percentiles: rank 0 only).
      const ResultRow r = make_row(c, m, o_, backend.device());
      st.counters["bytes"] = static_cast<double>(r.bytes);
      st.counters["algbw_GBps"] = r.algbw_GBps;
      st.counters["busbw_GBps"] = r.busbw_GBps;
      st.counters["nwrong"] = static_cast<double>(r.nwrong);
      st.counters["slowest_rank"] = r.slowest_rank;
      if (rank_ == 0) {
        st.counters["p50_us"] = r.p50_us;
        st.counters["p99_us"] = r.p99_us;
      }
      wrong_ += m.nwrong;
      if (rank_ == 0) reporter_->stash(c, r, std::move(m.samples));
    } catch (const TimeoutError& e) {
      fatal("timeout in " + describe(c) + ": " + e.what());
    } catch (const std::bad_alloc&) {
      // Past the check before the run (another process took the memory since, or scratch beyond
      // the estimate): the sizes, and what was measured is kept below.
      const Layout l = buffer_layout(c, rank_, o_.unalign);
      fatal(describe(c) + ": out of memory with buffers of " + bytes_text(l.a_bytes) + " and " + bytes_text(l.b_bytes) +
            " on this rank (" + std::to_string(comm_.local_size()) + " ranks on the node)");
    } catch (const std::exception& e) {
      fatal(describe(c) + ": " + e.what());
    }
  }

  // Something failed mid-run (a timeout, a transport error): keep what rank 0 measured,
  // then end every rank (the library throws, the tool decides).
  [[noreturn]] void fatal(const std::string& what) {
    std::fprintf(stderr, "commscope-bench: rank %d: %s\n", rank_, what.c_str());
    std::fflush(stderr);
    (void)profiler::flight::dump("error", what);  // where this rank failed, for commscope-report hang
    if (rank_ == 0) {
      try {
        reporter_->flush_pending();
        if (out_.file) {  // the results file first: a launcher's SIGKILL may follow soon
          out_.file->finish("failed: " + what);
          std::fprintf(stderr, "commscope-bench: kept %zu finished rows in %s\n", out_.file->rows_written(),
                       o_.out.c_str());
        }
        if (out_.json) out_.json->finish(what);
      } catch (const std::exception& e) {
        std::fprintf(stderr, "commscope-bench: could not save the results: %s\n", e.what());
      }
    }
    MPI_Abort(MPI_COMM_WORLD, 3);
    std::_Exit(3);
  }

  Options o_;
  std::vector<std::string> args_;  // argv, for the JSON file
  Communicator comm_;
  int rank_ = 0;
  std::unique_ptr<Backend> backend_;
  std::vector<Case> cases_;
  struct Group {
    std::unique_ptr<Communicator> comm;
    std::unique_ptr<Backend> backend;
  };
  std::map<int, Group> groups_;  // make_groups'
  std::string groups_line_;      // their '#' lines
  Environment env_;
  std::unique_ptr<RunMachine> machine_;        // the model the rows are set against
  std::unique_ptr<RunExpectations> expected_;  // rank 0's: the rows against the recorded model
  OutputFiles out_;                            // --out and -J (rank 0's)
  NcclTuningLog nccl_log_;
  std::unique_ptr<Watchdog> dog_;
  std::unique_ptr<Table> table_;
  std::unique_ptr<Reporter> reporter_;
  std::uint64_t wrong_ = 0;
};

}  // namespace
}  // namespace commscope::bench

int main(int argc, char** argv) {
  using namespace commscope;
  MpiRuntime mpi(argc, argv);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  try {
    // OSU's point-to-point tests (osu_latency, ...): their own flags, loops and output.
    if (bench::osu_called(argc, argv)) return bench::osu_main(argc, argv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "commscope-bench: rank %d: %s\n", rank, e.what());
    MPI_Abort(MPI_COMM_WORLD, 3);
    return 3;
  }
  bench::share_rank0_variable("COMMSCOPE_MACHINE", MPI_COMM_WORLD);  // ranks on other hosts may lack it
  const bench::ParseResult parsed = bench::parse_options(argc, argv);
  if (parsed.exit_code >= 0) {
    if (rank == 0) std::fprintf(parsed.exit_code ? stderr : stdout, "%s\n", parsed.message.c_str());
    return parsed.exit_code;
  }
  try {
    bench::Bench b(parsed.options, argc, argv);
    return b.run(argv[0]);
  } catch (const InvalidArgument& e) {
    // Configuration errors are found alike on every rank before anything is measured.
    if (rank == 0) std::fprintf(stderr, "commscope-bench: %s\n", e.what());
    return 2;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "commscope-bench: rank %d: %s\n", rank, e.what());
    MPI_Abort(MPI_COMM_WORLD, 3);
    return 3;
  }
}
