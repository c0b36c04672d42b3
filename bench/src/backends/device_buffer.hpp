// Device memory for --device cuda: grows to the largest request (never shrinks) and is freed
// once. With -R it comes from ncclMemAlloc and is registered with the NCCL communicator, as
// nccl-tests registers its buffers: 1 ncclCommRegister (local), 2 a symmetric window
// (ncclCommWindowRegister, NCCL 2.27 on; collective: every rank grows its buffer alike, which
// holds since every rank runs the same cases). CUDA builds only.
#pragma once

#include <cuda_runtime.h>
#include <nccl.h>

#include <cstddef>

namespace commscope::bench {

class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  ~DeviceBuffer() { release(); }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;

  // Before the first grow(): register with `comm` (mode 1 or 2; 0: plain cudaMalloc).
  void set_registration(ncclComm_t comm, int mode);
  // At least `bytes` (and 256), zeroed. Throws TransportError (CUDA/NCCL), InvalidArgument (-R 2
  // without NCCL 2.27).
  void grow(std::size_t bytes);
  // After ncclCommAbort: the registrations died with the communicator; free without them.
  void forget_registration() noexcept;
  // Deregister and free now (before the communicator is destroyed).
  void release() noexcept;

  std::byte* data() const { return static_cast<std::byte*>(p_); }
  std::size_t size() const { return size_; }

 private:
  ncclComm_t comm_ = nullptr;
  int mode_ = 0;
  void* p_ = nullptr;
  std::size_t size_ = 0;
  void* handle_ = nullptr;  // ncclCommRegister's handle or the symmetric window
};

}  // namespace commscope::bench
