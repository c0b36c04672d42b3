// nccl-tests' JSON results file (-J/--output_file), in its layout (nccl-tests 2.19, file
// version 3), so that a script reading nccl-tests' files reads ours:
//   {"version": 3, "start_time", "args": [...], "env": [...], "nccl_version",
//    "config": {"nthreads", "ngpus", "minimum_bytes", ..., "devices": [{"rank", ...}]},
//    "results": [{"size", "count", "type", "redop", "root",
//                 "out_of_place": {"time" | "cpu_time", "alg_bw", "bus_bw", "nwrong", and ours: "expected_time",
//                                  "expected_bus_bw", "of_expected" (null where the model lacks an input)},
//                 "out_of_place_per_iter": {...} (-I 1), "in_place": {...}, "in_place_per_iter",
//                 "actual_iterations", "experiment_name", and ours: "collective", "algorithm"}],
//    "out_of_bounds": {"count", "okay"}, "average_bus_bandwidth": {"bandwidth", "okay"},
//    "errors": [...], "end_time"}
// Type names are nccl-tests' (float, bfloat16, ...); "env" holds only the variables the bench
// records (NCCL_*, OMPI_*, ...), not the whole environment. Written by rank 0 as the lines are
// printed; when a signal or the watchdog ends the run, stop::publish_now() closes it (through
// close_json_results_now) after the last finished line (nccl-tests leaves it unterminated). One file at a time.
#pragma once

#include <mpi.h>

#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "backends/backend.hpp"
#include "commscope/bench/environment.hpp"
#include "commscope/bench/options.hpp"
#include "commscope/common/stop_signals.hpp"
#include "compat/json_writer.hpp"
#include "compat/nccl_tests_header.hpp"
#include "results.hpp"

namespace commscope::bench {

// Collective over comm: every rank's RankInfo (its device from the backend), at rank 0 only.
std::vector<RankInfo> gather_rank_info(MPI_Comm comm, const DeviceInfo& device);

// NCCL_VERSION_CODE of a version string "2.28.9" (22809); 0 for none.
int nccl_version_code(const std::string& version);

// Async-signal-safe: end the open JSON file validly after its last complete line (a footer
// whose "errors" says the run was stopped). A stop calls it, never while a line is being written.
void close_json_results_now() noexcept;

class JsonResults {
 public:
  // Creates the file without ever overwriting one: when `path` exists, nccl-tests' way is kept
  // (path.0, path.1, ...). Writes everything up to the results list. Throws InvalidArgument
  // when no file can be created.
  JsonResults(const std::string& path, const Options& o, const Environment& env, const std::vector<std::string>& args,
              const std::vector<RankInfo>& ranks);
  ~JsonResults();
  JsonResults(const JsonResults&) = delete;
  JsonResults& operator=(const JsonResults&) = delete;

  // The name written (path, or path.N).
  const std::string& path() const { return path_; }
  // One table line; a missing side (filtered out) is null, as nccl-tests writes a side it skips.
  void line(const ResultRow* out_of_place, const Samples* oop_samples, const ResultRow* in_place,
            const Samples* ip_samples);
  // Close the results list and write the footer (wrong count and average busbw of the lines
  // written, as the table's footer); `error` (if not empty) goes to "errors".
  void finish(const std::string& error);
  // Close and remove the file (the run did not start).
  void discard();

 private:
  void side(const ResultRow& r);
  void machine_model(const MachineModel& m);
  void per_iter(const ResultRow& r, const Samples& s);
  void footer(const std::string& error);
  void prepare_tail();
  void end_on_disk();

  const Options& o_;
  std::string path_;
  std::FILE* file_ = nullptr;
  JsonWriter json_;
  std::uint64_t wrong_ = 0;
  double busbw_sum_ = 0;
  int sides_ = 0;
  stop::TrackedHook tracked_{close_json_results_now};  // a stop ends the file
};

}  // namespace commscope::bench
