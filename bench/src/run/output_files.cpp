#include "run/output_files.hpp"

#include <algorithm>
#include <cstdint>
#include <exception>

#include "backends/backend.hpp"
#include "commscope/collectives/error.hpp"
#include "commscope/common/stop_signals.hpp"
#include "disk_space.hpp"
#include "run/preflight.hpp"

namespace commscope::bench {

OutputFiles open_output_files(const Options& o, const Environment& env, const std::vector<std::string>& args,
                              std::size_t cases, const DeviceInfo& device, MPI_Comm comm) {
  int rank = 0, size = 0;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  OutputFiles out;
  out.ranks = gather_rank_info(comm, device);  // the header's and -J's device list
  std::string error;
  if (rank == 0) {
    // Again as the files are made (the paths were checked before the probes): a folder given as a
    // file is found now, not when the finished file is renamed after the sweep (--out) or moved
    // aside to DIR.0 (-J).
    error = output_paths_problem(o);
    try {
      if (error.empty() && !o.json_out.empty())
        out.json = std::make_unique<JsonResults>(o.json_out, o, env, args, out.ranks);
    } catch (const std::exception& e) {
      error = e.what();
    }
    if (error.empty() && !o.out.empty()) {
      try {
        // A full disk is found now, not after minutes of measuring: every case once per cycle (-N 0,
        // until a signal: one), -n samples a row, at most kMaxSampledIterations (-n 0: Google
        // Benchmark's choice, not known now: 1,000 counted, up to that many written).
        const std::uint64_t rows = cases * static_cast<std::uint64_t>(std::max(1, o.run_cycles));
        const auto samples = static_cast<std::uint64_t>(o.iters > 0 ? sampled_iterations(o.iters) : 1000);
        error = free_space_problem(o.out, results_file_estimate(rows, samples, env), o.free_bytes_override);
        if (error.empty()) out.file = std::make_unique<ResultsFile>(o.out, o, env, size);
      } catch (const std::exception& e) {
        error = e.what();
      }
      if (!error.empty()) {
        error = "cannot create --out '" + o.out + "': " + error;
        if (out.json) out.json->discard();
      }
    }
  }
  int failed = !error.empty();
  MPI_Bcast(&failed, 1, MPI_INT, 0, comm);
  if (failed) throw InvalidArgument(rank == 0 ? error : std::string());
  // The others say where the rows are should rank 0 die first (they outlive it by their hold).
  if (rank != 0 && !o.out.empty()) stop::watch(o.out + ".partial", o.out);
  return out;
}

}  // namespace commscope::bench
