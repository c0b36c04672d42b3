#pragma once
// The report's inputs: the bench's results files (schema commscope.bench/1,
// docs/bench-results.md) and the profiler's profiles (commscope.profile/1,
// docs/profile-format.md), read through HDF5 alone: the report links neither the collectives
// nor the trainer.

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "commscope/analysis/doctor_findings.hpp"
#include "commscope/formats/profile.hpp"
#include "commscope/model/machine_model.hpp"

namespace commscope::analysis {

// Any input the report cannot use: missing, not HDF5, another schema or version, truncated,
// damaged. what() is one line naming the file. (commscope-report exits 2 with it.)
class InputError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// One /results row (out-of-place and in-place rows are separate).
struct BenchRow {
  std::int64_t row = 0;
  std::string collective, algorithm, device, type, op;
  std::int32_t root = -1;
  bool in_place = false;
  std::int32_t nranks = 0;
  std::uint64_t bytes = 0, count = 0;
  std::int64_t iterations = 0;
  double time_us = 0, algbw_GBps = 0, busbw_GBps = 0;
  std::uint64_t nwrong = 0;
  double min_us = 0, p50_us = 0, p99_us = 0, max_us = 0, skew_us = 0;
  std::int32_t slowest_rank = 0;
  // This row's per-call samples: BenchFile::sample_time_us[sample_offset, + sample_count).
  std::uint64_t sample_offset = 0, sample_count = 0;
};

struct BenchFile {
  std::string path;
  std::int32_t nranks = 0;
  std::string device;  // "cpu" or "cuda"
  // Every /meta attribute as text (numbers formatted, string lists joined with ", "), by name.
  std::vector<std::pair<std::string, std::string>> meta;
  // /meta/env: the communication environment variables rank 0 saw.
  std::vector<std::pair<std::string, std::string>> env;
  std::vector<BenchRow> rows;
  // /samples time_us: per call, max over ranks (us); empty when the file has no /samples.
  std::vector<double> sample_time_us;
  // The machine the run is judged against (the results header's machine model), where the file
  // recorded one; nullopt for files written before the bench recorded it.
  std::optional<MachineModel> machine;

  std::string meta_value(const std::string& key) const;  // "" when absent
};

// commscope-doctor's file (schema commscope.doctor/1, earlier commscope-doctor/1; docs/doctor.md). Values a phase did
// not measure are NaN; a run that failed keeps the rows it finished (meta "status" says why).
using DoctorPair = PairMeasurement;  // one direction of one pair in one pass (model/machine_model.hpp)
struct DoctorRank {
  std::int64_t rank = 0;
  std::string host;
  double sgemm_gflops = 0, memcpy_GBps = 0;
};
struct DoctorNode {
  std::string host;
  std::int64_t ranks = 0, bytes = 0;
  double allreduce_us = 0, busbw_GBps = 0;
};
struct DoctorFile {
  std::string path;
  std::int64_t nranks = 0;
  std::vector<std::pair<std::string, std::string>> meta;  // every /meta attribute as text
  std::vector<DoctorPair> pairs;
  std::vector<DoctorRank> ranks;
  std::vector<DoctorNode> nodes;
  std::vector<DoctorGpu> gpus;    // /gpus, none where the file has none (a CPU run)
  std::vector<DoctorPeer> peers;  // /peers

  std::string meta_value(const std::string& key) const;  // "" when absent
};

// Reads a bench results file. Throws InputError.
BenchFile read_bench_file(const std::string& path);
// Several, each read once in a child first (preflight): the one reading of a subcommand's list
// of bench files. std::invalid_argument for a file given twice ("PATH is given twice").
std::vector<BenchFile> read_bench_files(const std::vector<std::string>& paths);
// The machine model in a bench file's header (/meta machine_model, the text form of
// commscope/model/machine_model.hpp); an empty model (no nodes) for files without one. InputError
// for a damaged one.
MachineModel machine_model_of(const BenchFile& bench);
// The machine model a profile records (its /meta/attributes machine_model: commscope-train
// --machine-probe detects it at start-up as the bench does); nullopt for a profile without one.
// std::invalid_argument naming `path` for a damaged one.
std::optional<MachineModel> machine_model_of(const profiler::Profile& profile, const std::string& path);

// Reads a profile (with_events: the raw events too, for the trace export). Throws InputError.
profiler::Profile read_profile_file(const std::string& path, bool with_events = false);

// Reads a doctor file. Throws InputError.
DoctorFile read_doctor_file(const std::string& path);

// The value of `key` among a file's /meta attributes (a profile's meta.attributes, ...) as text;
// "" when absent.
std::string value_of(const std::vector<std::pair<std::string, std::string>>& meta, const std::string& key);
// The same as an integer (atoi); `otherwise` when absent.
int int_value_of(const std::vector<std::pair<std::string, std::string>>& meta, const std::string& key, int otherwise);

// Reads `path` first in a forked child process (its stderr to /dev/null), so that a file
// damaged in a way the HDF5 library itself crashes on becomes an InputError ("PATH: the HDF5
// library failed reading it (signal N): a damaged file?") rather than a crash of the report.
// Returns when the child read it; throws the child's InputError when it refused it. Call before
// read_*_file, from a single-threaded process. kind: "bench", "profile" or "doctor" (else
// std::invalid_argument).
void preflight(const std::string& path, const std::string& kind);

}  // namespace commscope::analysis
