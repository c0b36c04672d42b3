#include "backends/device_buffer.hpp"

#include <algorithm>
#include <string>

#include "commscope/collectives/error.hpp"
#include "cuda_check.hpp"

namespace commscope::bench {

void DeviceBuffer::set_registration(ncclComm_t comm, int mode) {
  if (mode == 2) {
#if NCCL_VERSION_CODE < NCCL_VERSION(2, 27, 0)
    throw InvalidArgument("-R/--local_register 2 (symmetric windows) needs NCCL 2.27 or later");
#else
    int version = 0;
    COMMSCOPE_NCCL_CHECK(ncclGetVersion(&version));
    if (version < NCCL_VERSION(2, 27, 0))
      throw InvalidArgument("-R/--local_register 2 (symmetric windows) needs NCCL 2.27 or later, found " +
                            std::to_string(version));
#endif
  }
  comm_ = comm;
  mode_ = mode;
}

void DeviceBuffer::grow(std::size_t bytes) {
  bytes = std::max<std::size_t>(bytes, 256);
  if (bytes <= size_) return;
  release();
  if (mode_ > 0) {
    COMMSCOPE_NCCL_CHECK(ncclMemAlloc(&p_, bytes));
  } else {
    COMMSCOPE_CUDA_CHECK(cudaMalloc(&p_, bytes));
  }
  size_ = bytes;
  COMMSCOPE_CUDA_CHECK(cudaMemset(p_, 0, bytes));
  // The memset runs on the legacy stream, which the backend's non-blocking stream does not
  // wait for: finish it before that stream writes the buffer.
  COMMSCOPE_CUDA_CHECK(cudaDeviceSynchronize());
  if (mode_ == 1) COMMSCOPE_NCCL_CHECK(ncclCommRegister(comm_, p_, bytes, &handle_));
#if NCCL_VERSION_CODE >= NCCL_VERSION(2, 27, 0)
  if (mode_ == 2) {
    ncclWindow_t window = nullptr;
    COMMSCOPE_NCCL_CHECK(ncclCommWindowRegister(comm_, p_, bytes, &window, NCCL_WIN_COLL_SYMMETRIC));
    handle_ = window;
  }
#endif
}

void DeviceBuffer::forget_registration() noexcept {
  comm_ = nullptr;
  handle_ = nullptr;
}

void DeviceBuffer::release() noexcept {
  if (!p_) return;
  if (handle_ && comm_) {
    if (mode_ == 1) ncclCommDeregister(comm_, handle_);
#if NCCL_VERSION_CODE >= NCCL_VERSION(2, 27, 0)
    if (mode_ == 2) ncclCommWindowDeregister(comm_, static_cast<ncclWindow_t>(handle_));
#endif
  }
  handle_ = nullptr;
  if (mode_ > 0)
    ncclMemFree(p_);
  else
    cudaFree(p_);
  p_ = nullptr;
  size_ = 0;
}

}  // namespace commscope::bench
