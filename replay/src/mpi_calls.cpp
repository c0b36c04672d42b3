#include "mpi_calls.hpp"

#include <algorithm>
#include <map>
#include <mutex>
#include <stdexcept>
#include <string>
#include <utility>

namespace commscope::replay {
namespace {

// A committed type of `bytes` bytes (past max_count): blocks of `chunk` bytes and the rest.
MPI_Datatype big_type(std::int64_t bytes, std::int64_t chunk) {
  static std::mutex mutex;
  static std::map<std::pair<std::int64_t, std::int64_t>, MPI_Datatype> made;  // (bytes, chunk)
  std::lock_guard lock(mutex);
  if (const auto it = made.find({bytes, chunk}); it != made.end()) return it->second;
  MPI_Datatype block = MPI_DATATYPE_NULL, out = MPI_DATATYPE_NULL;
  check(MPI_Type_contiguous(static_cast<int>(chunk), MPI_BYTE, &block), "MPI_Type_contiguous");
  const int blocks[2] = {static_cast<int>(bytes / chunk), static_cast<int>(bytes % chunk)};
  const MPI_Aint at[2] = {0, static_cast<MPI_Aint>(bytes / chunk * chunk)};
  const MPI_Datatype types[2] = {block, MPI_BYTE};
  check(MPI_Type_create_struct(blocks[1] > 0 ? 2 : 1, blocks, at, types, &out), "MPI_Type_create_struct");
  check(MPI_Type_commit(&out), "MPI_Type_commit");
  MPI_Type_free(&block);
  return made[{bytes, chunk}] = out;
}

MPI_Datatype element_type(DataType t) {
  return t == DataType::f32 ? MPI_FLOAT : MPI_UINT8_T;  // elements_of's two
}

// A per-rank count of `count` elements as (count, type): the element type up to max_count, else
// bytes (byte_count) for the collectives that move without reducing.
ByteCount part(std::size_t count, DataType t, Collective c, const CountLimits& limits) {
  if (count <= static_cast<std::size_t>(limits.max_count)) return {static_cast<int>(count), element_type(t)};
  if (c == Collective::reducescatter)
    throw std::runtime_error("a nonblocking reduce-scatter of " + std::to_string(count) +
                             " elements per rank exceeds the MPI library's int count");
  return byte_count(static_cast<std::int64_t>(count * type_size(t)), limits);
}

}  // namespace

void check(int rc, const char* call) {
  if (rc == MPI_SUCCESS) return;
  char text[MPI_MAX_ERROR_STRING];
  int n = 0;
  MPI_Error_string(rc, text, &n);
  throw std::runtime_error(std::string(call) + " failed: " + std::string(text, static_cast<std::size_t>(n)));
}

ByteCount byte_count(std::int64_t bytes, const CountLimits& limits) {
  if (bytes <= limits.max_count) return {static_cast<int>(std::max<std::int64_t>(0, bytes)), MPI_BYTE};
  return {1, big_type(bytes, limits.block)};
}

void post_collective(MPI_Comm comm, Collective c, std::size_t count, DataType type, const void* send, void* recv,
                     std::vector<MPI_Request>& out, const CountLimits& limits) {
  int p = 1, me = 0;
  MPI_Comm_size(comm, &p);
  MPI_Comm_rank(comm, &me);
  const MPI_Datatype dt = element_type(type);
  const std::size_t es = type_size(type);
  const auto* in = static_cast<const char*>(send);
  auto* to = static_cast<char*>(recv);
  MPI_Request r = MPI_REQUEST_NULL;
  const auto add = [&](int rc, const char* call) {
    check(rc, call);
    out.push_back(r);
  };
  switch (c) {
    case Collective::allreduce:
    case Collective::reduce:
    case Collective::broadcast:
      for (std::size_t off = 0; off < count || off == 0; off += limits.max_elements) {  // element-wise: cut
        const int n = static_cast<int>(std::min(limits.max_elements, count - off));
        if (c == Collective::allreduce)
          add(MPI_Iallreduce(in + off * es, to + off * es, n, dt, MPI_SUM, comm, &r), "MPI_Iallreduce");
        if (c == Collective::reduce)
          add(MPI_Ireduce(in + off * es, to + off * es, n, dt, MPI_SUM, 0, comm, &r), "MPI_Ireduce");
        if (c == Collective::broadcast) add(MPI_Ibcast(to + off * es, n, dt, 0, comm, &r), "MPI_Ibcast");
        if (count == 0) break;
      }
      return;
    case Collective::allgather: {
      const ByteCount n = part(count, type, c, limits);
      add(MPI_Iallgather(in, n.count, n.type, to, n.count, n.type, comm, &r), "MPI_Iallgather");
      return;
    }
    case Collective::gather: {
      const ByteCount n = part(count, type, c, limits);
      add(MPI_Igather(in, n.count, n.type, to, n.count, n.type, 0, comm, &r), "MPI_Igather");
      return;
    }
    case Collective::scatter: {
      const ByteCount n = part(count, type, c, limits);
      add(MPI_Iscatter(in, n.count, n.type, to, n.count, n.type, 0, comm, &r), "MPI_Iscatter");
      return;
    }
    case Collective::alltoall:
    case Collective::alltoallv: {
      const ByteCount n = part(count, type, c, limits);
      add(MPI_Ialltoall(in, n.count, n.type, to, n.count, n.type, comm, &r), "MPI_Ialltoall");
      return;
    }
    case Collective::reducescatter: {
      const ByteCount n = part(count, type, c, limits);
      add(MPI_Ireduce_scatter_block(in, to, n.count, n.type, MPI_SUM, comm, &r), "MPI_Ireduce_scatter_block");
      return;
    }
    case Collective::sendrecv: {  // the ring shift, as the blocking replay runs it
      const ByteCount n = byte_count(static_cast<std::int64_t>(count * es), limits);
      add(MPI_Irecv(to, n.count, n.type, (me - 1 + p) % p, 0, comm, &r), "MPI_Irecv");
      add(MPI_Isend(in, n.count, n.type, (me + 1) % p, 0, comm, &r), "MPI_Isend");
      return;
    }
  }
  throw std::runtime_error("no nonblocking form of " + std::string(collective_name(c)));
}

}  // namespace commscope::replay
