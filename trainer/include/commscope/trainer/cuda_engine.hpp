#pragma once
// commscope-train --device cuda: the GPT-2 of model.hpp on this rank's GPU, trained data
// parallel (ddp, zero1, zero2, zero3, as engine.hpp describes them) over device-buffer
// collectives. Defined in CUDA builds only (trainer/cuda); this header needs no CUDA headers.
//
// Precision: fp32, or bf16 parameters, gradients, activations and gradient communication with
// fp32 master weights, fp32 AdamW state and fp32 updates (the gradients widened to fp32 first).
//
// Collectives (--algo): `nccl` (NCCL's own collectives; the communicator bootstrapped over MPI),
// or our ring / tree / rhd over a device transport: NCCL point-to-point (--transport nccl), or
// MPI staged through pinned host memory (--transport staged: ranks may share a GPU, no NCCL).
//
// Streams: the model computes on one stream, the gradient collectives run on a second, ordered
// by events. With `nccl`, DDP's bucket allreduces and ZeRO-2/3's reduce-scatters run while
// backward goes on with the next layers; ZeRO-2/3 alternate two gradient working buffers so
// that one can be reduced while the other is filled. Our algorithms are driven by the host,
// which waits at every step: their collectives overlap only the work already queued. ZeRO-1
// communicates after backward, ZeRO-3's allgathers are waited for before the layer runs.

#include <cstddef>
#include <memory>
#include <string>

#include "commscope/collectives/communicator.hpp"
#include "commscope/trainer/config.hpp"
#include "commscope/trainer/engine.hpp"
#include "commscope/trainer/layout.hpp"
#include "commscope/trainer/optimizer.hpp"

namespace commscope::trainer {

namespace parallel {
struct ProcessGrid;
}

// Tensor and pipeline parallelism (src/parallel/process_grid.hpp's grid, the parallel plan's micro-batches
// and schedule), as on the CPU: the model is this rank's shard (its TP rank's heads, hidden units
// and vocabulary rows; its stage's layers), its TP sums and maxima run on the model's stream over
// the TP group with the plan's tp_algorithm(), data parallelism runs over the DP group with its
// algo, the tied wte's gradients are summed between the first and last stage with its
// embedding_algorithm(). The options are the device's and the grid's (the groups and this stage).
// Pipeline messages (activations and their gradients between neighbouring stages) go through
// pinned host memory over MPI whatever the transport: a send is completed later, as on the CPU,
// and an open NCCL group would hold the collectives issued meanwhile. load() takes and
// full_params() / full_m() / full_v() return the shard's layout (ParameterLayout(config, tp,
// stage)), as CpuEngine's do.
struct CudaEngineOptions {
  bool bf16 = false;
  std::string transport = "nccl";         // for ring/tree/rhd: "nccl" (point-to-point) or "staged"
  parallel::ProcessGrid* grid = nullptr;  // null: data parallel over the whole communicator
  Stage stage{};                          // this rank's pipeline stage (pipeline_stage of the grid's pp rank)
  std::string attention = "auto";         // --attention: auto, naive, flash or cudnn (model_cuda.hpp)
};

// Binds this rank to a GPU (the node's ranks take the visible GPUs in turn; with NCCL in use
// every rank needs a GPU of its own) and builds the model and its data parallelism (over
// options.grid's DP group when there is a grid: comm is then the grid's world). Collective.
// Bad combinations (no GPU, --algo mpi, shared GPU with NCCL): commscope::InvalidArgument or
// TransportError with a one-line message.
std::unique_ptr<TrainEngine> make_cuda_engine(Communicator& comm, const ModelConfig& config, int local_batch, int seq,
                                              const ParallelPlan& parallel_plan, const AdamWOptions& adamw,
                                              const CudaEngineOptions& options);

// This rank's GPU and the reference rate for "% of GEMM": the best of a few square GEMMs of
// 4096 in the training precision (cuBLAS, fp32 accumulation; fp32 without TF32).
struct CudaDeviceInfo {
  std::string name;
  std::size_t memory_bytes = 0;
  double gemm_tflops = 0;
};
CudaDeviceInfo cuda_device_info(bool bf16);

}  // namespace commscope::trainer
