// Device buffers (--device cuda): NCCL's own collectives (the `nccl` algorithm) and our ring,
// tree and rhd over a device transport. --transport nccl (default): one GPU per rank (local
// rank modulo the GPUs visible), the NCCL communicator bootstrapped over MPI, and ring/tree/rhd
// over ncclSend/ncclRecv on the same communicator and stream. --transport staged: ring/tree/rhd
// over MPI through pinned host memory, no NCCL at all, so ranks may share a GPU. Timing follows
// nccl-tests: the calls are launched back to back on one stream, the host waits for the
// stream, and the time is the host's wall time; CUDA events between calls give the
// per-iteration samples (our algorithms wait inside each call, so their calls do not overlap).
// NCCL reads NCCL_ALGO / NCCL_PROTO itself; we never override them.
#include "backends/backend.hpp"
#include "commscope/collectives/error.hpp"

#if COMMSCOPE_WITH_CUDA

#include <cuda_runtime.h>
#include <nccl.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "backends/device_buffer.hpp"
#include "clock.hpp"
#include "commscope/collectives/check_data.hpp"
#include "commscope/collectives/mpi_transport.hpp"
#include "device_collectives.hpp"
#include "gpu_setup.hpp"
#include "nccl.hpp"
#include "watchdog.hpp"

namespace commscope::bench {
namespace {

// Our algorithms that run on device buffers through a DeviceTransport.
constexpr std::array<std::string_view, 3> kDeviceAlgorithms = {"ring", "tree", "rhd"};

bool is_device_algorithm(const std::string& name) {
  return std::find(kDeviceAlgorithms.begin(), kDeviceAlgorithms.end(), name) != kDeviceAlgorithms.end();
}

// Collectives NCCL runs out of place only: in place, the `nccl` algorithm stages the input in
// the second buffer pool first (the copy is part of the time).
bool nccl_stages_in_place(Collective c) {
  return c == Collective::alltoall || c == Collective::sendrecv;
}

class CudaBackend final : public Backend {
 public:
  CudaBackend(Communicator& comm, const Options& o)
      : comm_(comm), timeout_s_(o.timeout_s), staged_(o.transport == "staged"), unalign_(o.unalign) {
    if (o.transport != "nccl" && o.transport != "staged")
      throw InvalidArgument("bad --transport '" + o.transport + "' (nccl or staged)");
    // The node's ranks take the visible GPUs in turn; NCCL refuses two ranks on one GPU, staged
    // transfers go through host memory and do not care.
    device_ = bind_local_gpu(comm_, !staged_, "--device cuda");
    free_at_start_ = free_device_memory();
    // -y 1: the legacy default stream (nullptr), as nccl-tests' stream_null.
    if (!o.stream_null) COMMSCOPE_CUDA_CHECK(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking));
    dc_ = std::make_unique<DeviceCollectives>(comm_, stream_, staged_, o.cta_policy);
    if (staged_) return;
    free_after_init_ = free_device_memory();
    a_.set_registration(dc_->nccl(), o.local_register);
    b_.set_registration(dc_->nccl(), o.local_register);
    // Aborting the communicator leaves nothing to deregister with.
    dc_->set_before_abort([this] {
      a_.forget_registration();
      b_.forget_registration();
    });
  }

  ~CudaBackend() override {
    // The buffers' registrations before the communicator; the transport's scratch memory (with
    // the communicator) while its stream still exists.
    a_.release();
    b_.release();
    dc_.reset();
    for (cudaEvent_t ev : events_) cudaEventDestroy(ev);
    if (stream_) cudaStreamDestroy(stream_);
  }

  std::string device() const override { return "cuda"; }

  DeviceInfo device_info() const override {
    cudaDeviceProp prop{};
    COMMSCOPE_CUDA_CHECK(cudaGetDeviceProperties(&prop, device_));
    char pci[32];
    std::snprintf(pci, sizeof pci, "%04x:%02x:%02x", static_cast<unsigned>(prop.pciDomainID),
                  static_cast<unsigned>(prop.pciBusID), static_cast<unsigned>(prop.pciDeviceID));
    return {device_, pci, prop.name};
  }

  // As nccl-tests' -M: what NCCL's initialisation took (free memory before and after), our
  // buffers, and what the collectives took since (NCCL's lazily connected buffers, our scratch).
  std::vector<MemoryUse> memory_use() const override {
    const std::int64_t ours = static_cast<std::int64_t>(a_.size() + b_.size());
    const std::int64_t init = staged_ ? 0 : free_at_start_ - free_after_init_;
    const std::int64_t since = (staged_ ? free_at_start_ : free_after_init_) - free_device_memory() - ours;
    return {{"Initialization", init}, {"User-Allocated", ours}, {"Collective", std::max<std::int64_t>(0, since)}};
  }

  std::vector<std::string> algorithms() const override {
    std::vector<std::string> names;
    if (!staged_) names.emplace_back("nccl");
    for (std::string_view a : kDeviceAlgorithms) names.emplace_back(a);
    return names;
  }

  bool supports(const std::string& algo, Collective c) const override {
    if (algo == "nccl") return !staged_;
    return is_device_algorithm(algo) && find_algorithm(algo).supports(c);
  }

  void prepare(const Case& c, std::uint64_t seed) override {
    case_ = c;
    layout_ = buffer_layout(c, comm_.rank(), unalign_);
    a_.grow(layout_.a_bytes);
    b_.grow(c.in_place && nccl_stages_in_place(c.coll) ? layout_.a_bytes : layout_.b_bytes);
    send_ = a_.data() + layout_.send_offset;
    recv_ = (layout_.recv_in_b ? b_.data() : a_.data()) + layout_.recv_offset;
    algo_ = nullptr;
    args_ = CollArgs{c.coll, send_, recv_, c.count, c.type, c.op, c.root};
    vlayout_ = check::peer_layout(c.spec(seed), comm_.rank());
    vlayout_.apply(args_);
    if (c.algo != "nccl") {
      // The buffers as the CPU backend passes them to Communicator::run, checked the same way.
      algo_ = &find_algorithm(c.algo);
      validate(args_, comm_.rank(), comm_.size());
      dc_->transport().set_context(call_context(args_, algo_->name(), comm_.size()));
    }
    upload_input(seed);
  }

  LocalTimings run_timed(const TimingPlan& p, Watchdog& dog) override {
    for (int i = 0; i < p.warmup; ++i) launch();
    wait_stream();
    if (p.graph_launches > 0) return run_graph(p, dog);
    comm_.barrier();
    // The time: the iterations with nothing between them but what -z asks for, as nccl-tests
    // times them. A CUDA event recorded between calls costs the host about 1.5 us, which is the
    // whole time of a call that does no work (a 1-rank or in-place no-op).
    LocalTimings t;
    const std::int64_t t0 = now_ns();
    std::int64_t untimed = 0;  // ns in -z 3's barriers
    for (std::int64_t i = 0; i < p.iters; ++i) {
      run_iteration(p);
      dog.progress(i);
      if (p.blocking == 3) untimed += wait_then_barrier();
    }
    const std::int64_t issued = now_ns();
    wait_stream();
    const std::int64_t t1 = now_ns();
    t.total_s = static_cast<double>(t1 - t0 - untimed) * 1e-9;
    t.launch_s = static_cast<double>(issued - t0 - untimed) * 1e-9;
    t.op_s = sample_calls(p, dog);
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
  void upload_input(std::uint64_t seed) {
    const check::Spec s = case_.spec(seed);
    std::vector<std::byte> host(check::send_elements(s) * type_size(case_.type) + 1);
    check::fill_send(s, comm_.rank(), host.data());
    // On the backend's stream and waited for: a pageable cudaMemcpy may return before its DMA
    // is done, and the non-blocking stream would not wait for it.
    COMMSCOPE_CUDA_CHECK(cudaMemcpyAsync(send_, host.data(), host.size() - 1, cudaMemcpyHostToDevice, stream_));
    // NCCL has no in-place alltoall or sendrecv: their input is staged in the second pool here,
    // once, so that the timed calls do not each copy it.
    if (stages_input())
      COMMSCOPE_CUDA_CHECK(cudaMemcpyAsync(b_.data(), send_, host.size() - 1, cudaMemcpyDeviceToDevice, stream_));
    COMMSCOPE_CUDA_CHECK(cudaStreamSynchronize(stream_));
  }

  // One call: NCCL's (enqueued) or one of our algorithms (the host drives it, waiting at every
  // step; DeviceCollectives aborts the communicator if it fails).
  void launch() {
    if (algo_ && args_.count == 0) return;  // as Communicator::run: every rank has the same count
    CollArgs args = args_;
    if (stages_input()) args.send = b_.data();  // staged by upload_input
    dc_->run(args, algo_, comm_.options().algo);
  }

  // -G: the plan's iterations captured once in a CUDA graph (NCCL's collectives only; options
  // refuse the rest), the graph launched graph_launches times back to back and timed as a whole.
  LocalTimings run_graph(const TimingPlan& p, Watchdog& /*dog*/) {
    cudaGraph_t graph = nullptr;
    COMMSCOPE_CUDA_CHECK(cudaStreamBeginCapture(stream_, cudaStreamCaptureModeThreadLocal));
    try {
      for (std::int64_t i = 0; i < p.iters; ++i) run_iteration(p);
    } catch (...) {
      if (cudaStreamEndCapture(stream_, &graph) == cudaSuccess && graph) cudaGraphDestroy(graph);
      throw;
    }
    COMMSCOPE_CUDA_CHECK(cudaStreamEndCapture(stream_, &graph));
    cudaGraphExec_t exec = nullptr;
    const cudaError_t made = cudaGraphInstantiate(&exec, graph, 0);
    cudaGraphDestroy(graph);
    COMMSCOPE_CUDA_CHECK(made);
    struct ExecGuard {
      cudaGraphExec_t e;
      ~ExecGuard() { cudaGraphExecDestroy(e); }
    } guard{exec};
    comm_.barrier();
    LocalTimings t;
    const std::int64_t t0 = now_ns();
    for (int l = 0; l < p.graph_launches; ++l) COMMSCOPE_CUDA_CHECK(cudaGraphLaunch(exec, stream_));
    const std::int64_t issued = now_ns();
    wait_stream();
    const std::int64_t t1 = now_ns();
    t.total_s = static_cast<double>(t1 - t0) * 1e-9;
    t.launch_s = static_cast<double>(issued - t0) * 1e-9;
    // Inside a graph only the whole is timed: no per-iteration samples (min/p50/p99/max are NaN).
    return t;
  }

  // One timed iteration: -m calls (NCCL's collectives in one NCCL group, as nccl-tests
  // aggregates them), with -z 1/2's waits (and -z 1's barrier) after each call or group.
  void run_iteration(const TimingPlan& p) {
    const bool group = !algo_ && p.agg > 1;
    const bool each = p.blocking == 1 || p.blocking == 2;
    if (group) COMMSCOPE_NCCL_CHECK(ncclGroupStart());
    for (int a = 0; a < p.agg; ++a) {
      launch();
      if (each && !group) wait_then_barrier(p.blocking == 1);
    }
    if (group) COMMSCOPE_NCCL_CHECK(ncclGroupEnd());
    if (each && group) wait_then_barrier(p.blocking == 1);
  }

  // Wait for the stream, then (if asked) a barrier; returns the barrier's ns.
  std::int64_t wait_then_barrier(bool barrier = true) {
    wait_stream();
    if (!barrier) return 0;
    const std::int64_t before = now_ns();
    comm_.barrier();
    return now_ns() - before;
  }

  bool stages_input() const { return !algo_ && case_.in_place && nccl_stages_in_place(case_.coll); }

  // Wait for the stream without blocking in the driver: a dead peer shows up as NCCL's
  // asynchronous error or as the deadline passing, never as a silent hang. (Staged runs have
  // only local copies and kernels left on the stream here.)
  void wait_stream() {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_s_);
    for (;;) {
      const cudaError_t e = cudaStreamQuery(stream_);
      if (e == cudaSuccess) return;
      if (e != cudaErrorNotReady) COMMSCOPE_CUDA_CHECK(e);
      if (dc_->nccl()) {
        ncclResult_t async = ncclSuccess;
        COMMSCOPE_NCCL_CHECK(ncclCommGetAsyncError(dc_->nccl(), &async));
        if (async != ncclSuccess && async != ncclInProgress) {
          dc_->abort();
          throw TransportError(std::string("NCCL asynchronous error: ") + ncclGetErrorString(async));
        }
      }
      if (timeout_s_ > 0 && std::chrono::steady_clock::now() > deadline) {
        dc_->abort();
        throw TimeoutError(std::string(algo_ ? "the device stream of " : "NCCL ") + describe(case_) +
                           " did not complete within " + std::to_string(timeout_s_) + " s on rank " +
                           std::to_string(comm_.rank()));
      }
      std::this_thread::yield();
    }
  }

  // Per-iteration durations (min/p50/p99/max, s per call) from a second pass of the plan's
  // sampled() iterations with a CUDA event before and after each (so -z 3's barriers stay out),
  // after the timed pass so that they cannot slow it.
  std::vector<double> sample_calls(const TimingPlan& p, Watchdog& dog) {
    std::vector<double> op_s;
    if (p.iters <= 0) return op_s;
    const auto n = static_cast<std::size_t>(p.sampled());
    ensure_events(2 * n);
    comm_.barrier();
    for (std::size_t i = 0; i < n; ++i) {
      COMMSCOPE_CUDA_CHECK(cudaEventRecord(events_[2 * i], stream_));
      run_iteration(p);
      COMMSCOPE_CUDA_CHECK(cudaEventRecord(events_[2 * i + 1], stream_));
      dog.progress(static_cast<std::int64_t>(i));
      if (p.blocking == 3) wait_then_barrier();
    }
    wait_stream();
    op_s.resize(n);
    for (std::size_t i = 0; i < n; ++i) {
      float ms = 0;
      COMMSCOPE_CUDA_CHECK(cudaEventElapsedTime(&ms, events_[2 * i], events_[2 * i + 1]));
      op_s[i] = ms * 1e-3 / p.agg;
    }
    return op_s;
  }

  static std::int64_t free_device_memory() {
    std::size_t free = 0, total = 0;
    COMMSCOPE_CUDA_CHECK(cudaMemGetInfo(&free, &total));
    return static_cast<std::int64_t>(free);
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
  bool staged_;          // --transport staged: no NCCL communicator, ranks may share a GPU
  std::size_t unalign_;  // -u: elements past cudaMalloc's 256-byte alignment
  int device_ = 0;
  cudaStream_t stream_ = nullptr;
  std::unique_ptr<DeviceCollectives> dc_;  // NCCL's collectives and ring/tree/rhd's data movement
  std::vector<cudaEvent_t> events_;
  std::int64_t free_at_start_ = 0, free_after_init_ = 0;  // device bytes free (-M)
  Case case_;
  Layout layout_;
  DeviceBuffer a_, b_;
  std::byte* send_ = nullptr;
  std::byte* recv_ = nullptr;
  const Algorithm* algo_ = nullptr;  // null: the `nccl` algorithm
  CollArgs args_;                    // this case's call, for either
  check::AlltoallvLayout vlayout_;   // alltoallv's counts and displacements, which args_ points at
};

}  // namespace

std::unique_ptr<Backend> make_cuda_backend(Communicator& comm, const Options& o) {
  return std::make_unique<CudaBackend>(comm, o);
}

}  // namespace commscope::bench

#else  // !COMMSCOPE_WITH_CUDA

namespace commscope::bench {
std::unique_ptr<Backend> make_cuda_backend(Communicator&, const Options&) {
  throw InvalidArgument("--device cuda: this build has no CUDA (configure with -DCOMMSCOPE_CUDA=ON)");
}
}  // namespace commscope::bench

#endif
