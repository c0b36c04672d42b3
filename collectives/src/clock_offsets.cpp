#include "commscope/collectives/clock_offsets.hpp"

#include <algorithm>

#include "commscope/collectives/mpi_transport.hpp"

namespace commscope {

namespace {
constexpr std::int64_t kGoodRoundTripNs = 100'000;  // 50 us of error: below what any report resolves
constexpr int kMoreRounds = 64;
constexpr std::int64_t kBudgetNs = 250'000'000;  // per rank
}  // namespace

ClockOffsets estimate_clock_offsets(MPI_Comm comm, int rounds, const std::function<std::int64_t()>& now) {
  int rank = 0, size = 1;
  COMMSCOPE_MPI_CHECK(MPI_Comm_rank(comm, &rank));
  COMMSCOPE_MPI_CHECK(MPI_Comm_size(comm, &size));
  ClockOffsets c;
  c.offset_ns.assign(static_cast<std::size_t>(size), 0);
  c.error_ns.assign(static_cast<std::size_t>(size), 0);
  rounds = std::max(1, rounds);
  constexpr int kAsk = 71, kAnswer = 72;
  constexpr std::int64_t kDone = -1;  // rank 0's "no more rounds" (its clock is never negative)
  for (int r = 1; r < size; ++r) {
    if (rank == 0) {
      std::int64_t best = -1;
      const std::int64_t started = now();
      for (int k = 0;; ++k) {
        // At least `rounds`; more while the best round trip is long (a rank descheduled on a
        // busy node: a 10 ms round trip is a 5 ms error), within kMoreRounds x rounds and kBudgetNs.
        if (k >= rounds && (best <= kGoodRoundTripNs || k >= kMoreRounds * rounds || now() - started > kBudgetNs)) break;
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
      COMMSCOPE_MPI_CHECK(MPI_Send(&kDone, 1, MPI_INT64_T, r, kAsk, comm));
    } else if (rank == r) {
      for (;;) {
        std::int64_t t0 = 0;
        COMMSCOPE_MPI_CHECK(MPI_Recv(&t0, 1, MPI_INT64_T, 0, kAsk, comm, MPI_STATUS_IGNORE));
        if (t0 == kDone) break;
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
