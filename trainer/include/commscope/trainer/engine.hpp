#pragma once
// What commscope-train drives: a TrainEngine trains this rank's part of one model on its device
// in data, tensor and pipeline parallelism (CpuEngine in cpu_engine.hpp on the CPU,
// make_cuda_engine in cuda_engine.hpp on a GPU), with the parallel plan both take
// (parallel_plan.hpp). Both run the step recipe of src/parallel/data_parallel_step.hpp.
//
// Data parallelism: DDP and ZeRO-1/2/3.
//
//   ddp    every rank holds parameters, gradients and AdamW state; gradients are summed with a
//          bucketed allreduce during backward (buckets of whole segments in backward order, at
//          least --bucket-mb each, each reduced as soon as its last segment's gradients are done).
//   zero1  AdamW state sharded: after backward the gradients are reduce-scattered, each rank
//          updates its shard, the updated parameters are allgathered.
//   zero2  + gradients sharded: each segment's gradients are reduce-scattered as soon as backward
//          finishes them, into the rank's shard; only a segment-sized working buffer is full.
//   zero3  + parameters sharded: each segment (layer) is allgathered before it is used, in forward
//          and again in backward, into a working buffer; the update touches the shard only.
// ZeRO shards each segment separately: segment s (n elements) is padded to a multiple of the rank
// count P, and rank r owns elements [r n'/P, (r+1) n'/P) of it, so a layer gathers with one
// allgather and its gradients scatter with one reduce-scatter.
//
// Every rank computes the gradient of loss/P on its part of the global batch; the sum over ranks
// is the gradient of the global mean loss, as one rank with the whole batch would compute it.

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "commscope/collectives/communicator.hpp"
#include "commscope/trainer/parallel_plan.hpp"
#include "commscope/trainer/segment_hooks.hpp"

namespace commscope::trainer {

// Pipeline parallelism and micro-batches (the plan's pp, micro_batches and gpipe; the model is
// one stage: Gpt2's Stage): each step's local batch runs as micro_batches micro-batches of the
// model's batch (gradients accumulated; DDP reduces in the last micro-batch's backward only,
// ZeRO-2/3 reduce-scatter each micro-batch's and add them into the shard); activations go forward
// and their gradients back between neighbouring stages with point-to-point messages over the
// pipeline group; the first and last stage's segment 0 (the tied wte) gradients are summed over
// their embedding group after backward. GPipe runs all forwards, then all backwards; 1F1B: stage
// s runs min(p - s - 1, m) forwards ahead, then alternates one forward, one backward.
// (src/parallel/pipeline.hpp runs the schedule.)

// Bytes this rank holds, by kind. libraries: the workspaces made for the libraries the engine
// calls (on CUDA cuBLAS's, cuBLASLt's and cuDNN's; 0 on the CPU).
struct MemoryReport {
  std::size_t params = 0, grads = 0, optimizer = 0, working = 0, activations = 0, libraries = 0;
  std::size_t total() const noexcept { return params + grads + optimizer + working + activations + libraries; }
};

// The device memory a GPU engine took (cudaMemGetInfo), bytes: at set-up, from before its first
// allocation to the end of its construction (its buffers, the libraries' handles and workspaces,
// NCCL's communicators); in the first step, what more it took (kernels loaded on first use and
// the local memory they reserve, NCCL's buffers, connected at the first collective, what the
// libraries allocate as they run). Ranks that share a GPU see each other's allocations. All 0 on
// the CPU and before the first step.
struct DeviceMemoryTaken {
  std::size_t setup = 0, first_step = 0;
  std::size_t total() const noexcept { return setup + first_step; }
};

// Training of this rank's part of one model on its device.
class TrainEngine {
 public:
  virtual ~TrainEngine() = default;

  // The same full parameters on every rank (from init(seed) or a checkpoint); AdamW state
  // optional (empty spans: zero), step = steps already taken.
  virtual void load(std::span<const float> params, std::span<const float> m, std::span<const float> v,
                    std::int64_t step) = 0;
  void load(std::span<const float> params) { load(params, {}, {}, 0); }

  struct StepResult {
    float loss = 0;       // global mean loss (the same on every rank)
    float grad_norm = 0;  // global gradient norm before clipping
    float lr = 0;
  };
  // One step on this rank's [local_batch, seq] tokens (host arrays): forward, backward with this
  // mode's communication, clipping, AdamW. Collective.
  virtual StepResult train_step(const int* inputs, const int* targets) = 0;
  // The global mean loss of a forward pass (no update). Collective.
  virtual float eval_loss(const int* inputs, const int* targets) = 0;

  // Full fp32 buffers on every rank (ZeRO: gathered; mixed precision: the fp32 master weights).
  // Collective.
  virtual std::vector<float> full_params() = 0;
  virtual std::vector<float> full_m() = 0;
  virtual std::vector<float> full_v() = 0;
  virtual std::int64_t step() const noexcept = 0;

  virtual MemoryReport memory() const = 0;
  // What a GPU engine measured of the device's memory (DeviceMemoryTaken).
  virtual DeviceMemoryTaken device_memory_taken() const noexcept { return {}; }
  // How the engine computes, beyond precision and device, for the run's header ("" when nothing
  // to say): on CUDA, the attention implementation.
  virtual std::string compute_details() const { return {}; }
};

// The hook protocol of the data-parallel modes, one for both engines: which hooks `mode`
// installs and which of the engine's operations each calls.
//   ddp    grads_ready(s): engine.bucket_ready(s), the bucket allreduce when segment s closes one
//   zero1  none: the engine reduce-scatters and allgathers after backward
//   zero2  grad(s): engine.grad_buffer(s), a zeroed working buffer for segment s's gradients;
//          grads_ready(s): engine.scatter_grads(s), their reduce-scatter into the rank's shard
//   zero3  as zero2, and acquire(s): engine.gather_params(s), segment s's parameters allgathered
//          into a working buffer
template <class T, class Engine>
SegmentHooks<T> data_parallel_hooks(DpMode mode, Engine& engine) {
  SegmentHooks<T> hooks;
  switch (mode) {
    case DpMode::kDdp:
      hooks.grads_ready = [&engine](int s) { engine.bucket_ready(s); };
      break;
    case DpMode::kZero1:
      break;
    case DpMode::kZero3:
      hooks.acquire = [&engine](int s) -> const T* { return engine.gather_params(s); };
      [[fallthrough]];
    case DpMode::kZero2:
      hooks.grad = [&engine](int s) -> T* { return engine.grad_buffer(s); };
      hooks.grads_ready = [&engine](int s) { engine.scatter_grads(s); };
      break;
  }
  return hooks;
}

}  // namespace commscope::trainer
