// libcommscope-mpiprof.so's point-to-point, probe, persistent-request and completion wrappers:
// unnumbered (all transfer: which send a receive took is not known here); sends, receives and
// their posts labelled by their peers' world ranks ("mpi[0>2]", communicators.hpp), MPI_Sendrecv
// as its send and its receive. Blocking calls span their time; posts (MPI_Isend, MPI_Start, ...)
// their own call; receives count the bytes their status says arrived, posts what they name.
#include <mpi.h>

#include <cstdint>
#include <span>
#include <utility>

#include "bytes.hpp"
#include "communicators.hpp"
#include "record.hpp"

namespace pf = commscope::profiler;
using commscope::mpiprof::bytes_of;
using commscope::mpiprof::Kind;
using commscope::mpiprof::link_from;
using commscope::mpiprof::link_to;
using commscope::mpiprof::Names;
using commscope::mpiprof::received_bytes;
using commscope::mpiprof::record;

namespace {

// The status a receive fills: the caller's, or `own` when it passed MPI_STATUS_IGNORE (the
// count is read from it).
MPI_Status* status_for(MPI_Status* given, MPI_Status& own) {
  return given == MPI_STATUS_IGNORE ? &own : given;
}

// MPI_Sendrecv*: its send ("send", to dest) and its receive ("recv", what arrived from the
// sender its status names), two events of the call each labelled by its peers, so that a replay
// sends and receives between those ranks; a half whose peer is MPI_PROC_NULL moves nothing and is
// not recorded.
template <class Call>
int sendrecv(const Names& names, std::int64_t sent, int dest, int source, MPI_Datatype rtype, MPI_Comm comm,
             MPI_Status* st, Call&& call) {
  static const pf::NameId recv = pf::name_id("recv");
  const std::uint32_t to = link_to(comm, dest);
  std::int64_t received = 0;
  std::uint32_t from = 0;
  commscope::mpiprof::Part parts[2];
  std::size_t n = 0;
  if (dest != MPI_PROC_NULL) parts[n++] = {names.comm, sent, nullptr, &to};
  if (source != MPI_PROC_NULL) parts[n++] = {recv, 0, &received, &from};
  return commscope::mpiprof::record_parts(names, std::span(parts, n), comm, Kind::kUnnumbered, [&] {
    const int rc = call();
    if (rc == MPI_SUCCESS) received = received_bytes(st, rtype), from = link_from(comm, st->MPI_SOURCE);
    return rc;
  });
}

// A completion call's event around call(), and the flight recorder's marks on the nonblocking
// collectives' requests among `requests` (RequestWatch: checked before, done after).
template <class Call>
int completion(const Names& names, MPI_Request* requests, int count, Call&& call) {
  const commscope::mpiprof::RequestWatch watch(requests, count);
  const int rc = record(names, 0, MPI_COMM_NULL, Kind::kUnnumbered, std::forward<Call>(call));
  watch.after(requests);
  return rc;
}

}  // namespace

extern "C" {

// --- sends and receives

int MPI_Send(const void* buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm) {
  static const Names names{pf::name_id("MPI_Send"), pf::name_id("send")};
  const std::uint32_t to = link_to(comm, dest);
  return record(
      names, bytes_of(count, type), comm, Kind::kUnnumbered,
      [&] { return PMPI_Send(buf, count, type, dest, tag, comm); }, nullptr, &to);
}

int MPI_Ssend(const void* buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm) {
  static const Names names{pf::name_id("MPI_Ssend"), pf::name_id("send")};
  const std::uint32_t to = link_to(comm, dest);
  return record(
      names, bytes_of(count, type), comm, Kind::kUnnumbered,
      [&] { return PMPI_Ssend(buf, count, type, dest, tag, comm); }, nullptr, &to);
}

int MPI_Bsend(const void* buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm) {
  static const Names names{pf::name_id("MPI_Bsend"), pf::name_id("send")};
  const std::uint32_t to = link_to(comm, dest);
  return record(
      names, bytes_of(count, type), comm, Kind::kUnnumbered,
      [&] { return PMPI_Bsend(buf, count, type, dest, tag, comm); }, nullptr, &to);
}

int MPI_Rsend(const void* buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm) {
  static const Names names{pf::name_id("MPI_Rsend"), pf::name_id("send")};
  const std::uint32_t to = link_to(comm, dest);
  return record(
      names, bytes_of(count, type), comm, Kind::kUnnumbered,
      [&] { return PMPI_Rsend(buf, count, type, dest, tag, comm); }, nullptr, &to);
}

int MPI_Recv(void* buf, int count, MPI_Datatype type, int source, int tag, MPI_Comm comm, MPI_Status* status) {
  static const Names names{pf::name_id("MPI_Recv"), pf::name_id("recv")};
  MPI_Status own;
  MPI_Status* st = status_for(status, own);
  std::int64_t received = 0;
  // The source's while it waits (the flight recorder's), then the sender's, from the status (the
  // source may be MPI_ANY_SOURCE: none until then).
  std::uint32_t from = link_from(comm, source);
  return record(
      names, 0, comm, Kind::kUnnumbered,
      [&] {
        const int rc = PMPI_Recv(buf, count, type, source, tag, comm, st);
        if (rc == MPI_SUCCESS) received = received_bytes(st, type), from = link_from(comm, st->MPI_SOURCE);
        return rc;
      },
      &received, &from);
}

// MPI_Sendrecv and MPI_Sendrecv_replace: a send and a receive, each with its peer (sendrecv()).
int MPI_Sendrecv(const void* sbuf, int scount, MPI_Datatype stype, int dest, int stag, void* rbuf, int rcount,
                 MPI_Datatype rtype, int source, int rtag, MPI_Comm comm, MPI_Status* status) {
  static const Names names{pf::name_id("MPI_Sendrecv"), pf::name_id("send")};
  MPI_Status own;
  MPI_Status* st = status_for(status, own);
  return sendrecv(names, bytes_of(scount, stype), dest, source, rtype, comm, st, [&] {
    return PMPI_Sendrecv(sbuf, scount, stype, dest, stag, rbuf, rcount, rtype, source, rtag, comm, st);
  });
}

int MPI_Sendrecv_replace(void* buf, int count, MPI_Datatype type, int dest, int stag, int source, int rtag,
                         MPI_Comm comm, MPI_Status* status) {
  static const Names names{pf::name_id("MPI_Sendrecv_replace"), pf::name_id("send")};
  MPI_Status own;
  MPI_Status* st = status_for(status, own);
  return sendrecv(names, bytes_of(count, type), dest, source, type, comm, st,
                  [&] { return PMPI_Sendrecv_replace(buf, count, type, dest, stag, source, rtag, comm, st); });
}

// --- posts

int MPI_Isend(const void* buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm, MPI_Request* request) {
  static const Names names{pf::name_id("MPI_Isend"), pf::name_id("isend")};
  const std::uint32_t to = link_to(comm, dest);
  return record(
      names, bytes_of(count, type), comm, Kind::kUnnumbered,
      [&] { return PMPI_Isend(buf, count, type, dest, tag, comm, request); }, nullptr, &to);
}

int MPI_Issend(const void* buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm, MPI_Request* request) {
  static const Names names{pf::name_id("MPI_Issend"), pf::name_id("isend")};
  const std::uint32_t to = link_to(comm, dest);
  return record(
      names, bytes_of(count, type), comm, Kind::kUnnumbered,
      [&] { return PMPI_Issend(buf, count, type, dest, tag, comm, request); }, nullptr, &to);
}

int MPI_Ibsend(const void* buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm, MPI_Request* request) {
  static const Names names{pf::name_id("MPI_Ibsend"), pf::name_id("isend")};
  const std::uint32_t to = link_to(comm, dest);
  return record(
      names, bytes_of(count, type), comm, Kind::kUnnumbered,
      [&] { return PMPI_Ibsend(buf, count, type, dest, tag, comm, request); }, nullptr, &to);
}

int MPI_Irsend(const void* buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm, MPI_Request* request) {
  static const Names names{pf::name_id("MPI_Irsend"), pf::name_id("isend")};
  const std::uint32_t to = link_to(comm, dest);
  return record(
      names, bytes_of(count, type), comm, Kind::kUnnumbered,
      [&] { return PMPI_Irsend(buf, count, type, dest, tag, comm, request); }, nullptr, &to);
}

// A posted receive's bytes are its buffer's: what arrives is known only at its wait.
int MPI_Irecv(void* buf, int count, MPI_Datatype type, int source, int tag, MPI_Comm comm, MPI_Request* request) {
  static const Names names{pf::name_id("MPI_Irecv"), pf::name_id("irecv")};
  const std::uint32_t from = link_from(comm, source);  // 0 for MPI_ANY_SOURCE
  return record(
      names, bytes_of(count, type), comm, Kind::kUnnumbered,
      [&] { return PMPI_Irecv(buf, count, type, source, tag, comm, request); }, nullptr, &from);
}

// Persistent requests (MPI_Send_init, MPI_Recv_init, ... are local and not wrapped): starting
// one is a post of 0 bytes, as the request's arguments are not kept.
int MPI_Start(MPI_Request* request) {
  static const Names names{pf::name_id("MPI_Start"), pf::name_id("start")};
  return record(names, 0, MPI_COMM_NULL, Kind::kUnnumbered, [&] { return PMPI_Start(request); });
}

int MPI_Startall(int count, MPI_Request requests[]) {
  static const Names names{pf::name_id("MPI_Startall"), pf::name_id("start")};
  return record(names, 0, MPI_COMM_NULL, Kind::kUnnumbered, [&] { return PMPI_Startall(count, requests); });
}

// --- probes and matched receives: a probe moves no data (0 bytes); MPI_Iprobe and MPI_Improbe
// poll as MPI_Test does

int MPI_Probe(int source, int tag, MPI_Comm comm, MPI_Status* status) {
  static const Names names{pf::name_id("MPI_Probe"), pf::name_id("probe")};
  return record(names, 0, comm, Kind::kUnnumbered, [&] { return PMPI_Probe(source, tag, comm, status); });
}

int MPI_Iprobe(int source, int tag, MPI_Comm comm, int* flag, MPI_Status* status) {
  static const Names names{pf::name_id("MPI_Iprobe"), pf::name_id("probe"), true};
  return record(names, 0, comm, Kind::kUnnumbered, [&] { return PMPI_Iprobe(source, tag, comm, flag, status); });
}

int MPI_Mprobe(int source, int tag, MPI_Comm comm, MPI_Message* message, MPI_Status* status) {
  static const Names names{pf::name_id("MPI_Mprobe"), pf::name_id("probe")};
  return record(names, 0, comm, Kind::kUnnumbered, [&] { return PMPI_Mprobe(source, tag, comm, message, status); });
}

int MPI_Improbe(int source, int tag, MPI_Comm comm, int* flag, MPI_Message* message, MPI_Status* status) {
  static const Names names{pf::name_id("MPI_Improbe"), pf::name_id("probe"), true};
  return record(names, 0, comm, Kind::kUnnumbered,
                [&] { return PMPI_Improbe(source, tag, comm, flag, message, status); });
}

int MPI_Mrecv(void* buf, int count, MPI_Datatype type, MPI_Message* message, MPI_Status* status) {
  static const Names names{pf::name_id("MPI_Mrecv"), pf::name_id("recv")};
  MPI_Status own;
  MPI_Status* st = status_for(status, own);
  std::int64_t received = 0;
  return record(
      names, 0, MPI_COMM_NULL, Kind::kUnnumbered,
      [&] {
        const int rc = PMPI_Mrecv(buf, count, type, message, st);
        if (rc == MPI_SUCCESS) received = received_bytes(st, type);
        return rc;
      },
      &received);
}

int MPI_Imrecv(void* buf, int count, MPI_Datatype type, MPI_Message* message, MPI_Request* request) {
  static const Names names{pf::name_id("MPI_Imrecv"), pf::name_id("irecv")};
  return record(names, bytes_of(count, type), MPI_COMM_NULL, Kind::kUnnumbered,
                [&] { return PMPI_Imrecv(buf, count, type, message, request); });
}

// --- completion: "wait" and "test" events span the call; the flight recorder marks the
// nonblocking collectives' requests among theirs (RequestWatch)

int MPI_Wait(MPI_Request* request, MPI_Status* status) {
  static const Names names{pf::name_id("MPI_Wait"), pf::name_id("wait")};
  return completion(names, request, 1, [&] { return PMPI_Wait(request, status); });
}

int MPI_Waitall(int count, MPI_Request requests[], MPI_Status statuses[]) {
  static const Names names{pf::name_id("MPI_Waitall"), pf::name_id("wait")};
  return completion(names, requests, count, [&] { return PMPI_Waitall(count, requests, statuses); });
}

int MPI_Waitany(int count, MPI_Request requests[], int* index, MPI_Status* status) {
  static const Names names{pf::name_id("MPI_Waitany"), pf::name_id("wait")};
  return completion(names, requests, count, [&] { return PMPI_Waitany(count, requests, index, status); });
}

int MPI_Waitsome(int incount, MPI_Request requests[], int* outcount, int indices[], MPI_Status statuses[]) {
  static const Names names{pf::name_id("MPI_Waitsome"), pf::name_id("wait")};
  return completion(names, requests, incount,
                    [&] { return PMPI_Waitsome(incount, requests, outcount, indices, statuses); });
}

int MPI_Test(MPI_Request* request, int* flag, MPI_Status* status) {
  static const Names names{pf::name_id("MPI_Test"), pf::name_id("test"), true};
  return completion(names, request, 1, [&] { return PMPI_Test(request, flag, status); });
}

int MPI_Testall(int count, MPI_Request requests[], int* flag, MPI_Status statuses[]) {
  static const Names names{pf::name_id("MPI_Testall"), pf::name_id("test"), true};
  return completion(names, requests, count, [&] { return PMPI_Testall(count, requests, flag, statuses); });
}

int MPI_Testany(int count, MPI_Request requests[], int* index, int* flag, MPI_Status* status) {
  static const Names names{pf::name_id("MPI_Testany"), pf::name_id("test"), true};
  return completion(names, requests, count, [&] { return PMPI_Testany(count, requests, index, flag, status); });
}

int MPI_Testsome(int incount, MPI_Request requests[], int* outcount, int indices[], MPI_Status statuses[]) {
  static const Names names{pf::name_id("MPI_Testsome"), pf::name_id("test"), true};
  return completion(names, requests, incount,
                    [&] { return PMPI_Testsome(incount, requests, outcount, indices, statuses); });
}

// Not an event (it waits for nothing); a nonblocking collective's request freed is no longer
// followed, and its record makes no claim on it.
int MPI_Request_free(MPI_Request* request) {
  const commscope::mpiprof::RequestWatch watch(request, 1);
  const int rc = PMPI_Request_free(request);
  watch.after(request, true);
  return rc;
}

}  // extern "C"
