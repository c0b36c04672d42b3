// Host buffers over the collectives library: every algorithm of the registry (mpi, ring,
// tree, rhd), the in-place layouts of NCCL's conventions, and one pair of buffers reused by
// every case (grown to the largest, never shrunk, first-touched once).
#include <cstring>

#include "backend.hpp"
#include "commscope/collectives/check_data.hpp"
#include "watchdog.hpp"

namespace commscope::bench {
namespace {

class CpuBackend final : public Backend {
 public:
  explicit CpuBackend(Communicator& comm) : comm_(comm) {}

  std::string device() const override { return "cpu"; }

  std::vector<std::string> algorithms() const override {
    std::vector<std::string> names;
    for (const Algorithm* a : commscope::algorithms()) names.emplace_back(a->name());
    return names;
  }

  bool supports(const std::string& algo, Collective c) const override {
    for (const Algorithm* a : commscope::algorithms())
      if (a->name() == algo) return a->supports(c);
    return false;
  }

  void prepare(const Case& c, std::uint64_t seed) override {
    case_ = c;
    algo_ = &find_algorithm(c.algo);
    const check::Spec s = c.spec(seed);
    const Layout l = buffer_layout(c, comm_.rank());
    grow(a_, l.a_bytes);
    grow(b_, l.b_bytes);
    args_ = CollArgs{
        c.coll, a_.data() + l.send_offset, (l.recv_in_b ? b_.data() : a_.data()) + l.recv_offset, c.count, c.type, c.op,
        c.root};
    check::fill_send(s, comm_.rank(), const_cast<void*>(args_.send));
  }

  LocalTimings run_timed(int warmup, std::int64_t iters, Watchdog& dog) override {
    for (int i = 0; i < warmup; ++i) comm_.run(args_, *algo_);
    comm_.barrier();
    // The time: the calls back to back with nothing else in the loop, as IMB and nccl-tests
    // time them. A clock read costs 20-50 ns (in a VM), a 2-rank 8 B allreduce about 600 ns.
    LocalTimings t;
    const std::int64_t t0 = now_ns();
    for (std::int64_t i = 0; i < iters; ++i) {
      comm_.run(args_, *algo_);
      dog.progress(i);
    }
    t.total_s = static_cast<double>(now_ns() - t0) * 1e-9;
    sample_calls(iters, dog, t);
    return t;
  }

  std::uint64_t check_once(std::uint64_t seed, bool corrupt) override {
    const check::Spec s = case_.spec(seed);
    check::fill_send(s, comm_.rank(), const_cast<void*>(args_.send));
    comm_.run(args_, *algo_);
    return count_wrong(case_, seed, comm_.rank(), args_.recv, args_.send, corrupt);
  }

 private:
  // Per-call durations and arrivals (since the barrier exit) from a second pass of `iters`
  // calls with a timestamp after each, kept out of the timed pass.
  void sample_calls(std::int64_t iters, Watchdog& dog, LocalTimings& t) {
    t.op_s.resize(static_cast<std::size_t>(iters));
    t.arrival_s.resize(static_cast<std::size_t>(iters));
    comm_.barrier();
    const std::int64_t t0 = now_ns();
    std::int64_t prev = t0;
    for (std::int64_t i = 0; i < iters; ++i) {
      comm_.run(args_, *algo_);
      const std::int64_t now = now_ns();
      t.op_s[static_cast<std::size_t>(i)] = static_cast<double>(now - prev) * 1e-9;
      t.arrival_s[static_cast<std::size_t>(i)] = static_cast<double>(prev - t0) * 1e-9;
      prev = now;
      dog.progress(i);
    }
  }

  static void grow(std::vector<std::byte>& v, std::size_t bytes) {
    if (v.size() < std::max<std::size_t>(bytes, 64)) v.resize(std::max<std::size_t>(bytes, 64));
  }

  Communicator& comm_;
  Case case_;
  const Algorithm* algo_ = nullptr;
  CollArgs args_;
  std::vector<std::byte> a_, b_;  // buffer pools, see Layout
};

}  // namespace

std::unique_ptr<Backend> make_cpu_backend(Communicator& comm) {
  return std::make_unique<CpuBackend>(comm);
}

}  // namespace commscope::bench
