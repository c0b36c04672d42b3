// The point-to-point transport every algorithm (ring, tree, rhd) is written against.
//
// It has the shape of NCCL's grouped point-to-point API: post sends and receives, then wait()
// completes everything posted since the last wait. MPI implements it with Isend/Irecv and
// a polling Testall with a deadline; a device transport maps post_* to ncclSend/ncclRecv
// inside a group and the local operations to CUDA kernels. Algorithms therefore never touch
// buffer memory directly: copies and reductions go through the transport too.
#pragma once

#include <cstddef>
#include <string>

#include "commscope/collectives/types.hpp"

namespace commscope {

class Transport {
 public:
  virtual ~Transport() = default;

  virtual int rank() const = 0;
  virtual int size() const = 0;

  // Start a send/receive of `bytes` bytes to/from rank `peer`. Zero-byte operations are
  // no-ops (both sides always agree on sizes). Messages between one pair of ranks are
  // matched in the order they were posted.
  virtual void post_send(const void* buf, std::size_t bytes, int peer) = 0;
  virtual void post_recv(void* buf, std::size_t bytes, int peer) = 0;
  // Complete every operation posted since the last wait. Throws TimeoutError past the
  // transport's deadline, naming the operation set by set_context and the pending peers.
  virtual void wait() = 0;

  // Local operations on buffers of the kind this transport moves (host or device memory).
  virtual void reduce(void* dst, const void* a, const void* b, std::size_t count, DataType type, ReduceOp op) = 0;
  virtual void copy(void* dst, const void* src, std::size_t bytes) = 0;
  virtual void divide(void* buf, std::size_t count, DataType type, int divisor) = 0;
  // Reusable temporary buffer number `slot` (0..kScratchSlots-1) of at least `bytes` bytes;
  // valid until the next call with the same slot.
  static constexpr int kScratchSlots = 4;
  virtual void* scratch(int slot, std::size_t bytes) = 0;

  // What is running, for error messages ("allreduce ring f32 sum 4096 B").
  virtual void set_context(std::string what) = 0;

  // Blocking conveniences built on post_* and wait().
  void send(const void* buf, std::size_t bytes, int peer) {
    post_send(buf, bytes, peer);
    wait();
  }
  void recv(void* buf, std::size_t bytes, int peer) {
    post_recv(buf, bytes, peer);
    wait();
  }
  void sendrecv(const void* sbuf, std::size_t sbytes, int dst, void* rbuf, std::size_t rbytes, int src) {
    post_recv(rbuf, rbytes, src);
    post_send(sbuf, sbytes, dst);
    wait();
  }
};

}  // namespace commscope
