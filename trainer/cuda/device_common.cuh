#pragma once
// What the trainer's CUDA kernel files share: element conversion (a bf16 element widened to
// float when read, rounded to nearest even once when written), warp reductions and
// stream-ordered scratch. Included by the .cu files only.
#include <cuda_bf16.h>
#include <cuda_runtime_api.h>

#include <cstddef>

#include "cuda_check.hpp"

namespace commscope::trainer::cuda_kernels::detail {

__device__ __forceinline__ float to_f(float x) {
  return x;
}
__device__ __forceinline__ float to_f(__nv_bfloat16 x) {
  return __bfloat162float(x);
}
template <class T>
__device__ __forceinline__ T from_f(float x);
template <>
__device__ __forceinline__ float from_f<float>(float x) {
  return x;
}
template <>
__device__ __forceinline__ __nv_bfloat16 from_f<__nv_bfloat16>(float x) {
  return __float2bfloat16_rn(x);
}

// The sum and maximum over the 32 lanes of a warp, returned to every lane.
__device__ __forceinline__ float warp_sum(float v) {
  for (int o = 16; o > 0; o /= 2) v += __shfl_xor_sync(0xffffffffu, v, o);
  return v;
}
__device__ __forceinline__ float warp_max(float v) {
  for (int o = 16; o > 0; o /= 2) v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, o));
  return v;
}

// Stream-ordered scratch, freed on the stream when it goes out of scope (also on a throw).
class StreamScratch {
 public:
  StreamScratch(std::size_t bytes, cudaStream_t stream) : stream_(stream) {
    COMMSCOPE_CUDA_CHECK(cudaMallocAsync(&p_, bytes, stream));
  }
  // A destructor cannot throw; a failed free would show up at the caller's next sync anyway.
  ~StreamScratch() { static_cast<void>(cudaFreeAsync(p_, stream_)); }
  StreamScratch(const StreamScratch&) = delete;
  StreamScratch& operator=(const StreamScratch&) = delete;
  template <class U>
  U* as() const {
    return static_cast<U*>(p_);
  }

 private:
  void* p_ = nullptr;
  cudaStream_t stream_;
};

}  // namespace commscope::trainer::cuda_kernels::detail
