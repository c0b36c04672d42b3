#pragma once
// commscope-report's subcommands. Each prints a readable terminal report and, with an output
// folder, writes report.md, CSV files and plots (SVG + PNG) there. They read only the HDF5
// files (inputs.hpp) and throw InputError / OutputError / std::invalid_argument for bad input,
// which the command line turns into one line and exit status 2.

#include <filesystem>
#include <iosfwd>
#include <optional>
#include <string>
#include <vector>

namespace commscope::analysis {

struct ReportOptions {
  std::optional<std::filesystem::path> out_dir;  // -o DIR: Markdown, CSV and plots
  std::ostream* terminal = nullptr;              // where the readable report goes (stdout)
};

// bench: one results file, or several runs of one configuration (pooled; their spread counts).
void report_bench(const std::vector<std::string>& files, const ReportOptions& options);
void report_compare(const std::vector<std::string>& files, const ReportOptions& options);
// profile: with bench files (--bench) or a replay (--alone), every call of the step against the
// same call alone and the machine's limit ("Communication in the step", docs/report.md).
struct ProfileOptions {
  std::vector<std::string> bench;
  std::string alone;    // a replay of the profile with --gaps none: its calls alone where no bench row has them
  std::string machine;  // a machine file completing (or, without a bench file's, making) the model
  std::vector<std::string> link_rates;  // --link-rate HOST=RATE: a host's link rate, as a machine file's nic
  std::string doctor;                   // a commscope-doctor file: its hosts' measured link rates and latency
};
void report_profile(const std::string& file, const ProfileOptions& profile, const ReportOptions& options);
// scaling: profiles of one workload at different rank counts or layouts (dp, tp, pp). With
// `bench` (a bench results file) each run's step is also predicted as predict does for its layout,
// at `flops` FLOP/s per rank, or (0) at the rate the baseline run's compute measured, and set
// against the measured step part by part.
struct ScalingOptions {
  std::string bench;
  double flops = 0;
  bool allow_mixed = false;  // compare profiles of different workloads (the report says so)
};
void report_scaling(const std::vector<std::string>& files, const ScalingOptions& scaling, const ReportOptions& options);

struct PredictOptions {
  std::string model;  // preset name, or empty with the dimensions below
  // batch: the micro-batch size b in sequences (Megatron's convention): what one data-parallel
  // replica (its tp x pp ranks) runs per micro-batch; a step runs micro_batches of them.
  int layers = 0, dim = 0, heads = 0, seq = 0, batch = 1, vocab = 0;
  int tp = 1;               // tensor-parallel ranks (divides heads)
  int pp = 1;               // pipeline stages (divides layers)
  int micro_batches = 1;    // M per step and pipeline
  bool sp = false;          // sequence parallelism over the tp ranks
  std::vector<int> gpus;    // rank counts to predict for, each a multiple of tp x pp
  std::string bench;        // a bench results file with the collectives the ZeRO stage needs
  double flops = 0;         // per-GPU rate in FLOP/s; 0: from the bench file's... (must be given)
  int zero = 0;             // ZeRO stage 0..3
  int bytes_per_param = 2;  // 2 (bf16/fp16 training) or 4 (fp32)
};
void report_predict(const PredictOptions& predict, const ReportOptions& options);

// doctor: a commscope-doctor file: the pair matrices (heatmaps, grouped by node), the probes and
// each node's allreduce, and the slow links and nodes named by the rule of outliers.hpp.
void report_doctor(const std::string& file, const ReportOptions& options);

// replay: a profile against its replay (commscope-replay): per iteration and per collective,
// recorded against replayed communication, calls and bytes, the projected step (docs/replay.md).
void report_replay(const std::string& original, const std::string& replay, const ReportOptions& options);

// hang: the flight records of a stuck job (libcommscope-mpiprof.so's rankNNNNN.flight files in
// `dir`): per communicator who waits at which call and who never arrived, desyncs, ranks waiting on
// each other's messages, ranks without a record; one verdict line first (docs/hang.md).
void report_hang(const std::string& dir, const ReportOptions& options);
// The Chrome trace / Perfetto export of a profile (the profiler's exporter).
void report_trace(const std::string& file, const std::filesystem::path& json, const ReportOptions& options);

}  // namespace commscope::analysis
