#include "osu/osu_coll.hpp"

#include <mpi.h>

#include <algorithm>
#include <string>

#include "cases.hpp"
#include "commscope/collectives/check_data.hpp"
#include "commscope/collectives/mpi_transport.hpp"
#include "watchdog.hpp"

namespace commscope::bench {

namespace {

constexpr std::uint64_t kCheckSeed = 42;  // -c: iteration i's inputs come from seed 42 + i

// The per-call count of `bytes` in `type` (CollArgs' conventions; OSU's per-rank block).
std::size_t count_for(OsuTest t, std::size_t bytes, OsuType type, int nranks) {
  const std::size_t elements = bytes / type_size(type);
  return t == OsuTest::reduce_scatter ? elements / static_cast<std::size_t>(nranks) : elements;
}

check::Spec spec_for(const OsuOptions& o, OsuType type, std::size_t count, int nranks) {
  return {osu_collective(o.test), library_type(type), ReduceOp::sum, count, o.root, nranks, kCheckSeed};
}

bool per_rank_blocks(OsuTest t) {
  return t == OsuTest::allgather || t == OsuTest::alltoall || t == OsuTest::gather || t == OsuTest::scatter;
}

}  // namespace

std::size_t osu_largest_size(const OsuOptions& o, int nranks) {
  const std::size_t ranks = static_cast<std::size_t>(std::max(nranks, 1));
  if (per_rank_blocks(o.test)) return std::min(o.max_bytes, o.mem_limit / ranks);
  return std::min(o.max_bytes, o.mem_limit);
}

OsuCollBuffers::OsuCollBuffers(const OsuOptions& o, int nranks) {
  std::size_t send = 1, recv = 1;
  const std::size_t largest = osu_largest_size(o, nranks);
  for (OsuType t : o.types) {
    const check::Spec s = spec_for(o, t, count_for(o.test, largest, t, nranks), nranks);
    send = std::max(send, check::send_elements(s) * type_size(t));
    recv = std::max(recv, check::recv_elements(s) * type_size(t));
  }
  send_.assign(send, 1);  // OSU's fill: 1 in every byte of the input, 0 in the output
  recv_.assign(recv, 0);
  if (o.validate) warm_.assign(recv, 0);
}

std::optional<OsuLine> osu_measure_collective(const OsuOptions& o, OsuType type, std::size_t bytes,
                                              OsuCollBuffers& buffers, Communicator& comm, Watchdog& dog) {
  const int nranks = comm.size(), rank = comm.rank();
  const MPI_Comm mpi = comm.mpi_comm();
  const std::size_t count = count_for(o.test, bytes, type, nranks);
  if (count == 0) return std::nullopt;
  check::Spec spec = spec_for(o, type, count, nranks);
  const bool in_place = spec.coll == Collective::broadcast;  // OSU's one buffer
  const CollArgs args{.coll = spec.coll,
                      .send = in_place ? buffers.recv() : buffers.send(),
                      .recv = buffers.recv(),
                      .count = count,
                      .type = spec.type,
                      .op = ReduceOp::sum,
                      .root = o.root};
  CollArgs warm = args;
  warm.recv = buffers.warm();
  if (in_place) warm.send = warm.recv;
  const Algorithm& algo = find_algorithm("mpi");

  Case what;  // for the watchdog's message
  what.coll = spec.coll;
  what.algo = "mpi";
  what.type = spec.type;
  what.root = o.root;
  what.count = count;
  what.bytes = what.requested_bytes = bytes;
  WatchScope watch(dog, &what, to_string(o.test).data());

  const int iterations = o.iterations(bytes), skip = o.warmup(bytes);
  long long wrong = 0;
  double timer = 0;
  COMMSCOPE_MPI_CHECK(MPI_Barrier(mpi));
  for (int i = 0; i < iterations + skip; ++i) {
    if (o.validate) {
      spec.seed = kCheckSeed + static_cast<std::uint64_t>(i);
      check::fill_send(spec, rank, const_cast<void*>(args.send));
      for (int j = 0; j < o.validation_warmup; ++j) {
        COMMSCOPE_MPI_CHECK(MPI_Barrier(mpi));
        comm.run(warm, algo);
      }
      COMMSCOPE_MPI_CHECK(MPI_Barrier(mpi));
    }
    const double start = MPI_Wtime();
    comm.run(args, algo);
    const double stop = MPI_Wtime();
    COMMSCOPE_MPI_CHECK(MPI_Barrier(mpi));
    if (o.validate) {
      if (o.corrupt) static_cast<unsigned char*>(args.recv)[0] ^= 0x40;
      wrong += static_cast<long long>(check::check_recv(spec, rank, args.recv).wrong);
    }
    if (i >= skip) timer += stop - start;
    dog.progress(i);
  }
  // A rank's mean latency (us); the line's are the mean, least and largest over ranks.
  const double latency = timer * 1e6 / iterations;
  double least = 0, largest = 0, sum = 0;
  COMMSCOPE_MPI_CHECK(MPI_Reduce(&latency, &least, 1, MPI_DOUBLE, MPI_MIN, 0, mpi));
  COMMSCOPE_MPI_CHECK(MPI_Reduce(&latency, &largest, 1, MPI_DOUBLE, MPI_MAX, 0, mpi));
  COMMSCOPE_MPI_CHECK(MPI_Reduce(&latency, &sum, 1, MPI_DOUBLE, MPI_SUM, 0, mpi));
  OsuLine line;
  line.bytes = bytes;
  line.iterations = iterations;
  if (o.validate) COMMSCOPE_MPI_CHECK(MPI_Allreduce(&wrong, &line.errors, 1, MPI_LONG_LONG, MPI_SUM, mpi));
  if (rank == 0) {
    line.value = sum / nranks;
    line.min = least;
    line.max = largest;
  }
  return line;
}

}  // namespace commscope::bench
