// Device buffers over NCCL (--device cuda): the `nccl` algorithm, one GPU per rank (local
// rank modulo the GPUs visible), the communicator bootstrapped over MPI. Timing follows
// nccl-tests: the calls are launched back to back on one stream, the host waits for the
// stream, and the time is the host's wall time; CUDA events between calls give the
// per-iteration samples. NCCL reads NCCL_ALGO / NCCL_PROTO itself; we never override them.
#include "backend.hpp"
#include "commscope/collectives/error.hpp"

#if COMMSCOPE_WITH_CUDA

#include <cuda_runtime.h>
#include <nccl.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "commscope/collectives/check_data.hpp"
#include "commscope/collectives/mpi_transport.hpp"
#include "watchdog.hpp"

#define COMMSCOPE_CUDA_CHECK(call)                                                                           \
  do {                                                                                                       \
    const cudaError_t e_ = (call);                                                                           \
    if (e_ != cudaSuccess)                                                                                   \
      throw ::commscope::TransportError(std::string(#call) + " failed: " + cudaGetErrorString(e_) + " at " + \
                                        __FILE__ + ":" + std::to_string(__LINE__));                          \
  } while (0)

#define COMMSCOPE_NCCL_CHECK(call)                                                                           \
  do {                                                                                                       \
    const ncclResult_t r_ = (call);                                                                          \
    if (r_ != ncclSuccess && r_ != ncclInProgress)                                                           \
      throw ::commscope::TransportError(std::string(#call) + " failed: " + ncclGetErrorString(r_) + " at " + \
                                        __FILE__ + ":" + std::to_string(__LINE__));                          \
  } while (0)

namespace commscope::bench {
namespace {

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

// Device memory that grows to the largest request and is freed once.
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  ~DeviceBuffer() {
    if (p_) cudaFree(p_);
  }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  void grow(std::size_t bytes) {
    bytes = std::max<std::size_t>(bytes, 256);
    if (bytes <= size_) return;
    if (p_) COMMSCOPE_CUDA_CHECK(cudaFree(p_));
    p_ = nullptr;
    size_ = 0;
    COMMSCOPE_CUDA_CHECK(cudaMalloc(&p_, bytes));
    COMMSCOPE_CUDA_CHECK(cudaMemset(p_, 0, bytes));
    size_ = bytes;
  }
  std::byte* data() const { return static_cast<std::byte*>(p_); }

 private:
  void* p_ = nullptr;
  std::size_t size_ = 0;
};

class CudaBackend final : public Backend {
 public:
  CudaBackend(Communicator& comm, double timeout_s) : comm_(comm), timeout_s_(timeout_s) {
    int ngpu = 0;
    const cudaError_t e = cudaGetDeviceCount(&ngpu);
    if (e != cudaSuccess || ngpu == 0)
      throw InvalidArgument(std::string("--device cuda: no usable GPU (") +
                            (e != cudaSuccess ? cudaGetErrorString(e) : "no devices") + ")");
    // The node's ranks take the visible GPUs in turn. Launchers that give each rank its own GPU
    // (srun --gpus-per-task=1, CUDA_VISIBLE_DEVICES per rank) leave one visible GPU per rank,
    // so what must differ is the physical GPU: compared by PCI bus id across the node's ranks.
    Communicator node = comm_.split_by_node();
    device_ = node.rank() % ngpu;
    COMMSCOPE_CUDA_CHECK(cudaSetDevice(device_));
    char bus[32] = {};
    COMMSCOPE_CUDA_CHECK(cudaDeviceGetPCIBusId(bus, sizeof bus, device_));
    std::vector<char> buses(sizeof bus * static_cast<std::size_t>(node.size()));
    COMMSCOPE_MPI_CHECK(MPI_Allgather(bus, sizeof bus, MPI_CHAR, buses.data(), sizeof bus, MPI_CHAR, node.mpi_comm()));
    std::string shared;
    for (int r = 0; r < node.size() && shared.empty(); ++r) {
      if (r != node.rank() && std::strncmp(bus, buses.data() + sizeof bus * static_cast<std::size_t>(r), sizeof bus) == 0)
        shared = "--device cuda: ranks " + std::to_string(std::min(r, node.rank())) + " and " +
                 std::to_string(std::max(r, node.rank())) + " of this node (" + std::to_string(node.size()) +
                 " ranks, " + std::to_string(ngpu) + " visible GPUs each) share the GPU at " + bus +
                 "; NCCL needs one GPU per rank";
    }
    // Every rank learns of a conflict anywhere, so that all stop here rather than some waiting in NCCL.
    int conflict = !shared.empty(), any_conflict = 0;
    COMMSCOPE_MPI_CHECK(MPI_Allreduce(&conflict, &any_conflict, 1, MPI_INT, MPI_MAX, comm_.mpi_comm()));
    if (any_conflict) throw TransportError(shared.empty() ? "--device cuda: ranks share a GPU (see their messages)" : shared);
    COMMSCOPE_CUDA_CHECK(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking));
    ncclUniqueId id;
    if (comm_.rank() == 0) COMMSCOPE_NCCL_CHECK(ncclGetUniqueId(&id));
    COMMSCOPE_MPI_CHECK(MPI_Bcast(&id, sizeof id, MPI_BYTE, 0, comm_.mpi_comm()));
    COMMSCOPE_NCCL_CHECK(ncclCommInitRank(&nccl_, comm_.size(), id, comm_.rank()));
  }

  ~CudaBackend() override {
    for (cudaEvent_t ev : events_) cudaEventDestroy(ev);
    if (nccl_) ncclCommDestroy(nccl_);
    if (stream_) cudaStreamDestroy(stream_);
  }

  std::string device() const override { return "cuda"; }
  std::vector<std::string> algorithms() const override { return {"nccl"}; }
  bool supports(const std::string& algo, Collective) const override { return algo == "nccl"; }

  void prepare(const Case& c, std::uint64_t seed) override {
    case_ = c;
    layout_ = buffer_layout(c, comm_.rank());
    a_.grow(layout_.a_bytes);
    b_.grow(c.in_place && c.coll == Collective::alltoall ? layout_.a_bytes : layout_.b_bytes);
    send_ = a_.data() + layout_.send_offset;
    recv_ = (layout_.recv_in_b ? b_.data() : a_.data()) + layout_.recv_offset;
    upload_input(seed);
  }

  LocalTimings run_timed(int warmup, std::int64_t iters, Watchdog& dog) override {
    for (int i = 0; i < warmup; ++i) launch();
    wait_stream();
    comm_.barrier();
    // Per-call events only while they stay cheap; beyond that only the total is known.
    const bool per_call = iters <= kMaxEventSamples;
    if (per_call) ensure_events(static_cast<std::size_t>(iters) + 1);
    LocalTimings t;
    const std::int64_t t0 = now_ns();
    dog.beat(-1, t0);
    if (per_call) COMMSCOPE_CUDA_CHECK(cudaEventRecord(events_[0], stream_));
    for (std::int64_t i = 0; i < iters; ++i) {
      launch();
      if (per_call) COMMSCOPE_CUDA_CHECK(cudaEventRecord(events_[static_cast<std::size_t>(i) + 1], stream_));
    }
    wait_stream();
    const std::int64_t t1 = now_ns();
    dog.beat(iters - 1, t1);
    t.total_s = static_cast<double>(t1 - t0) * 1e-9;
    if (per_call) {
      t.op_s.resize(static_cast<std::size_t>(iters));
      for (std::size_t i = 0; i < t.op_s.size(); ++i) {
        float ms = 0;
        COMMSCOPE_CUDA_CHECK(cudaEventElapsedTime(&ms, events_[i], events_[i + 1]));
        t.op_s[i] = ms * 1e-3;
      }
    } else {
      t.op_s.assign(static_cast<std::size_t>(iters), t.total_s / static_cast<double>(iters));
    }
    // Arrival times are on the GPU's timeline: unknown here (skew NaN).
    return t;
  }

  std::uint64_t check_once(std::uint64_t seed, bool corrupt) override {
    upload_input(seed);
    launch();
    wait_stream();
    // Both buffers come to the host whole (the in-place input lies inside the output).
    const check::Spec s = case_.spec(seed);
    const std::size_t es = type_size(case_.type);
    std::vector<std::byte> out(check::recv_elements(s) * es + 1), in(check::send_elements(s) * es + 1);
    COMMSCOPE_CUDA_CHECK(cudaMemcpy(out.data(), recv_, out.size() - 1, cudaMemcpyDeviceToHost));
    if (!case_.in_place) COMMSCOPE_CUDA_CHECK(cudaMemcpy(in.data(), send_, in.size() - 1, cudaMemcpyDeviceToHost));
    return count_wrong(case_, seed, comm_.rank(), out.data(), in.data(), corrupt);
  }

 private:
  static constexpr std::int64_t kMaxEventSamples = 100000;

  void upload_input(std::uint64_t seed) {
    const check::Spec s = case_.spec(seed);
    std::vector<std::byte> host(check::send_elements(s) * type_size(case_.type) + 1);
    check::fill_send(s, comm_.rank(), host.data());
    COMMSCOPE_CUDA_CHECK(cudaMemcpy(send_, host.data(), host.size() - 1, cudaMemcpyHostToDevice));
  }

  void launch() {
    const Case& c = case_;
    const ncclDataType_t t = nccl_type(c.type);
    switch (c.coll) {
      case Collective::allreduce:
        COMMSCOPE_NCCL_CHECK(ncclAllReduce(send_, recv_, c.count, t, nccl_op(c.op), nccl_, stream_));
        break;
      case Collective::allgather:
        COMMSCOPE_NCCL_CHECK(ncclAllGather(send_, recv_, c.count, t, nccl_, stream_));
        break;
      case Collective::reducescatter:
        COMMSCOPE_NCCL_CHECK(ncclReduceScatter(send_, recv_, c.count, t, nccl_op(c.op), nccl_, stream_));
        break;
      case Collective::reduce:
        COMMSCOPE_NCCL_CHECK(ncclReduce(send_, recv_, c.count, t, nccl_op(c.op), c.root, nccl_, stream_));
        break;
      case Collective::broadcast:
        COMMSCOPE_NCCL_CHECK(ncclBroadcast(send_, recv_, c.count, t, c.root, nccl_, stream_));
        break;
      case Collective::alltoall: {
        // NCCL has no in-place alltoall: in place, the input is staged in the second pool.
        const std::size_t block = c.count * type_size(c.type);
        const std::byte* in = send_;
        if (c.in_place) {
          COMMSCOPE_CUDA_CHECK(cudaMemcpyAsync(b_.data(), send_, block * static_cast<std::size_t>(comm_.size()),
                                               cudaMemcpyDeviceToDevice, stream_));
          in = b_.data();
        }
        COMMSCOPE_NCCL_CHECK(ncclGroupStart());
        for (int peer = 0; peer < comm_.size(); ++peer) {
          const std::size_t off = static_cast<std::size_t>(peer) * block;
          COMMSCOPE_NCCL_CHECK(ncclSend(in + off, c.count, t, peer, nccl_, stream_));
          COMMSCOPE_NCCL_CHECK(ncclRecv(recv_ + off, c.count, t, peer, nccl_, stream_));
        }
        COMMSCOPE_NCCL_CHECK(ncclGroupEnd());
        break;
      }
    }
  }

  // Wait for the stream without blocking in the driver: a dead peer shows up as NCCL's
  // asynchronous error or as the deadline passing, never as a silent hang.
  void wait_stream() {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_s_);
    for (;;) {
      const cudaError_t e = cudaStreamQuery(stream_);
      if (e == cudaSuccess) return;
      if (e != cudaErrorNotReady) COMMSCOPE_CUDA_CHECK(e);
      ncclResult_t async = ncclSuccess;
      COMMSCOPE_NCCL_CHECK(ncclCommGetAsyncError(nccl_, &async));
      if (async != ncclSuccess && async != ncclInProgress) {
        ncclCommAbort(nccl_);
        nccl_ = nullptr;
        throw TransportError(std::string("NCCL asynchronous error: ") + ncclGetErrorString(async));
      }
      if (timeout_s_ > 0 && std::chrono::steady_clock::now() > deadline) {
        ncclCommAbort(nccl_);
        nccl_ = nullptr;
        throw TimeoutError("NCCL " + describe(case_) + " did not complete within " + std::to_string(timeout_s_) +
                           " s on rank " + std::to_string(comm_.rank()));
      }
      std::this_thread::yield();
    }
  }

  void ensure_events(std::size_t n) {
    while (events_.size() < n) {
      cudaEvent_t ev;
      COMMSCOPE_CUDA_CHECK(cudaEventCreate(&ev));
      events_.push_back(ev);
    }
  }

  Communicator& comm_;
  double timeout_s_;
  int device_ = 0;
  cudaStream_t stream_ = nullptr;
  ncclComm_t nccl_ = nullptr;
  std::vector<cudaEvent_t> events_;
  Case case_;
  Layout layout_;
  DeviceBuffer a_, b_;
  std::byte* send_ = nullptr;
  std::byte* recv_ = nullptr;
};

}  // namespace

std::unique_ptr<Backend> make_cuda_backend(Communicator& comm, double timeout_s) {
  return std::make_unique<CudaBackend>(comm, timeout_s);
}

}  // namespace commscope::bench

#else  // !COMMSCOPE_WITH_CUDA

namespace commscope::bench {
std::unique_ptr<Backend> make_cuda_backend(Communicator&, double) {
  throw InvalidArgument("--device cuda: this build has no CUDA (configure with -DCOMMSCOPE_CUDA=ON)");
}
}  // namespace commscope::bench

#endif
