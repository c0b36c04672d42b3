// The collectives of one rank on device buffers, as the bench's --device cuda and the CUDA
// trainer both run them: NCCL's own collectives, or our ring / tree / rhd over a device
// transport (NCCL point-to-point, or MPI staged through pinned host memory with no NCCL at all).
// It owns the NCCL communicator (none when staged) and the transport; the stream is the
// caller's. After a failed call of our algorithms it abandons the transport's posts and aborts
// the communicator (its kernels may be stuck on the stream), in that order; later NCCL calls
// throw TransportError.
#pragma once

#include <cuda_runtime.h>
#include <nccl.h>

#include <functional>
#include <memory>

#include "device_transport.hpp"

namespace commscope {

class Algorithm;
class Communicator;
struct AlgoOptions;
struct CollArgs;

class DeviceCollectives {
 public:
  // staged: our algorithms over MPI through pinned host memory, no NCCL communicator; else an
  // NCCL communicator over `comm` (cta_policy as init_nccl) and NCCL point-to-point for our
  // algorithms. Timeouts and idle yielding follow comm's options. Collective.
  DeviceCollectives(Communicator& comm, cudaStream_t stream, bool staged, int cta_policy = -1);
  ~DeviceCollectives();
  DeviceCollectives(const DeviceCollectives&) = delete;
  DeviceCollectives& operator=(const DeviceCollectives&) = delete;

  bool staged() const noexcept { return staged_; }
  // The NCCL communicator; null when staged or after abort().
  ncclComm_t nccl() const noexcept { return nccl_; }
  DeviceTransport& transport() noexcept { return *transport_; }

  // One call with `algo` (null: NCCL's own collective, enqueued on the stream) or one of our
  // algorithms (host-driven: done when this returns, but for work left on the stream).
  // TransportError once the communicator was aborted.
  void run(const CollArgs& args, const Algorithm* algo, const AlgoOptions& options);
  // Ends the NCCL communicator after an error (its kernels stop), first calling the hook set by
  // set_before_abort (e.g. to forget buffer registrations with the communicator). Idempotent.
  void abort() noexcept;
  void set_before_abort(std::function<void()> hook) { before_abort_ = std::move(hook); }

 private:
  bool staged_;
  cudaStream_t stream_;
  ncclComm_t nccl_ = nullptr;
  std::unique_ptr<DeviceTransport> transport_;
  std::function<void()> before_abort_;
};

}  // namespace commscope
