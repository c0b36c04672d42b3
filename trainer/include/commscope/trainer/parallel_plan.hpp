#pragma once
// The parallel plan of a training run, in one type: how the ranks split the model and the batch
// (tensor, sequence and pipeline parallelism, micro-batches and their schedule, the data-parallel
// mode) and which collective algorithm each process group runs. commscope-train's command line
// fills it (TrainOptions::parallel) and both engines take it (cpu_engine.hpp, cuda_engine.hpp);
// the groups themselves are ProcessGrid's (src/parallel/process_grid.hpp), whose data-parallel size is what
// the ranks leave: world / (tp x pp). engine.hpp describes the data-parallel modes.

#include <cstddef>
#include <string>
#include <string_view>

#include "commscope/collectives/communicator.hpp"

namespace commscope::trainer {

enum class DpMode { kDdp, kZero1, kZero2, kZero3 };
DpMode parse_dp_mode(std::string_view name);  // "ddp", "zero1", "zero2", "zero3"; std::invalid_argument otherwise
std::string_view to_string(DpMode mode);

struct ParallelPlan {
  int tp = 1;             // tensor-parallel ranks (heads and the rank count divisible by it)
  bool sp = false;        // sequence parallelism over the TP group (the CPU)
  int pp = 1;             // pipeline stages (at most the layers)
  int micro_batches = 1;  // each step's local batch as this many micro-batches, gradients accumulated
  bool gpipe = false;     // all forwards, then all backwards (else 1F1B)
  DpMode dp_mode = DpMode::kDdp;
  std::size_t bucket_bytes = std::size_t{25} << 20;  // DDP bucket size
  // The collectives' algorithms: the data-parallel group's, and the TP and embedding groups'
  // ("": algo). commscope-train's "" for algo: mpi on the CPU, nccl on CUDA (ring when staged).
  std::string algo = "mpi";
  std::string tp_algo, embedding_algo;

  const std::string& tp_algorithm() const noexcept { return tp_algo.empty() ? algo : tp_algo; }
  const std::string& embedding_algorithm() const noexcept { return embedding_algo.empty() ? algo : embedding_algo; }
  const char* schedule() const noexcept { return gpipe ? "gpipe" : "1f1b"; }  // --schedule's name
};

// The groups a CPU engine runs over besides its data-parallel one (null: that parallelism is not
// used): the TP group, the pipeline group and the first and last stage's embedding group.
struct ParallelGroups {
  Communicator* tp = nullptr;
  Communicator* pp = nullptr;
  Communicator* embedding = nullptr;
};

}  // namespace commscope::trainer
