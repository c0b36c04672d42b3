// The shm algorithm's options, set on AlgoOptions (`algo.set(ShmOptions{...})`) and read by shm
// alone, and the shape of its node segment (the bench prints both).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

namespace commscope {

struct ShmOptions {
  static constexpr std::string_view kAlgorithm = "shm";  // AlgoOptions' key
  // The allreduce's switch: arrays of at least this many bytes take two-shot (reduce a 1/n
  // slice each, then gather the slices), smaller ones one-shot (every rank reduces all).
  // nullopt: by the node's rank count, as measured (shm_two_shot_switch).
  std::optional<std::size_t> two_shot_bytes = std::nullopt;
  // The step: the most bytes a rank puts into the segment per step (at most the segment's slot
  // size, 512 KiB); larger arrays are pipelined in steps of this size.
  std::size_t chunk_bytes = std::size_t{256} << 10;
  // The direct switch: arrays of at least this many bytes (nccl-tests' size) skip the segment's
  // slots where the kernel allows it, and each rank reads its peers' buffers itself (one copy
  // instead of two: allgather, gather, broadcast, scatter; and reducescatter, which reads its
  // block of every peer's input and reduces it, and allreduce, which does so for its slice and
  // then reads the other slices from their owners' outputs). SIZE_MAX (the default): never;
  // docs/collectives.md has the measurements behind it.
  std::size_t direct_bytes = SIZE_MAX;
  // The adaptive switch: below direct_bytes, arrays of at least this many bytes (nccl-tests'
  // size) of the collectives with a direct form take the slots or the direct path, whichever the
  // call's size class has measured faster (each path three times first, then the faster, the
  // other every 32nd call: docs/collectives.md). SIZE_MAX: never (always the slots).
  std::size_t adapt_bytes = std::size_t{256} << 10;
};

// The node segment, per rank and whatever the array: `slots` slots of `slot_bytes` (a step uses
// ShmOptions::chunk_bytes of one) and a page of flags.
struct ShmSegmentShape {
  std::size_t slot_bytes = 0;
  int slots = 0;
  std::size_t flag_bytes = 0;
  std::size_t per_rank() const { return static_cast<std::size_t>(slots) * slot_bytes + flag_bytes; }
};
ShmSegmentShape shm_segment_shape();
// The allreduce/reduce switch that `options` gives on a node of `node_ranks` ranks: the explicit
// value, else 64 KiB for 2 ranks or oversubscribed ranks (one-shot's single handoff per step wins
// while its reduction stays small; a second handoff costs a context switch when ranks share
// cores), 4 KiB for 3 ranks and 2 KiB from 4 on (one-shot reads p slots per output element;
// two-shot wins from 2-4 KiB at 3 to 8 ranks on their own cores). Measurements:
// docs/collectives.md.
std::size_t shm_two_shot_switch(const ShmOptions& options, int node_ranks, bool oversubscribed);

}  // namespace commscope
