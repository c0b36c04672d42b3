#pragma once
// How data parallelism cuts the parameter layout (one plan for the CPU and the CUDA trainers).
//
// ZeRO shards each segment separately: segment s (n elements) is padded to a multiple of the
// rank count P, and rank r owns elements [r n'/P, (r+1) n'/P) of it, so a layer gathers with one
// allgather and its gradients scatter with one reduce-scatter. A rank's shards of all segments
// lie one after another in its shard buffers. DDP reduces buckets of whole segments in backward
// order (L+1, L, ..., 0), each at least the bucket size.

#include <cstddef>
#include <span>
#include <vector>

#include "commscope/collectives/communicator.hpp"
#include "commscope/trainer/layout.hpp"

namespace commscope::trainer::parallel {

// One segment as sharded over P ranks.
struct Shard {
  std::size_t offset = 0;   // segment's first element in the layout
  std::size_t count = 0;    // segment's elements
  std::size_t padded = 0;   // count rounded up to a multiple of P
  std::size_t length = 0;   // padded / P: elements per rank
  std::size_t storage = 0;  // where this segment's shard starts in a rank's shard buffers
};

struct ShardPlan {
  ShardPlan(const ParameterLayout& layout, int ranks, int rank);

  int ranks = 1, rank = 0;
  std::vector<Shard> shards;         // one per segment
  std::size_t shard_total = 0;       // elements of a rank's shard buffers
  std::size_t max_padded = 0;        // the largest padded segment
  std::size_t max_padded_layer = 0;  // the largest padded segment other than segment 0

  // This rank's real (not padding) elements of segment sh: the first one (in the layout) and how many.
  std::size_t owned_begin(const Shard& sh) const;
  std::size_t owned_count(const Shard& sh) const;
  // DDP's buckets: for the segment that closes a bucket, the bucket's first (highest) segment;
  // -1 for the others. Segment 0 always closes one.
  std::vector<int> buckets(std::size_t bucket_bytes, std::size_t element_bytes) const;
  // This rank's shards (shard_total elements, padding 0) of a whole-layout buffer.
  std::vector<float> take_shards(std::span<const float> full) const;
};

// Every rank's shards -> the whole layout, on every rank (host buffers, over MPI). Collective.
std::vector<float> gather_shards(Communicator& comm, const ShardPlan& plan, std::span<const float> mine);

}  // namespace commscope::trainer::parallel
