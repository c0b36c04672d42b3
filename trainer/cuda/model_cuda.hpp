#pragma once
// The GPT-2 of model.hpp on a CUDA GPU: the same layers, parameter layout, hooks and call order
// (see model.hpp), with the kernels of kernels_cuda.hpp, in fp32 (T = float) or bf16
// (T = __nv_bfloat16: parameters, gradients and activations in bf16, every kernel's arithmetic in
// float; the fp32 master weights live in the data-parallel engine).
//
// Everything is enqueued on the model's stream and the calls return without waiting, except
// loss(), which waits for the stream. Hooks give and take device pointers; they are called on
// the host thread in the order of model.hpp, when the work before them has been enqueued (not
// done): a hook that communicates orders itself after that work with an event.
//
// Memory differs from the CPU model's where the GPU needs it to: the attention scores'
// pre-softmax square and its gradients are one scratch shared by every layer (backward needs
// only the post-softmax att); activation gradients are one layer's set, zeroed per layer, with
// two residual-stream gradients used in turn; logits, probabilities and their gradient share one
// buffer.
//
// Every layer step is an operator of the profiler (OperatorScope) and an NVTX range of the same
// name, so CUPTI links the step's kernels to it and Nsight Systems shows it.

#include <cublas_v2.h>
#include <cuda_runtime_api.h>

#include <cstddef>
#include <functional>
#include <memory>

#include "commscope/trainer/config.hpp"
#include "commscope/trainer/layout.hpp"
#include "commscope/trainer/segment_hooks.hpp"

namespace commscope::trainer::cuda {

template <class T>
class CudaGpt2 {
 public:
  using Hooks = SegmentHooks<T>;  // device pointers

  // On the current device; `stream` is the caller's (used, not owned).
  CudaGpt2(const ModelConfig& config, int batch, int seq, cudaStream_t stream);
  ~CudaGpt2();
  CudaGpt2(const CudaGpt2&) = delete;
  CudaGpt2& operator=(const CudaGpt2&) = delete;

  const ModelConfig& config() const noexcept;
  const ParameterLayout& layout() const noexcept;
  int batch() const noexcept;
  int seq() const noexcept;
  cudaStream_t stream() const noexcept;

  // The whole-model parameter and gradient buffers (device, layout().total() elements),
  // allocated on first use, as in model.hpp.
  T* params();
  T* grads();
  void zero_grads();  // enqueued
  void set_hooks(Hooks hooks);

  // inputs, targets: host arrays of [batch, seq] token ids < vocab (checked on the host, then
  // copied). targets null: logits/probabilities only.
  void forward(const int* inputs, const int* targets);
  // The mean cross-entropy of the last forward with targets; waits for the stream.
  float loss();
  // Gradients of loss_scale * (the last forward's mean loss), added into grad(s). Enqueued.
  void backward(float loss_scale = 1.0f);

  std::size_t activation_bytes() const noexcept;  // activations, their gradients and scratch

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace commscope::trainer::cuda
