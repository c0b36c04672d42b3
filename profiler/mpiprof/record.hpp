// The one recording path of libcommscope-mpiprof.so's wrappers (mpiprof.cpp defines it): each
// wrapper names its MPI function and communication, gives its bytes (bytes.hpp) and calls PMPI
// inside record().
#pragma once

#include <mpi.h>

#include <cstdint>
#include <type_traits>

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

// Records one MPI call around call(ctx): the compute before it ends; an operator event named
// after the MPI function holds the communication event that spans the call, of `bytes`, or of
// *received when given (read after the call: a receive's count from its status).
// *link, read after the call too, is the communication's label when given and not 0 (a message's
// peers: communicators.hpp).
int record_call(const Names& names, std::int64_t bytes, MPI_Comm comm, Kind kind, int (*call)(void*), void* ctx,
                const std::int64_t* received, const std::uint32_t* link);

template <class Call>
int record(const Names& names, std::int64_t bytes, MPI_Comm comm, Kind kind, Call&& call,
           const std::int64_t* received = nullptr, const std::uint32_t* link = nullptr) {
  using F = std::remove_reference_t<Call>;
  return record_call(
      names, bytes, comm, kind, [](void* c) { return (*static_cast<F*>(c))(); },
      const_cast<void*>(static_cast<const void*>(&call)), received, link);
}

// Whether the program's calls are recorded now: a session records and this is not the
// library's own MPI call (the session's). Communicator creation asks, so that the session's
// own communicators take no number from the program's.
bool recording_program_call();

}  // namespace commscope::mpiprof
