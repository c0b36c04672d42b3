// commscope-doctor, phase 1: point-to-point latency (ping-pong, half the round trip) and bandwidth,
// both directions, between every pair of ranks, in rounds of a round-robin tournament so that each
// rank is in one pair at a time (p-1 rounds for even p, p for odd: one rank sits out each round).
#include <algorithm>
#include <array>
#include <cstdio>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "commscope/collectives/transport.hpp"
#include "commscope/common/byte_size.hpp"
#include "commscope/common/stats.hpp"
#include "commscope/common/timing.hpp"
#include "doctor.hpp"
#include "schedule.hpp"

namespace commscope::doctor {
namespace {

using stats::median;
using timing::now_s;

// One 8-byte round trip between this rank and `peer`, the lower rank sending first: its duration.
// `small`: 8 bytes of the transport's memory (host, or device for a device transport).
double round_trip(Transport& t, int me, int peer, std::byte* small) {
  const double t0 = now_s();
  for (int leg = 0; leg < 2; ++leg) {
    (leg == 0) == (me < peer) ? t.post_send(small, 8, peer) : t.post_recv(small, 8, peer);
    t.wait();
  }
  return now_s() - t0;
}

// Measures one pair from this rank's side: latency (when this rank is the lower, the pinger)
// and this rank's send bandwidth (both ranks send in turn, the lower first).
struct PairResult {
  double latency_us = kNaN, send_GBps = kNaN;
};

PairResult measure_pair(Transport& t, int me, int peer, const Options& o, const PairBuffers& buf) {
  PairResult res;
  const bool lower = me < peer;
  // Latency: 5 warm-up round trips, then lat_iters timed ones; the median half round trip.
  std::vector<double> rtt;
  for (int i = 0; i < 5 + o.lat_iters; ++i) {
    const double dt = round_trip(t, me, peer, buf.small);
    if (i >= 5) rtt.push_back(dt);
  }
  if (lower) res.latency_us = median(rtt) / 2 * 1e6;
  // Bandwidth: `window` messages in flight, then a 1-byte acknowledgement; one warm-up.
  const std::size_t msg = buf.bytes / static_cast<std::size_t>(o.window);
  auto stream = [&](bool sending) {
    std::vector<double> rate;
    for (int i = 0; i < 1 + o.bw_iters; ++i) {
      const double t0 = now_s();
      for (int w = 0; w < o.window; ++w) {
        std::byte* b = buf.data + static_cast<std::size_t>(w) * msg;
        sending ? t.post_send(b, msg, peer) : t.post_recv(b, msg, peer);
      }
      t.wait();
      sending ? t.post_recv(buf.small, 1, peer) : t.post_send(buf.small, 1, peer);
      t.wait();
      if (i >= 1) rate.push_back(static_cast<double>(msg) * o.window / (now_s() - t0) / 1e9);
    }
    return median(rate);
  };
  for (int turn = 0; turn < 2; ++turn) {
    const bool sending = (turn == 0) == lower;
    const double r = stream(sending);
    if (sending) res.send_GBps = r;
  }
  return res;
}

}  // namespace

void run_pairs(Communicator& world, const Options& o, const Layout& layout, Output* file) {
  std::vector<std::byte> buf(parse_size(o.bytes)), small(8);
  run_pairs_on(world, world.transport(), PairBuffers{buf.data(), buf.size(), small.data()}, o, layout, file,
               "host buffers, MPI");
}

void run_pairs_on(Communicator& world, Transport& t, const PairBuffers& buf, const Options& o, const Layout& layout,
                  Output* file, const std::string& buffers) {
  const int rank = world.rank(), p = world.size();
  t.set_context(CallContext{Collective::sendrecv, "doctor", DataType::u8, ReduceOp::sum, 0, 0, p});
  const int rounds = doctor::rounds(p);
  if (rank == 0) {
    std::printf(
        "# pairs: %d ranks on %zu nodes, %d passes of %d rounds; latency %d B x %d, bandwidth %s in %d messages x %d "
        "(%s)\n",
        p, layout.node_host.size(), o.passes, rounds, 8, o.lat_iters, o.bytes.c_str(), o.window, o.bw_iters,
        buffers.c_str());
    file->meta().set_attr("pairs_buffers", buffers);
  }
  // A warm-up pass: every pair exchanges a few small messages first, so that no round pays for
  // connections being made (many transports connect a pair on its first message).
  for (int r = 0; r < rounds; ++r) {
    const int peer = partner(rank, r, p);
    for (int i = 0; peer >= 0 && i < 10; ++i) round_trip(t, rank, peer, buf.small);
  }
  world.barrier();
  // Each pass deals the ranks to the tournament's seats anew, so that the pairs sharing a round
  // (and a host's network link, when hosts hold several ranks) differ from pass to pass.
  std::vector<int> seat(static_cast<std::size_t>(p)), at_seat(seat.size());
  for (int step = 0; step < o.passes * rounds; ++step) {
    const int pass = step / rounds, r = step % rounds;
    if (r == 0) {
      std::iota(at_seat.begin(), at_seat.end(), 0);
      if (pass > 0) std::shuffle(at_seat.begin(), at_seat.end(), std::mt19937(static_cast<unsigned>(pass)));
      for (int i = 0; i < p; ++i) seat[static_cast<std::size_t>(at_seat[static_cast<std::size_t>(i)])] = i;
    }
    const int other = partner(seat[static_cast<std::size_t>(rank)], r, p);
    const int peer = other < 0 ? -1 : at_seat[static_cast<std::size_t>(other)];
    PairResult mine;
    if (peer >= 0) {
      try {
        mine = measure_pair(t, rank, peer, o, buf);
      } catch (const TimeoutError& e) {
        throw TimeoutError("pair test rank " + std::to_string(rank) + " (" + layout.hosts[rank] + ") <-> rank " +
                           std::to_string(peer) + " (" + layout.hosts[peer] + ") stopped answering: " + e.what());
      }
    }
    std::array<double, 3> send{static_cast<double>(peer), mine.latency_us, mine.send_GBps};
    std::vector<double> all(rank == 0 ? 3 * static_cast<std::size_t>(p) : 0);
    MPI_Gather(send.data(), 3, MPI_DOUBLE, all.data(), 3, MPI_DOUBLE, 0, world.mpi_comm());
    if (rank != 0) continue;
    std::vector<PairRow> rows;
    for (int s = 0; s < p; ++s) {
      const int d = static_cast<int>(all[3 * s]);
      if (d < 0) continue;
      PairRow row;
      row.src = s, row.dst = d, row.pass = pass, row.round = r;
      h5::set_fixed(row.src_host, layout.hosts[s]);
      h5::set_fixed(row.dst_host, layout.hosts[d]);
      row.latency_us = all[3 * std::min(s, d) + 1];
      row.bandwidth_GBps = all[3 * s + 2];
      rows.push_back(row);
      std::printf("  pass %d round %3d  %4d -> %-4d %-16s -> %-16s %10.2f us %10.3f GB/s\n", pass, r, s, d,
                  layout.hosts[s].c_str(), layout.hosts[d].c_str(), row.latency_us, row.bandwidth_GBps);
    }
    file->add(rows);
    std::fflush(stdout);
  }
}

}  // namespace commscope::doctor
