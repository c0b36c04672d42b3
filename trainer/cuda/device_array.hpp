#pragma once
// Device memory for the CUDA trainer: an owning array, and fp32 host buffers copied to and from
// device arrays of float or bf16 (converted on the host, rounding to nearest even); and a timer
// of a stream's work by CUDA events.
#include <cuda_bf16.h>
#include <cuda_runtime_api.h>

#include <cstddef>
#include <span>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "cuda_check.hpp"

namespace commscope::trainer::cuda {

// "out of device memory: an array of 1536.0 MiB does not fit (GPU 0: 312.0 MiB free of 81079.0
// MiB); a smaller --batch or --seq, or more ranks (--dp zero3 shards the model's state)".
inline std::string out_of_device_memory(std::size_t bytes) {
  std::size_t free_bytes = 0, total_bytes = 0;
  int device = 0;
  cudaGetDevice(&device);
  cudaMemGetInfo(&free_bytes, &total_bytes);
  const auto mib = [](std::size_t b) {
    return std::to_string(b >> 20) + "." + std::to_string((b & ((std::size_t{1} << 20) - 1)) * 10 >> 20) + " MiB";
  };
  return "out of device memory: an array of " + mib(bytes) + " does not fit (GPU " + std::to_string(device) + ": " +
         mib(free_bytes) + " free of " + mib(total_bytes) +
         "); a smaller --batch or --seq, or more ranks (--dp zero3 shards the model's state)";
}

// n elements of U in device memory (cudaMalloc'd; zeroed on request), freed with the array.
template <class U>
class DeviceArray {
 public:
  DeviceArray() = default;
  explicit DeviceArray(std::size_t n) { resize(n); }
  ~DeviceArray() { reset(); }
  DeviceArray(const DeviceArray&) = delete;
  DeviceArray& operator=(const DeviceArray&) = delete;
  DeviceArray(DeviceArray&& o) noexcept : p_(std::exchange(o.p_, nullptr)), n_(std::exchange(o.n_, 0)) {}
  DeviceArray& operator=(DeviceArray&& o) noexcept {
    if (this != &o) {
      reset();
      p_ = std::exchange(o.p_, nullptr);
      n_ = std::exchange(o.n_, 0);
    }
    return *this;
  }

  // Reallocates (contents lost) unless the size is already n; new memory is zeroed.
  void resize(std::size_t n) {
    if (n == n_) return;
    reset();
    if (n == 0) return;
    void* p = nullptr;
    if (const cudaError_t e = cudaMalloc(&p, n * sizeof(U)); e == cudaErrorMemoryAllocation) {
      cudaGetLastError();  // not sticky: clear it
      throw std::runtime_error(out_of_device_memory(n * sizeof(U)));
    } else {
      COMMSCOPE_CUDA_CHECK(e);
    }
    p_ = static_cast<U*>(p);
    n_ = n;
    COMMSCOPE_CUDA_CHECK(cudaMemset(p_, 0, n * sizeof(U)));
  }
  void reset() noexcept {
    if (p_ != nullptr) cudaFree(p_);
    p_ = nullptr;
    n_ = 0;
  }
  U* data() const noexcept { return p_; }
  std::size_t size() const noexcept { return n_; }
  std::size_t bytes() const noexcept { return n_ * sizeof(U); }
  bool empty() const noexcept { return n_ == 0; }

 private:
  U* p_ = nullptr;
  std::size_t n_ = 0;
};

// Seconds that work on a stream takes on the device, timed by two CUDA events around it (the
// trainer's GEMM reference and --attention auto's choice; timing::best_seconds picks the best).
class EventTimer {
 public:
  EventTimer() {
    COMMSCOPE_CUDA_CHECK(cudaEventCreate(&start_));
    if (const cudaError_t e = cudaEventCreate(&stop_); e != cudaSuccess) {
      cudaEventDestroy(start_);
      COMMSCOPE_CUDA_CHECK(e);
    }
  }
  ~EventTimer() {
    cudaEventDestroy(start_);
    cudaEventDestroy(stop_);
  }
  EventTimer(const EventTimer&) = delete;
  EventTimer& operator=(const EventTimer&) = delete;

  // Enqueues work() (which enqueues on `stream`) between the events and waits for it.
  template <class Work>
  double seconds(cudaStream_t stream, Work&& work) {
    COMMSCOPE_CUDA_CHECK(cudaEventRecord(start_, stream));
    work();
    COMMSCOPE_CUDA_CHECK(cudaEventRecord(stop_, stream));
    COMMSCOPE_CUDA_CHECK(cudaEventSynchronize(stop_));
    float ms = 0;
    COMMSCOPE_CUDA_CHECK(cudaEventElapsedTime(&ms, start_, stop_));
    return static_cast<double>(ms) * 1e-3;
  }

 private:
  cudaEvent_t start_ = nullptr, stop_ = nullptr;
};

// Host fp32 -> device T (synchronous).
template <class T>
void upload(T* dst, std::span<const float> src) {
  if (src.empty()) return;
  if constexpr (std::is_same_v<T, float>) {
    COMMSCOPE_CUDA_CHECK(cudaMemcpy(dst, src.data(), src.size_bytes(), cudaMemcpyHostToDevice));
  } else {
    std::vector<T> converted(src.size());
    for (std::size_t i = 0; i < src.size(); ++i) converted[i] = __float2bfloat16_rn(src[i]);
    COMMSCOPE_CUDA_CHECK(cudaMemcpy(dst, converted.data(), converted.size() * sizeof(T), cudaMemcpyHostToDevice));
  }
}

// Device T -> host fp32 (synchronous: waits for the device's work on the legacy stream's terms,
// so callers synchronise their own stream first).
template <class T>
std::vector<float> download(const T* src, std::size_t n) {
  std::vector<float> out(n);
  if (n == 0) return out;
  if constexpr (std::is_same_v<T, float>) {
    COMMSCOPE_CUDA_CHECK(cudaMemcpy(out.data(), src, n * sizeof(float), cudaMemcpyDeviceToHost));
  } else {
    std::vector<T> raw(n);
    COMMSCOPE_CUDA_CHECK(cudaMemcpy(raw.data(), src, n * sizeof(T), cudaMemcpyDeviceToHost));
    for (std::size_t i = 0; i < n; ++i) out[i] = __bfloat162float(raw[i]);
  }
  return out;
}

}  // namespace commscope::trainer::cuda
