// The doctor's device memory and streams, held for a scope (the probes', gpu_probes.cpp, and the
// device pairs', gpus.cpp). CUDA builds only; gpu_probes.hpp stays free of CUDA, for the CPU
// build's tests.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>

#include "cuda_check.hpp"

namespace commscope::doctor::gpu {

// Device memory freed when it goes out of scope (on the device it was taken on).
struct DeviceBuffer {
  DeviceBuffer(int on, std::size_t bytes) : device(on) {
    COMMSCOPE_CUDA_CHECK(cudaSetDevice(on));
    COMMSCOPE_CUDA_CHECK(cudaMalloc(&ptr, bytes));
  }
  ~DeviceBuffer() {
    if (ptr && cudaSetDevice(device) == cudaSuccess) cudaFree(ptr);
  }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  int device;
  void* ptr = nullptr;
};

// A non-blocking stream of a device, destroyed when it goes out of scope.
struct Stream {
  explicit Stream(int on) : device(on) {
    COMMSCOPE_CUDA_CHECK(cudaSetDevice(on));
    COMMSCOPE_CUDA_CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  }
  ~Stream() {
    if (s && cudaSetDevice(device) == cudaSuccess) cudaStreamDestroy(s);
  }
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;
  int device;
  cudaStream_t s = nullptr;
};

}  // namespace commscope::doctor::gpu
