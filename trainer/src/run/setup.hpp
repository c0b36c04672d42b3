// commscope-train's run set-up: the model (a preset, an llm.c model or a checkpoint), the
// process grid's and batch's arithmetic checked against the rank count, and the token data,
// each bad input a UsageError with a one-line message.
#pragma once

#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "commscope/profiler/run_description.hpp"
#include "commscope/trainer/config.hpp"
#include "commscope/trainer/data.hpp"
#include "commscope/trainer/train_options.hpp"

namespace commscope::trainer {

// Bad input: the message on rank 0, exit 2 on every rank (all ranks see the same input).
struct UsageError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

struct RunSetup {
  ModelConfig config;
  std::vector<float> start_params, start_m, start_v;  // empty: initialise (start_m, start_v: zero)
  std::int64_t start_step = 0;
  int seq = 0;       // the training sequence length
  int dp_ranks = 1;  // ranks / (tp pp)
  std::string data_path;
  TokenDataset data, train, val;
};

// Everything `o` asks for that can be checked before any rank communicates, on `ranks` ranks.
// Throws UsageError.
RunSetup prepare_run(const TrainOptions& o, int ranks);

// The run as its profile records it (the reports read it back): the model, the layout with each
// group's algorithm, this rank's threads, the node's CPUs, the device and the GEMM reference.
profiler::RunDescription describe_run(const TrainOptions& o, const RunSetup& setup, int threads, double gemm_gflops);

// "12.3 MiB".
std::string mib(std::size_t bytes);

}  // namespace commscope::trainer
