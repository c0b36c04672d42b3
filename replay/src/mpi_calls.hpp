#pragma once
// The MPI calls the replay makes itself, outside the collectives' algorithms: messages and the
// nonblocking collectives of posted ops (the MPI library's own; none of the algorithms has one).

#include <mpi.h>

#include <cstddef>
#include <cstdint>
#include <vector>

#include "commscope/collectives/types.hpp"

namespace commscope::replay {

// Throws std::runtime_error naming `call` and MPI's error string where `rc` is not MPI_SUCCESS.
void check(int rc, const char* call);

// `bytes` as an MPI count and datatype: (bytes, MPI_BYTE).
struct ByteCount {
  int count = 0;
  MPI_Datatype type = MPI_BYTE;
};
ByteCount byte_count(std::int64_t bytes);

// Posts collective `c` (`count` elements per rank, as CollArgs counts them; root 0, sum) on `comm`
// with the MPI library's nonblocking call; its requests are appended to `out`. `send` holds
// collective_bytes(c, count, type, size) bytes that are never written (zeros), `recv` as many
// writable ones.
void post_collective(MPI_Comm comm, Collective c, std::size_t count, DataType type, const void* send, void* recv,
                     std::vector<MPI_Request>& out);

}  // namespace commscope::replay
