// OSU 7.4's collective tests (osu_allreduce, osu_allgather, osu_alltoall, osu_bcast,
// osu_gather, osu_reduce, osu_reduce_scatter, osu_scatter) over the library's `mpi` algorithm,
// host buffers. Per size: a barrier, then `skip` untimed and `iterations` timed iterations, each
// one call timed alone with MPI_Wtime and followed by a barrier; a rank's latency is its timed
// sum / iterations; the line is the mean over ranks, -f adds the least and the largest.
// Counts are OSU's: bytes / size(type) elements per rank (allgather, alltoall, gather, scatter:
// per block; osu_reduce_scatter: the whole array, split evenly, rounded down to whole elements
// per rank where OSU spreads the rest; sizes without an element are left out). osu_bcast runs in
// place (one buffer, as OSU's). With -c every iteration writes the check data of its own seed
// (collectives/check_data.hpp), repeats the call `validation_warmup` times untimed into another
// output buffer, each behind a barrier, then times the checked call; every rank counts its
// wrong elements.
#pragma once

#include <cstddef>
#include <optional>
#include <vector>

#include "commscope/collectives/communicator.hpp"
#include "osu/osu_options.hpp"
#include "osu/osu_pt2pt.hpp"

namespace commscope::bench {

class Watchdog;

// One rank's buffers for every size up to `max_bytes` of `o.test` on `nranks` ranks.
class OsuCollBuffers {
 public:
  OsuCollBuffers(const OsuOptions& o, int nranks);
  unsigned char* send() { return send_.data(); }
  unsigned char* recv() { return recv_.data(); }
  unsigned char* warm() { return warm_.data(); }  // -c: the untimed repeats' output

 private:
  std::vector<unsigned char> send_, recv_, warm_;
};

// The largest size OSU's -M lets o.test take on `nranks` ranks (osu_allgather, osu_alltoall,
// osu_gather, osu_scatter: size x ranks within the limit; the others: size).
std::size_t osu_largest_size(const OsuOptions& o, int nranks);

// One size in `type`: every rank calls. nullopt where the size holds no element per rank.
std::optional<OsuLine> osu_measure_collective(const OsuOptions& o, OsuType type, std::size_t bytes,
                                              OsuCollBuffers& buffers, Communicator& comm, Watchdog& dog);

}  // namespace commscope::bench
