// Our algorithms on device buffers over NCCL's point-to-point calls (one GPU per rank, NCCL's rule).
#pragma once

#include <nccl.h>

#include <string>
#include <vector>

#include "device_transport.hpp"

namespace commscope {

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

}  // namespace commscope
