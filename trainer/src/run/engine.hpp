// commscope-train's engine, chosen by --device: the CPU's CpuEngine over its own model, or
// the CUDA engine (CUDA builds; elsewhere a UsageError), with the GEMM reference rate of that
// device for "% of GEMM".
#pragma once

#include <memory>
#include <string>

#include "commscope/collectives/communicator.hpp"
#include "commscope/trainer/cpu_engine.hpp"
#include "commscope/trainer/model.hpp"
#include "commscope/trainer/train_options.hpp"
#include "parallel/process_grid.hpp"

namespace commscope::trainer {

struct Engine {
  std::unique_ptr<Gpt2<float>> cpu_model;  // the CPU engine's model (null on CUDA)
  std::unique_ptr<TrainEngine> engine;
  double gemm_gflops = 0;  // the reference rate for "% of GEMM", per rank
  std::string gemm_what;   // what it was measured on
};

// The engine `o` asks for, on `world` (its DP group `dp`; a TP and PP grid when `grid` is not
// null), `local_batch` sequences of `seq` tokens per step, with this rank's `threads`.
Engine make_engine(const TrainOptions& o, const ModelConfig& config, int local_batch, int seq,
                   const AdamWOptions& adamw, Communicator& world, Communicator& dp, parallel::ProcessGrid* grid,
                   const Stage& stage, int threads);

}  // namespace commscope::trainer
