#pragma once
// The GPT-2 layer kernels on a CUDA GPU: the same contract as the CPU kernels in
// trainer/src/kernels.hpp (argument order, shapes, which outputs are overwritten and which
// gradients are added into), so a caller can swap one set for the other. Element type T is float
// or __nv_bfloat16 (explicit instantiations in kernels.cu, layernorm.cu (LayerNorm) and classifier.cu
// (the cross-entropy)).
//
// Conventions, on top of kernels.hpp's:
//   - Every pointer is a device pointer; every launcher enqueues its work on `stream` (the last
//     argument) and returns without waiting. Launch and cuBLAS errors throw std::runtime_error.
//   - Arithmetic is in float whatever T is: a bf16 element is widened when read and rounded
//     (to nearest even) once when written, so an accumulated gradient is rounded once per call.
//   - Statistics stay float for every T: layernorm's mean/rstd, the cross-entropy losses and its
//     dloss scale (bf16 would cost them their precision and saves nothing).
//   - The GEMM kernels take a cuBLAS handle in host pointer mode (the default); they set its
//     stream to `stream` and use CUBLAS_COMPUTE_32F: with the handle's default math mode, true
//     fp32 for float (no TF32) and float accumulation for bf16.
//   - Results are deterministic: no float atomics. Reductions over positions into a parameter
//     gradient (layernorm dw/db, matmul dbias) run in two stages through a float scratch that the
//     launcher takes from the stream-ordered allocator (cudaMallocAsync) and frees on the stream.
//   - encoder_backward gives each token's dwte row to one block (per channel block), which sums
//     the token's positions (grouped on the host: token_groups.hpp) in order in float and adds
//     once: no atomics, so it is deterministic and, for bf16, rounds once instead of once per
//     repeat (bf16 atomicAdd would round the running row at every occurrence of the token).

#include <cublas_v2.h>
#include <cuda_bf16.h>
#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

#include "adamw_piece.hpp"

// Declared only: kernels.cu is compiled as C++17 (CMake 3.25 has no C++20 dialect for nvcc) and
// the trainer headers need C++20; the AdamW launchers that read them live in adamw.cpp.
namespace commscope::trainer {
class ParameterLayout;
struct AdamWOptions;
}  // namespace commscope::trainer

namespace commscope::trainer::cuda_kernels {

// out[B,T,C] = wte[inp[b,t], :] + wpe[t, :]. inp: token ids < rows of wte.
template <class T>
void encoder_forward(T* out, const int* inp, const T* wte, const T* wpe, int B, int Tn, int C, cudaStream_t stream);
// dwte[inp[b,t] - v0, :] += dout[b,t,:] for the tokens of the groups (device memory, made by
// group_tokens over inp with the same v0: every token with v0 = 0, a rank's vocabulary rows
// otherwise); dwpe[t, :] += dout[b,t,:] for every position. One launch.
template <class T>
void encoder_backward(T* dwte, T* dwpe, const T* dout, const int* groups, int group_count, int v0, int B, int Tn, int C,
                      cudaStream_t stream);

// Per position n: mean[n], rstd[n] = 1 / sqrt(biased variance + 1e-5) of inp[n,:];
// out[n,c] = (inp[n,c] - mean[n]) * rstd[n] * w[c] + b[c]. Shapes: inp/out [N,C], w/b [C]; one
// warp per position. The LayerNorm launchers (layernorm.cu) run at memory speed when C is a multiple
// of 16 / sizeof(T), C <= 1024 (float) or 2048 (bf16) and every [N,C] and [C] pointer is 16-byte
// aligned; otherwise a slower scalar kernel gives the same results.
template <class T>
void layernorm_forward(T* out, float* mean, float* rstd, const T* inp, const T* w, const T* b, int N, int C,
                       cudaStream_t stream);
// residual_out = a + b (n = N*C elements, rounded to T once), then layernorm_forward of it:
// out, mean, rstd as layernorm_forward's. One pass: residual_out written and normalised from
// registers. residual_out may be a or b (in place); out is a buffer of its own.
template <class T>
void residual_layernorm_forward(T* residual_out, T* out, float* mean, float* rstd, const T* a, const T* b, const T* w,
                                const T* bias, int N, int C, cudaStream_t stream);
// dinp [N,C], dw/db [C] (added into), from dout [N,C] and the forward's inp, w, mean, rstd.
template <class T>
void layernorm_backward(T* dinp, T* dw, T* db, const T* dout, const T* inp, const T* w, const float* mean,
                        const float* rstd, int N, int C, cudaStream_t stream);

// out[N,OC] = inp[N,C] w[OC,C]^T + bias[OC] (bias may be null). With a bias, out is first filled
// with it and the GEMM adds into it (beta = 1), so a bf16 out is rounded once.
template <class T>
void matmul_forward(T* out, const T* inp, const T* w, const T* bias, int N, int C, int OC, cublasHandle_t handle,
                    cudaStream_t stream);
// With a bias the GEMM takes it in cuBLASLt's epilogue where it can (gemm_lt.hpp).
// The MLP's first layer: pre_gelu = inp w^T + bias (matmul_forward), out = gelu(pre_gelu)
// (gelu_forward); in bf16 one cuBLASLt GEMM with the bias and GELU in its epilogue. Both WRITTEN.
template <class T>
void matmul_forward_gelu(T* out, T* pre_gelu, const T* inp, const T* w, const T* bias, int N, int C, int OC,
                         cublasHandle_t handle, cudaStream_t stream);
// dinp[N,C] += dout[N,OC] w[OC,C]; dw[OC,C] += dout^T inp; dbias[OC] += sum_n dout[n,:]
// (dbias may be null). add_dinp false: dinp is WRITTEN (=), which spares the caller zeroing it.
// dinp null: dw and dbias only.
template <class T>
void matmul_backward(T* dinp, T* dw, T* dbias, const T* dout, const T* inp, const T* w, int N, int C, int OC,
                     cublasHandle_t handle, cudaStream_t stream, bool add_dinp = true);
// The MLP's projection backward through the GELU before it: dpre[N,C] = (dout w) * gelu'(pre_gelu)
// WRITTEN (the gradient of the GELU's input), dw and dbias added into as matmul_backward's. In bf16
// one cuBLASLt GEMM with the DGELU epilogue; else through scratch [N,C] (matmul_backward, then
// gelu_backward).
template <class T>
void matmul_backward_dgelu(T* dpre, T* scratch, T* dw, T* dbias, const T* dout, const T* inp, const T* w,
                           const T* pre_gelu, int N, int C, int OC, cublasHandle_t handle, cudaStream_t stream);

// Causal multi-head self-attention. qkv [B,T,3C] holds q, k, v (head h at channels h*hs..);
// preatt[b,h,t,t2] = q[b,t,h] . k[b,t2,h] / sqrt(hs) (the whole T x T square is written; entries
// t2 > t are masked), att[b,h,t,:] = softmax over t2 <= t and 0 for t2 > t, both [B,NH,T,T];
// out[b,t,h*hs+i] = sum_t2 att * v[b,t2,h,i]. The products are cuBLAS strided-batched GEMMs (one
// call per batch row b, the NH heads as the batch); the softmax is one warp per row.
template <class T>
void attention_forward(T* out, T* preatt, T* att, const T* qkv, int B, int Tn, int C, int NH, cublasHandle_t handle,
                       cudaStream_t stream);
// dqkv [B,T,3C] added into; datt and dpreatt [B,NH,T,T] are scratch that this WRITES (dpreatt is 0
// for t2 > t).
template <class T>
void attention_backward(T* dqkv, T* dpreatt, T* datt, const T* dout, const T* qkv, const T* att, int B, int Tn, int C,
                        int NH, cublasHandle_t handle, cudaStream_t stream);

// GELU, tanh approximation: out = x/2 (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))), n elements.
template <class T>
void gelu_forward(T* out, const T* inp, std::size_t n, cudaStream_t stream);
// dinp += dout * gelu'(inp).
template <class T>
void gelu_backward(T* dinp, const T* inp, const T* dout, std::size_t n, cudaStream_t stream);

// out = a + b (n elements); backward: da += dout, db += dout.
template <class T>
void residual_forward(T* out, const T* a, const T* b, std::size_t n, cudaStream_t stream);
template <class T>
void residual_backward(T* da, T* db, const T* dout, std::size_t n, cudaStream_t stream);

// Fused softmax + cross-entropy over logits [N,Vp] of which only the first V count: probs [N,Vp]
// (probs[n, V..Vp) = 0, as if those logits were -inf); losses[n] = -log probs[n, targets[n]]
// (nats, computed as logsumexp - logit). targets null: probs only (losses untouched). One block
// per position; probs may be logits itself (in place).
template <class T>
void softmax_xent_forward(T* probs, float* losses, const T* logits, const int* targets, int N, int V, int Vp,
                          cudaStream_t stream);
// WRITES dlogits[n,i] = (probs[n,i] - [i == targets[n]]) * dloss for i < V and 0 for the padding,
// where dloss = d(objective) / d(losses[n]) (the same for every n: loss_scale / N for a mean).
template <class T>
void softmax_xent_backward(T* dlogits, const T* probs, const int* targets, float dloss, int N, int V, int Vp,
                           cudaStream_t stream);

// The classifier's cross-entropy without stored probabilities (classifier.cu): the forward keeps
// lse per position instead of probs [N,Vp], the backward recomputes each probability from it.
// Logits [N,Vp], the first V of each row real; 0 <= targets[n] < V. One block per position;
// rows move in 128-bit packs where the row pointers are 16-byte aligned (Vp a multiple of 8 for
// bf16, 4 for float, and an aligned base pointer), one element at a time otherwise.
// One read of the logits: lse[n] = logsumexp(logits[n, i < V]) (float, online max and sum),
// losses[n] = lse[n] - logits[n, targets[n]] (targets null: losses untouched). The logits are
// only read. WRITES lse (and losses).
template <class T>
void xent_forward(float* losses, float* lse, const T* logits, const int* targets, int N, int V, int Vp,
                  cudaStream_t stream);
// WRITES dlogits[n,i] = (exp(logits[n,i] - lse[n]) - [i == targets[n]]) * dloss for i < V and 0
// for V <= i < Vp (the padding logits are not read); dlogits may be logits itself (in place). One
// read, one write.
template <class T>
void xent_backward(T* dlogits, const T* logits, const float* lse, const int* targets, float dloss, int N, int V,
                   int Vp, cudaStream_t stream);

// --- Tensor parallelism (model.hpp's Megatron split; one rank's share of the work)
// The vocabulary-parallel embedding: this rank holds rows [v0, v0 + rows) of wte.
// out[b,t,:] = wte[inp[b,t] - v0, :] where v0 <= inp[b,t] < v0 + rows, else 0 (WRITES out; no
// positions: the TP sum of every rank's out is the whole lookup).
template <class T>
void embedding_lookup(T* out, const int* inp, const T* wte, int v0, int rows, int B, int Tn, int C,
                      cudaStream_t stream);
// out[b,t,:] += wpe[t,:].
template <class T>
void add_positions(T* out, const T* wpe, int B, int Tn, int C, cudaStream_t stream);
// out[n, o] += bias[o], out [N, OC]: a row-parallel layer's bias, added once after the TP sum.
template <class T>
void add_bias(T* out, const T* bias, int N, int OC, cudaStream_t stream);
// The vocabulary-parallel softmax + cross-entropy, in three steps around the TP maximum and sums
// (model.hpp: no logits gathered). A rank's logits are [N, Vl], its columns v0 .. v0 + Vl - 1 of
// the vocabulary, of which the first `valid` are real tokens (below V) and the rest padding.
// 1. row_max[n] = max of logits[n, i < valid] (-inf where valid == 0). WRITES row_max.
template <class T>
void xent_row_max(float* row_max, const T* logits, int N, int valid, int Vl, cudaStream_t stream);
// 2. with row_max the TP maximum: row_sum[n] = the float sum of exp(logits[n,i] - row_max[n]) over
// i < valid; row_target[n] = logits[n, targets[n] - v0] where 0 <= targets[n] - v0 < valid, else 0
// (targets null: row_target untouched). WRITES both; the logits are only read.
template <class T>
void xent_sums(float* row_sum, float* row_target, const T* logits, const float* row_max, const int* targets, int v0,
               int N, int valid, int Vl, cudaStream_t stream);
// 3. with row_sum and row_target the TP sums: WRITES probs[n,i] = exp(logits[n,i] - row_max[n]) /
// row_sum[n] for i < valid (rounded to T once) and 0 for the padding (probs may be logits: in
// place); losses (when not null) [n] = log(row_sum[n]) + row_max[n] - row_target[n].
template <class T>
void xent_normalize(T* probs, float* losses, const T* logits, const float* row_sum, const float* row_max,
                    const float* row_target, int N, int valid, int Vl, cudaStream_t stream);
// softmax_xent_backward on this rank's columns: WRITES dlogits[n,i] = (probs[n,i] - [v0 + i ==
// targets[n]]) * dloss for i < valid, 0 for valid <= i < Vl. (v0 0, valid V, Vl Vp: the
// whole-vocabulary softmax_xent_backward.)
template <class T>
void softmax_xent_backward(T* dlogits, const T* probs, const int* targets, float dloss, int v0, int N, int valid,
                           int Vl, cudaStream_t stream);

// dst[i] = src[i] converted (float -> bf16 rounds to nearest even), n elements. For the
// mixed-precision copies between bf16 model buffers and float master weights and gradients.
void convert(float* dst, const __nv_bfloat16* src, std::size_t n, cudaStream_t stream);
void convert(__nv_bfloat16* dst, const float* src, std::size_t n, cudaStream_t stream);
// *out (device) = the sum of src[i]^2 over n elements, accumulated in float in a fixed order
// (grid-stride partial sums per block, then one block over the partials): deterministic.
template <class T>
void sum_squares(float* out, const T* src, std::size_t n, cudaStream_t stream);

// AdamW on float master parameters, float moments and float gradients (in adamw.cpp; callers
// include commscope/trainer/optimizer.hpp for AdamWOptions): the same update as the CPU
// commscope::trainer::adamw_update (g = grads[i] * grad_scale; bias correction with the 1-based
// step t, computed on the host in float exactly as the CPU does; weight decay weight_decay *
// params inside the step), for count elements that all share one weight decay.
void adamw_update(float* params, const float* grads, float* m, float* v, std::size_t count, float lr, float grad_scale,
                  float weight_decay, const AdamWOptions& options, std::int64_t t, cudaStream_t stream);
// The CPU adamw_update's counterpart: the parameters [begin, begin + count) of the layout (a whole
// buffer or a rank's shard), weight decay on the tensors decays() names. The range is cut into
// pieces of one weight decay each on the host; each launch covers up to 32 pieces. The gradients
// are read in the model's type G (float or bf16, widened as they are read: no fp32 copy of them
// is needed); with out non-null the updated parameters are also written there in G, the model's
// copy of them made in the same pass (bf16: rounded to nearest even, as convert() rounds).
template <class G>
void adamw_update(const ParameterLayout& layout, std::size_t begin, float* params, const G* grads, float* m, float* v,
                  G* out, std::size_t count, float lr, float grad_scale, const AdamWOptions& options, std::int64_t t,
                  cudaStream_t stream);

namespace detail {
// The building block of both adamw_update overloads: the scalars of one step and the pieces of
// the range [0, end of the last piece) that are updated, each with its weight decay (ascending,
// disjoint; elements between pieces are left alone).
struct AdamWStep {
  float lr, grad_scale, beta1, beta2, one_minus_beta1, one_minus_beta2, eps, correction1, correction2;
};
// AdamWPiece: adamw_piece.hpp.
// G: float or __nv_bfloat16 (kernels.cu instantiates both); out may be null.
template <class G>
void launch_adamw(float* params, const G* grads, float* m, float* v, G* out, const AdamWPiece* pieces,
                  std::size_t piece_count, const AdamWStep& step, cudaStream_t stream);
}  // namespace detail

}  // namespace commscope::trainer::cuda_kernels
