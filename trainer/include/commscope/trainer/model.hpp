#pragma once
// A GPT-2 (token + learned position embeddings, pre-LayerNorm blocks with causal multi-head
// attention and a GELU MLP, final LayerNorm, output head tied to wte) on the CPU, templated on
// the element type: float for training, double for the gradient checks' reference.
//
// Memory is explicit: one parameter buffer and one gradient buffer (ParameterLayout), and one
// activation buffer holding every activation backward needs, for a fixed [batch, seq]:
//   encoded [B,T,C]; per layer: ln1 [B,T,C], ln1_mean/ln1_rstd [B,T], qkv [B,T,3C], atty [B,T,C],
//   preatt/att [B,NH,T,T], attproj [B,T,C], residual2 [B,T,C], ln2 [B,T,C], ln2_mean/rstd [B,T],
//   fch/fch_gelu [B,T,4C], fcproj [B,T,C], residual3 [B,T,C]; lnf [B,T,C], lnf_mean/rstd [B,T],
//   logits/probs [B,T,Vp], losses [B,T]   (and the same shapes for the activation gradients).
// GEMMs go through OpenBLAS (sgemm/dgemm), the other loops through OpenMP.
//
// Data parallelism plugs in through Hooks (see the engines, engine.hpp): the model reads a segment's
// parameters and writes its gradients through pointers the hooks give, so ZeRO-3 can keep only a
// shard resident and gather a layer at a time. Without hooks, params() and grads() are used.
//
// Call order (segments: 0 = embeddings, 1..L = layers, L+1 = final layernorm):
//   forward:  acquire(0) encoder release(0); for l: acquire(1+l) block l release(1+l);
//             acquire(L+1) lnf release(L+1); acquire(0) logits (tied wte) release(0)
//   backward: acquire(0) grad(0) head release(0); acquire(L+1) grad(L+1) lnf release(L+1)
//             grads_ready(L+1); for l = L-1..0: acquire(1+l) grad(1+l) block l release(1+l)
//             grads_ready(1+l); grad(0) encoder grads_ready(0)  (the encoder's backward reads no
//             parameters, so ZeRO-3 gathers segment 0 three times a step: encoder, head, head's
//             backward)
// Gradients are ADDED into grad(s) (the owner zeroes them); grad(0) receives the head's and the
// encoder's contributions, so it must stay the same buffer until grads_ready(0).
//
// Tensor parallelism (tp > 1, Megatron-LM's split; src/parallel/tensor_parallel.hpp): the model holds one
// rank's shard of the layout (ParameterLayout(config, tp)): its NH/tp heads of the attention
// (qkv column-parallel, attproj row-parallel) and its 4C/tp hidden units of the MLP (fc
// column-parallel, fcproj row-parallel); the position embedding wpe, the layernorms and the
// row-parallel biases are replicated (the token embedding and the tied head: see below). Each
// block calls the TP sum (set_tensor_parallel) four times on [batch, seq, C]: forward, the attproj and fcproj partial outputs (before their biases: the "g"
// operator); backward, the gradients of ln1 and ln2 (the inputs of qkv and fc: the "f"
// operator). Everything else, the loss and the replicated tensors' gradients included, comes out
// identical on the TP ranks. The token embedding wte is vocabulary-parallel (Megatron's
// VocabParallelEmbedding and parallel cross-entropy): TP rank r holds rows [r Vp/tp, (r+1) Vp/tp);
// the encoder looks up the tokens in its rows (zeros elsewhere) and sums over the TP ranks before
// adding wpe; the tied head computes only its Vp/tp columns of the logits, and the cross-entropy
// takes the row maximum (a TP max), the sum of exponentials and the target's logit (TP sums) of
// [batch, seq] values instead of gathering the logits; backward sums the head's input gradient
// over the TP ranks. So a rank's logits, probabilities and their gradient are [B, T, Vp/tp].
//
// Sequence parallelism (sequence_parallel, tp > 1; Megatron-LM's): the token rows between the
// blocks' matmuls are split over the TP ranks instead of repeated: rank r holds rows
// [r N/tp, (r+1) N/tp) of the N = batch x seq positions of the residual stream, the layernorms and
// the residuals (N divisible by tp). The row-parallel outputs and the head's input gradient are
// reduce-scattered into those rows instead of allreduced; the layernorms' outputs (the column-
// parallel inputs) and the gradients of attproj's and fcproj's outputs are allgathered back to N
// rows; the encoder's lookup is reduce-scattered and the gradient of the encoder's output
// allgathered. The same bytes as the allreduces (a reduce-scatter and an allgather are half an
// allreduce each), but the residual stream's activations are 1/tp. The layernorms' weight
// gradients then cover this rank's rows only: they are summed over the TP ranks (2C elements per
// layernorm) before the segment's grads_ready. A pipeline stage's input and output are its rows.
//
// Pipeline parallelism (a Stage of several; layout.hpp): the model holds its stage's layers. A
// stage after the first takes its input (the previous stage's last residual, [batch, seq, C])
// as forward's stage_input instead of embedding the tokens; a stage before the last ends at its
// last layer's residual (stage_output) and returns loss 0, and its backward starts from the
// gradient of that output (output_grad) instead of the loss; the gradient of its input is then
// stage_input_grad. Segment hooks keep the call order above for the segments a stage runs, and
// grads_ready(L+1) and grads_ready(0) are called on every stage (on segments without elements
// where the stage lacks them), so that bucketing and sharding see every segment complete.
// Slots: activations for several micro-batches in flight (select_slot picks the one forward
// writes and backward reads; the activation gradients are shared, one backward at a time).

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "commscope/trainer/config.hpp"
#include "commscope/trainer/layout.hpp"
#include "commscope/trainer/segment_hooks.hpp"

namespace commscope::trainer {

template <class T>
class Gpt2 {
 public:
  using Hooks = SegmentHooks<T>;

  // Activations for inputs of [batch, seq] tokens (seq <= config.max_seq). Parameters are
  // zero until init() or a copy into params(). tp > 1: one rank's shard of tensor parallelism
  // over tp ranks (heads divisible by tp; std::invalid_argument otherwise).
  // sequence_parallel: see above (tp > 1, batch x seq divisible by tp; std::invalid_argument).
  Gpt2(const ModelConfig& config, int batch, int seq, int tp = 1, Stage stage = {}, int slots = 1,
       bool sequence_parallel = false);
  ~Gpt2();
  Gpt2(const Gpt2&) = delete;
  Gpt2& operator=(const Gpt2&) = delete;

  const ModelConfig& config() const noexcept;
  const ParameterLayout& layout() const noexcept;
  int tp() const noexcept;
  bool sequence_parallel() const noexcept;
  const Stage& stage() const noexcept;
  int slots() const noexcept;
  void select_slot(int slot);  // std::out_of_range unless 0 <= slot < slots()
  int batch() const noexcept;
  int seq() const noexcept;

  // GPT-2's initialisation: weights N(0, 0.02) (residual projections attprojw and fcprojw scaled
  // by 1/sqrt(2L)), biases 0, layernorm weights 1; deterministic in `seed`; the padded vocabulary
  // rows of wte are 0. tp() == 1 only (std::logic_error otherwise: initialise the whole model and
  // take a rank's shard with tp_shard).
  void init(std::uint64_t seed);

  // The whole-model parameter and gradient buffers, allocated on first use (so a model driven
  // entirely through hooks, as ZeRO-3 drives it, never holds them).
  std::span<T> params();
  std::span<T> grads();
  void zero_grads();
  void set_hooks(Hooks hooks);  // empty std::functions fall back to params()/grads()/no-ops
  // tp > 1: this rank's TP rank and the in-place sum and maximum over the TP ranks of `count`
  // elements (every TP rank calls them in the same order). Required before forward when tp() > 1.
  // Sequence parallelism also needs the reduce-scatter of a [N, C] array into this rank's
  // [N/tp, C] rows and the allgather back (counts: this rank's elements).
  struct TensorParallel {
    int rank = 0;
    std::function<void(T*data, std::size_t count)> sum, max;
    std::function<void(const T* full, T* mine, std::size_t count)> reduce_scatter;
    std::function<void(const T* mine, T* full, std::size_t count)> allgather;
  };
  void set_tensor_parallel(TensorParallel tp);

  // inputs, targets: [batch, seq] token ids < vocab. Returns the mean cross-entropy over
  // batch*seq (0 when targets is null: logits/probs only).
  // stage_input: a later pipeline stage's input ([batch, seq, C]); ignored by the first stage.
  T forward(const int* inputs, const int* targets, const T* stage_input = nullptr);
  // Gradients of loss_scale * (the selected slot's forward's mean loss), added into grad(s). An
  // earlier pipeline stage starts from output_grad ([batch, seq, C], loss_scale already in it).
  void backward(T loss_scale = T(1), const T* output_grad = nullptr);
  std::span<const T> stage_output() const noexcept;      // the selected slot's last residual (its rows under SP)
  std::span<const T> stage_input_grad() const noexcept;  // after backward: d loss / d stage input

  std::span<const T> probs() const noexcept;  // [batch, seq, Vp/tp] softmax of the last forward (this rank's columns)
  std::size_t activation_bytes() const noexcept;  // activations + their gradients

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

extern template class Gpt2<float>;
extern template class Gpt2<double>;

}  // namespace commscope::trainer
