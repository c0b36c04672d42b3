#include "nccl.hpp"

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
#include "commscope/collectives/mpi_transport.hpp"
#include "cuda_check.hpp"

namespace commscope {

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

}  // namespace commscope
