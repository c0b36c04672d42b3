#include "parallel/data_parallel_step.hpp"

namespace commscope::trainer::parallel {

BufferPlan::BufferPlan(DpMode m, const ShardPlan& plan, std::size_t total, int micro_batches, std::size_t element,
                       std::size_t bucket_bytes, bool has_master, bool mixed)
    : mode(m), element_bytes(element), full(total), full_grads(m == DpMode::kDdp || m == DpMode::kZero1) {
  const bool zero = sharded();
  const bool zero23 = m == DpMode::kZero2 || m == DpMode::kZero3;
  state = zero ? plan.shard_total : total;
  if (zero) grad_shard = plan.shard_total;
  if (m == DpMode::kZero1 || m == DpMode::kZero2) staging = plan.max_padded;
  if (zero23) {
    grad_work0 = plan.shards[0].padded;
    grad_work = plan.max_padded_layer;
  }
  if (m == DpMode::kZero3) {
    param_shard = plan.shard_total;
    param_work0 = plan.shards[0].padded;
    param_work = plan.max_padded_layer;
  }
  if (micro_batches > 1 && zero23) rs_sum = plan.max_padded / static_cast<std::size_t>(plan.ranks);
  if (has_master) master = zero ? plan.shard_total : (mixed ? total : 0);
  if (m == DpMode::kDdp) bucket_first = plan.buckets(bucket_bytes, element);
}

std::optional<Segment> BufferPlan::bucket(const ShardPlan& plan, int s) const {
  const int first = bucket_first[static_cast<std::size_t>(s)];
  if (first < 0) return std::nullopt;
  const Shard& lo = plan.shards[static_cast<std::size_t>(s)];
  const Shard& hi = plan.shards[static_cast<std::size_t>(first)];
  return Segment{lo.offset, hi.offset + hi.count - lo.offset};
}

MemoryReport BufferPlan::memory(int work_buffers, std::size_t activations) const {
  const std::size_t e = element_bytes, w = static_cast<std::size_t>(work_buffers);
  MemoryReport r;
  r.params = (mode == DpMode::kZero3 ? param_shard : full) * e + master * sizeof(float);
  r.grads = (full_grads ? full : 0) * e + grad_shard * e;
  r.optimizer = 2 * state * sizeof(float);
  r.working = (staging + grad_work0 + w * grad_work + param_work0 + w * param_work) * e;
  r.activations = activations;
  return r;
}

void check_load(const char* who, std::size_t total, std::span<const float> params, std::span<const float> m,
                std::span<const float> v) {
  if (params.size() != total || (!m.empty() && m.size() != total) || (!v.empty() && v.size() != total))
    throw std::invalid_argument(std::string(who) + "::load: buffers must hold the model's " + std::to_string(total) +
                                " parameters");
}

}  // namespace commscope::trainer::parallel
