#include "parallel/sharding.hpp"

#include <algorithm>

namespace commscope::trainer::parallel {

ShardPlan::ShardPlan(const ParameterLayout& layout, int P, int r) : ranks(P), rank(r) {
  const auto p = static_cast<std::size_t>(P);
  for (int s = 0; s < layout.segment_count(); ++s) {
    Shard sh;
    sh.offset = layout.segment(s).offset;
    sh.count = layout.segment(s).count;
    sh.padded = (sh.count + p - 1) / p * p;
    sh.length = sh.padded / p;
    sh.storage = shard_total;
    shard_total += sh.length;
    max_padded = std::max(max_padded, sh.padded);
    if (s > 0) max_padded_layer = std::max(max_padded_layer, sh.padded);
    shards.push_back(sh);
  }
}

std::size_t ShardPlan::owned_begin(const Shard& sh) const {
  return sh.offset + static_cast<std::size_t>(rank) * sh.length;
}

std::size_t ShardPlan::owned_count(const Shard& sh) const {
  const std::size_t b = owned_begin(sh), end = sh.offset + sh.count;
  return b >= end ? 0 : std::min(sh.length, end - b);
}

std::vector<int> ShardPlan::buckets(std::size_t bucket_bytes, std::size_t element_bytes) const {
  std::vector<int> first_of(shards.size(), -1);
  int first = static_cast<int>(shards.size()) - 1;
  std::size_t bytes = 0;
  for (int s = first; s >= 0; --s) {
    bytes += shards[static_cast<std::size_t>(s)].count * element_bytes;
    if (bytes >= bucket_bytes || s == 0) {
      first_of[static_cast<std::size_t>(s)] = first;
      first = s - 1;
      bytes = 0;
    }
  }
  return first_of;
}

std::vector<float> ShardPlan::take_shards(std::span<const float> full) const {
  std::vector<float> mine(shard_total, 0.0f);
  for (const Shard& sh : shards) std::copy_n(full.data() + owned_begin(sh), owned_count(sh), mine.data() + sh.storage);
  return mine;
}

std::vector<float> gather_shards(Communicator& comm, const ShardPlan& plan, std::span<const float> mine) {
  std::size_t total = 0;
  for (const Shard& sh : plan.shards) total = std::max(total, sh.offset + sh.count);
  std::vector<float> full(total), work(plan.max_padded);
  for (const Shard& sh : plan.shards) {
    comm.allgather(mine.data() + sh.storage, work.data(), sh.length, DataType::f32, "mpi");
    std::copy_n(work.data(), sh.count, full.data() + sh.offset);
  }
  return full;
}

}  // namespace commscope::trainer::parallel
