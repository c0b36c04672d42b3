// The point-to-point transport every algorithm (ring, tree, rhd) is written against.
//
// It has the shape of NCCL's grouped point-to-point API: post sends and receives, then wait()
// completes everything posted since the last wait. MPI implements it with Isend/Irecv and
// a polling Testall with a deadline; a device transport maps post_* to ncclSend/ncclRecv
// inside a group and the local operations to CUDA kernels. Algorithms therefore never touch
// buffer memory directly: copies and reductions go through the transport too.
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "commscope/collectives/types.hpp"

namespace commscope {

class MpiTransport;

// What is running, for error messages. Set on every call of Communicator::run, so it holds
// plain values only (no allocation); the text is made when an error needs it.
struct CallContext {
  Collective coll = Collective::allreduce;
  std::string_view algo;  // an Algorithm's name (static storage); empty: nothing set
  DataType type = DataType::f32;
  ReduceOp op = ReduceOp::sum;
  int root = 0;
  std::size_t count = 0;  // per-call count, as in CollArgs
  int nranks = 1;
  // "allreduce ring f32 sum 4096 B", "reduce tree f64 max root 2 64 B"; "?" when nothing is set.
  std::string describe() const;
};

// What an algorithm keeps on a transport between its calls (shm's node segment, hier's node and
// cross groups): made by the algorithm on its first call (collectively, where making it talks to
// the peers), owned by the transport and destroyed with it.
class AlgorithmState {
 public:
  virtual ~AlgorithmState() = default;
};

class Transport {
 public:
  Transport() = default;
  virtual ~Transport() = default;
  Transport(const Transport&) = delete;
  Transport& operator=(const Transport&) = delete;

  virtual int rank() const = 0;
  virtual int size() const = 0;
  // The MPI transport itself, for algorithms that call MPI's collectives (null for others).
  // A virtual call instead of a dynamic_cast on every collective call.
  virtual MpiTransport* as_mpi() noexcept { return nullptr; }

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

  // The state of the algorithm named `algo` on this transport, made by `make` (a callable
  // returning std::unique_ptr<S>, S derived from AlgorithmState) on the first call. Every
  // rank makes it in the same call when making it is collective. If `make` throws, nothing
  // is kept and the next call tries again.
  template <class S, class Make>
  S& algorithm_state(std::string_view algo, Make&& make) {
    for (auto& [name, state] : states_)
      if (name == algo) return static_cast<S&>(*state);
    std::unique_ptr<S> made = std::forward<Make>(make)();
    S& kept = *made;
    states_.emplace_back(std::string(algo), std::move(made));
    return kept;
  }
  // The state of algorithm `algo`, or null before its first call made one (for tests).
  AlgorithmState* find_algorithm_state(std::string_view algo) const noexcept {
    for (const auto& [name, state] : states_)
      if (name == algo) return state.get();
    return nullptr;
  }

  // What is running, for error messages (see CallContext). Cheap: called on every collective.
  virtual void set_context(const CallContext& what) noexcept { context_ = what; }
  const CallContext& context() const noexcept { return context_; }

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

 protected:
  // Destroys the algorithms' states, the last made first (the same order on every rank, since
  // every rank made them in the same calls). A transport whose states hold resources derived
  // from its own (MpiTransport: communicators split from its communicator, a shared-memory
  // window) calls this in its destructor before releasing those.
  void release_algorithm_states() noexcept {
    while (!states_.empty()) states_.pop_back();
  }

 private:
  CallContext context_;
  std::vector<std::pair<std::string, std::unique_ptr<AlgorithmState>>> states_;  // in the order made
};

}  // namespace commscope
