#include "commscope/collectives/clock_offsets.hpp"

#include <algorithm>

#include "commscope/collectives/mpi_transport.hpp"

namespace commscope {

ClockOffsets estimate_clock_offsets(MPI_Comm comm, int rounds, const std::function<std::int64_t()>& now) {
  int rank = 0, size = 1;
  COMMSCOPE_MPI_CHECK(MPI_Comm_rank(comm, &rank));
  COMMSCOPE_MPI_CHECK(MPI_Comm_size(comm, &size));
  ClockOffsets c;
  c.offset_ns.assign(static_cast<std::size_t>(size), 0);
  c.error_ns.assign(static_cast<std::size_t>(size), 0);
  rounds = std::max(1, rounds);
  constexpr int kAsk = 71, kAnswer = 72;
  for (int r = 1; r < size; ++r) {
    if (rank == 0) {
      std::int64_t best = -1;
      for (int k = 0; k < rounds; ++k) {
        const std::int64_t t0 = now();
        COMMSCOPE_MPI_CHECK(MPI_Send(&t0, 1, MPI_INT64_T, r, kAsk, comm));
        std::int64_t tr = 0;
        COMMSCOPE_MPI_CHECK(MPI_Recv(&tr, 1, MPI_INT64_T, r, kAnswer, comm, MPI_STATUS_IGNORE));
        const std::int64_t t1 = now();
        if (best < 0 || t1 - t0 < best) {
          best = t1 - t0;
          c.offset_ns[static_cast<std::size_t>(r)] = t0 + (t1 - t0) / 2 - tr;
          c.error_ns[static_cast<std::size_t>(r)] = (t1 - t0 + 1) / 2;
        }
      }
    } else if (rank == r) {
      for (int k = 0; k < rounds; ++k) {
        std::int64_t t0 = 0;
        COMMSCOPE_MPI_CHECK(MPI_Recv(&t0, 1, MPI_INT64_T, 0, kAsk, comm, MPI_STATUS_IGNORE));
        const std::int64_t tr = now();
        COMMSCOPE_MPI_CHECK(MPI_Send(&tr, 1, MPI_INT64_T, 0, kAnswer, comm));
      }
    }
  }
  COMMSCOPE_MPI_CHECK(MPI_Bcast(c.offset_ns.data(), size, MPI_INT64_T, 0, comm));
  COMMSCOPE_MPI_CHECK(MPI_Bcast(c.error_ns.data(), size, MPI_INT64_T, 0, comm));
  return c;
}

}  // namespace commscope
