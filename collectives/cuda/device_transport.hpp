// Transports for device (GPU) buffers, so that the ring, tree and rhd algorithms run on GPU
// memory beside NCCL's own collectives:
//   NcclP2pTransport    ncclSend/ncclRecv, one group per wait(); one GPU per rank (NCCL's rule)
//                       (nccl_p2p_transport.hpp).
//   StagedMpiTransport  device buffers staged through pinned host memory over MPI, so that
//                       several ranks may share one GPU (staged_mpi_transport.hpp).
// DeviceCollectives (device_collectives.hpp) chooses between them and NCCL's own collectives.
// Local operations (reduce, copy, divide) are kernels and copies on the transport's stream:
// stream-ordered with each other and with the NCCL operations issued on the same stream.
#pragma once

#include <cuda_runtime.h>

#include <array>
#include <cstddef>

#include "commscope/collectives/transport.hpp"
#include "commscope/collectives/types.hpp"
#include "cuda_check.hpp"

namespace commscope {

// Stream-ordered dst[i] = a[i] op b[i] on device memory: the values of reduce_host, bit for bit
// (16-bit floats combine in f32 and round once, integers wrap, avg combines as sum), except
// that a NaN made by the GPU's arithmetic may carry another payload or sign than the host's.
// dst may be a or b exactly.
// Throws InvalidArgument for a bad type/op, TransportError when the launch fails.
void reduce_device(void* dst, const void* a, const void* b, std::size_t count, DataType type, ReduceOp op,
                   cudaStream_t stream);
// Stream-ordered buf[i] /= divisor on device memory, as divide_host.
void divide_device(void* buf, std::size_t count, DataType type, int divisor, cudaStream_t stream);

// What both device transports share: local operations and scratch slots on one stream.
class DeviceTransport : public Transport {
 public:
  ~DeviceTransport() override;
  DeviceTransport(const DeviceTransport&) = delete;
  DeviceTransport& operator=(const DeviceTransport&) = delete;

  void reduce(void* dst, const void* a, const void* b, std::size_t count, DataType type, ReduceOp op) final;
  void copy(void* dst, const void* src, std::size_t bytes) final;
  void divide(void* buf, std::size_t count, DataType type, int divisor) final;
  // cudaMalloc'd, grown on demand (never shrunk), freed with the transport.
  void* scratch(int slot, std::size_t bytes) final;

  cudaStream_t stream() const { return stream_; }
  // After an error between posts and their wait: stop tracking what was posted, so that the
  // transport can be destroyed (and, for NCCL, the communicator aborted) safely.
  virtual void abandon() noexcept {}

 protected:
  // The stream is the caller's: used, never created or destroyed here.
  explicit DeviceTransport(cudaStream_t stream) : stream_(stream) {}

 private:
  struct Slot {
    void* data = nullptr;
    std::size_t bytes = 0;
  };
  cudaStream_t stream_;
  std::array<Slot, kScratchSlots> scratch_{};
};

}  // namespace commscope
