// Every rank's rows on one rank: the fixed-size rows (or text) a tool's ranks measured, gathered
// to rank 0 to be written or merged. Header only, over MPI (mpi_transport.hpp's check).
#pragma once

#include <mpi.h>

#include <cstddef>
#include <type_traits>
#include <vector>

#include "commscope/collectives/mpi_transport.hpp"

namespace commscope {

// Every rank's `mine` on rank 0 of `comm`, in rank order, as bytes (T trivially copyable: a row
// struct, or char for text); empty elsewhere. Collective. The rows of all ranks together stay
// under 2 GiB (MPI counts the bytes in an int).
template <class T>
std::vector<T> gather_rows(MPI_Comm comm, const std::vector<T>& mine) {
  static_assert(std::is_trivially_copyable_v<T>);
  int rank = 0, size = 1;
  COMMSCOPE_MPI_CHECK(MPI_Comm_rank(comm, &rank));
  COMMSCOPE_MPI_CHECK(MPI_Comm_size(comm, &size));
  const int bytes = static_cast<int>(mine.size() * sizeof(T));
  std::vector<int> counts(rank == 0 ? static_cast<std::size_t>(size) : 0), displs(counts.size());
  COMMSCOPE_MPI_CHECK(MPI_Gather(&bytes, 1, MPI_INT, counts.data(), 1, MPI_INT, 0, comm));
  std::size_t total = 0;
  for (std::size_t r = 0; r < counts.size(); ++r)
    displs[r] = static_cast<int>(total), total += static_cast<std::size_t>(counts[r]);
  std::vector<T> all(total / sizeof(T));
  COMMSCOPE_MPI_CHECK(
      MPI_Gatherv(mine.data(), bytes, MPI_BYTE, all.data(), counts.data(), displs.data(), MPI_BYTE, 0, comm));
  return all;
}

}  // namespace commscope
