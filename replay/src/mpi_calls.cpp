#include "mpi_calls.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>

namespace commscope::replay {
namespace {

MPI_Datatype element_type(DataType t) {
  return t == DataType::f32 ? MPI_FLOAT : MPI_UINT8_T;  // elements_of's two
}

// A per-rank count of `count` elements as (count, type).
ByteCount part(std::size_t count, DataType t) {
  return {static_cast<int>(count), element_type(t)};
}

}  // namespace

void check(int rc, const char* call) {
  if (rc == MPI_SUCCESS) return;
  char text[MPI_MAX_ERROR_STRING];
  int n = 0;
  MPI_Error_string(rc, text, &n);
  throw std::runtime_error(std::string(call) + " failed: " + std::string(text, static_cast<std::size_t>(n)));
}

ByteCount byte_count(std::int64_t bytes) {
  return {static_cast<int>(std::max<std::int64_t>(0, bytes)), MPI_BYTE};
}

void post_collective(MPI_Comm comm, Collective c, std::size_t count, DataType type, const void* send, void* recv,
                     std::vector<MPI_Request>& out) {
  int p = 1, me = 0;
  MPI_Comm_size(comm, &p);
  MPI_Comm_rank(comm, &me);
  const MPI_Datatype dt = element_type(type);
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
      if (c == Collective::allreduce)
        add(MPI_Iallreduce(in, to, static_cast<int>(count), dt, MPI_SUM, comm, &r), "MPI_Iallreduce");
      if (c == Collective::reduce)
        add(MPI_Ireduce(in, to, static_cast<int>(count), dt, MPI_SUM, 0, comm, &r), "MPI_Ireduce");
      if (c == Collective::broadcast) add(MPI_Ibcast(to, static_cast<int>(count), dt, 0, comm, &r), "MPI_Ibcast");
      return;
    case Collective::allgather: {
      const ByteCount n = part(count, type);
      add(MPI_Iallgather(in, n.count, n.type, to, n.count, n.type, comm, &r), "MPI_Iallgather");
      return;
    }
    case Collective::gather: {
      const ByteCount n = part(count, type);
      add(MPI_Igather(in, n.count, n.type, to, n.count, n.type, 0, comm, &r), "MPI_Igather");
      return;
    }
    case Collective::scatter: {
      const ByteCount n = part(count, type);
      add(MPI_Iscatter(in, n.count, n.type, to, n.count, n.type, 0, comm, &r), "MPI_Iscatter");
      return;
    }
    case Collective::alltoall:
    case Collective::alltoallv: {
      const ByteCount n = part(count, type);
      add(MPI_Ialltoall(in, n.count, n.type, to, n.count, n.type, comm, &r), "MPI_Ialltoall");
      return;
    }
    case Collective::reducescatter: {
      const ByteCount n = part(count, type);
      add(MPI_Ireduce_scatter_block(in, to, n.count, n.type, MPI_SUM, comm, &r), "MPI_Ireduce_scatter_block");
      return;
    }
    case Collective::sendrecv: {  // the ring shift, as the blocking replay runs it
      const ByteCount n = byte_count(static_cast<std::int64_t>(count * type_size(type)));
      add(MPI_Irecv(to, n.count, n.type, (me - 1 + p) % p, 0, comm, &r), "MPI_Irecv");
      add(MPI_Isend(in, n.count, n.type, (me + 1) % p, 0, comm, &r), "MPI_Isend");
      return;
    }
  }
  throw std::runtime_error("no nonblocking form of " + std::string(collective_name(c)));
}

}  // namespace commscope::replay
