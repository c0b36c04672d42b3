#include "device_transport.hpp"

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstring>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "commscope/collectives/algorithm.hpp"
#include "commscope/collectives/communicator.hpp"
#include "commscope/collectives/error.hpp"

namespace commscope {

DeviceTransport::~DeviceTransport() {
  // cudaFree waits for the device, so kernels still reading a slot finish first.
  for (Slot& s : scratch_)
    if (s.data) cudaFree(s.data);
}

void DeviceTransport::reduce(void* dst, const void* a, const void* b, std::size_t count, DataType type, ReduceOp op) {
  reduce_device(dst, a, b, count, type, op, stream_);
}

void DeviceTransport::copy(void* dst, const void* src, std::size_t bytes) {
  if (dst == src || bytes == 0) return;
  COMMSCOPE_CUDA_CHECK(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice, stream_));
}

void DeviceTransport::divide(void* buf, std::size_t count, DataType type, int divisor) {
  divide_device(buf, count, type, divisor, stream_);
}

void* DeviceTransport::scratch(int slot, std::size_t bytes) {
  if (slot < 0 || slot >= kScratchSlots)
    throw InvalidArgument("scratch slot " + std::to_string(slot) + " out of range");
  Slot& s = scratch_[static_cast<std::size_t>(slot)];
  if (s.data && s.bytes >= bytes) return s.data;
  if (s.data) {
    // Work queued earlier on the stream may still use the old slot.
    COMMSCOPE_CUDA_CHECK(cudaStreamSynchronize(stream_));
    COMMSCOPE_CUDA_CHECK(cudaFree(s.data));
    s = Slot{};
  }
  const std::size_t size = std::max<std::size_t>(bytes, 256);
  COMMSCOPE_CUDA_CHECK(cudaMalloc(&s.data, size));  // uninitialised: scratch is written before read
  s.bytes = size;
  return s.data;
}

}  // namespace commscope
