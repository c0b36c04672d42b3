#pragma once
// Device memory for the CUDA trainer: an owning array, and fp32 host buffers copied to and from
// device arrays of float or bf16 (converted on the host, rounding to nearest even).
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
    COMMSCOPE_CUDA_CHECK(cudaMalloc(&p, n * sizeof(U)));
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
