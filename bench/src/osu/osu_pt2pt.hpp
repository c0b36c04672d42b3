// OSU 7.4's point-to-point loops, one size at a time, over MPI point-to-point calls on host or
// device buffers. Every loop runs `skip` untimed iterations, then `iterations` timed ones, each
// timed alone with MPI_Wtime on the sender (rank 0; every sender for osu_mbw_mr) and summed:
//   latency: rank 0 sends and receives `bytes`, rank 1 receives and sends back; the reported
//            latency is half the round trip, sum / (2 iterations);
//   bw:      rank 0 posts `window` MPI_Isend of `bytes` from one buffer and waits for them and a
//            1-byte reply; MB/s = bytes/1e6 * window * iterations / sum;
//   bibw:    both ranks post `window` MPI_Irecv and `window` MPI_Isend and wait for all; twice
//            the bytes of bw over rank 0's time;
//   mbw_mr:  `pairs` senders (ranks 0..p-1) stream to ranks p..2p-1 as bw does, after a barrier
//            of all ranks each iteration; MB/s over the senders' mean time, Messages/s = MB/s *
//            1e6 / bytes.
// A message is bytes / size(type) elements of OSU's datatype (-T; sizes below one element are
// left out, as OSU leaves them). With -c every iteration first writes a pattern of the
// iteration's own into each send buffer and waits at a barrier, repeats the exchange
// `validation_warmup` times untimed before the timed one, and each receiver then counts the
// elements that differ from the pattern; the counts add up over the ranks.
#pragma once

#include <mpi.h>

#include <cstddef>

#include "osu/osu_options.hpp"

namespace commscope::bench {

class Watchdog;

// One rank's send and receive buffers, each `bytes` long, on the host (page-aligned) or the
// device.
class OsuBuffers {
 public:
  OsuBuffers(std::size_t bytes, bool device);
  ~OsuBuffers();
  OsuBuffers(const OsuBuffers&) = delete;
  OsuBuffers& operator=(const OsuBuffers&) = delete;
  // OSU's fill before each size: 'a' in the send buffer, 'b' in the receive buffer.
  void fill(std::size_t bytes);
  void* send() const { return send_; }
  void* recv() const { return recv_; }

 private:
  bool device_;
  void* send_ = nullptr;
  void* recv_ = nullptr;
};

// One size's result (rank 0's values; zeros elsewhere, but `errors` on every rank).
struct OsuLine {
  std::size_t bytes = 0;
  int iterations = 0;
  double value = 0;           // latency: us; the others: MB/s (1e6 bytes per second)
  double min = 0, max = 0;    // the same of single iterations (bandwidth: per window); collectives: over ranks
  double messages_per_s = 0;  // mbw_mr
  long long errors = 0;       // -c: elements received wrong, summed over the ranks and iterations
};

// OSU's MPI datatype for `t`.
MPI_Datatype mpi_type(OsuType t);

// The -c pattern: element k of iteration i, in `count` elements of type t; and the elements of
// a received buffer that differ from it.
void osu_fill_pattern(void* buf, OsuType t, std::size_t count, int iteration);
std::size_t osu_count_wrong(const void* buf, OsuType t, std::size_t count, int iteration);

// Run one size of o.test on `comm` in datatype `type` (every rank calls; ranks outside the
// test's pairs only join its barriers). `pairs`: osu_mbw_mr's pairs (1 for the others).
// `bytes` holds at least one element of `type`.
OsuLine osu_measure(const OsuOptions& o, OsuType type, int pairs, std::size_t bytes, OsuBuffers& buffers, MPI_Comm comm,
                    Watchdog& dog);

}  // namespace commscope::bench
