#pragma once
// The data-parallel step, written once for the CPU engine (cpu_engine.cpp) and the CUDA engine
// (cuda/engine_cuda.cpp): the buffers each mode needs and the memory they take, loading a start
// state into them, and the ZeRO step recipe (engine.hpp describes the modes). An engine says only
// how to run a forward, a backward, a collective and an update on its device.

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include "commscope/trainer/engine.hpp"
#include "commscope/trainer/optimizer.hpp"
#include "parallel/sharding.hpp"

namespace commscope::trainer::parallel {

// The buffers of one data-parallel mode on one rank, in elements (0: the mode has none).
struct BufferPlan {
  // element_bytes: of the model's parameters and gradients (the optimizer state is fp32).
  // master: the device keeps fp32 master weights apart from the model's parameters (CUDA), and
  // mixed: in another precision (bf16: fp32 master weights beside the model's; its gradients are
  // widened as the update reads them, so they take no fp32 copy).
  BufferPlan(DpMode mode, const ShardPlan& plan, std::size_t total, int micro_batches, std::size_t element_bytes,
             std::size_t bucket_bytes, bool master = false, bool mixed = false);

  DpMode mode;
  std::size_t element_bytes;
  std::size_t full = 0;                         // the layout's elements
  bool full_grads = false;                      // ddp, zero1: the model's whole gradients
  std::size_t state = 0;                        // m and v each: ddp the whole layout, ZeRO this rank's shards
  std::size_t grad_shard = 0;                   // ZeRO: this rank's gradient shards
  std::size_t param_shard = 0;                  // zero3: this rank's parameter shards
  std::size_t staging = 0;                      // zero1/2: one padded segment (reduce-scatter input, allgather output)
  std::size_t grad_work0 = 0, grad_work = 0;    // zero2/3: segment 0's and another segment's gradients
  std::size_t param_work0 = 0, param_work = 0;  // zero3: gathered segment 0 / another segment
  std::size_t rs_sum = 0;                       // zero2/3 with micro-batches: one reduce-scatter's output
  std::size_t master = 0;                       // fp32 master weights
  std::vector<int> bucket_first;                // ddp: ShardPlan::buckets

  bool sharded() const noexcept { return mode != DpMode::kDdp; }
  // ddp: the elements [offset, offset + count) that segment s's gradients close a bucket of; none
  // when s closes no bucket.
  std::optional<Segment> bucket(const ShardPlan& plan, int s) const;
  // Bytes by kind; work_buffers: the copies of grad_work and param_work the engine keeps.
  MemoryReport memory(int work_buffers, std::size_t activations) const;
};

// The factor that clips the gradients to adamw.grad_clip (1: no clipping).
inline float clip_scale(const AdamWOptions& adamw, float norm) {
  return adamw.grad_clip > 0 && norm > adamw.grad_clip ? adamw.grad_clip / (norm + 1e-6f) : 1.0f;
}

// std::invalid_argument ("<who>::load: ...") unless params (and m and v, unless empty) hold the
// layout's `total` elements.
void check_load(const char* who, std::size_t total, std::span<const float> params, std::span<const float> m,
                std::span<const float> v);

// Loads full buffers into an engine: Device::put_state(0 for m, 1 for v, values) with the rank's
// part (empty: zeros), then Device::put_params(full, shard) with this rank's shards of the
// parameters (ZeRO; empty under ddp).
template <class Device>
void load_state(Device& device, const BufferPlan& buffers, const ShardPlan& plan, std::span<const float> params,
                std::span<const float> m, std::span<const float> v) {
  const std::span<const float> states[] = {m, v};
  for (int which = 0; which < 2; ++which) {
    const std::span<const float> full = states[which];
    if (full.empty() || !buffers.sharded()) {
      device.put_state(which, full);
    } else {
      const std::vector<float> mine = plan.take_shards(full);
      device.put_state(which, std::span<const float>(mine));
    }
  }
  const std::vector<float> shard = buffers.sharded() ? plan.take_shards(params) : std::vector<float>{};
  device.put_params(params, std::span<const float>(shard));
}

// The other way: an AdamW moment (m or v) of this rank, `mine`, as the whole layout on every rank
// (full_m(), full_v()): ddp holds it whole, ZeRO this rank's shards, gathered over comm here
// (collective). The moments' storage stays with each engine (host vectors on the CPU, device
// arrays beside the fp32 master weights on CUDA), in the sizes this plan gives (state).
inline std::vector<float> full_state(const BufferPlan& buffers, const ShardPlan& plan, Communicator& comm,
                                     std::vector<float> mine) {
  return buffers.sharded() ? gather_shards(comm, plan, mine) : mine;
}

// One training step, the recipe of every mode (engine.hpp): forward and backward through the
// micro-batches (the hooks communicate: ddp buckets, zero2/3 reduce-scatters), the embedding's
// gradients summed between the pipeline's ends, zero1's reduce-scatter of every segment, the
// global loss and gradient norm, clipping, and AdamW on the parameters the rank updates (ZeRO:
// its shards, then allgathered unless zero3). The Device:
//   zero_grads(), begin_step()          before the micro-batches
//   run_micro_batches(in, tg, train)    this stage's mean loss over them
//   sum_embedding_grads(sharded)        the tied wte's gradients between the first and last stage
//   to_comm(), scatter_segment(sh)      zero1: the communication waits for the compute; one
//                                       segment's gradients, padded, reduce-scattered
//   backward_comm_done()                the compute waits for backward's communication
//   global_mean(local), grad_norm(sharded)
//   optimizer_scope()                   the update's profiler scope (kept while it runs)
//   update_whole(lr, scale)             ddp: AdamW on the whole layout
//   update_shard(sh, begin, count, lr, scale), publish_shard(sh, count)
//                                       ZeRO: AdamW on the rank's part of segment sh; zero1/2:
//                                       every rank's updated part -> the model's segment
//   updated_shards()                    zero3, after the shards' updates
//   end_step()                          after the update
template <class Device>
TrainEngine::StepResult data_parallel_step(Device& device, const BufferPlan& buffers, const ShardPlan& plan,
                                           const AdamWOptions& adamw, std::int64_t& step, const int* inputs,
                                           const int* targets) {
  const DpMode mode = buffers.mode;
  TrainEngine::StepResult r;
  if (buffers.full_grads) device.zero_grads();
  device.begin_step();

  const double local_loss = device.run_micro_batches(inputs, targets, true);
  if (buffers.full_grads) device.sum_embedding_grads(false);
  if (mode == DpMode::kZero1) {
    device.to_comm();
    for (const Shard& sh : plan.shards) device.scatter_segment(sh);
  }
  if (!buffers.full_grads) device.sum_embedding_grads(true);
  device.backward_comm_done();
  r.loss = device.global_mean(local_loss);

  r.grad_norm = device.grad_norm(buffers.sharded());
  const float scale = clip_scale(adamw, r.grad_norm);
  r.lr = learning_rate(adamw, step);
  ++step;

  {
    const auto scope = device.optimizer_scope();
    if (!buffers.sharded()) {
      device.update_whole(r.lr, scale);
    } else {
      for (const Shard& sh : plan.shards) {
        const std::size_t count = plan.owned_count(sh);
        device.update_shard(sh, plan.owned_begin(sh), count, r.lr, scale);
        if (mode != DpMode::kZero3) device.publish_shard(sh, count);  // zero3: the next forward gathers
      }
      if (mode == DpMode::kZero3) device.updated_shards();
    }
  }
  device.end_step();
  return r;
}

}  // namespace commscope::trainer::parallel
