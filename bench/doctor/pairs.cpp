// commscope-doctor, phase 1: point-to-point latency (ping-pong, half the round trip) and bandwidth,
// both directions, between every pair of ranks, in rounds of a round-robin tournament so that each
// rank is in one pair at a time (p-1 rounds for even p, p for odd: one rank sits out each round),
// a round's streams in waves so that no node's link carries two at once.
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

// One pair's latency from this rank's side: 5 warm-up round trips, then lat_iters timed ones; the
// median half round trip (the lower rank's figure, the pinger's; NaN on the other side).
double measure_latency(Transport& t, int me, int peer, const Options& o, const PairBuffers& buf) {
  std::vector<double> rtt;
  for (int i = 0; i < 5 + o.lat_iters; ++i) {
    const double dt = round_trip(t, me, peer, buf.small);
    if (i >= 5) rtt.push_back(dt);
  }
  return me < peer ? median(rtt) / 2 * 1e6 : kNaN;
}

// One pair's bandwidth, this rank's send rate: `window` messages in flight, then a 1-byte
// acknowledgement, one warm-up; both ranks send in turn, the lower first.
double measure_bandwidth(Transport& t, int me, int peer, const Options& o, const PairBuffers& buf) {
  const bool lower = me < peer;
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
  double send_GBps = kNaN;
  for (int turn = 0; turn < 2; ++turn) {
    const bool sending = (turn == 0) == lower;
    const double r = stream(sending);
    if (sending) send_GBps = r;
  }
  return send_GBps;
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
  // differ from pass to pass: the rank at each seat, per pass.
  const int steps = o.passes * rounds;
  std::vector<std::vector<int>> at_seat(static_cast<std::size_t>(o.passes),
                                        std::vector<int>(static_cast<std::size_t>(p)));
  for (int pass = 0; pass < o.passes; ++pass) {
    std::vector<int>& s = at_seat[static_cast<std::size_t>(pass)];
    std::iota(s.begin(), s.end(), 0);
    if (pass > 0) std::shuffle(s.begin(), s.end(), std::mt19937(static_cast<unsigned>(pass)));
  }
  // Every rank's peer in a step (-1: it sits out).
  const auto peers_at = [&](int step) {
    const std::vector<int>& s = at_seat[static_cast<std::size_t>(step / rounds)];
    std::vector<int> peer(static_cast<std::size_t>(p), -1);
    for (int i = 0; i < p; ++i) {
      const int other = partner(i, step % rounds, p);
      if (other >= 0)
        peer[static_cast<std::size_t>(s[static_cast<std::size_t>(i)])] = s[static_cast<std::size_t>(other)];
    }
    return peer;
  };
  std::vector<int> peer_of(static_cast<std::size_t>(steps));  // this rank's
  for (int step = 0; step < steps; ++step)
    peer_of[static_cast<std::size_t>(step)] = peers_at(step)[static_cast<std::size_t>(rank)];
  const auto with_peer = [&](int peer, auto measure) {
    if (peer < 0) return kNaN;
    try {
      return measure(t, rank, peer, o, buf);
    } catch (const TimeoutError& e) {
      throw TimeoutError("pair test rank " + std::to_string(rank) + " (" + layout.hosts[rank] + ") <-> rank " +
                         std::to_string(peer) + " (" + layout.hosts[peer] + ") stopped answering: " + e.what());
    }
  };
  const auto round_name = [&](int step) {
    return "pairs, pass " + std::to_string(step / rounds) + " round " + std::to_string(step % rounds);
  };
  // Each pass's latencies first, the pairs of a round at once, then its streams: an 8 B round
  // trip measured while another pair of its round streams through the same host's link waits
  // behind that stream's queued bytes (2 emulated hosts x 2 ranks at 1gbit, twelve runs each,
  // taken in turn: the largest pair between the hosts read 15.3-155.9 us, over 80 in five, with
  // the streams beside; 13.8-21.4 without). A round's rows are written as its streams end, so that
  // an interrupted run keeps every round streamed before it.
  std::vector<double> latency_of(static_cast<std::size_t>(steps), kNaN);
  for (int step = 0; step < steps; ++step) {
    const int pass = step / rounds, r = step % rounds;
    if (r == 0) {
      for (int k = step; k < step + rounds; ++k) {
        idle_barrier(world.mpi_comm(), o.timeout_s, round_name(k) + ", its latencies");
        latency_of[static_cast<std::size_t>(k)] = with_peer(peer_of[static_cast<std::size_t>(k)], measure_latency);
      }
      idle_barrier(world.mpi_comm(), o.timeout_s, "pairs, pass " + std::to_string(pass) + ", after its latencies");
    }
    // The round's streams in waves, each after the streams before it have ended (the previous
    // round's too), so that each stream between nodes has both nodes' links to itself (stream_waves).
    const int peer = peer_of[static_cast<std::size_t>(step)];
    const std::vector<int> wave = stream_waves(peers_at(step), layout.node);
    const int waves = 1 + *std::max_element(wave.begin(), wave.end());
    double send_GBps = kNaN;
    for (int w = 0; w < waves; ++w) {
      if (w > 0 || r > 0) idle_barrier(world.mpi_comm(), o.timeout_s, round_name(step) + ", wave " + std::to_string(w));
      if (w == wave[static_cast<std::size_t>(rank)]) send_GBps = with_peer(peer, measure_bandwidth);
    }
    std::array<double, 3> send{static_cast<double>(peer), latency_of[static_cast<std::size_t>(step)], send_GBps};
    std::vector<double> all(rank == 0 ? 3 * static_cast<std::size_t>(p) : 0);
    MPI_Gather(send.data(), 3, MPI_DOUBLE, all.data(), 3, MPI_DOUBLE, 0, world.mpi_comm());
    if (rank != 0) continue;
    std::vector<PairRow> rows;
    for (int s = 0; s < p; ++s) {
      const int d = static_cast<int>(all[3 * s]);
      if (d < 0) continue;
      PairRow row;
      row.src = s, row.dst = d, row.pass = pass, row.round = r, row.wave = wave[static_cast<std::size_t>(s)];
      h5::set_fixed(row.src_host, layout.hosts[s]);
      h5::set_fixed(row.dst_host, layout.hosts[d]);
      row.latency_us = all[3 * std::min(s, d) + 1];
      row.bandwidth_GBps = all[3 * s + 2];
      rows.push_back(row);
      std::printf("  pass %d round %3d wave %2lld  %4d -> %-4d %-16s -> %-16s %10.2f us %10.3f GB/s\n", pass, r,
                  static_cast<long long>(row.wave), s, d, layout.hosts[s].c_str(), layout.hosts[d].c_str(),
                  row.latency_us, row.bandwidth_GBps);
    }
    file->add(rows);
    std::fflush(stdout);
  }
}

}  // namespace commscope::doctor
