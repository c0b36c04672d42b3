// Host buffers over the collectives library: every algorithm of the registry (mpi, ring,
// tree, rhd), the in-place layouts of NCCL's conventions, and one pair of page-aligned buffers
// reused by every case (grown to the largest, never shrunk, first-touched once), so that -u is
// the only source of misalignment.
#include <sys/resource.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <new>
#include <thread>

#include "backends/backend.hpp"
#include "clock.hpp"
#include "commscope/collectives/check_data.hpp"
#include "watchdog.hpp"

namespace commscope::bench {
namespace {

// Host memory starting on a page boundary; grows to the largest request (zeroed, so every page
// is touched before timing), never shrinks.
class PageBuffer {
 public:
  PageBuffer() = default;
  ~PageBuffer() { std::free(p_); }
  PageBuffer(const PageBuffer&) = delete;
  PageBuffer& operator=(const PageBuffer&) = delete;
  void grow(std::size_t bytes) {
    bytes = std::max<std::size_t>(bytes, 64);
    if (bytes <= size_) return;
    const auto page = static_cast<std::size_t>(::sysconf(_SC_PAGESIZE));
    void* p = nullptr;
    if (::posix_memalign(&p, page, (bytes + page - 1) / page * page) != 0) throw std::bad_alloc();
    std::memset(p, 0, bytes);
    std::free(p_);
    p_ = p;
    size_ = bytes;
  }
  std::byte* data() const { return static_cast<std::byte*>(p_); }
  std::size_t size() const { return size_; }

 private:
  void* p_ = nullptr;
  std::size_t size_ = 0;
};

class CpuBackend final : public Backend {
 public:
  CpuBackend(Communicator& comm, const Options& o)
      : comm_(comm), unalign_(o.unalign), late_us_(comm.rank() == o.late_rank ? o.late_us : 0) {}

  std::string device() const override { return "cpu"; }
  DeviceInfo device_info() const override { return {-1, "", "cpu"}; }

  // -M on the host: our buffers, and the process's peak resident memory (which holds them).
  std::vector<MemoryUse> memory_use() const override {
    struct rusage ru {};
    ::getrusage(RUSAGE_SELF, &ru);
    return {{"User-Allocated", static_cast<std::int64_t>(a_.size() + b_.size())},
            {"Peak RSS", static_cast<std::int64_t>(ru.ru_maxrss) * 1024}};  // ru_maxrss: KiB on Linux
  }

  std::vector<std::string> algorithms() const override {
    std::vector<std::string> names;
    for (const Algorithm* a : commscope::algorithms()) names.emplace_back(a->name());
    return names;
  }

  std::string unavailable(const std::string& algo) const override {
    if (algo != "shm" || comm_.local_size() == comm_.size()) return {};
    return "needs every rank on one node (this node has " + std::to_string(comm_.local_size()) + " of " +
           std::to_string(comm_.size()) + " ranks)";
  }

  bool supports(const std::string& algo, Collective c) const override {
    if (!unavailable(algo).empty()) return false;
    for (const Algorithm* a : commscope::algorithms())
      if (a->name() == algo) return a->supports(c);
    return false;
  }

  void prepare(const Case& c, std::uint64_t seed) override {
    case_ = c;
    algo_ = &find_algorithm(c.algo);
    const check::Spec s = c.spec(seed);
    const Layout l = buffer_layout(c, comm_.rank(), unalign_);
    a_.grow(l.a_bytes);
    b_.grow(l.b_bytes);
    args_ = CollArgs{
        c.coll, a_.data() + l.send_offset, (l.recv_in_b ? b_.data() : a_.data()) + l.recv_offset, c.count, c.type, c.op,
        c.root};
    vlayout_ = check::peer_layout(s, comm_.rank());
    vlayout_.apply(args_);
    check::fill_send(s, comm_.rank(), const_cast<void*>(args_.send));
  }

  // Host calls complete when they return, so -z 2 changes nothing here and -z 1 only adds the
  // barriers; the host's issue time (launch_s) is the time.
  // The flight recorder's watch of the communicator (docs/hang.md) sees warm-up, timing and
  // samples as one call: its two clock readings a call (20-30 ns) would be timed with each call,
  // 18% of a 2-rank 8 B shm allreduce (0.11 us against 0.13-0.14 us, 8 interleaved runs).
  LocalTimings run_timed(const TimingPlan& p, Watchdog& dog) override {
    const std::shared_ptr<CallWatch> watch = comm_.unwatch();
    const std::uint64_t token = watch ? watch->posted(&args_) : 0;
    LocalTimings t = run_timed_unwatched(p, dog);
    if (watch) {
      watch->completed(token);
      comm_.watch(watch);
    }
    return t;
  }

  std::uint64_t check_once(std::uint64_t seed, bool corrupt) override {
    const check::Spec s = case_.spec(seed);
    check::fill_send(s, comm_.rank(), const_cast<void*>(args_.send));
    comm_.run(args_, *algo_);
    return count_wrong(case_, seed, comm_.rank(), args_.recv, args_.send, corrupt);
  }

 private:
  LocalTimings run_timed_unwatched(const TimingPlan& p, Watchdog& dog) {
    for (int i = 0; i < p.warmup; ++i) comm_.run(args_, *algo_);
    comm_.barrier();
    // -z 0, the time: the calls back to back with nothing else in the loop, as nccl-tests times
    // them. A clock read costs 20-50 ns (in a VM), a 2-rank 8 B allreduce about 600 ns. -z 3
    // times each iteration alone between untimed barriers, as IMB-MPI1 and OSU do.
    LocalTimings t;
    if (p.blocking != 0) {  // -z 1 to 3 time every iteration anyway: the clock is read after each
      t.total_s = t.launch_s = time_iterations(p, dog, t);
      return t;
    }
    const std::int64_t t0 = now_ns();
    const std::int64_t calls = p.iters * p.agg;
    for (std::int64_t i = 0; i < calls; ++i) {
      comm_.run(args_, *algo_);
      dog.progress(i);
    }
    t.total_s = t.launch_s = static_cast<double>(now_ns() - t0) * 1e-9;
    // The per-iteration samples from a second pass, kept out of the timed one: its sampled()
    // iterations alone.
    comm_.barrier();
    TimingPlan sampling = p;
    sampling.iters = p.sampled();
    time_iterations(sampling, dog, t);
    return t;
  }

  // `iters` iterations of `agg` calls (with -z 1's and -z 3's barriers) and a timestamp after
  // each: the durations and arrivals (local clock) of the first sampled(); returns their time
  // without -z 3's barriers (s).
  double time_iterations(const TimingPlan& p, Watchdog& dog, LocalTimings& t) {
    const auto kept = static_cast<std::size_t>(p.sampled());
    t.op_s.resize(kept);
    t.arrival_ns.resize(kept);
    if (late_us_ > 0) std::this_thread::sleep_for(std::chrono::microseconds(late_us_));
    const std::int64_t t0 = now_ns();
    std::int64_t start = t0, untimed = 0;  // ns: start of this iteration, -z 3 barriers so far
    for (std::int64_t i = 0; i < p.iters; ++i) {
      for (int a = 0; a < p.agg; ++a) {
        comm_.run(args_, *algo_);
        if (p.blocking == 1) comm_.barrier();
      }
      const std::int64_t end = now_ns();
      if (static_cast<std::size_t>(i) < kept) {
        t.op_s[static_cast<std::size_t>(i)] = static_cast<double>(end - start) * 1e-9 / p.agg;
        t.arrival_ns[static_cast<std::size_t>(i)] = start;
      }
      dog.progress(i);
      start = end;
      if (p.blocking == 3) {
        comm_.barrier();
        start = now_ns();
        untimed += start - end;
      }
    }
    return static_cast<double>(start - t0 - untimed) * 1e-9;
  }

  Communicator& comm_;
  std::size_t unalign_;  // -u: elements past the page boundary
  int late_us_;          // a test aid: this rank enters the first sampled call this late
  Case case_;
  const Algorithm* algo_ = nullptr;
  CollArgs args_;
  check::AlltoallvLayout vlayout_;  // alltoallv's counts and displacements, which args_ points at
  PageBuffer a_, b_;                // buffer pools, see Layout
};

}  // namespace

std::unique_ptr<Backend> make_cpu_backend(Communicator& comm, const Options& o) {
  return std::make_unique<CpuBackend>(comm, o);
}

}  // namespace commscope::bench
