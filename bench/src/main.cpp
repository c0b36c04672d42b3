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
#include <cmath>
#include <cstdio>
#include <limits>
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
#include "commscope/common/output_path.hpp"
#include "commscope/common/stop_signals.hpp"
#include "commscope/common/timing.hpp"
#include "disk_space.hpp"
#include "expectations.hpp"
#include "compat/imb_flags.hpp"
#include "compat/json_results.hpp"
#include "machine/machine_detect.hpp"
#include "measure.hpp"
#include "compat/nccl_tests_header.hpp"
#include "nccl_tuning.hpp"
#include "osu/osu_run.hpp"
#include "results.hpp"
#include "run_load.hpp"
#include "table.hpp"
#include "watchdog.hpp"

namespace commscope::bench {
namespace {

// Bytes as nccl-tests' memory report writes them: B, KB, MB, GB (powers of 1024).
std::string memory_text(long long bytes) {
  const char* units[] = {"B", "KB", "MB", "GB"};
  double v = static_cast<double>(bytes);
  int u = 0;
  while (u < 3 && std::abs(v) >= 1024) v /= 1024, ++u;
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.*f %s", u == 0 ? 0 : 2, v, units[u]);
  return buf;
}
// A size switch: "never" for SIZE_MAX.
std::string size_or_never(std::size_t bytes) {
  return bytes == SIZE_MAX ? "never" : memory_text(static_cast<long long>(bytes));
}

// Rank 0's reporter: matches each reported run (Google Benchmark names it) with the row its
// case made, pairs out-of-place with in-place, prints the line and appends it to the results
// file.
class Reporter final : public benchmark::BenchmarkReporter {
 public:
  Reporter(const std::vector<Case>& cases, Table& table, ResultsFile* file, JsonResults* json,
           RunExpectations& expected)
      : cases_(cases), table_(table), file_(file), json_(json), expected_(expected) {
    for (const Case& c : cases_) by_name_[c.name] = &c;
  }

  // -N: cycle k's lines number from k times one cycle's lines, so that rows stay distinct.
  void start_cycle(int cycle) {
    flush_pending();
    const std::int64_t lines = cases_.empty() ? 0 : cases_.back().row + 1;
    row_offset_ = cycle * lines;
  }

  // Every call of a case's function leaves its row and samples here (Google Benchmark may call
  // a case several times while it looks for the iteration count; only the last is reported).
  void stash(const Case& c, const ResultRow& row, Samples samples) {
    stash_[c.id].push_back({row, std::move(samples)});
  }

  bool ReportContext(const Context&) override { return true; }

  void ReportRuns(const std::vector<Run>& runs) override {
    bool line_done = false;
    for (const Run& run : runs) {
      if (run.run_type != Run::RT_Iteration) continue;  // mean/median/stddev of repetitions
      auto it = by_name_.find(run.run_name.function_name);
      if (it == by_name_.end()) continue;
      const Case& c = *it->second;
      auto& entries = stash_[c.id];
      std::size_t& next = consumed_[c.id];
      while (next < entries.size() && entries[next].row.iterations != run.iterations) ++next;
      if (next == entries.size()) continue;
      Entry e = std::move(entries[next]);
      // Earlier calls of this case (Google Benchmark's search for the count) are done with.
      entries.erase(entries.begin(), entries.begin() + static_cast<std::ptrdiff_t>(next) + 1);
      next = 0;
      if (c.row != pending_row_) flush_pending();
      pending_row_ = c.row;
      e.row.row += row_offset_;
      pending_[c.in_place].push_back(std::move(e));
      line_done = c.in_place || !has_in_place(c.coll);
    }
    // The in-place side closes a line (it runs second); alltoallv has none.
    if (pending_row_ >= 0 && line_done) flush_pending();
  }

  // Print and write whatever is pending; flush the file.
  void flush_pending() {
    const std::size_t n = std::max(pending_[0].size(), pending_[1].size());
    for (std::size_t i = 0; i < n; ++i) {
      Entry* oop = i < pending_[0].size() ? &pending_[0][i] : nullptr;
      Entry* ip = i < pending_[1].size() ? &pending_[1][i] : nullptr;
      for (Entry* e : {oop, ip})
        if (e) expected_.judge(e->row);
      table_.row(oop ? &oop->row : nullptr, ip ? &ip->row : nullptr);
      if (json_)
        json_->line(oop ? &oop->row : nullptr, oop ? &oop->samples : nullptr, ip ? &ip->row : nullptr,
                    ip ? &ip->samples : nullptr);
      if (file_) {
        if (oop) file_->append(oop->row, oop->samples);
        if (ip) file_->append(ip->row, ip->samples);
      }
    }
    if (file_ && n) file_->flush();
    pending_[0].clear();
    pending_[1].clear();
    pending_row_ = -1;
  }

 private:
  struct Entry {
    ResultRow row;
    Samples samples;
  };
  const std::vector<Case>& cases_;
  Table& table_;
  ResultsFile* file_;
  JsonResults* json_;
  RunExpectations& expected_;
  std::map<std::string, const Case*> by_name_;
  std::map<int, std::vector<Entry>> stash_;
  std::map<int, std::size_t> consumed_;
  int pending_row_ = -1;
  std::int64_t row_offset_ = 0;
  std::vector<Entry> pending_[2];
};

class NullReporter final : public benchmark::BenchmarkReporter {
 public:
  bool ReportContext(const Context&) override { return true; }
  void ReportRuns(const std::vector<Run>&) override {}
};

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
    // NCCL's tuning log, before its first communicator (rank 0 of each logs the choices).
    if (o_.device == "cuda" && rank_ == 0) nccl_log_.start(temp_dir());
    backend_ = o_.device == "cuda" ? make_cuda_backend(comm_, o_) : make_cpu_backend(comm_, o_);
    cases_ = make_cases(o_, comm_.size(), *backend_);
    check_host_memory();
    env_ = capture_environment(MPI_COMM_WORLD, argc, argv);
    check_output_paths();  // a bad path ends the run before the machine's probes
    machine_ = make_machine_model();
    load_.start();  // what else the nodes run, from the end of the probes to the end of the run
    if (rank_ == 0) env_.machine_model = to_text(machine_);
    open_output_files();
    // Our algorithms throw TimeoutError at T; the watchdog is the backstop for blocking
    // MPI/NCCL calls and a little later, so the more precise message wins when both fire.
    dog_ = std::make_unique<Watchdog>(o_.timeout_s > 0 ? o_.timeout_s + 2 : 0, rank_);
  }

  int run(char* argv0) {
    if (rank_ == 0) {
      print_environment(stdout, env_, "commscope-bench");
      for (const std::string& line : machine_lines(machine_)) std::printf("%s\n", line.c_str());
      for (const std::string& w : machine_warnings_) std::printf("# machine: WARNING: %s\n", w.c_str());
      std::printf("%s\n", nccl_tests_run_line(o_).c_str());
      std::printf(
          "# device %s, %d ranks, sizes %zu..%zu B (%zu sizes), %s iterations, %d warm-up, %d checked, "
          "time = %s over ranks, timeout %g s\n",
          backend_->device().c_str(), comm_.size(), o_.min_bytes, o_.max_bytes, size_list(o_).size(),
          o_.iters > 0 ? std::to_string(o_.iters).c_str() : "auto", o_.warmup, o_.check_iters,
          std::string(to_string(o_.combine)).c_str(), o_.timeout_s);
      print_loop_shape();
      print_shm_shape();
      // nccl-tests' device list, each rank's line as nccl-tests prints it.
      std::printf("#\n# Using devices\n");
      for (const RankInfo& r : ranks_) std::printf("%s\n", nccl_tests_rank_line(r).c_str());
      if (json_) std::printf("# Writing JSON output to %s\n", json_->path().c_str());
      // Said now: a second Ctrl-C kills mpirun before anything the ranks print later can reach
      // the terminal, while the file is still published (docs/suite.md).
      if (file_)
        std::printf("# Writing results to %s (finished rows are kept there if the run is stopped)\n", o_.out.c_str());
      std::fflush(stdout);
    }
    table_ = std::make_unique<Table>(stdout, TableStyle{.stats = o_.stats,
                                                        .per_iter = o_.per_iter_timing,
                                                        .cputime = o_.report_cputime,
                                                        .timestamps = o_.report_timestamps,
                                                        .checked = o_.check_iters > 0,
                                                        .algo_column = !one_algorithm()});
    if (rank_ == 0) {
      expected_ =
          std::make_unique<RunExpectations>(env_.machine_model, comm_.size(), env_var("NCCL_ALGO"), o_.run_cycles != 0,
                                            run_expectation_options(static_cast<double>(o_.segment_bytes),
                                                                    static_cast<double>(o_.shm_adapt_bytes)));
      if (o_.out.empty() && o_.json_out.empty()) expected_->set_figures_not_measured();
      reporter_ = std::make_unique<Reporter>(cases_, *table_, file_.get(), json_.get(), *expected_);
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
    const std::string memory = o_.memory_report ? memory_line() : std::string();
    record_load();

    if (rank_ == 0) {
      reporter_->flush_pending();
      table_->footer();
      for (const std::string& line : load_lines(machine_)) std::printf("%s\n", line.c_str());
      print_verdicts();
      if (!memory.empty()) std::printf("%s\n#\n", memory.c_str());
      const std::string nccl = nccl_choices();
      if (json_) json_->finish("");
      if (file_) {
        if (!nccl.empty()) file_->set_meta("nccl_choices", nccl);
        file_->finish("complete");
        std::printf("# results: %s (%zu rows)\n", o_.out.c_str(), file_->rows_written());
      }
    }
    if (ran == 0) {
      if (rank_ == 0) std::fprintf(stderr, "commscope-bench: no case matched --benchmark_filter\n");
      return 2;
    }
    return wrong_ > 0 ? 1 : 0;
  }

 private:
  // A case whose buffers exceed what a rank may take (the node's available memory shared by its
  // ranks, ulimit -v or -d, the cgroup's memory.max) would end every rank in std::bad_alloc
  // mid-run (MPI_Abort): refused before anything runs, on every rank alike (against the least
  // headroom of any rank). A rank holds the largest case's send and receive buffers, one buffer
  // more while they grow (the new one before the old is freed) and up to one more of the
  // algorithms' scratch (tree at 2 x 200 MiB under ulimit -v 1 GiB ran out of it).
  void check_host_memory() const {
    if (o_.device != "cpu") return;
    std::size_t largest = 0, buffers = 0, biggest = 0;
    for (const Case& c : cases_) {
      const Layout l = buffer_layout(c, rank_, o_.unalign);
      largest = std::max(largest, c.bytes);
      buffers = std::max(buffers, l.a_bytes + l.b_bytes);
      biggest = std::max({biggest, l.a_bytes, l.b_bytes});
    }
    const std::uint64_t need = buffers + 2 * biggest;
    const MemoryHeadroom mine = memory_headroom();
    // -1 (no limit) as the largest value, so that the minimum over ranks is the tightest limit.
    auto limit = [](std::int64_t v) {
      return v < 0 ? std::numeric_limits<long long>::max() : static_cast<long long>(v);
    };
    long long mins[4] = {limit(mine.address_space), limit(mine.data), limit(mine.available), limit(mine.cgroup)},
              least[4];
    COMMSCOPE_MPI_CHECK(MPI_Allreduce(mins, least, 4, MPI_LONG_LONG, MPI_MIN, comm_.mpi_comm()));
    auto back = [](long long v) {
      return v == std::numeric_limits<long long>::max() ? std::int64_t{-1} : std::int64_t{v};
    };
    const MemoryHeadroom h{back(least[0]), back(least[1]), back(least[2]), back(least[3])};
    if (const std::string over = memory_shortfall(h, need, comm_.local_size()); !over.empty())
      throw InvalidArgument("-e " + memory_text(static_cast<long long>(o_.max_bytes)) + ": arrays of " +
                            memory_text(static_cast<long long>(largest)) + " need about " + bytes_text(need) +
                            " on each rank (send and receive buffers, growth and scratch; " +
                            std::to_string(comm_.local_size()) + " on a node), " + over);
  }

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

  // Collective: each node's load over the run into rank 0's model, which the results header then
  // records (its machine_model rewritten) and the verdicts allow for.
  void record_load() {
    load_.finish(comm_.mpi_comm(), machine_);
    // A run of minutes met the machine at more than one moment: its rates by size again. Rank 0's
    // clock decides for every rank: the measurement is collective, and each rank's own reading
    // could fall on either side of the threshold, one rank measuring while the others had left.
    int again = o_.reprobe_after_s >= 0 && timing::now_s() - probed_at_s_ > o_.reprobe_after_s ? 1 : 0;
    COMMSCOPE_MPI_CHECK(MPI_Bcast(&again, 1, MPI_INT, 0, comm_.mpi_comm()));
    if (again) remeasure_curves(comm_.mpi_comm(), o_.device, given_, machine_);
    if (rank_ != 0 || machine_.nodes.empty()) return;
    env_.machine_model = to_text(machine_);
    if (file_) file_->set_meta("machine_model", env_.machine_model);
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

  // The machine the rows are set against (docs/bench.md, "The machine model"): detected on every
  // node, then the doctor's pairs (--doctor) and the user's figures (--machine, --link-rate) over
  // it; complete on rank 0 only. A doctor file that cannot be read ends every rank alike, before
  // anything is measured.
  MachineModel make_machine_model() {
    std::vector<MachineEntry> entries;
    std::vector<std::string> origins;
    if (!o_.doctor_file.empty()) entries = doctor_link_entries(o_.doctor_file);
    origins.assign(entries.size(), "--doctor " + o_.doctor_file);
    entries.insert(entries.end(), o_.machine_entries.begin(), o_.machine_entries.end());
    origins.insert(origins.end(), o_.machine_origins.begin(), o_.machine_origins.end());
    // Measured only where a file records it: a run printing its table alone skips the probes.
    given_ = GivenFigures{entries, !o_.out.empty() || !o_.json_out.empty()};
    MachineModel m = detect_machine(comm_.mpi_comm(), o_.device, o_.timeout_s, given_);
    probed_at_s_ = timing::now_s();
    if (rank_ == 0) machine_warnings_ = apply_entries(m, entries, origins);
    return m;
  }

  // Whether every case runs the same algorithm (as under nccl-tests' names without --algo): the
  // table's header names it; with several, each line ends with its algorithm.
  bool one_algorithm() const {
    return std::all_of(cases_.begin(), cases_.end(), [&](const Case& c) { return c.algo == cases_.front().algo; });
  }

  // The memory the shm algorithm takes on the node, where it runs.
  void print_shm_shape() const {
    const bool named = o_.algos.empty() || std::find(o_.algos.begin(), o_.algos.end(), "shm") != o_.algos.end();
    const auto have = backend_->algorithms();
    if (!named || std::find(have.begin(), have.end(), "shm") == have.end() || !backend_->unavailable("shm").empty())
      return;
    const ShmSegmentShape s = shm_segment_shape();
    std::printf(
        "# shm: node segment %s per rank (%d slots of %s, %s of flags), %s on this node; steps of %s (--shm-chunk), "
        "two-shot from %s (--shm-two-shot), direct from %s (--shm-direct), measured choice from %s (--shm-adapt)\n",
        memory_text(static_cast<std::int64_t>(s.per_rank())).c_str(), s.slots,
        memory_text(static_cast<std::int64_t>(s.slot_bytes)).c_str(),
        memory_text(static_cast<std::int64_t>(s.flag_bytes)).c_str(),
        memory_text(static_cast<std::int64_t>(s.per_rank() * static_cast<std::size_t>(comm_.local_size()))).c_str(),
        memory_text(static_cast<std::int64_t>(o_.shm_chunk_bytes)).c_str(),
        memory_text(static_cast<std::int64_t>(o_.shm_two_shot_bytes.value_or(0))).c_str(),
        size_or_never(o_.shm_direct_bytes).c_str(), size_or_never(o_.shm_adapt_bytes).c_str());
  }

  // What -z, -m, -N, -K change about the loop, in nccl-tests' words.
  void print_loop_shape() const {
    static const char* const kBlocking[] = {"", "wait and barrier after each call (-m: each inner iteration)",
                                            "wait after each call, no barrier",
                                            "wait and barrier after each iteration (-n); time excludes barrier"};
    if (o_.blocking > 0) std::printf("# Blocking Enabled: %s\n", kBlocking[o_.blocking]);
    if (o_.agg_iters > 1) std::printf("# %d calls per timed iteration (-m)\n", o_.agg_iters);
    if (o_.run_cycles != 1)
      std::printf("# %s cycles of every case (-N)\n",
                  o_.run_cycles ? std::to_string(o_.run_cycles).c_str() : "endless");
    if (o_.per_iter_timing) {
      std::printf("# Per-Iteration Report: i_* uses the max over ranks of each iteration");
      if (o_.per_iter_skip) std::printf("; summary skips first %d iterations", o_.per_iter_skip);
      std::printf("\n");
    }
    // -z 0: the samples are another pass than the time, which may lie outside their range.
    if ((o_.per_iter_timing || o_.stats) && o_.blocking == 0)
      std::printf(
          "# time(us): the timed pass, calls back to back; %s: a second pass, each iteration timed alone (the "
          "time may lie outside their range)\n",
          o_.stats && o_.per_iter_timing ? "i_* and min/p50/p99/max(us)"
          : o_.stats                     ? "min/p50/p99/max(us)"
                                         : "i_*");
  }

  // -M, collective: "# GPU memory usage     : Initialization 1.2 GB | ..." with each amount the
  // max over ranks (rank 0's line; "" elsewhere).
  std::string memory_line() const {
    const std::vector<MemoryUse> use = backend_->memory_use();
    std::vector<long long> mine, most(use.size());
    for (const MemoryUse& u : use) mine.push_back(u.bytes);
    COMMSCOPE_MPI_CHECK(MPI_Reduce(mine.data(), most.data(), static_cast<int>(mine.size()), MPI_LONG_LONG, MPI_MAX, 0,
                                   comm_.mpi_comm()));
    if (rank_ != 0) return {};
    const bool gpu = backend_->device() == "cuda";
    std::string line = std::string("# ") + (gpu ? "GPU memory usage    " : "Host memory usage   ") + " :";
    long long total = 0;
    for (std::size_t i = 0; i < use.size(); ++i) {
      line += (i ? " | " : " ") + use[i].name + " " + memory_text(most[i]);
      total += most[i];
    }
    if (gpu) line += " | Total " + memory_text(total);  // on the host, RSS already holds our buffers
    return line;
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

  // Rank 0 creates the files (--out, -J); every rank learns whether that worked, so that a bad
  // path ends all ranks alike with exit code 2 instead of leaving the others waiting.
  // A folder given as a file, a missing folder: said (exit 2) before anything is measured, the
  // machine's start-up probes included; open_output_files checks again as it creates them.
  void check_output_paths() const {
    std::string error;
    if (rank_ == 0) {
      if (const std::string p = o_.json_out.empty() ? "" : output_path_problem(o_.json_out); !p.empty())
        error = "cannot create -J/--output_file '" + o_.json_out + "': " + p;
      else if (const std::string q = o_.out.empty() ? "" : output_path_problem(o_.out); !q.empty())
        error = "cannot create --out '" + o_.out + "': " + q;
    }
    int failed = !error.empty();
    MPI_Bcast(&failed, 1, MPI_INT, 0, comm_.mpi_comm());
    if (failed) throw InvalidArgument(rank_ == 0 ? error : std::string());
  }

  void open_output_files() {
    ranks_ = gather_rank_info(comm_.mpi_comm(), backend_->device_info());  // the header's and -J's device list
    std::string error;
    if (rank_ == 0) {
      // A folder given as a file is found now, not when the finished file is renamed after the
      // sweep (--out) or moved aside to DIR.0 (-J).
      if (!o_.json_out.empty()) {
        if (const std::string p = output_path_problem(o_.json_out); !p.empty())
          error = "cannot create -J/--output_file '" + o_.json_out + "': " + p;
      }
      if (error.empty() && !o_.out.empty()) {
        if (const std::string p = output_path_problem(o_.out); !p.empty())
          error = "cannot create --out '" + o_.out + "': " + p;
      }
      try {
        if (error.empty() && !o_.json_out.empty())
          json_ = std::make_unique<JsonResults>(o_.json_out, o_, env_, args_, ranks_);
      } catch (const std::exception& e) {
        error = e.what();
      }
      if (error.empty() && !o_.out.empty()) {
        try {
          // A full disk is found now, not after minutes of measuring: every case once per cycle (-N 0,
          // until a signal: one), -n samples a row (-n 0: Google Benchmark's choice, not known now:
          // 1,000 counted; an 8 B allreduce took 144,000 here).
          const std::uint64_t rows = cases_.size() * static_cast<std::uint64_t>(std::max(1, o_.run_cycles));
          const auto samples = static_cast<std::uint64_t>(o_.iters > 0 ? o_.iters : 1000);
          error = free_space_problem(o_.out, results_file_estimate(rows, samples, env_), o_.free_bytes_override);
          if (error.empty()) file_ = std::make_unique<ResultsFile>(o_.out, o_, env_, comm_.size());
        } catch (const std::exception& e) {
          error = e.what();
        }
        if (!error.empty()) {
          error = "cannot create --out '" + o_.out + "': " + error;
          if (json_) json_->discard();
        }
      }
    }
    int failed = !error.empty();
    MPI_Bcast(&failed, 1, MPI_INT, 0, comm_.mpi_comm());
    if (failed) throw InvalidArgument(rank_ == 0 ? error : std::string());
    // The others say where the rows are should rank 0 die first (they outlive it by their hold).
    if (rank_ != 0 && !o_.out.empty()) stop::watch(o_.out + ".partial", o_.out);
  }

  void run_case(benchmark::State& st, const Case& c) {
    try {
      Measurement m = measure(*backend_, comm_, c, st.max_iterations, o_, *dog_);
      for (auto _ : st) st.SetIterationTime(m.time_s);
      // Google Benchmark's counters are the result row's fields (percentiles: rank 0 only).
      const ResultRow r = make_row(c, m, o_, backend_->device());
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
    if (rank_ == 0) {
      try {
        reporter_->flush_pending();
        if (file_) {  // the results file first: a launcher's SIGKILL may follow soon
          file_->finish("failed: " + what);
          std::fprintf(stderr, "commscope-bench: kept %zu finished rows in %s\n", file_->rows_written(),
                       o_.out.c_str());
        }
        if (json_) json_->finish(what);
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
  Environment env_;
  MachineModel machine_;                       // rank 0's; empty elsewhere
  GivenFigures given_;                          // what the user's entries give, not measured
  double probed_at_s_ = 0;                      // when the start-up probes ended
  std::unique_ptr<RunExpectations> expected_;  // rank 0's: the rows against the recorded model
  LoadMeter load_;                             // other processes' CPU time on each node
  std::vector<std::string> machine_warnings_;  // entries naming no host of the run
  std::vector<RankInfo> ranks_;                // every rank's device (rank 0's; empty elsewhere)
  std::unique_ptr<ResultsFile> file_;
  NcclTuningLog nccl_log_;
  std::unique_ptr<JsonResults> json_;
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
