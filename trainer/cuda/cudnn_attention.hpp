#pragma once
// Causal attention by cuDNN's fused flash attention (bf16, head size 64), where the build has
// cuDNN. qkv [B,T,3C] (q, k, v; head h at channels h*hs.. of each, hs = C / NH), scale
// 1/sqrt(hs). Plans are built on first use of a shape and cached.
#include <cuda_bf16.h>
#include <cuda_runtime_api.h>

#include <string>

namespace commscope::trainer::cuda {

class CudnnAttention {
 public:
  static bool built();           // compiled with cuDNN
  static std::string version();  // "9.x.y" at run time, "" when not built
  CudnnAttention();              // std::runtime_error when not built or cuDNN fails to start
  ~CudnnAttention();
  CudnnAttention(const CudnnAttention&) = delete;
  CudnnAttention& operator=(const CudnnAttention&) = delete;
  // True when cuDNN plans this shape (tried once and cached; no throw).
  bool supports(int B, int Tn, int C, int NH);
  // WRITES out [B,T,C] and lse [B,NH,T] (float: the logsumexp of the scaled scores).
  void forward(__nv_bfloat16* out, float* lse, const __nv_bfloat16* qkv, int B, int Tn, int C, int NH,
               cudaStream_t stream);
  // WRITES dqkv [B,T,3C] from dout [B,T,C] and the forward's qkv, out and lse.
  void backward(__nv_bfloat16* dqkv, const __nv_bfloat16* dout, const __nv_bfloat16* qkv, const __nv_bfloat16* out,
                const float* lse, int B, int Tn, int C, int NH, cudaStream_t stream);
};

}  // namespace commscope::trainer::cuda
