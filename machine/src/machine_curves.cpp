// The rates of a node by size, measured with every rank of the node at once (machine_detect.hpp,
// docs/verdicts.md "The rate of a size"): each rank's memcpy of its own buffers, directly and
// through slots that stay in the caches (handed from core to core as shm hands them where the
// node has two ranks or more), and a ring exchange among the node's ranks, from buffers that stay
// in the L1 to past the last-level cache.
#include <algorithm>
#include <array>
#include <atomic>
#include <cstdint>
#include <cstring>
#include <new>
#include <optional>
#include <span>
#include <thread>
#include <vector>

#include "commscope/collectives/mpi_transport.hpp"
#include "commscope/collectives/reduce.hpp"
#include "commscope/common/stats.hpp"
#include "commscope/common/stream_copy.hpp"
#include "commscope/common/timing.hpp"
#include "commscope/machine/machine_detect.hpp"

namespace commscope::machine {
namespace {

constexpr int kCurveTag = 7342;  // apart from the tags the library's algorithms and the ping-pong use

// The fastest of kCurveReps samples after one untimed, each part of a sample the slowest rank's
// of the node (a collective's step waits for it): per sample the max over the ranks, over the
// samples the min, each of the N parts alone. `sample(mine)` sets this rank's seconds per call of
// each part; false where it could not go on (a peer stopped answering), and then every rank
// returns nullopt. `samples`, where given, receives part 0's every timed sample.
template <std::size_t N, class Sample>
std::optional<std::array<double, N>> node_fastest(MPI_Comm node, Sample&& sample,
                                                  std::vector<double>* samples = nullptr) {
  std::array<double, N> best{};
  for (int rep = 0; rep <= kCurveReps; ++rep) {
    COMMSCOPE_MPI_CHECK(MPI_Barrier(node));
    std::array<double, N + 1> mine{}, slowest{};  // the last: 1 where this rank gave up
    if (!sample(std::span<double, N>(mine.data(), N))) mine[N] = 1;
    COMMSCOPE_MPI_CHECK(MPI_Allreduce(mine.data(), slowest.data(), N + 1, MPI_DOUBLE, MPI_MAX, node));
    if (slowest[N] > 0) return std::nullopt;
    if (rep == 0) continue;  // the warm-up: pages and caches settle
    if (samples) samples->push_back(slowest[0]);
    for (std::size_t k = 0; k < N; ++k)
      if (best[k] == 0 || slowest[k] < best[k]) best[k] = slowest[k];
  }
  return best;
}

// At most `batch` calls of `work`: as many as fill kCurveSampleSeconds at the pace of a first
// kCurvePaceCalls, run here (the slowest rank's pace, so that every rank runs as many). Where each
// call waits for another rank's turn on a core (more ranks than cores, or other processes busy on
// them), a sample is cut short rather than taking as many calls as on a quiet machine: a one-row
// run of 4 ranks on 2 emulated hosts of the 2-core VM beside two busy processes took 202 s at
// full batches, 7.8-16 s paced (docs/verdicts.md, "The rate of a size").
template <class Work>
std::size_t paced(MPI_Comm node, std::size_t batch, Work&& work) {
  if (batch <= kCurvePaceCalls) return batch;
  const double mine = timing::seconds_of([&] {
                        for (std::size_t i = 0; i < kCurvePaceCalls; ++i) work();
                      }) /
                      static_cast<double>(kCurvePaceCalls);
  double slowest = 0;
  COMMSCOPE_MPI_CHECK(MPI_Allreduce(&mine, &slowest, 1, MPI_DOUBLE, MPI_MAX, node));
  return slowest > 0 ? std::clamp<std::size_t>(static_cast<std::size_t>(kCurveSampleSeconds / slowest), 1, batch)
                     : batch;
}

// node_fastest of `batch` calls of `work` timed together (paced): seconds per call (0 where none).
template <class Work>
double node_seconds(MPI_Comm node, std::size_t batch, Work&& work, std::vector<double>* samples = nullptr) {
  batch = paced(node, batch, work);
  const auto best = node_fastest<1>(
      node,
      [&](std::span<double, 1> mine) {
        mine[0] = timing::seconds_of([&] {
                    for (std::size_t i = 0; i < batch; ++i) work();
                  }) /
                  static_cast<double>(batch);
        return true;
      },
      samples);
  return best ? (*best)[0] : 0;
}

// Slots handed from core to core as shm's steps hand them (collectives/src/algorithms/shm.cpp):
// a node window with a region per rank, two slots of kCurveSlotBytes and two flags, each on lines
// of its own; rank r copies a chunk into its slot and the next rank copies it out (or reduces it
// into its buffer), so that each slot's lines move between the caches of two cores every step.
class SlotRing {
 public:
  // Collective over `node`; usable() is the same on every rank: false where the node's ranks do
  // not all share memory (or it has one rank).
  explicit SlotRing(MPI_Comm node) {
    int rank = 0, n = 1, shared_n = 0;
    MPI_Comm_rank(node, &rank);
    MPI_Comm_size(node, &n);
    MPI_Comm shared = MPI_COMM_NULL;
    COMMSCOPE_MPI_CHECK(MPI_Comm_split_type(node, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &shared));
    MPI_Comm_size(shared, &shared_n);
    MPI_Comm_free(&shared);
    if (n < 2 || shared_n != n) return;  // every rank sees the same sizes
    MPI_Info info = MPI_INFO_NULL;
    COMMSCOPE_MPI_CHECK(MPI_Info_create(&info));
    MPI_Info_set(info, "alloc_shared_noncontig", "true");
    void* base = nullptr;
    const int rc = MPI_Win_allocate_shared(static_cast<MPI_Aint>(kRegion), 1, info, node, &base, &win_);
    MPI_Info_free(&info);
    if (rc != MPI_SUCCESS) {
      win_ = MPI_WIN_NULL;
      COMMSCOPE_MPI_CHECK(rc);
    }
    auto* own = static_cast<std::byte*>(base);
    new (own) std::atomic<std::uint64_t>(0);
    new (own + kLine) std::atomic<std::uint64_t>(0);
    std::memset(own + kHeader, 0, kRegion - kHeader);  // first touch by the owner
    region_next_ = region((rank + 1) % n);
    region_prev_ = region((rank + n - 1) % n);
    own_ = own;
    COMMSCOPE_MPI_CHECK(MPI_Barrier(node));  // no rank polls a flag before its owner made it
  }
  ~SlotRing() {
    if (win_ != MPI_WIN_NULL) MPI_Win_free(&win_);
  }
  SlotRing(const SlotRing&) = delete;
  SlotRing& operator=(const SlotRing&) = delete;
  bool usable() const { return win_ != MPI_WIN_NULL; }

  // One pass of `s` bytes: `src` chunk by chunk into this rank's slot, and the previous rank's
  // chunks out of its slot into `dst` (reduced into it where `reduce`: f32 sums). Adds this rank's
  // seconds in the copies into its slot to `in`, out of the other's to `out`; false where a peer
  // stopped answering (kWaitSeconds), after which the ring is not used again.
  bool pass(const std::byte* src, std::byte* dst, std::size_t s, bool reduce, double& in, double& out) {
    if (broken_) return false;
    const std::size_t step = std::min(s, kCurveSlotBytes);
    const bool stream = s >= kStreamOutputBytes && !reduce;
    for (std::size_t at = 0; at < s; at += step) {
      const std::size_t len = std::min(step, s - at);
      ++step_;
      // The slot of step c was read by the next rank at step c - 2: it may be written again.
      if (step_ > 2 && !wait(flag(region_next_, kRead), step_ - 2)) return broken_ = true, false;
      std::byte* mine = slot(own_, step_);
      double t = timing::now_s();
      std::memcpy(mine, src + at, len);
      in += timing::now_s() - t;
      flag(own_, kWritten).store(step_, std::memory_order_release);
      if (!wait(flag(region_prev_, kWritten), step_)) return broken_ = true, false;
      const std::byte* theirs = slot(region_prev_, step_);
      t = timing::now_s();
      if (reduce)
        reduce_host(dst + at, theirs, dst + at, len / sizeof(float), DataType::f32, ReduceOp::sum);
      else if (stream)
        stream_copy(dst + at, theirs, len);
      else
        std::memcpy(dst + at, theirs, len);
      out += timing::now_s() - t;
      flag(own_, kRead).store(step_, std::memory_order_release);
    }
    if (stream) store_fence();
    asm volatile("" : : "r"(dst) : "memory");
    return true;
  }

 private:
  static constexpr std::size_t kLine = 128, kHeader = 2 * kLine, kRegion = kHeader + 2 * kCurveSlotBytes;
  static constexpr std::size_t kWritten = 0, kRead = kLine;  // a region's flags: the last step it wrote, read
  static constexpr double kWaitSeconds = 10;

  std::byte* region(int q) const {
    MPI_Aint bytes = 0;
    int disp = 0;
    void* p = nullptr;
    COMMSCOPE_MPI_CHECK(MPI_Win_shared_query(win_, q, &bytes, &disp, &p));
    return static_cast<std::byte*>(p);
  }
  static std::atomic<std::uint64_t>& flag(std::byte* region, std::size_t which) {
    return *std::launder(reinterpret_cast<std::atomic<std::uint64_t>*>(region + which));
  }
  static std::byte* slot(std::byte* region, std::uint64_t step) {
    return region + kHeader + (step % 2) * kCurveSlotBytes;
  }
  // Spins until `f` reaches `step`, yielding the core after a while (oversubscribed ranks);
  // false after kWaitSeconds.
  static bool wait(const std::atomic<std::uint64_t>& f, std::uint64_t step) {
    const double start = timing::now_s();
    for (unsigned spins = 1; f.load(std::memory_order_acquire) < step; ++spins) {
      if (spins > 64) std::this_thread::yield();
      if ((spins & 1023u) == 0 && timing::now_s() - start > kWaitSeconds) return false;
    }
    return true;
  }

  MPI_Win win_ = MPI_WIN_NULL;
  std::byte *own_ = nullptr, *region_next_ = nullptr, *region_prev_ = nullptr;
  std::uint64_t step_ = 0;
  bool broken_ = false;
};

// node_fastest of `batch` passes of `s` bytes through the ring: seconds per pass in the copies
// into the slots and in those out of them (or the reductions); nullopt where any rank's ring stopped.
std::optional<std::array<double, 2>> ring_seconds(MPI_Comm node, SlotRing& ring, const std::byte* src, std::byte* dst,
                                                  std::size_t s, bool reduce) {
  // A quarter of the copies' bytes a sample, as the exchange's: each chunk's parts are timed alone,
  // so a sample needs fewer bytes to stand above the clock (0.66 s of start-up at the full batch).
  double in = 0, out = 0;
  const std::size_t batch = paced(node, std::max<std::size_t>(1, kCurveBatchBytes / 4 / s),
                                  [&] { ring.pass(src, dst, s, reduce, in, out); });
  return node_fastest<2>(node, [&](std::span<double, 2> mine) {
    for (std::size_t i = 0; i < batch; ++i)
      if (!ring.pass(src, dst, s, reduce, mine[0], mine[1])) return false;
    mine[0] /= static_cast<double>(batch), mine[1] /= static_cast<double>(batch);
    return true;
  });
}

}  // namespace

std::vector<std::size_t> curve_sizes(std::size_t largest) {
  largest = std::max(largest, kCurveFirstBytes) / 8 * 8;
  std::vector<std::size_t> sizes;
  for (std::size_t s = kCurveFirstBytes; s < largest; s *= 4) sizes.push_back(s);
  sizes.push_back(largest);
  return sizes;
}

NodeCurves measure_node_curves(MPI_Comm node, bool copy, bool exchange, std::size_t largest) {
  NodeCurves out;
  int rank = 0, n = 1;
  MPI_Comm_rank(node, &rank);
  MPI_Comm_size(node, &n);
  exchange = exchange && n > 1;
  if (!copy && !exchange) return out;
  const std::vector<std::size_t> sizes = curve_sizes(largest);
  // Pages of their own, written before any timing (not the shared zero page).
  std::vector<std::byte> src(sizes.back(), std::byte{1}), dst(sizes.back(), std::byte{2});
  std::vector<std::byte> slot(kCurveSlotBytes, std::byte{3});
  // Two ranks or more that share memory: the slots are handed from core to core, as shm's are.
  std::optional<SlotRing> ring;
  if (copy) ring.emplace(node);
  bool lost = false;
  const int next = (rank + 1) % n, prev = (rank + n - 1) % n;
  // The rate between the node's ranks at messages of s: every rank at once, and one message alone.
  auto link_point = [&](std::size_t s) {
    const double ws = 2.0 * static_cast<double>(s);
    std::vector<double> samples;
    const double t = node_seconds(
        node, std::clamp<std::size_t>(kCurveBatchBytes / 4 / s, 1, kLinkCurveMaxCalls),
        [&] {
          COMMSCOPE_MPI_CHECK(MPI_Sendrecv(src.data(), static_cast<int>(s), MPI_BYTE, next, kCurveTag, dst.data(),
                                           static_cast<int>(s), MPI_BYTE, prev, kCurveTag, node, MPI_STATUS_IGNORE));
        },
        &samples);
    if (t > 0) out.exchange.push_back({ws, static_cast<double>(s) / t / 1e9});
    out.exchange_spread = stats::spread_of(samples);  // the last, largest size's
    // One message alone: a ping-pong between the node's first two ranks (the others wait in the
    // barrier), half a round trip a message.
    samples.clear();
    const double rt = node_seconds(
        node, std::clamp<std::size_t>(kCurveBatchBytes / 8 / s, 1, kLinkCurveMaxCalls / 2),
        [&] {
          if (rank == 0) {
            COMMSCOPE_MPI_CHECK(MPI_Send(src.data(), static_cast<int>(s), MPI_BYTE, 1, kCurveTag, node));
            COMMSCOPE_MPI_CHECK(
                MPI_Recv(dst.data(), static_cast<int>(s), MPI_BYTE, 1, kCurveTag, node, MPI_STATUS_IGNORE));
          } else if (rank == 1) {
            COMMSCOPE_MPI_CHECK(
                MPI_Recv(dst.data(), static_cast<int>(s), MPI_BYTE, 0, kCurveTag, node, MPI_STATUS_IGNORE));
            COMMSCOPE_MPI_CHECK(MPI_Send(src.data(), static_cast<int>(s), MPI_BYTE, 0, kCurveTag, node));
          }
        },
        &samples);
    if (rt > 0) out.one.push_back({ws, 2 * static_cast<double>(s) / rt / 1e9});
    out.one_spread = stats::spread_of(samples);
  };
  // Below the copies' first size, the messages' own points by 2x from kLinkCurveFirstBytes: where a
  // library changes protocol (Open MPI's shared memory sends 4 KiB and more by rendezvous: on the
  // 2-core VM an exchange of 2 KiB took 0.51 us, of 4 KiB 2.36), which the 4x grid would miss.
  if (exchange) {
    for (std::size_t s = kLinkCurveFirstBytes; s < kCurveFirstBytes; s *= 2) link_point(s);
    // A message's call alone: an exchange of the smallest size with the rank itself, no transfer
    // between cores (the library's cost of a call, which a collective's step pays beside its
    // message; the ping-pong's latency is a transfer the exchange's points hold already).
    const std::size_t s = kLinkCurveFirstBytes;
    const double t = node_seconds(node, kLinkCurveMaxCalls, [&] {
      COMMSCOPE_MPI_CHECK(MPI_Sendrecv(src.data(), static_cast<int>(s), MPI_BYTE, rank, kCurveTag, dst.data(),
                                       static_cast<int>(s), MPI_BYTE, rank, kCurveTag, node, MPI_STATUS_IGNORE));
    });
    if (t > 0) out.self.push_back({2.0 * static_cast<double>(s), static_cast<double>(s) / t / 1e9});
  }
  for (const std::size_t s : sizes) {
    const double ws = 2.0 * static_cast<double>(s);  // a rank's working set: its two buffers
    if (copy) {
      const std::size_t batch = std::max<std::size_t>(1, kCurveBatchBytes / s);
      const double t = node_seconds(node, batch, [&] {
        std::memcpy(dst.data(), src.data(), s);
        asm volatile("" : : "r"(dst.data()) : "memory");  // every copy happens
      });
      if (t > 0) out.copy.push_back({ws, static_cast<double>(s) / t / 1e9});
      // Through slots that stay in the caches, a slot at a time: the buffer into one, and one out
      // into the buffer, streamed where shm streams its outputs. Between ranks where the node has
      // two or more (the previous rank's slot out, and reduced into the buffer too), else its own.
      if (ring && ring->usable()) {
        const auto moved = ring_seconds(node, *ring, src.data(), dst.data(), s, false);
        const auto reduced = moved ? ring_seconds(node, *ring, src.data(), dst.data(), s, true) : std::nullopt;
        if (moved && reduced) {
          out.into.push_back({ws, static_cast<double>(s) / (*moved)[0] / 1e9});
          out.out_of.push_back({ws, static_cast<double>(s) / (*moved)[1] / 1e9});
          out.reduce_slot.push_back({ws, static_cast<double>(s) / (*reduced)[1] / 1e9});
          out.slots_between_ranks = true;
        } else {  // a rank stopped answering (every rank saw it): no curves through the slots
          ring.reset(), lost = true;
          out.into.clear(), out.out_of.clear(), out.reduce_slot.clear(), out.slots_between_ranks = false;
        }
      } else if (!lost) {
        const std::size_t step = std::min(s, kCurveSlotBytes);
        const double in = node_seconds(node, batch, [&] {
          for (std::size_t at = 0; at < s; at += step)
            std::memcpy(slot.data(), src.data() + at, std::min(step, s - at));
          asm volatile("" : : "r"(slot.data()) : "memory");
        });
        if (in > 0) out.into.push_back({ws, static_cast<double>(s) / in / 1e9});
        const double outward = node_seconds(node, batch, [&] {
          for (std::size_t at = 0; at < s; at += step) {
            if (s >= kStreamOutputBytes)
              stream_copy(dst.data() + at, slot.data(), std::min(step, s - at));
            else
              std::memcpy(dst.data() + at, slot.data(), std::min(step, s - at));
          }
          store_fence();
          asm volatile("" : : "r"(dst.data()) : "memory");
        });
        if (outward > 0) out.out_of.push_back({ws, static_cast<double>(s) / outward / 1e9});
      }
      // A reduction as the algorithms run it: f32 sums of one buffer into the other.
      const double red = node_seconds(node, batch, [&] {
        reduce_host(dst.data(), src.data(), dst.data(), s / sizeof(float), DataType::f32, ReduceOp::sum);
        asm volatile("" : : "r"(dst.data()) : "memory");
      });
      if (red > 0) out.reduce.push_back({ws, static_cast<double>(s) / red / 1e9});
    }
    if (exchange) link_point(s);
  }
  out.largest = sizes.back();
  return out;
}

}  // namespace commscope::machine
