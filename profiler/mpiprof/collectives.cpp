// libcommscope-mpiprof.so's collective wrappers, each numbered on its communicator
// (Kind::kCollective: MPI_COMM_WORLD's as the session's, the others' under their labels,
// communicators.hpp). Nonblocking ones are their post, numbered in the same count as the
// blocking ones (MPI orders both alike on every member); their wait is in MPI_Wait* / MPI_Test*
// (point_to_point.cpp), where the flight recorder follows their requests (set_request). Bytes:
// bytes.hpp.
#include <mpi.h>

#include "bytes.hpp"
#include "record.hpp"

namespace pf = commscope::profiler;
using commscope::mpiprof::Kind;
using commscope::mpiprof::Names;
using commscope::mpiprof::record;
using namespace commscope::mpiprof;  // the byte rules

extern "C" {

// --- blocking

int MPI_Barrier(MPI_Comm comm) {
  static const Names names{pf::name_id("MPI_Barrier"), pf::name_id("barrier")};
  return record(names, 0, comm, Kind::kCollective, [&] { return PMPI_Barrier(comm); });
}

int MPI_Bcast(void* buf, int count, MPI_Datatype type, int root, MPI_Comm comm) {
  static const Names names{pf::name_id("MPI_Bcast"), pf::name_id("broadcast")};
  set_detail(type, MPI_OP_NULL, root);
  return record(names, bytes_of(count, type), comm, Kind::kCollective,
                [&] { return PMPI_Bcast(buf, count, type, root, comm); });
}

int MPI_Allreduce(const void* send, void* recv, int count, MPI_Datatype type, MPI_Op op, MPI_Comm comm) {
  static const Names names{pf::name_id("MPI_Allreduce"), pf::name_id("allreduce")};
  set_detail(type, op);
  return record(names, bytes_of(count, type), comm, Kind::kCollective,
                [&] { return PMPI_Allreduce(send, recv, count, type, op, comm); });
}

int MPI_Reduce(const void* send, void* recv, int count, MPI_Datatype type, MPI_Op op, int root, MPI_Comm comm) {
  static const Names names{pf::name_id("MPI_Reduce"), pf::name_id("reduce")};
  set_detail(type, op, root);
  return record(names, bytes_of(count, type), comm, Kind::kCollective,
                [&] { return PMPI_Reduce(send, recv, count, type, op, root, comm); });
}

int MPI_Scan(const void* send, void* recv, int count, MPI_Datatype type, MPI_Op op, MPI_Comm comm) {
  static const Names names{pf::name_id("MPI_Scan"), pf::name_id("scan")};
  set_detail(type, op);
  return record(names, bytes_of(count, type), comm, Kind::kCollective,
                [&] { return PMPI_Scan(send, recv, count, type, op, comm); });
}

int MPI_Exscan(const void* send, void* recv, int count, MPI_Datatype type, MPI_Op op, MPI_Comm comm) {
  static const Names names{pf::name_id("MPI_Exscan"), pf::name_id("exscan")};
  set_detail(type, op);
  return record(names, bytes_of(count, type), comm, Kind::kCollective,
                [&] { return PMPI_Exscan(send, recv, count, type, op, comm); });
}

int MPI_Allgather(const void* send, int scount, MPI_Datatype stype, void* recv, int rcount, MPI_Datatype rtype,
                  MPI_Comm comm) {
  static const Names names{pf::name_id("MPI_Allgather"), pf::name_id("allgather")};
  set_detail(rtype);
  return record(names, bytes_of(rcount, rtype) * peers(comm), comm, Kind::kCollective,
                [&] { return PMPI_Allgather(send, scount, stype, recv, rcount, rtype, comm); });
}

int MPI_Allgatherv(const void* send, int scount, MPI_Datatype stype, void* recv, const int rcounts[],
                   const int displs[], MPI_Datatype rtype, MPI_Comm comm) {
  static const Names names{pf::name_id("MPI_Allgatherv"), pf::name_id("allgatherv")};
  set_detail(rtype);
  return record(names, sum_bytes(rcounts, rtype, peers(comm)), comm, Kind::kCollective,
                [&] { return PMPI_Allgatherv(send, scount, stype, recv, rcounts, displs, rtype, comm); });
}

int MPI_Gather(const void* send, int scount, MPI_Datatype stype, void* recv, int rcount, MPI_Datatype rtype, int root,
               MPI_Comm comm) {
  static const Names names{pf::name_id("MPI_Gather"), pf::name_id("gather")};
  set_detail(rtype, MPI_OP_NULL, root);
  return record(names, gather_bytes(scount, stype, rcount, rtype, root, comm), comm, Kind::kCollective,
                [&] { return PMPI_Gather(send, scount, stype, recv, rcount, rtype, root, comm); });
}

int MPI_Gatherv(const void* send, int scount, MPI_Datatype stype, void* recv, const int rcounts[], const int displs[],
                MPI_Datatype rtype, int root, MPI_Comm comm) {
  static const Names names{pf::name_id("MPI_Gatherv"), pf::name_id("gatherv")};
  set_detail(rtype, MPI_OP_NULL, root);
  return record(names, gatherv_bytes(scount, stype, rcounts, rtype, root, comm), comm, Kind::kCollective,
                [&] { return PMPI_Gatherv(send, scount, stype, recv, rcounts, displs, rtype, root, comm); });
}

int MPI_Scatter(const void* send, int scount, MPI_Datatype stype, void* recv, int rcount, MPI_Datatype rtype, int root,
                MPI_Comm comm) {
  static const Names names{pf::name_id("MPI_Scatter"), pf::name_id("scatter")};
  set_detail(rtype, MPI_OP_NULL, root);
  return record(names, scatter_bytes(scount, stype, rcount, rtype, root, comm), comm, Kind::kCollective,
                [&] { return PMPI_Scatter(send, scount, stype, recv, rcount, rtype, root, comm); });
}

int MPI_Scatterv(const void* send, const int scounts[], const int displs[], MPI_Datatype stype, void* recv, int rcount,
                 MPI_Datatype rtype, int root, MPI_Comm comm) {
  static const Names names{pf::name_id("MPI_Scatterv"), pf::name_id("scatterv")};
  set_detail(rtype, MPI_OP_NULL, root);
  return record(names, scatterv_bytes(scounts, stype, rcount, rtype, root, comm), comm, Kind::kCollective,
                [&] { return PMPI_Scatterv(send, scounts, displs, stype, recv, rcount, rtype, root, comm); });
}

int MPI_Alltoall(const void* send, int scount, MPI_Datatype stype, void* recv, int rcount, MPI_Datatype rtype,
                 MPI_Comm comm) {
  static const Names names{pf::name_id("MPI_Alltoall"), pf::name_id("alltoall")};
  set_detail(rtype);
  return record(names, alltoall_bytes(rcount, rtype, comm), comm, Kind::kCollective,
                [&] { return PMPI_Alltoall(send, scount, stype, recv, rcount, rtype, comm); });
}

int MPI_Alltoallv(const void* send, const int scounts[], const int sdispls[], MPI_Datatype stype, void* recv,
                  const int rcounts[], const int rdispls[], MPI_Datatype rtype, MPI_Comm comm) {
  static const Names names{pf::name_id("MPI_Alltoallv"), pf::name_id("alltoallv")};
  set_detail(rtype);
  return record(names, alltoallv_bytes(send, scounts, stype, rcounts, rtype, comm), comm, Kind::kCollective,
                [&] { return PMPI_Alltoallv(send, scounts, sdispls, stype, recv, rcounts, rdispls, rtype, comm); });
}

int MPI_Alltoallw(const void* send, const int scounts[], const int sdispls[], const MPI_Datatype stypes[], void* recv,
                  const int rcounts[], const int rdispls[], const MPI_Datatype rtypes[], MPI_Comm comm) {
  static const Names names{pf::name_id("MPI_Alltoallw"), pf::name_id("alltoallw")};
  return record(names, alltoallw_bytes(send, scounts, stypes, rcounts, rtypes, comm), comm, Kind::kCollective,
                [&] { return PMPI_Alltoallw(send, scounts, sdispls, stypes, recv, rcounts, rdispls, rtypes, comm); });
}

int MPI_Reduce_scatter_block(const void* send, void* recv, int count, MPI_Datatype type, MPI_Op op, MPI_Comm comm) {
  static const Names names{pf::name_id("MPI_Reduce_scatter_block"), pf::name_id("reducescatter")};
  set_detail(type, op);
  return record(names, bytes_of(count, type) * group_size(comm), comm, Kind::kCollective,
                [&] { return PMPI_Reduce_scatter_block(send, recv, count, type, op, comm); });
}

int MPI_Reduce_scatter(const void* send, void* recv, const int counts[], MPI_Datatype type, MPI_Op op, MPI_Comm comm) {
  static const Names names{pf::name_id("MPI_Reduce_scatter"), pf::name_id("reducescatter")};
  set_detail(type, op);
  return record(names, sum_bytes(counts, type, group_size(comm)), comm, Kind::kCollective,
                [&] { return PMPI_Reduce_scatter(send, recv, counts, type, op, comm); });
}

// --- nonblocking: the post, with its blocking form's bytes, numbered as the blocking ones

int MPI_Ibarrier(MPI_Comm comm, MPI_Request* request) {
  static const Names names{pf::name_id("MPI_Ibarrier"), pf::name_id("ibarrier")};
  set_request(request);
  return record(names, 0, comm, Kind::kCollective, [&] { return PMPI_Ibarrier(comm, request); });
}

int MPI_Ibcast(void* buf, int count, MPI_Datatype type, int root, MPI_Comm comm, MPI_Request* request) {
  static const Names names{pf::name_id("MPI_Ibcast"), pf::name_id("ibroadcast")};
  set_detail(type, MPI_OP_NULL, root);
  set_request(request);
  return record(names, bytes_of(count, type), comm, Kind::kCollective,
                [&] { return PMPI_Ibcast(buf, count, type, root, comm, request); });
}

int MPI_Iallreduce(const void* send, void* recv, int count, MPI_Datatype type, MPI_Op op, MPI_Comm comm,
                   MPI_Request* request) {
  static const Names names{pf::name_id("MPI_Iallreduce"), pf::name_id("iallreduce")};
  set_detail(type, op);
  set_request(request);
  return record(names, bytes_of(count, type), comm, Kind::kCollective,
                [&] { return PMPI_Iallreduce(send, recv, count, type, op, comm, request); });
}

int MPI_Ireduce(const void* send, void* recv, int count, MPI_Datatype type, MPI_Op op, int root, MPI_Comm comm,
                MPI_Request* request) {
  static const Names names{pf::name_id("MPI_Ireduce"), pf::name_id("ireduce")};
  set_detail(type, op, root);
  set_request(request);
  return record(names, bytes_of(count, type), comm, Kind::kCollective,
                [&] { return PMPI_Ireduce(send, recv, count, type, op, root, comm, request); });
}

int MPI_Iscan(const void* send, void* recv, int count, MPI_Datatype type, MPI_Op op, MPI_Comm comm,
              MPI_Request* request) {
  static const Names names{pf::name_id("MPI_Iscan"), pf::name_id("iscan")};
  set_detail(type, op);
  set_request(request);
  return record(names, bytes_of(count, type), comm, Kind::kCollective,
                [&] { return PMPI_Iscan(send, recv, count, type, op, comm, request); });
}

int MPI_Iexscan(const void* send, void* recv, int count, MPI_Datatype type, MPI_Op op, MPI_Comm comm,
                MPI_Request* request) {
  static const Names names{pf::name_id("MPI_Iexscan"), pf::name_id("iexscan")};
  set_detail(type, op);
  set_request(request);
  return record(names, bytes_of(count, type), comm, Kind::kCollective,
                [&] { return PMPI_Iexscan(send, recv, count, type, op, comm, request); });
}

int MPI_Iallgather(const void* send, int scount, MPI_Datatype stype, void* recv, int rcount, MPI_Datatype rtype,
                   MPI_Comm comm, MPI_Request* request) {
  static const Names names{pf::name_id("MPI_Iallgather"), pf::name_id("iallgather")};
  set_detail(rtype);
  set_request(request);
  return record(names, bytes_of(rcount, rtype) * peers(comm), comm, Kind::kCollective,
                [&] { return PMPI_Iallgather(send, scount, stype, recv, rcount, rtype, comm, request); });
}

int MPI_Iallgatherv(const void* send, int scount, MPI_Datatype stype, void* recv, const int rcounts[],
                    const int displs[], MPI_Datatype rtype, MPI_Comm comm, MPI_Request* request) {
  static const Names names{pf::name_id("MPI_Iallgatherv"), pf::name_id("iallgatherv")};
  set_detail(rtype);
  set_request(request);
  return record(names, sum_bytes(rcounts, rtype, peers(comm)), comm, Kind::kCollective,
                [&] { return PMPI_Iallgatherv(send, scount, stype, recv, rcounts, displs, rtype, comm, request); });
}

int MPI_Igather(const void* send, int scount, MPI_Datatype stype, void* recv, int rcount, MPI_Datatype rtype, int root,
                MPI_Comm comm, MPI_Request* request) {
  static const Names names{pf::name_id("MPI_Igather"), pf::name_id("igather")};
  set_detail(rtype, MPI_OP_NULL, root);
  set_request(request);
  return record(names, gather_bytes(scount, stype, rcount, rtype, root, comm), comm, Kind::kCollective,
                [&] { return PMPI_Igather(send, scount, stype, recv, rcount, rtype, root, comm, request); });
}

int MPI_Igatherv(const void* send, int scount, MPI_Datatype stype, void* recv, const int rcounts[], const int displs[],
                 MPI_Datatype rtype, int root, MPI_Comm comm, MPI_Request* request) {
  static const Names names{pf::name_id("MPI_Igatherv"), pf::name_id("igatherv")};
  set_detail(rtype, MPI_OP_NULL, root);
  set_request(request);
  return record(names, gatherv_bytes(scount, stype, rcounts, rtype, root, comm), comm, Kind::kCollective,
                [&] { return PMPI_Igatherv(send, scount, stype, recv, rcounts, displs, rtype, root, comm, request); });
}

int MPI_Iscatter(const void* send, int scount, MPI_Datatype stype, void* recv, int rcount, MPI_Datatype rtype, int root,
                 MPI_Comm comm, MPI_Request* request) {
  static const Names names{pf::name_id("MPI_Iscatter"), pf::name_id("iscatter")};
  set_detail(rtype, MPI_OP_NULL, root);
  set_request(request);
  return record(names, scatter_bytes(scount, stype, rcount, rtype, root, comm), comm, Kind::kCollective,
                [&] { return PMPI_Iscatter(send, scount, stype, recv, rcount, rtype, root, comm, request); });
}

int MPI_Iscatterv(const void* send, const int scounts[], const int displs[], MPI_Datatype stype, void* recv, int rcount,
                  MPI_Datatype rtype, int root, MPI_Comm comm, MPI_Request* request) {
  static const Names names{pf::name_id("MPI_Iscatterv"), pf::name_id("iscatterv")};
  set_detail(rtype, MPI_OP_NULL, root);
  set_request(request);
  return record(names, scatterv_bytes(scounts, stype, rcount, rtype, root, comm), comm, Kind::kCollective,
                [&] { return PMPI_Iscatterv(send, scounts, displs, stype, recv, rcount, rtype, root, comm, request); });
}

int MPI_Ialltoall(const void* send, int scount, MPI_Datatype stype, void* recv, int rcount, MPI_Datatype rtype,
                  MPI_Comm comm, MPI_Request* request) {
  static const Names names{pf::name_id("MPI_Ialltoall"), pf::name_id("ialltoall")};
  set_detail(rtype);
  set_request(request);
  return record(names, alltoall_bytes(rcount, rtype, comm), comm, Kind::kCollective,
                [&] { return PMPI_Ialltoall(send, scount, stype, recv, rcount, rtype, comm, request); });
}

int MPI_Ialltoallv(const void* send, const int scounts[], const int sdispls[], MPI_Datatype stype, void* recv,
                   const int rcounts[], const int rdispls[], MPI_Datatype rtype, MPI_Comm comm, MPI_Request* request) {
  static const Names names{pf::name_id("MPI_Ialltoallv"), pf::name_id("ialltoallv")};
  set_detail(rtype);
  set_request(request);
  return record(names, alltoallv_bytes(send, scounts, stype, rcounts, rtype, comm), comm, Kind::kCollective, [&] {
    return PMPI_Ialltoallv(send, scounts, sdispls, stype, recv, rcounts, rdispls, rtype, comm, request);
  });
}

int MPI_Ialltoallw(const void* send, const int scounts[], const int sdispls[], const MPI_Datatype stypes[], void* recv,
                   const int rcounts[], const int rdispls[], const MPI_Datatype rtypes[], MPI_Comm comm,
                   MPI_Request* request) {
  static const Names names{pf::name_id("MPI_Ialltoallw"), pf::name_id("ialltoallw")};
  set_request(request);
  return record(names, alltoallw_bytes(send, scounts, stypes, rcounts, rtypes, comm), comm, Kind::kCollective, [&] {
    return PMPI_Ialltoallw(send, scounts, sdispls, stypes, recv, rcounts, rdispls, rtypes, comm, request);
  });
}

int MPI_Ireduce_scatter_block(const void* send, void* recv, int count, MPI_Datatype type, MPI_Op op, MPI_Comm comm,
                              MPI_Request* request) {
  static const Names names{pf::name_id("MPI_Ireduce_scatter_block"), pf::name_id("ireducescatter")};
  set_detail(type, op);
  set_request(request);
  return record(names, bytes_of(count, type) * group_size(comm), comm, Kind::kCollective,
                [&] { return PMPI_Ireduce_scatter_block(send, recv, count, type, op, comm, request); });
}

int MPI_Ireduce_scatter(const void* send, void* recv, const int counts[], MPI_Datatype type, MPI_Op op, MPI_Comm comm,
                        MPI_Request* request) {
  static const Names names{pf::name_id("MPI_Ireduce_scatter"), pf::name_id("ireducescatter")};
  set_detail(type, op);
  set_request(request);
  return record(names, sum_bytes(counts, type, group_size(comm)), comm, Kind::kCollective,
                [&] { return PMPI_Ireduce_scatter(send, recv, counts, type, op, comm, request); });
}

}  // extern "C"
