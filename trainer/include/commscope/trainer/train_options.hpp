#pragma once
// commscope-train's command line.

#include <cstdint>
#include <string>

#include "commscope/trainer/config.hpp"
#include "commscope/trainer/optimizer.hpp"
#include "commscope/trainer/parallel_plan.hpp"

namespace commscope::trainer {

struct TrainOptions {
  std::string model = "small";
  bool model_named = false;                     // --model given (beside --load or --load-llmc: checked)
  int layers = 0, heads = 0, dim = 0, seq = 0;  // 0: the preset's (seq: the training sequence length)
  int batch = 8;                                // global batch in sequences (a multiple of the rank count)
  int steps = 20;
  std::uint64_t seed = 1337;
  int threads = 0;   // per rank; 0: the cores of this node divided among its ranks
  std::string data;  // text file or llm.c token shard; "": data/kjv.txt (scripts/get-corpus.sh)
  double val_fraction = 0.1;
  int val_every = 0;  // steps; 0: only at the end
  int val_batches = 4;
  AdamWOptions adamw;
  ParallelPlan parallel;           // --tp, --sp, --pp, --micro-batches, --schedule, --dp, --bucket-mb, --algo
  std::string device = "cpu";      // cpu or cuda
  std::string precision = "fp32";  // fp32, or bf16 (cuda: bf16 model with fp32 master weights)
  std::string attention = "auto";  // cuda: auto, naive, flash or cudnn (the CUDA model's Attention)
  std::string transport = "nccl";  // cuda, our algorithms: nccl (point-to-point) or staged (MPI via host)
  double peak_tflops = 0;          // the device's peak for MFU; 0: MFU not printed
  double gemm_gflops = 0;          // the reference GEMM rate per rank for "% of GEMM"; 0: measured
  std::string profile;             // profile file (HDF5)
  std::string load_llmc, save_llmc, load, save;
  int profile_every = 0;       // --profile written also every N steps, so far (host tracer); 0: at the end only
  bool machine_probe = false;  // --profile records the machine model detected at start-up (as the bench's)
  int save_every = 0;          // --save also every N steps; 0: at the end (and at a stop) only
  int sample = 0;              // tokens to generate after training (rank 0)
  std::string prompt = "And God said";
  float temperature = 1.0f;
  int log_every = 1;
  // Fault tests (hidden flags): rank debug_kill_rank kills itself (SIGKILL) at step debug_kill_step;
  // every rank sleeps 60 s at the start of step debug_stall_step (a step longer than a launcher
  // waits after its SIGTERM).
  int debug_kill_rank = -1;
  int debug_kill_step = -1;
  int debug_stall_step = -1;
};

struct TrainParse {
  TrainOptions options;
  int exit_code = -1;  // >= 0: exit now with this status (0 after --help), printing message
  std::string message;
};
TrainParse parse_train_options(int argc, char** argv);

}  // namespace commscope::trainer
