#pragma once
// How data parallelism plugs into a model, the CPU's Gpt2 (model.hpp) and the GPU's CudaGpt2
// alike: the model reads a segment's parameters and adds its gradients through pointers the
// hooks give, and says when a segment's gradients are complete, so ZeRO-3 can keep only a shard
// resident and gather a layer at a time. Empty hooks fall back to the model's own whole buffers.
// Which hooks each data-parallel mode installs is written once, in engine.hpp.

#include <functional>

namespace commscope::trainer {

template <class T>
struct SegmentHooks {
  std::function<const T*(int segment)> acquire;  // the segment's parameters (layout().segment(s).count elements)
  std::function<T*(int segment)> grad;           // where the segment's gradients are added
  std::function<void(int segment)> release;      // done with acquire(segment)'s pointer
  // The segment's gradients of this backward are complete (on a GPU: enqueued on the model's
  // stream; a hook that communicates orders itself after that work).
  std::function<void(int segment)> grads_ready;
};

}  // namespace commscope::trainer
