// A non-blocking CUDA stream held for a scope: made on the current device, or on `device` (made
// current first), and destroyed with its holder, on that device. The trainer's engine and the
// doctor's probes hold theirs so; the bench's and the replay's device backends keep a raw handle,
// made after they bind their GPU and destroyed after their communicators.
#pragma once

#include <cuda_runtime_api.h>

#include "cuda_check.hpp"

namespace commscope {

class CudaStream {
 public:
  CudaStream() : CudaStream(-1) {}
  explicit CudaStream(int device) : device_(device) {
    if (device >= 0) COMMSCOPE_CUDA_CHECK(cudaSetDevice(device));
    COMMSCOPE_CUDA_CHECK(cudaStreamCreateWithFlags(&s_, cudaStreamNonBlocking));
  }
  ~CudaStream() {
    if (s_ && (device_ < 0 || cudaSetDevice(device_) == cudaSuccess)) cudaStreamDestroy(s_);
  }
  CudaStream(const CudaStream&) = delete;
  CudaStream& operator=(const CudaStream&) = delete;
  cudaStream_t get() const { return s_; }
  operator cudaStream_t() const { return s_; }  // NOLINT(google-explicit-constructor)

 private:
  int device_ = -1;  // -1: the device current when it was made, left as it is
  cudaStream_t s_ = nullptr;
};

}  // namespace commscope
