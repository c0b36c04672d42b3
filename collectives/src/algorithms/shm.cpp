// Shared memory among the ranks of one node: every rank copies its chunk into its slot of a
// node segment (MPI_Win_allocate_shared) and reads its peers' slots directly; sequence-number
// flags in the segment order the steps, with no MPI call per chunk. Arrays go through in
// chunks of kShmSlotBytes, two slots per rank (see shm_segment.hpp). For k = ceil(n / chunk)
// chunks, B the time per byte of a copy between cores, G of a reduction:
//   allreduce one-shot (n < AlgoOptions::shm_two_shot_bytes): copy in, then every rank
//                  reduces all p slots                    k a + p nB + (p-1) nG
//   allreduce two-shot: copy in, rank r reduces slice r of all slots and publishes it, then
//                  every rank copies the p-1 other slices  2k a + (3p-1)/p nB + (p-1)/p nG
//   other collectives: not yet
// A communicator whose ranks span nodes is refused (UnsupportedCollective).
#include <chrono>
#include <cmath>
#include <sstream>
#include <thread>

#include "../shm_segment.hpp"
#include "common.hpp"
#include "commscope/collectives/mpi_transport.hpp"

namespace commscope {
namespace {

using detail::Blocks;
using detail::Buf;
using detail::kShmSlotBytes;
using detail::ShmFlags;
using detail::ShmSegment;

enum class Flag { ready, reduced, done };

const char* flag_name(Flag f) {
  return f == Flag::ready ? "ready" : f == Flag::reduced ? "reduced" : "done";
}

// Spins until a peer's flag reaches a step, under the transport's deadline and its
// oversubscription setting (sleep between polls, as MpiTransport::wait does).
class FlagWaiter {
 public:
  FlagWaiter(MpiTransport& t, ShmSegment& seg)
      : t_(t), seg_(seg), timeout_s_(t.timeout_s()), yield_(t.yield_when_idle()) {}

  void wait(int peer, Flag f, std::uint64_t step) const {
    const std::atomic<std::uint64_t>& flag = get(seg_.flags(peer), f);
    if (flag.load(std::memory_order_acquire) >= step) return;
    using clock = std::chrono::steady_clock;
    const auto start = clock::now();
    for (unsigned spins = 1;; ++spins) {
      if (flag.load(std::memory_order_acquire) >= step) return;
      if (yield_ && spins > 64) std::this_thread::sleep_for(std::chrono::microseconds(20));
      if (timeout_s_ > 0 && (spins & 255u) == 0 &&
          std::chrono::duration<double>(clock::now() - start).count() > timeout_s_) {
        seg_.mark_broken();
        std::ostringstream os;
        os << "timeout after " << timeout_s_ << " s on rank " << t_.rank() << " in " << t_.context().describe()
           << ": waiting for rank " << peer << "'s shm " << flag_name(f) << " flag to reach step " << step
           << ", still at " << flag.load(std::memory_order_relaxed);
        throw TimeoutError(os.str());
      }
    }
  }
  void wait_all(Flag f, std::uint64_t step) const {
    for (int q = 0; q < t_.size(); ++q)
      if (q != t_.rank()) wait(q, f, step);
  }

 private:
  static const std::atomic<std::uint64_t>& get(const ShmFlags& fl, Flag f) {
    return f == Flag::ready ? fl.ready : f == Flag::reduced ? fl.reduced : fl.done;
  }
  MpiTransport& t_;
  ShmSegment& seg_;
  double timeout_s_;
  bool yield_;
};

// dst[0, n) = slot elements [first, first + n) of every rank combined in rank order 0..p-1:
// the same order on every rank and in both variants, so all ranks get identical bits.
void reduce_slots(MpiTransport& t, const ShmSegment& seg, int which, const CollArgs& a, void* dst, std::size_t first,
                  std::size_t n) {
  const int p = t.size();
  const std::size_t es = type_size(a.type);
  auto at = [&](int q) { return seg.slot(q, which) + first * es; };
  if (p == 1) return t.copy(dst, at(0), n * es);
  t.reduce(dst, at(0), at(1), n, a.type, a.op);
  for (int q = 2; q < p; ++q) t.reduce(dst, dst, at(q), n, a.type, a.op);
}

void allreduce(MpiTransport& t, ShmSegment& seg, const CollArgs& a, const AlgoOptions& o) {
  const std::size_t es = type_size(a.type);
  const int p = t.size(), me = t.rank();
  const std::size_t chunk = kShmSlotBytes / es;
  // Depends only on arguments every rank passes alike, so all ranks take the same variant.
  const bool two_shot = p > 1 && a.count * es >= o.shm_two_shot_bytes;
  const Buf in = detail::cbuf(a.send, es), out{a.recv, es};
  const FlagWaiter waiter(t, seg);
  ShmFlags& mine = seg.flags(me);
  for (std::size_t off = 0; off < a.count; off += chunk) {
    const std::size_t len = std::min(chunk, a.count - off);
    const std::uint64_t step = seg.next_step();
    const int which = static_cast<int>(step & 1);
    // This slot was last read by the peers in step - 2 (possibly in an earlier call).
    if (step > 2) waiter.wait_all(Flag::done, step - 2);
    // Copy the input first: in place, out is the input and is overwritten below.
    t.copy(seg.slot(me, which), in.at(off), in.bytes(len));
    mine.ready.store(step, std::memory_order_release);
    waiter.wait_all(Flag::ready, step);
    if (!two_shot) {
      reduce_slots(t, seg, which, a, out.at(off), 0, len);
      if (a.op == ReduceOp::avg) t.divide(out.at(off), len, a.type, p);
    } else {
      // Slice r of every slot is read by rank r only, so rank r may overwrite its own slot's
      // slice r with the result while the peers read their slices of the same slot.
      const Blocks slices{len, p};
      const std::size_t f = slices.offset(me), n = slices.size(me);
      reduce_slots(t, seg, which, a, out.at(off + f), f, n);
      if (a.op == ReduceOp::avg) t.divide(out.at(off + f), n, a.type, p);
      t.copy(seg.slot(me, which) + f * es, out.at(off + f), n * es);
      mine.reduced.store(step, std::memory_order_release);
      for (int q = 0; q < p; ++q) {
        if (q == me) continue;
        waiter.wait(q, Flag::reduced, step);
        const std::size_t qf = slices.offset(q);
        t.copy(out.at(off + qf), seg.slot(q, which) + qf * es, out.bytes(slices.size(q)));
      }
    }
    mine.done.store(step, std::memory_order_release);
  }
}

class ShmAlgorithm final : public Algorithm {
 public:
  std::string_view name() const override { return "shm"; }
  std::string_view description() const override {
    return "node shared memory (one node only): one-shot / two-shot allreduce through a chunked segment";
  }
  bool supports(Collective c) const override { return c == Collective::allreduce; }
  void run(Transport& t, const CollArgs& a, const AlgoOptions& o) const override {
    if (!supports(a.coll)) detail::unsupported(name(), a.coll);
    MpiTransport* mt = t.as_mpi();
    if (!mt) throw UnsupportedCollective("algorithm 'shm' needs the MPI transport (host buffers over MPI)");
    ShmSegment& seg = mt->node_segment();
    if (!seg.single_node()) {
      throw UnsupportedCollective("algorithm 'shm' needs every rank on one node: this node holds " +
                                  std::to_string(seg.node_size()) + " of the communicator's " +
                                  std::to_string(t.size()) + " ranks (use ring, rhd or mpi across nodes)");
    }
    if (seg.broken()) {
      throw TransportError(
          "algorithm 'shm': this communicator's segment is unusable after a timeout (the ranks "
          "are at different steps); create a new Communicator");
    }
    allreduce(*mt, seg, a, o);
  }
  std::optional<Cost> cost(Collective c, int p, double n, const AlgoOptions& o) const override {
    if (c != Collective::allreduce) return std::nullopt;
    if (p == 1) return Cost{};
    const double q = p, k = std::max(1.0, std::ceil(n / static_cast<double>(kShmSlotBytes)));
    if (n < static_cast<double>(o.shm_two_shot_bytes)) return Cost{k, q, q - 1};
    return Cost{2 * k, (3 * q - 1) / q, (q - 1) / q};
  }
};

}  // namespace

const Algorithm& shm_algorithm() {
  static const ShmAlgorithm instance;
  return instance;
}

}  // namespace commscope
