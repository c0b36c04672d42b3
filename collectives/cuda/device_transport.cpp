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

// ---- Setting a rank up on a GPU

int bind_local_gpu(const Communicator& comm, bool exclusive, const std::string& who) {
  int ngpu = 0;
  const cudaError_t e = cudaGetDeviceCount(&ngpu);
  if (e != cudaSuccess || ngpu == 0)
    throw InvalidArgument(who + ": no usable GPU (" + (e != cudaSuccess ? cudaGetErrorString(e) : "no devices") + ")");
  const Communicator node = comm.split_by_node();
  const int device = node.rank() % ngpu;
  COMMSCOPE_CUDA_CHECK(cudaSetDevice(device));
  if (!exclusive) return device;
  char bus[32] = {};
  COMMSCOPE_CUDA_CHECK(cudaDeviceGetPCIBusId(bus, sizeof bus, device));
  std::vector<char> buses(sizeof bus * static_cast<std::size_t>(node.size()));
  COMMSCOPE_MPI_CHECK(MPI_Allgather(bus, sizeof bus, MPI_CHAR, buses.data(), sizeof bus, MPI_CHAR, node.mpi_comm()));
  std::string shared;
  for (int r = 0; r < node.size() && shared.empty(); ++r) {
    if (r != node.rank() &&
        std::strncmp(bus, buses.data() + sizeof bus * static_cast<std::size_t>(r), sizeof bus) == 0) {
      shared = who;
      shared += ": ranks " + std::to_string(std::min(r, node.rank())) + " and " +
                std::to_string(std::max(r, node.rank())) + " of this node (" + std::to_string(node.size()) +
                " ranks, " + std::to_string(ngpu) + " visible GPUs each) share the GPU at " + bus +
                "; NCCL needs one GPU per rank (--transport staged runs ring/tree/rhd on a shared GPU)";
    }
  }
  int conflict = !shared.empty(), any_conflict = 0;
  COMMSCOPE_MPI_CHECK(MPI_Allreduce(&conflict, &any_conflict, 1, MPI_INT, MPI_MAX, comm.mpi_comm()));
  if (any_conflict) throw TransportError(shared.empty() ? who + ": ranks share a GPU (see their messages)" : shared);
  return device;
}

ncclComm_t init_nccl(const Communicator& comm, int cta_policy) {
  ncclUniqueId id;
  if (comm.rank() == 0) COMMSCOPE_NCCL_CHECK(ncclGetUniqueId(&id));
  COMMSCOPE_MPI_CHECK(MPI_Bcast(&id, sizeof id, MPI_BYTE, 0, comm.mpi_comm()));
  ncclComm_t nccl = nullptr;
  if (cta_policy < 0) {
    COMMSCOPE_NCCL_CHECK(ncclCommInitRank(&nccl, comm.size(), id, comm.rank()));
    return nccl;
  }
#if NCCL_VERSION_CODE >= NCCL_VERSION(2, 27, 0)
  ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
  config.CTAPolicy = cta_policy;
  COMMSCOPE_NCCL_CHECK(ncclCommInitRankConfig(&nccl, comm.size(), id, comm.rank(), &config));
  return nccl;
#else
  throw InvalidArgument("NCCL's CTA policy needs NCCL 2.27 or later (built with " + std::to_string(NCCL_VERSION_CODE) +
                        ")");
#endif
}

namespace {
// The NCCL library's version as loaded (it may be older than the headers built against).
int nccl_runtime_version() {
  static const int version = [] {
    int v = 0;
    return ncclGetVersion(&v) == ncclSuccess ? v : 0;
  }();
  return version;
}
}  // namespace

ncclDataType_t nccl_type(DataType t) {
  switch (t) {
    case DataType::f32:
      return ncclFloat32;
    case DataType::f64:
      return ncclFloat64;
    case DataType::f16:
      return ncclFloat16;
    case DataType::bf16:
      return ncclBfloat16;
    case DataType::i32:
      return ncclInt32;
    case DataType::i64:
      return ncclInt64;
    case DataType::u8:
      return ncclUint8;
    case DataType::i8:
      return ncclInt8;
    case DataType::u32:
      return ncclUint32;
    case DataType::u64:
      return ncclUint64;
  }
  throw InvalidArgument("no NCCL datatype for " + std::string(to_string(t)));
}

ncclRedOp_t nccl_op(ReduceOp op) {
  switch (op) {
    case ReduceOp::sum:
      return ncclSum;
    case ReduceOp::prod:
      return ncclProd;
    case ReduceOp::min:
      return ncclMin;
    case ReduceOp::max:
      return ncclMax;
    case ReduceOp::avg:
      return ncclAvg;
  }
  throw InvalidArgument("no NCCL op for " + std::string(to_string(op)));
}

namespace {

// A peer's block of a buffer, in elements.
struct PeerBlock {
  std::size_t offset = 0, count = 0;
};

// One NCCL group of ncclSend/ncclRecv, a block per peer and direction (empty blocks are left
// out): how NCCL's documentation builds alltoall-like exchanges from point-to-point calls.
template <typename Sent, typename Received>
void grouped_send_recv(const CollArgs& a, ncclComm_t comm, cudaStream_t stream, Sent sent, Received received) {
  const ncclDataType_t t = nccl_type(a.type);
  const std::size_t es = type_size(a.type);
  int nranks = 0;
  COMMSCOPE_NCCL_CHECK(ncclCommCount(comm, &nranks));
  const auto* in = static_cast<const std::byte*>(a.send);
  auto* out = static_cast<std::byte*>(a.recv);
  COMMSCOPE_NCCL_CHECK(ncclGroupStart());
  for (int peer = 0; peer < nranks; ++peer) {
    const PeerBlock s = sent(peer), r = received(peer);
    if (s.count) COMMSCOPE_NCCL_CHECK(ncclSend(in + s.offset * es, s.count, t, peer, comm, stream));
    if (r.count) COMMSCOPE_NCCL_CHECK(ncclRecv(out + r.offset * es, r.count, t, peer, comm, stream));
  }
  COMMSCOPE_NCCL_CHECK(ncclGroupEnd());
}

int user_rank(ncclComm_t comm) {
  int rank = 0;
  COMMSCOPE_NCCL_CHECK(ncclCommUserRank(comm, &rank));
  return rank;
}

}  // namespace

void launch_nccl(const CollArgs& a, ncclComm_t comm, cudaStream_t stream) {
  const ncclDataType_t t = nccl_type(a.type);
  switch (a.coll) {
    case Collective::allreduce:
      COMMSCOPE_NCCL_CHECK(ncclAllReduce(a.send, a.recv, a.count, t, nccl_op(a.op), comm, stream));
      return;
    case Collective::allgather:
      COMMSCOPE_NCCL_CHECK(ncclAllGather(a.send, a.recv, a.count, t, comm, stream));
      return;
    case Collective::reducescatter:
      COMMSCOPE_NCCL_CHECK(ncclReduceScatter(a.send, a.recv, a.count, t, nccl_op(a.op), comm, stream));
      return;
    case Collective::reduce:
      COMMSCOPE_NCCL_CHECK(ncclReduce(a.send, a.recv, a.count, t, nccl_op(a.op), a.root, comm, stream));
      return;
    case Collective::broadcast:
      COMMSCOPE_NCCL_CHECK(ncclBroadcast(a.send, a.recv, a.count, t, a.root, comm, stream));
      return;
    case Collective::alltoall: {
      if (a.send == a.recv) throw InvalidArgument("NCCL has no in-place alltoall");
#if NCCL_VERSION_CODE >= NCCL_VERSION(2, 28, 0)
      // NCCL's own alltoall where the library has it (2.28 on), as nccl-tests calls it: it
      // runs in one kernel where grouped send/recv pairs cost 1.2-2x more on one H100.
      if (nccl_runtime_version() >= NCCL_VERSION(2, 28, 0)) {
        COMMSCOPE_NCCL_CHECK(ncclAlltoAll(a.send, a.recv, a.count, t, comm, stream));
        return;
      }
#endif
      const auto block = [&](int peer) { return PeerBlock{static_cast<std::size_t>(peer) * a.count, a.count}; };
      return grouped_send_recv(a, comm, stream, block, block);
    }
    case Collective::gather:
    case Collective::scatter: {
      if (a.count == 0) return;  // as nccl-tests: nothing to launch
#if NCCL_VERSION_CODE >= NCCL_VERSION(2, 28, 0)
      // ncclGather and ncclScatter came with NCCL 2.28 (headers and library alike).
      if (nccl_runtime_version() >= NCCL_VERSION(2, 28, 0)) {
        if (a.coll == Collective::gather)
          COMMSCOPE_NCCL_CHECK(ncclGather(a.send, a.recv, a.count, t, a.root, comm, stream));
        else
          COMMSCOPE_NCCL_CHECK(ncclScatter(a.send, a.recv, a.count, t, a.root, comm, stream));
        return;
      }
#endif
      // Before 2.28: the root's blocks go to or come from every rank in one group; in place,
      // the root's own block is already where it belongs.
      const int me = user_rank(comm);
      const bool gather = a.coll == Collective::gather, at_root = me == a.root;
      const std::size_t own = static_cast<std::size_t>(me) * a.count;
      const bool in_place =
          at_root && (gather ? a.send == static_cast<const std::byte*>(a.recv) + own * type_size(a.type)
                             : a.recv == static_cast<const std::byte*>(a.send) + own * type_size(a.type));
      const auto one = [&](int peer) { return peer == a.root && !in_place ? PeerBlock{0, a.count} : PeerBlock{}; };
      const auto all = [&](int peer) {
        return at_root && !(in_place && peer == me) ? PeerBlock{static_cast<std::size_t>(peer) * a.count, a.count}
                                                    : PeerBlock{};
      };
      if (gather) return grouped_send_recv(a, comm, stream, one, all);
      return grouped_send_recv(a, comm, stream, all, one);
    }
    case Collective::sendrecv: {
      // nccl-tests' sendrecv: the ring shift, one ncclSend and one ncclRecv in a group.
      if (a.send == a.recv) throw InvalidArgument("NCCL has no in-place sendrecv");
      int nranks = 0;
      COMMSCOPE_NCCL_CHECK(ncclCommCount(comm, &nranks));
      const int me = user_rank(comm), right = (me + 1) % nranks, left = (me - 1 + nranks) % nranks;
      const auto to_right = [&](int peer) { return peer == right ? PeerBlock{0, a.count} : PeerBlock{}; };
      const auto from_left = [&](int peer) { return peer == left ? PeerBlock{0, a.count} : PeerBlock{}; };
      return grouped_send_recv(a, comm, stream, to_right, from_left);
    }
    case Collective::alltoallv: {
      // As nccl-tests' alltoallv: grouped ncclSend/ncclRecv of each peer's block.
      int nranks = 0;
      COMMSCOPE_NCCL_CHECK(ncclCommCount(comm, &nranks));
      const auto n = static_cast<std::size_t>(nranks);
      if (a.send_counts.size() != n || a.send_displs.size() != n || a.recv_counts.size() != n ||
          a.recv_displs.size() != n)
        throw InvalidArgument("alltoallv: counts and displacements need " + std::to_string(n) + " entries each");
      const auto j = [](int peer) { return static_cast<std::size_t>(peer); };
      const auto sent = [&](int peer) { return PeerBlock{a.send_displs[j(peer)], a.send_counts[j(peer)]}; };
      const auto received = [&](int peer) { return PeerBlock{a.recv_displs[j(peer)], a.recv_counts[j(peer)]}; };
      return grouped_send_recv(a, comm, stream, sent, received);
    }
  }
  throw InvalidArgument("unknown collective");
}

// ---- DeviceTransport: local operations on the stream

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

// ---- NcclP2pTransport

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

// ---- StagedMpiTransport

StagedMpiTransport::StagedMpiTransport(MPI_Comm comm, cudaStream_t stream, double timeout_s)
    : DeviceTransport(stream), mpi_(comm, timeout_s) {}

StagedMpiTransport::~StagedMpiTransport() {
  // After a failed wait MPI may still own some staging buffers (abandoned requests): those
  // were released (leaked) on purpose; the rest are free to go.
  for (Pinned& p : stages_)
    if (p.data) cudaFreeHost(p.data);
}

void* StagedMpiTransport::stage(std::size_t bytes) {
  if (stages_used_ == stages_.size()) stages_.emplace_back();
  Pinned& p = stages_[stages_used_++];
  if (!p.data || p.bytes < bytes) {
    // Not in use: buffers are handed out again only after a wait completed their transfers.
    if (p.data) COMMSCOPE_CUDA_CHECK(cudaFreeHost(p.data));
    p = Pinned{};
    const std::size_t size = std::max<std::size_t>(bytes, 4096);
    COMMSCOPE_CUDA_CHECK(cudaMallocHost(&p.data, size));
    p.bytes = size;
  }
  return p.data;
}

void StagedMpiTransport::release_stages() noexcept {
  // MPI may still read or write the buffers of requests it abandoned on an error: forget
  // them rather than free memory that could be touched later.
  for (std::size_t i = 0; i < stages_used_; ++i) stages_[i] = Pinned{};
  stages_used_ = 0;
  landings_.clear();
}

void StagedMpiTransport::post_send(const void* buf, std::size_t bytes, int peer) {
  if (bytes == 0) return;
  void* host = stage(bytes);
  // The synchronisation also orders the copy after the kernels that produced `buf`.
  COMMSCOPE_CUDA_CHECK(cudaMemcpyAsync(host, buf, bytes, cudaMemcpyDeviceToHost, stream()));
  COMMSCOPE_CUDA_CHECK(cudaStreamSynchronize(stream()));
  mpi_.post_send(host, bytes, peer);
}

void StagedMpiTransport::post_recv(void* buf, std::size_t bytes, int peer) {
  if (bytes == 0) return;
  void* host = stage(bytes);
  mpi_.post_recv(host, bytes, peer);
  landings_.push_back({buf, host, bytes});
}

void StagedMpiTransport::wait() {
  if (stages_used_ == 0) return;  // nothing posted since the last wait
  try {
    mpi_.wait();  // deadline, TimeoutError naming the context and the pending peers
    for (const Landing& l : landings_)
      COMMSCOPE_CUDA_CHECK(cudaMemcpyAsync(l.device, l.staged, l.bytes, cudaMemcpyHostToDevice, stream()));
    // The staging buffers are reused by the next posts, so the copies must have read them.
    if (!landings_.empty()) COMMSCOPE_CUDA_CHECK(cudaStreamSynchronize(stream()));
  } catch (...) {
    release_stages();
    throw;
  }
  landings_.clear();
  stages_used_ = 0;
}

}  // namespace commscope
