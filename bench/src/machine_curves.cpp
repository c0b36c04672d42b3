// The rates of a node by size, measured with every rank of the node at once (machine_detect.hpp,
// docs/verdicts.md "The rate of a size"): each rank's memcpy of its own buffers, directly and
// through a slot that stays in the caches, and a ring exchange among the node's ranks, from
// buffers that stay in the L1 to past the last-level cache.
#include <algorithm>
#include <cstring>
#include <vector>

#include "commscope/collectives/mpi_transport.hpp"
#include "commscope/collectives/reduce.hpp"
#include "commscope/common/stats.hpp"
#include "commscope/common/stream_copy.hpp"
#include "commscope/common/timing.hpp"
#include "machine_detect.hpp"

namespace commscope::bench {
namespace {

constexpr int kCurveTag = 7342;  // apart from the tags the library's algorithms and the ping-pong use

// The fastest of kCurveReps samples after one untimed, each `batch` calls of `work`, its seconds
// per call the slowest rank's of the node (a collective's step waits for it): per sample the max
// over the ranks, over the samples the min. `samples`, where given, receives every timed sample.
template <class Work>
double node_seconds(MPI_Comm node, std::size_t batch, Work&& work, std::vector<double>* samples = nullptr) {
  double best = 0;
  for (int rep = 0; rep <= kCurveReps; ++rep) {
    COMMSCOPE_MPI_CHECK(MPI_Barrier(node));
    const double mine = timing::seconds_of([&] {
                          for (std::size_t i = 0; i < batch; ++i) work();
                        }) /
                        static_cast<double>(batch);
    double slowest = 0;
    COMMSCOPE_MPI_CHECK(MPI_Allreduce(&mine, &slowest, 1, MPI_DOUBLE, MPI_MAX, node));
    if (rep == 0) continue;  // the warm-up: pages and caches settle
    if (samples) samples->push_back(slowest);
    if (best == 0 || slowest < best) best = slowest;
  }
  return best;
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
  const int next = (rank + 1) % n, prev = (rank + n - 1) % n;
  for (const std::size_t s : sizes) {
    const double ws = 2.0 * static_cast<double>(s);  // a rank's working set: its two buffers
    if (copy) {
      const std::size_t batch = std::max<std::size_t>(1, kCurveBatchBytes / s);
      const double t = node_seconds(node, batch, [&] {
        std::memcpy(dst.data(), src.data(), s);
        asm volatile("" : : "r"(dst.data()) : "memory");  // every copy happens
      });
      if (t > 0) out.copy.push_back({ws, static_cast<double>(s) / t / 1e9});
      // Through a slot that stays in the caches, a slot at a time: the buffer into it, and out of
      // it into the buffer, streamed where shm streams its outputs.
      const std::size_t step = std::min(s, kCurveSlotBytes);
      const double in = node_seconds(node, batch, [&] {
        for (std::size_t at = 0; at < s; at += step) std::memcpy(slot.data(), src.data() + at, std::min(step, s - at));
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
      // A reduction as the algorithms run it: f32 sums of one buffer into the other.
      const double red = node_seconds(node, batch, [&] {
        reduce_host(dst.data(), src.data(), dst.data(), s / sizeof(float), DataType::f32, ReduceOp::sum);
        asm volatile("" : : "r"(dst.data()) : "memory");
      });
      if (red > 0) out.reduce.push_back({ws, static_cast<double>(s) / red / 1e9});
    }
    if (exchange) {
      std::vector<double> samples;
      const double t = node_seconds(
          node, std::max<std::size_t>(1, kCurveBatchBytes / 4 / s),
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
          node, std::max<std::size_t>(1, kCurveBatchBytes / 8 / s),
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
    }
  }
  out.largest = sizes.back();
  return out;
}

}  // namespace commscope::bench
