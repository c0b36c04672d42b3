#pragma once
// A model's views of its parameters and gradients by segment, one piece of code for the CPU's
// Gpt2 (src/model_impl.hpp) and the GPU's CudaGpt2 (cuda/model_cuda.cpp): a segment's buffers
// through the hooks of segment_hooks.hpp, falling back to the model's own whole buffers, a tensor
// inside a segment's buffer and a layer's 12 tensors. Only pointers are computed, so host and
// device buffers alike.

#include <vector>

#include "commscope/trainer/layout.hpp"
#include "commscope/trainer/segment_hooks.hpp"

namespace commscope::trainer {

// A layer's 12 tensors, as pointers into its segment (P = const T for parameters, T for grads).
template <class P>
struct LayerTensors {
  P *ln1w, *ln1b, *qkvw, *qkvb, *attprojw, *attprojb, *ln2w, *ln2b, *fcw, *fcb, *fcprojw, *fcprojb;
};

// The model's side (CRTP): Model has `layout` (its ParameterLayout), `hooks` (SegmentHooks<T>),
// and own_params() / own_grads(), its whole buffers allocated at first use (a std::vector<T>& or
// a T*): a model whose hooks supply every segment (ZeRO-3) never holds them.
template <class Model, class T>
class SegmentViews {
 public:
  const T* acquire(int s) {
    Model& m = model();
    return m.hooks.acquire ? m.hooks.acquire(s) : data_of(m.own_params()) + m.layout.segment(s).offset;
  }
  T* grad(int s) {
    Model& m = model();
    return m.hooks.grad ? m.hooks.grad(s) : data_of(m.own_grads()) + m.layout.segment(s).offset;
  }
  void release(int s) {
    if (model().hooks.release) model().hooks.release(s);
  }
  void grads_ready(int s) {
    if (model().hooks.grads_ready) model().hooks.grads_ready(s);
  }

  // Tensor t (of layer l) inside segment s's buffer `base`.
  template <class P>
  P* at(P* base, int s, Tensor t, int l = 0) const {
    const ParameterLayout& layout = static_cast<const Model&>(*this).layout;
    return base + (layout.offset(t, l) - layout.segment(s).offset);
  }
  // Layer l's tensors inside its segment's (1 + l) buffer `base`.
  template <class P>
  LayerTensors<P> layer(P* base, int l) const {
    const int s = 1 + l;
    return {at(base, s, Tensor::ln1w, l), at(base, s, Tensor::ln1b, l),     at(base, s, Tensor::qkvw, l),
            at(base, s, Tensor::qkvb, l), at(base, s, Tensor::attprojw, l), at(base, s, Tensor::attprojb, l),
            at(base, s, Tensor::ln2w, l), at(base, s, Tensor::ln2b, l),     at(base, s, Tensor::fcw, l),
            at(base, s, Tensor::fcb, l),  at(base, s, Tensor::fcprojw, l),  at(base, s, Tensor::fcprojb, l)};
  }

 private:
  Model& model() { return static_cast<Model&>(*this); }
  static T* data_of(std::vector<T>& v) { return v.data(); }
  static T* data_of(T* p) { return p; }
};

}  // namespace commscope::trainer
