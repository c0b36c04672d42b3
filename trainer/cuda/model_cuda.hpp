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
// Memory differs from the CPU model's where the GPU needs it to: with flash attention (ours or
// cuDNN's) no T x T square is kept, only each row's logsumexp; with the naive attention the
// pre-softmax square and its gradients are one scratch shared by every layer (backward needs
// only the post-softmax att). Activation gradients are one layer's set, and the residual stream's
// gradient one buffer that every layer's backward reads and adds into (the residual add's
// backward is the identity). The logits become their own gradient in place: with tp == 1 the
// forward keeps only each row's logsumexp (xent_forward) and backward writes dlogits from the
// logits (xent_backward); with tp > 1 through the probabilities.
//
// Every layer step is an operator of the profiler (OperatorScope) and an NVTX range of the same
// name, so CUPTI links the step's kernels to it and Nsight Systems shows it.
//
// Tensor and pipeline parallelism are model.hpp's, on the same layouts (ParameterLayout(config,
// tp, stage)): a rank's heads and hidden units, its vocabulary rows of wte with the
// vocabulary-parallel encoder and cross-entropy, the four TP sums per block and one for the head's
// input gradient; a stage's layers, its input and output residuals and their gradients, and slots
// of activations for micro-batches in flight (the scratch and the activation gradients shared).
// The TP operations (set_tensor_parallel) are called on the host in model order and must enqueue
// their work on the model's stream (or finish it before they return).

#include <cublas_v2.h>
#include <cuda_runtime_api.h>

#include <cstddef>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "commscope/trainer/config.hpp"
#include "commscope/trainer/layout.hpp"
#include "commscope/trainer/segment_hooks.hpp"

namespace commscope::trainer::cuda {

// How a layer's causal attention runs. naive: today's kernels (the T x T scores in memory,
// cuBLAS products and a causal softmax), every precision and head size; flash: our flash-attention
// kernels (bf16, head size 64); cudnn: cuDNN's fused flash attention (bf16, head size 64, builds
// with cuDNN); automatic: naive where neither fused one runs, ours where cuDNN cannot, else the
// faster of ours and cuDNN's on this GPU and shape, timed when the model is made.
enum class Attention { automatic, naive, flash, cudnn };
std::string attention_name(Attention a);         // "auto", "naive", "flash", "cudnn"
std::string attention_description(Attention a);  // the name and what runs (cuDNN's version)
std::optional<Attention> parse_attention(const std::string& name);

template <class T>
class CudaGpt2 {
 public:
  using Hooks = SegmentHooks<T>;  // device pointers

  // On the current device; `stream` is the caller's (used, not owned). tp > 1: one rank's shard
  // of tensor parallelism; stage: a pipeline stage (model.hpp); slots: activation sets;
  // attention: the implementation (an impossible choice: std::invalid_argument, one line).
  CudaGpt2(const ModelConfig& config, int batch, int seq, cudaStream_t stream, int tp = 1, Stage stage = {},
           int slots = 1, Attention attention = Attention::automatic);
  ~CudaGpt2();
  CudaGpt2(const CudaGpt2&) = delete;
  CudaGpt2& operator=(const CudaGpt2&) = delete;

  const ModelConfig& config() const noexcept;
  const ParameterLayout& layout() const noexcept;
  int batch() const noexcept;
  int seq() const noexcept;
  int tp() const noexcept;
  const Stage& stage() const noexcept;
  int slots() const noexcept;
  Attention attention() const noexcept;  // the one chosen (never automatic)
  // Where --attention auto timed ours against cuDNN's on this shape, the two times ("auto, timed
  // here: ..."); "" otherwise.
  const std::string& attention_timing() const noexcept;
  void select_slot(int slot);  // std::out_of_range unless 0 <= slot < slots()
  cudaStream_t stream() const noexcept;

  // The whole-model parameter and gradient buffers (device, layout().total() elements),
  // allocated on first use, as in model.hpp.
  T* params();
  T* grads();
  void zero_grads();  // enqueued
  void set_hooks(Hooks hooks);
  // tp > 1: this rank's TP rank and the in-place sums and maximum over the TP ranks (device
  // pointers; the statistics of the cross-entropy are float whatever T is). Required before
  // forward when tp() > 1.
  struct TensorParallel {
    int rank = 0;
    std::function<void(T* data, std::size_t count)> sum;
    std::function<void(float*data, std::size_t count)> sum_f32, max_f32;
  };
  void set_tensor_parallel(TensorParallel tp);

  // inputs, targets: host arrays of [batch, seq] token ids < vocab (checked on the host, then
  // copied). targets null: logits/probabilities only. stage_input: a later pipeline stage's
  // input, [batch, seq, C] on the device (ignored by the first stage).
  void forward(const int* inputs, const int* targets, const T* stage_input = nullptr);
  // The mean cross-entropy of the selected slot's forward with targets; waits for the stream. 0
  // before the last pipeline stage.
  float loss();
  // Gradients of loss_scale * (the selected slot's mean loss), added into grad(s). Enqueued. An
  // earlier pipeline stage starts from output_grad ([batch, seq, C], device, loss_scale in it).
  void backward(float loss_scale = 1.0f, const T* output_grad = nullptr);
  const T* stage_output() const noexcept;      // the selected slot's last residual [batch, seq, C]
  const T* stage_input_grad() const noexcept;  // after backward: d loss / d stage input

  std::size_t activation_bytes() const noexcept;  // activations, their gradients and scratch
  // The libraries' workspaces made for this model: cuBLAS's, cuBLASLt's (the device's one) and,
  // with cuDNN's attention, cuDNN's.
  std::size_t library_bytes() const noexcept;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace commscope::trainer::cuda
