// The start-up probes of the machine model (machine_detect.hpp): the 8 B ping-pong that gives
// the latency per message and the few-MiB ping-pong that gives the rate between two ranks of a
// node, run one pair at a time while every other rank sleeps.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <vector>

#include "commscope/collectives/error.hpp"
#include "commscope/collectives/mpi_transport.hpp"
#include "commscope/common/stats.hpp"
#include "commscope/common/timing.hpp"
#include "commscope/machine/machine_detect.hpp"

namespace commscope::machine {
namespace {

constexpr int kProbeTag = 7341;  // apart from the tags the library's algorithms use

// One round trip: `first` sends then receives, its peer receives then sends. The first 8 bytes
// carry whether the peer is to wait for another round trip (1) or stop after this one (0).
void round_trip(MPI_Comm comm, int peer, bool first, std::vector<std::int64_t>& buf, std::int64_t more) {
  const int n = static_cast<int>(buf.size());
  if (first) {
    buf[0] = more;
    COMMSCOPE_MPI_CHECK(MPI_Send(buf.data(), n, MPI_INT64_T, peer, kProbeTag, comm));
    COMMSCOPE_MPI_CHECK(MPI_Recv(buf.data(), n, MPI_INT64_T, peer, kProbeTag, comm, MPI_STATUS_IGNORE));
  } else {
    COMMSCOPE_MPI_CHECK(MPI_Recv(buf.data(), n, MPI_INT64_T, peer, kProbeTag, comm, MPI_STATUS_IGNORE));
    more = buf[0];
    COMMSCOPE_MPI_CHECK(MPI_Send(buf.data(), n, MPI_INT64_T, peer, kProbeTag, comm));
    buf[0] = more;
  }
}

}  // namespace

std::vector<double> pingpong_half_round_trips_us(MPI_Comm comm, int peer, bool first, const PingPongShape& shape) {
  std::vector<std::int64_t> buf(std::max<std::size_t>(1, shape.bytes / sizeof(std::int64_t)), 1);
  std::vector<double> passes;
  if (!first) {  // the peer answers until told to stop
    do round_trip(comm, peer, false, buf, 1);
    while (buf[0] != 0);
    return passes;
  }
  for (int i = 0; i < shape.warmup; ++i) round_trip(comm, peer, true, buf, 1);
  for (int p = 0; p < shape.passes; ++p) {
    // A pass ends after `round_trips`, or sooner past `pass_budget_s` (a slow link: the probe
    // stays within a few milliseconds), with at least 4 round trips.
    // Each round trip timed alone, the pass's fastest kept: on a loaded machine a round trip where
    // either rank lost its core takes a scheduler's slice (ms), and one such would spoil a mean.
    int done = 0;
    const double t0 = timing::now_s();
    double t = t0, fastest = 0;
    while (done < shape.round_trips && (done < 4 || t - t0 < shape.pass_budget_s)) {
      const double start = t;
      round_trip(comm, peer, true, buf, 1);
      ++done;
      t = timing::now_s();
      if (done == 1 || t - start < fastest) fastest = t - start;
    }
    passes.push_back(fastest / 2 * 1e6);
  }
  round_trip(comm, peer, true, buf, 0);  // untimed: tells the peer to stop
  return passes;
}

}  // namespace commscope::machine
