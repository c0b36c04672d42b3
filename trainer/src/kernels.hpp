#pragma once
// The GPT-2 layer kernels on the CPU, templated on the element type (float, double; explicit
// instantiations in kernels.cpp). Internal to commscope_trainer_core.
//
// Conventions:
//   - Shapes are row-major, in elements: B batch, T sequence, C channels, NH heads, hs = C / NH
//     head size, OC output channels, V vocabulary, Vp padded vocabulary; N = B * T positions.
//   - Forward kernels overwrite their outputs.
//   - Backward kernels ADD into the gradients of their inputs and parameters (so a tensor used
//     twice, e.g. a residual stream, sums its contributions), except where a comment says
//     "writes": attention_backward's scratch datt/dpreatt and softmax_xent_backward's dlogits.
//   - Every kernel opens its own OpenMP parallel regions (call it from serial code): loops over
//     positions and over batch x heads are parallel loops; a reduction over positions into a
//     parameter gradient gives each thread a range of channels, so each such sum runs over n in
//     order whatever the thread count.
//   - GEMMs go through OpenBLAS (cblas_sgemm / cblas_dgemm) inside the OpenMP team: each thread
//     runs single-threaded BLAS on its block of rows. With the pthreads build of OpenBLAS the matmul
//     kernels therefore call openblas_set_num_threads(1) (see kernels.cpp for why).

#include <cstddef>

namespace commscope::trainer::kernels {

inline constexpr double kLayerNormEps = 1e-5;

// out[B,T,C] = wte[inp[b,t], :] + wpe[t, :]. inp: token ids < rows of wte.
template <class T>
void encoder_forward(T* out, const int* inp, const T* wte, const T* wpe, int B, int Tn, int C);
// dwte[inp[b,t], :] += dout[b,t,:]; dwpe[t, :] += dout[b,t,:].
template <class T>
void encoder_backward(T* dwte, T* dwpe, const T* dout, const int* inp, int B, int Tn, int C);

// Per position n: mean[n], rstd[n] = 1 / sqrt(biased variance + 1e-5) of inp[n,:];
// out[n,c] = (inp[n,c] - mean[n]) * rstd[n] * w[c] + b[c]. Shapes: inp/out [N,C], w/b [C].
template <class T>
void layernorm_forward(T* out, T* mean, T* rstd, const T* inp, const T* w, const T* b, int N, int C);
// dinp [N,C], dw/db [C] (added into), from dout [N,C] and the forward's inp, w, mean, rstd.
template <class T>
void layernorm_backward(T* dinp, T* dw, T* db, const T* dout, const T* inp, const T* w, const T* mean, const T* rstd,
                        int N, int C);

// out[N,OC] = inp[N,C] w[OC,C]^T + bias[OC] (bias may be null).
template <class T>
void matmul_forward(T* out, const T* inp, const T* w, const T* bias, int N, int C, int OC);
// dinp[N,C] += dout[N,OC] w[OC,C]; dw[OC,C] += dout^T inp; dbias[OC] += sum_n dout[n,:]
// (dbias may be null).
template <class T>
void matmul_backward(T* dinp, T* dw, T* dbias, const T* dout, const T* inp, const T* w, int N, int C, int OC);

// Causal multi-head self-attention. qkv [B,T,3C] holds q, k, v (head h at channels h*hs..);
// preatt[b,h,t,t2] = q[b,t,h] . k[b,t2,h] / sqrt(hs) (the whole T x T square is written; entries
// t2 > t are masked), att[b,h,t,:] = softmax over t2 <= t and 0 for t2 > t, both [B,NH,T,T];
// out[b,t,h*hs+i] = sum_t2 att * v[b,t2,h,i].
template <class T>
void attention_forward(T* out, T* preatt, T* att, const T* qkv, int B, int Tn, int C, int NH);
// dqkv [B,T,3C] added into; datt and dpreatt [B,NH,T,T] are scratch that this WRITES (dpreatt is 0
// for t2 > t).
template <class T>
void attention_backward(T* dqkv, T* dpreatt, T* datt, const T* dout, const T* qkv, const T* att, int B, int Tn, int C,
                        int NH);

// GELU, tanh approximation: out = x/2 (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))), n elements.
template <class T>
void gelu_forward(T* out, const T* inp, std::size_t n);
template <class T>
void gelu_backward(T* dinp, const T* inp, const T* dout, std::size_t n);

// out = a + b (n elements); backward: da += dout, db += dout.
template <class T>
void residual_forward(T* out, const T* a, const T* b, std::size_t n);
template <class T>
void residual_backward(T* da, T* db, const T* dout, std::size_t n);

// Fused softmax + cross-entropy over logits [N,Vp] of which only the first V count: probs [N,Vp]
// (probs[n, V..Vp) = 0, as if those logits were -inf); losses[n] = -log probs[n, targets[n]]
// (nats, computed as logsumexp - logit). targets null: probs only (losses untouched).
template <class T>
void softmax_xent_forward(T* probs, T* losses, const T* logits, const int* targets, int N, int V, int Vp);
// WRITES dlogits[n,i] = (probs[n,i] - [i == targets[n]]) * dloss for i < V and 0 for the padding,
// where dloss = d(objective) / d(losses[n]) (the same for every n: loss_scale / N for a mean).
template <class T>
void softmax_xent_backward(T* dlogits, const T* probs, const int* targets, T dloss, int N, int V, int Vp);

}  // namespace commscope::trainer::kernels
