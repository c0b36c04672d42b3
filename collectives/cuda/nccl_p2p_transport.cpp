#include "nccl_p2p_transport.hpp"

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

NcclP2pTransport::NcclP2pTransport(ncclComm_t comm, cudaStream_t stream, int rank, int size, double timeout_s)
    : DeviceTransport(stream), comm_(comm), rank_(rank), size_(size), timeout_s_(timeout_s) {
  if (!comm_) throw InvalidArgument("NcclP2pTransport: the NCCL communicator is null");
  if (size_ < 1 || rank_ < 0 || rank_ >= size_)
    throw InvalidArgument("NcclP2pTransport: rank " + std::to_string(rank_) + " of " + std::to_string(size_));
}

NcclP2pTransport::~NcclP2pTransport() {
  // Only after an error between a post and its wait: keep NCCL's group nesting balanced.
  close_group_quietly();
}

void NcclP2pTransport::close_group_quietly() noexcept {
  if (!group_open_) return;
  group_open_ = false;
  ncclGroupEnd();
  pending_.clear();
}

void NcclP2pTransport::post(bool is_send, void* buf, std::size_t bytes, int peer) {
  if (bytes == 0) return;
  if (!group_open_) {
    COMMSCOPE_NCCL_CHECK(ncclGroupStart());
    group_open_ = true;
  }
  try {
    if (is_send) {
      COMMSCOPE_NCCL_CHECK(ncclSend(buf, bytes, ncclUint8, peer, comm_, stream()));
    } else {
      COMMSCOPE_NCCL_CHECK(ncclRecv(buf, bytes, ncclUint8, peer, comm_, stream()));
    }
  } catch (...) {
    close_group_quietly();
    throw;
  }
  pending_.push_back({peer, is_send, bytes});
}

void NcclP2pTransport::post_send(const void* buf, std::size_t bytes, int peer) {
  post(true, const_cast<void*>(buf), bytes, peer);  // ncclSend only reads it
}

void NcclP2pTransport::post_recv(void* buf, std::size_t bytes, int peer) {
  post(false, buf, bytes, peer);
}

void NcclP2pTransport::wait() {
  if (!group_open_) return;
  group_open_ = false;
  try {
    // Blocking communicators enqueue the group's kernels here; non-blocking ones may still be
    // doing so when this returns ncclInProgress (drain() polls for that too).
    COMMSCOPE_NCCL_CHECK(ncclGroupEnd());
    drain();
  } catch (...) {
    pending_.clear();
    throw;
  }
  pending_.clear();
}

std::string NcclP2pTransport::pending_text() const {
  std::ostringstream os;
  for (const Pending& p : pending_)
    os << (p.is_send ? " send to " : " recv from ") << p.peer << " (" << p.bytes << " B)";
  return os.str();
}

void NcclP2pTransport::drain() {
  using clock = std::chrono::steady_clock;
  const auto start = clock::now();
  // Poll rather than cudaStreamSynchronize: a dead or hung peer then ends in NCCL's
  // asynchronous error or in a TimeoutError naming the operation, not in a hang.
  for (;;) {
    ncclResult_t async = ncclSuccess;
    COMMSCOPE_NCCL_CHECK(ncclCommGetAsyncError(comm_, &async));
    if (async != ncclSuccess && async != ncclInProgress) {
      std::ostringstream os;
      os << "NCCL asynchronous error on rank " << rank_ << " in " << context().describe() << ": "
         << ncclGetErrorString(async) << "; pending:" << pending_text();
      throw TransportError(os.str());
    }
    if (async == ncclSuccess) {  // the group is enqueued: the stream tells when it is done
      const cudaError_t e = cudaStreamQuery(stream());
      if (e == cudaSuccess) return;
      if (e != cudaErrorNotReady) COMMSCOPE_CUDA_CHECK(e);
    }
    if (timeout_s_ > 0 && std::chrono::duration<double>(clock::now() - start).count() > timeout_s_) {
      std::ostringstream os;
      os << "timeout after " << timeout_s_ << " s on rank " << rank_ << " in " << context().describe()
         << ": still waiting on the NCCL group of" << pending_text();
      throw TimeoutError(os.str());
    }
    std::this_thread::yield();
  }
}

}  // namespace commscope
