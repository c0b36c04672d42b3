// Our algorithms on device buffers over MPI, staged through pinned host memory (ranks may share a GPU).
#pragma once

#include <vector>

#include "commscope/collectives/mpi_transport.hpp"
#include "device_transport.hpp"

namespace commscope {

// Device buffers over MPI through pinned host memory (MPI never sees a device pointer, so it
// needs no CUDA support). post_send copies the data to a pinned buffer (synchronously) and
// starts MPI_Isend; post_recv starts MPI_Irecv into a pinned buffer; wait() completes the MPI
// requests with MpiTransport's deadline and messages, then copies what arrived to the device
// and synchronises the stream. Nothing here needs a GPU of its own, so ranks may share one.
class StagedMpiTransport final : public DeviceTransport {
 public:
  // Duplicates `comm` (through MpiTransport). timeout_s <= 0: no deadline.
  StagedMpiTransport(MPI_Comm comm, cudaStream_t stream, double timeout_s);
  ~StagedMpiTransport() override;

  int rank() const override { return mpi_.rank(); }
  int size() const override { return mpi_.size(); }
  void post_send(const void* buf, std::size_t bytes, int peer) override;
  void post_recv(void* buf, std::size_t bytes, int peer) override;
  void wait() override;
  // The MPI transport raises the timeouts, so it is told too.
  void set_context(const CallContext& what) noexcept override {
    DeviceTransport::set_context(what);
    mpi_.set_context(what);
  }
  // See MpiTransport::set_yield_when_idle: for more ranks than cores (e.g. many ranks on one GPU).
  void set_yield_when_idle(bool on) { mpi_.set_yield_when_idle(on); }
  // Leaves the staging buffers of pending requests allocated: MPI may still touch them.
  void abandon() noexcept override { release_stages(); }

 private:
  struct Pinned {
    void* data = nullptr;
    std::size_t bytes = 0;
  };
  struct Landing {
    void* device;        // where the received bytes go
    const void* staged;  // where MPI puts them
    std::size_t bytes;
  };
  // The next unused pinned buffer of at least `bytes` (one per operation posted since the last wait).
  void* stage(std::size_t bytes);
  void release_stages() noexcept;

  MpiTransport mpi_;
  std::vector<Pinned> stages_;
  std::size_t stages_used_ = 0;
  std::vector<Landing> landings_;
};

}  // namespace commscope
