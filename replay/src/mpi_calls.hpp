#pragma once
// The MPI calls the replay makes itself, outside the collectives' algorithms: messages of any
// size (MPI's counts are int: 2 GiB or more go as one element of a byte type that large) and the
// nonblocking collectives of posted ops (the MPI library's own; none of the algorithms has one).

#include <mpi.h>

#include <climits>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "commscope/collectives/types.hpp"

namespace commscope::replay {

// Throws std::runtime_error naming `call` and MPI's error string where `rc` is not MPI_SUCCESS.
void check(int rc, const char* call);

// Where a count is too large for one MPI call: MPI's int (max_count), the blocks of a big byte type
// (block bytes) and the elements of one call of an element-wise collective (max_elements). Tests
// set small ones, to run the splits on small buffers.
struct CountLimits {
  std::int64_t max_count = INT_MAX;
  std::int64_t block = std::int64_t{1} << 30;
  std::size_t max_elements = std::size_t{1} << 30;
};

// `bytes` as an MPI count and datatype: (bytes, MPI_BYTE) up to max_count, else (1, a committed
// type of that many bytes, kept for the process: blocks of `block` bytes and the rest). Either way
// the type signature is `bytes` MPI_BYTEs, so a receive of the larger form takes any smaller
// message.
struct ByteCount {
  int count = 0;
  MPI_Datatype type = MPI_BYTE;
};
ByteCount byte_count(std::int64_t bytes, const CountLimits& limits = {});

// Posts collective `c` (`count` elements per rank, as CollArgs counts them; root 0, sum) on `comm`
// with the MPI library's nonblocking call; its requests are appended to `out` (an element-wise
// collective of more than max_elements posts one call per max_elements; the others take a count
// past max_count as bytes, byte_count). `send` holds
// collective_bytes(c, count, type, size) bytes that are never written (zeros), `recv` as many
// writable ones. Throws std::runtime_error for a count MPI cannot take (a reduce-scatter of more
// than max_count elements per rank).
void post_collective(MPI_Comm comm, Collective c, std::size_t count, DataType type, const void* send, void* recv,
                     std::vector<MPI_Request>& out, const CountLimits& limits = {});

}  // namespace commscope::replay
