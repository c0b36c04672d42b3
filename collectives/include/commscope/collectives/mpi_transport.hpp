// Transport over an MPI communicator, for host buffers.
#pragma once

#include <mpi.h>

#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "commscope/collectives/transport.hpp"

namespace commscope {

class MpiTransport final : public Transport {
 public:
  // Duplicates `comm` (library traffic never mixes with the caller's) and makes MPI errors on
  // it return codes, which the transport turns into TransportError. timeout_s <= 0: no deadline.
  // The algorithms' states (Transport::algorithm_state: communicators and windows made from
  // this one) are freed before the communicator, with the transport.
  MpiTransport(MPI_Comm comm, double timeout_s);
  ~MpiTransport() override;
  MpiTransport(const MpiTransport&) = delete;
  MpiTransport& operator=(const MpiTransport&) = delete;

  int rank() const override { return rank_; }
  int size() const override { return size_; }
  MpiTransport* as_mpi() noexcept override { return this; }
  void post_send(const void* buf, std::size_t bytes, int peer) override;
  void post_recv(void* buf, std::size_t bytes, int peer) override;
  void wait() override;
  void reduce(void* dst, const void* a, const void* b, std::size_t count, DataType type, ReduceOp op) override;
  void copy(void* dst, const void* src, std::size_t bytes) override;
  void divide(void* buf, std::size_t count, DataType type, int divisor) override;
  void* scratch(int slot, std::size_t bytes) override;

  // The duplicated communicator, for algorithms that call MPI collectives directly.
  MPI_Comm comm() const { return comm_; }
  double timeout_s() const { return timeout_s_; }
  // Sleep briefly between polls after a short spin: for more ranks than cores, where a
  // spinning rank steals the core of the rank it waits for. Off by default (pure spinning).
  void set_yield_when_idle(bool on) { yield_when_idle_ = on; }
  bool yield_when_idle() const { return yield_when_idle_; }
  // The host rank `peer` runs on (MPI_Get_processor_name, at most kHostChars bytes), for messages.
  std::string_view host_of(int peer) const;

  // For a watchdog (any thread): the peers this process has received from, over every live
  // MpiTransport, whose last message is older than `older_than_s`, the longest silent first (at
  // most `limit`), by MPI_COMM_WORLD rank: "rank 1 on host2 (last heard 4.0 s ago)", joined with
  // "; ". Empty when none is (or nothing was ever received). A peer counts as heard when any
  // communicator heard it.
  static std::string silent_peers(double older_than_s, std::size_t limit = 8);

 private:
  static constexpr std::size_t kHostChars = 64;
  void post(bool is_send, void* buf, std::size_t bytes, int peer);

  struct Pending {
    int peer;
    bool is_send;
    std::size_t bytes;  // the whole transfer's, of which this request is a message
    std::size_t post;   // the transfer's number since the last wait
  };
  MPI_Comm comm_ = MPI_COMM_NULL;
  int rank_ = 0;
  int size_ = 1;
  double timeout_s_;
  bool yield_when_idle_ = false;
  std::vector<MPI_Request> requests_;
  std::vector<Pending> pending_;
  struct Scratch {
    std::unique_ptr<std::byte[]> data;  // uninitialised: scratch is always written before read
    std::size_t bytes = 0;
  };
  std::array<Scratch, kScratchSlots> scratch_;
  std::vector<char> hosts_;           // size_ names of kHostChars bytes, NUL-padded
  std::vector<int> world_rank_;       // of every rank of this communicator
  std::vector<std::size_t> segment_;  // per rank: the largest message to it (mpi_transport.cpp)
  // When each peer's last receive completed (steady clock ns; 0: never), read by silent_peers.
  std::unique_ptr<std::atomic<std::int64_t>[]> heard_ns_;
};

// Throws TransportError naming the call, file:line and MPI's error string when rc != MPI_SUCCESS.
void check_mpi(int rc, const char* call, const char* file, int line);
#define COMMSCOPE_MPI_CHECK(call) ::commscope::check_mpi((call), #call, __FILE__, __LINE__)

}  // namespace commscope
