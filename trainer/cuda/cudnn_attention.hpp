#pragma once
// GPT-2's causal self-attention by cuDNN's fused flash attention (cuDNN 9, bf16), through cuDNN's
// backend (graph) C API and a thin RAII layer of our own over it (cudnn_attention.cpp). The T x T
// scores never reach memory: the forward keeps only the softmax statistics (lse), which the
// backward reads to recompute the probabilities tile by tile.
//
// The graphs are the "fused flash attention" patterns of cuDNN's runtime fusion engine, as
// cudnn-frontend lowers its SDPA node for a causal mask without dropout or bias:
//   forward:  S = Q K^T * scale; S = row >= col ? S : -inf; M = max_t2 S; E = exp(S - M);
//             Z = sum_t2 E; lse = M + log Z; O = (E / Z) V
//   backward: Dsum = sum_i dO*O; P = exp(Q K^T * scale - lse) (masked); dV = P^T dO;
//             dS = P * (dO V^T - Dsum) * scale; dK = dS^T Q; dQ = dS K
// Q, K, V, O and the gradients are strided views into the trainer's [B,T,3C] and [B,T,C]
// tensors (head h at channels h*hs..): no permute copies.
//
// Built only when CMake finds cuDNN (COMMSCOPE_HAVE_CUDNN); otherwise built() is false and the
// constructor throws, so a caller can fall back to the unfused kernels.
//
// Preconditions of forward/backward: C = NH * hs with hs a multiple of 8 (cuDNN supports hs up to
// 128 on sm_90; GPT-2 has 64), every pointer 16-byte aligned (cudaMalloc'd buffers are), and
// supports(B, Tn, C, NH) true (forward/backward throw std::runtime_error otherwise). Not
// thread-safe: one CudnnAttention per thread (or per stream used at a time).
#include <cuda_bf16.h>
#include <cuda_runtime_api.h>

#include <memory>
#include <string>

namespace commscope::trainer::cuda {

// Causal attention by cuDNN's fused flash attention, bf16. qkv [B,T,3C] (q, k, v; head h at
// channels h*hs.. of each, hs = C / NH), scale 1/sqrt(hs). Plans are built on first use of a
// shape (B, T, NH, hs) and cached; the workspace grows as needed (owned, stream-ordered use).
class CudnnAttention {
 public:
  static bool built();           // compiled with cuDNN
  static std::string version();  // "cuDNN 9.x.y" (runtime cudnnGetVersion), "" when not built
  explicit CudnnAttention();     // throws std::runtime_error when unavailable or handle fails
  ~CudnnAttention();
  CudnnAttention(const CudnnAttention&) = delete;
  CudnnAttention& operator=(const CudnnAttention&) = delete;
  // True when cuDNN builds a plan for this shape (tries and caches; no throw).
  bool supports(int B, int Tn, int C, int NH);
  // Allocates now the workspace that forward and backward of this shape take (the plans built if
  // they were not); returns the workspace's bytes. Throws std::runtime_error where there is no plan.
  std::size_t reserve(int B, int Tn, int C, int NH);
  // WRITES out [B,T,C] and lse [B,NH,T] float (cuDNN's softmax stats: logsumexp of the scaled
  // scores, natural log).
  void forward(__nv_bfloat16* out, float* lse, const __nv_bfloat16* qkv, int B, int Tn, int C, int NH,
               cudaStream_t stream);
  // WRITES dqkv [B,T,3C] from dout [B,T,C], the forward's qkv, out, lse.
  void backward(__nv_bfloat16* dqkv, const __nv_bfloat16* dout, const __nv_bfloat16* qkv, const __nv_bfloat16* out,
                const float* lse, int B, int Tn, int C, int NH, cudaStream_t stream);

 private:
  struct Impl;  // the cuDNN handle, the plan caches and the workspace (cudnn_attention.cpp)
  std::unique_ptr<Impl> impl_;
};

}  // namespace commscope::trainer::cuda
