#pragma once
// Data parallelism over the collectives library: DDP and ZeRO-1/2/3.
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
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "commscope/collectives/communicator.hpp"
#include "commscope/trainer/model.hpp"
#include "commscope/trainer/optimizer.hpp"

namespace commscope::trainer {

enum class DpMode { kDdp, kZero1, kZero2, kZero3 };
DpMode parse_dp_mode(std::string_view name);  // "ddp", "zero1", "zero2", "zero3"; std::invalid_argument otherwise
std::string_view to_string(DpMode mode);

struct DpOptions {
  DpMode mode = DpMode::kDdp;
  std::string algo = "mpi";                          // collectives algorithm
  std::size_t bucket_bytes = std::size_t{25} << 20;  // DDP bucket size
};

// Bytes this rank holds, by kind.
struct MemoryReport {
  std::size_t params = 0, grads = 0, optimizer = 0, working = 0, activations = 0;
  std::size_t total() const noexcept { return params + grads + optimizer + working + activations; }
};

// What this process's data parallelism is doing: "allreduce (ring, 4 MiB, gradients)" inside a
// collective, "" outside one. Safe to read from a signal handler (two buffers swapped
// atomically), so a rank stopped by its launcher can say where it was.
const char* current_collective() noexcept;

class DataParallel {
 public:
  DataParallel(Communicator& comm, Gpt2<float>& model, DpOptions dp, AdamWOptions adamw);
  ~DataParallel();
  DataParallel(const DataParallel&) = delete;
  DataParallel& operator=(const DataParallel&) = delete;

  // The same full parameters on every rank (from init(seed) or a checkpoint); AdamW state
  // optional (empty spans: zero), step = steps already taken.
  void load(std::span<const float> params, std::span<const float> m = {}, std::span<const float> v = {},
            std::int64_t step = 0);

  struct StepResult {
    float loss = 0;       // global mean loss (the same on every rank)
    float grad_norm = 0;  // global gradient norm before clipping
    float lr = 0;
  };
  // One step on this rank's [local_batch, seq] tokens: forward, backward with this mode's
  // communication, clipping, AdamW. Collective.
  StepResult train_step(const int* inputs, const int* targets);
  // The global mean loss of a forward pass (no update). Collective.
  float eval_loss(const int* inputs, const int* targets);

  // Full buffers on every rank (ZeRO: gathered). Collective.
  std::vector<float> full_params();
  std::vector<float> full_m();
  std::vector<float> full_v();
  std::int64_t step() const noexcept;

  MemoryReport memory() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace commscope::trainer
