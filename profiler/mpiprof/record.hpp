// The one recording path of libcommscope-mpiprof.so's wrappers (mpiprof.cpp defines it): each
// wrapper names its MPI function and communication, gives its bytes (bytes.hpp) and calls PMPI
// inside record().
#pragma once

#include <mpi.h>

#include <cstdint>
#include <cstring>
#include <span>
#include <type_traits>
#include <utility>

#include "commscope/profiler/recorder.hpp"

namespace commscope::mpiprof {

// A wrapper's names: its MPI function (an operator, so the report totals calls and time per
// function) and the communication it is ("allreduce", "send", "wait", ...).
struct Names {
  profiler::NameId function, comm;
  bool poll = false;  // MPI_Test*, MPI_Iprobe, MPI_Improbe: runs of calls coalesce (mpiprof.cpp)
};

// What a call is: collectives, blocking and nonblocking, are numbered on their communicator
// (wait and transfer split across ranks); point-to-point and completion calls are not.
enum class Kind { kCollective, kUnnumbered };

// One communication event of a call: its name, its bytes (or *received when given) and its
// label (*link when given and not 0: a message's peers, communicators.hpp); both read after the
// call (a receive's count and sender from its status).
struct Part {
  profiler::NameId comm = 0;
  std::int64_t bytes = 0;
  const std::int64_t* received = nullptr;
  const std::uint32_t* link = nullptr;
};

// A collective's datatype, reduction and root, for the flight record (flight.hpp): a wrapper sets
// them just before record(), which takes them for its call (this thread's next call only).
// Predefined datatypes and reductions by name ("float", "sum"), others "derived" and "user".
void set_detail(MPI_Datatype type, MPI_Op op = MPI_OP_NULL, int root = -1);

// A nonblocking collective's request, set just before record() as set_detail: after the post the
// flight recorder tracks the request, so that its record says whether a wait or test looked at it
// and when one completed it (RequestWatch, in the completion wrappers).
void set_request(MPI_Request* request);

// A request handle's bits, the flight recorder's key for it (an int or a pointer by MPI library).
inline std::uint64_t request_key(MPI_Request r) {
  std::uint64_t key = 0;
  std::memcpy(&key, &r, sizeof r < sizeof key ? sizeof r : sizeof key);
  return key;
}

// Around a completion call's MPI call (MPI_Wait*, MPI_Test*, MPI_Request_free): before it, every
// tracked request among `requests` is marked checked (a wait or test looked at it) and kept; after
// it, each of those now MPI_REQUEST_NULL is done (or, `freed`, no longer tracked). Nothing where
// no request is tracked or the call is not the program's. The first kMaxWatched of a call's
// tracked requests are followed to their end; the others are marked checked only.
class RequestWatch {
 public:
  RequestWatch(const MPI_Request* requests, int count);
  void after(const MPI_Request* requests, bool freed = false) const;

 private:
  int n_ = 0;
};

// Records one MPI call around call(ctx): the compute before it ends; an operator event named
// after the MPI function holds a communication event per part (MPI_Sendrecv: its send and its
// receive; none for one whose peers are both MPI_PROC_NULL), each spanning the call.
int record_call(const Names& names, std::span<const Part> parts, MPI_Comm comm, Kind kind, int (*call)(void*),
                void* ctx);

template <class Call>
int record_parts(const Names& names, std::span<const Part> parts, MPI_Comm comm, Kind kind, Call&& call) {
  using F = std::remove_reference_t<Call>;
  return record_call(
      names, parts, comm, kind, [](void* c) { return (*static_cast<F*>(c))(); },
      const_cast<void*>(static_cast<const void*>(&call)));
}

// One communication event named names.comm, of `bytes` (or *received), labelled *link.
template <class Call>
int record(const Names& names, std::int64_t bytes, MPI_Comm comm, Kind kind, Call&& call,
           const std::int64_t* received = nullptr, const std::uint32_t* link = nullptr) {
  const Part part{names.comm, bytes, received, link};
  return record_parts(names, std::span<const Part>(&part, 1), comm, kind, std::forward<Call>(call));
}

// Whether the program's calls are recorded now: a session records and this is not the
// library's own MPI call (the session's). Communicator creation asks, so that the session's
// own communicators take no number from the program's.
bool recording_program_call();

}  // namespace commscope::mpiprof
