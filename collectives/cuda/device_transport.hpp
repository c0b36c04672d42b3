// Transports for device (GPU) buffers, so that the ring, tree and rhd algorithms run on GPU
// memory beside NCCL's own collectives:
//   NcclP2pTransport    ncclSend/ncclRecv, one group per wait(); one GPU per rank (NCCL's rule).
//   StagedMpiTransport  device buffers staged through pinned host memory over MPI, so that
//                       several ranks may share one GPU.
// Local operations (reduce, copy, divide) are kernels and copies on the transport's stream:
// stream-ordered with each other and with the NCCL operations issued on the same stream.
// This is the only header of the library that includes CUDA and NCCL headers.
#pragma once

#include <cuda_runtime.h>
#include <nccl.h>

#include <array>
#include <cstddef>
#include <string>
#include <utility>
#include <vector>

#include "commscope/collectives/mpi_transport.hpp"
#include "commscope/collectives/transport.hpp"
#include "commscope/collectives/types.hpp"
#include "cuda_check.hpp"

namespace commscope {

class Communicator;  // communicator.hpp is C++20; this header is also read by the C++17 .cu files

// Stream-ordered dst[i] = a[i] op b[i] on device memory: the values of reduce_host, bit for bit
// (16-bit floats combine in f32 and round once, integers wrap, avg combines as sum), except
// that a NaN made by the GPU's arithmetic may carry another payload or sign than the host's.
// dst may be a or b exactly.
// Throws InvalidArgument for a bad type/op, TransportError when the launch fails.
void reduce_device(void* dst, const void* a, const void* b, std::size_t count, DataType type, ReduceOp op,
                   cudaStream_t stream);
// Stream-ordered buf[i] /= divisor on device memory, as divide_host.
void divide_device(void* buf, std::size_t count, DataType type, int divisor, cudaStream_t stream);

// ---- Setting a rank up on a GPU (the bench's --device cuda and the trainer's).

// The node's ranks take the visible GPUs in turn: cudaSetDevice(node rank % GPUs); returns the
// device. With `exclusive` (NCCL refuses two ranks on one GPU) the node's ranks compare their
// GPUs' PCI bus ids (launchers that give each rank its own GPU leave one visible GPU per rank,
// so what must differ is the physical GPU), and every rank throws TransportError if any two
// share one, so that none goes on to wait in NCCL. No usable GPU: InvalidArgument. Messages
// start with `who` ("--device cuda"). Collective over comm.
int bind_local_gpu(const Communicator& comm, bool exclusive, const std::string& who);
// An NCCL communicator over comm's ranks (rank 0's unique id broadcast over MPI). Collective.
// cta_policy >= 0 sets ncclConfig_t::CTAPolicy (NCCL 2.27 on; InvalidArgument before).
ncclComm_t init_nccl(const Communicator& comm, int cta_policy = -1);
// NCCL's names for our types and operations (InvalidArgument where NCCL has none).
ncclDataType_t nccl_type(DataType t);
ncclRedOp_t nccl_op(ReduceOp op);
// Enqueues NCCL's own collective for `args` (CollArgs's counts and in-place conventions, which
// are NCCL's) on `stream`. alltoall, gather and scatter are NCCL's calls from 2.28 on, grouped
// ncclSend/ncclRecv before; sendrecv (the ring shift) and alltoallv are grouped
// ncclSend/ncclRecv, as nccl-tests runs them. alltoall and sendrecv are out of place only (NCCL
// has no in-place form: InvalidArgument). Does not wait.
struct CollArgs;
void launch_nccl(const CollArgs& args, ncclComm_t comm, cudaStream_t stream);

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

// Point-to-point over an existing NCCL communicator (not owned). post_* open a group at the
// first post after a wait and issue ncclSend/ncclRecv of bytes (ncclUint8) on the stream;
// wait() ends the group and polls the stream until it drains, checking NCCL's asynchronous
// error and the deadline. After a TimeoutError or TransportError the NCCL kernels may still be
// stuck on the stream: the communicator's owner must ncclCommAbort it before reusing the stream.
// A dead peer during NCCL's first connection to it blocks inside ncclGroupEnd (blocking
// communicators), where no deadline of ours applies: the caller's watchdog is the backstop.
class NcclP2pTransport final : public DeviceTransport {
 public:
  // timeout_s <= 0: no deadline.
  NcclP2pTransport(ncclComm_t comm, cudaStream_t stream, int rank, int size, double timeout_s);
  ~NcclP2pTransport() override;

  int rank() const override { return rank_; }
  int size() const override { return size_; }
  void post_send(const void* buf, std::size_t bytes, int peer) override;
  void post_recv(void* buf, std::size_t bytes, int peer) override;
  void wait() override;
  // Ends an open group: its operations are enqueued and stay stuck until the owner aborts the
  // communicator, which must therefore come after this.
  void abandon() noexcept override { close_group_quietly(); }

 private:
  struct Pending {
    int peer;
    bool is_send;
    std::size_t bytes;
  };
  void post(bool is_send, void* buf, std::size_t bytes, int peer);
  void close_group_quietly() noexcept;
  // Poll until the stream drains; throws on NCCL's asynchronous error, a CUDA error or the deadline.
  void drain();
  std::string pending_text() const;

  ncclComm_t comm_;
  int rank_;
  int size_;
  double timeout_s_;
  bool group_open_ = false;
  std::vector<Pending> pending_;
};

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
