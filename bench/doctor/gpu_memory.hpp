// The doctor's device memory and streams (cuda_stream.hpp's), held for a scope (the probes', gpu_probes.cpp, and the
// device pairs', gpus.cpp). CUDA builds only; gpu_probes.hpp stays free of CUDA, for the CPU
// build's tests.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>

#include "cuda_check.hpp"
#include "cuda_stream.hpp"

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

// A non-blocking stream of a device, destroyed when it goes out of scope (on that device).
using Stream = CudaStream;

}  // namespace commscope::doctor::gpu
