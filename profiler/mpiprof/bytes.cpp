#include "bytes.hpp"

namespace commscope::mpiprof {

namespace {

// A rooted collective's part for this rank: the root, another rank, or nothing (MPI_PROC_NULL:
// a rank of the root's group on an intercommunicator other than the root).
enum class Role { kRoot, kOther, kNone };

Role role(int root, MPI_Comm comm) {
  if (root == MPI_ROOT) return Role::kRoot;
  if (root == MPI_PROC_NULL) return Role::kNone;
  int inter = 0, rank = -1;
  if (PMPI_Comm_test_inter(comm, &inter) == MPI_SUCCESS && inter) return Role::kOther;
  PMPI_Comm_rank(comm, &rank);
  return rank == root ? Role::kRoot : Role::kOther;
}

}  // namespace

std::int64_t bytes_of(int count, MPI_Datatype type) {
  int size = 0;
  if (count <= 0 || PMPI_Type_size(type, &size) != MPI_SUCCESS) return 0;
  return static_cast<std::int64_t>(count) * size;
}

int group_size(MPI_Comm comm) {
  int n = 1;
  PMPI_Comm_size(comm, &n);
  return n;
}

int peers(MPI_Comm comm) {
  int inter = 0, n = 1;
  if (PMPI_Comm_test_inter(comm, &inter) != MPI_SUCCESS || !inter) return group_size(comm);
  PMPI_Comm_remote_size(comm, &n);
  return n;
}

std::int64_t received_bytes(const MPI_Status* status, MPI_Datatype type) {
  int count = 0;
  if (PMPI_Get_count(status, type, &count) != MPI_SUCCESS || count == MPI_UNDEFINED) return 0;
  return bytes_of(count, type);
}

std::int64_t sum_bytes(const int counts[], MPI_Datatype type, int n) {
  std::int64_t total = 0;
  for (int i = 0; i < n; ++i) total += bytes_of(counts[i], type);
  return total;
}

std::int64_t gather_bytes(int scount, MPI_Datatype stype, int rcount, MPI_Datatype rtype, int root, MPI_Comm comm) {
  switch (role(root, comm)) {
    case Role::kRoot:
      return bytes_of(rcount, rtype) * peers(comm);
    case Role::kOther:
      return bytes_of(scount, stype) * group_size(comm);
    case Role::kNone:
      break;
  }
  return 0;
}

std::int64_t gatherv_bytes(int scount, MPI_Datatype stype, const int rcounts[], MPI_Datatype rtype, int root,
                           MPI_Comm comm) {
  switch (role(root, comm)) {
    case Role::kRoot:
      return sum_bytes(rcounts, rtype, peers(comm));
    case Role::kOther:
      return bytes_of(scount, stype);
    case Role::kNone:
      break;
  }
  return 0;
}

std::int64_t scatter_bytes(int scount, MPI_Datatype stype, int rcount, MPI_Datatype rtype, int root, MPI_Comm comm) {
  switch (role(root, comm)) {
    case Role::kRoot:
      return bytes_of(scount, stype) * peers(comm);
    case Role::kOther:
      return bytes_of(rcount, rtype) * group_size(comm);
    case Role::kNone:
      break;
  }
  return 0;
}

std::int64_t scatterv_bytes(const int scounts[], MPI_Datatype stype, int rcount, MPI_Datatype rtype, int root,
                            MPI_Comm comm) {
  switch (role(root, comm)) {
    case Role::kRoot:
      return sum_bytes(scounts, stype, peers(comm));
    case Role::kOther:
      return bytes_of(rcount, rtype);
    case Role::kNone:
      break;
  }
  return 0;
}

std::int64_t alltoall_bytes(int rcount, MPI_Datatype rtype, MPI_Comm comm) {
  return bytes_of(rcount, rtype) * peers(comm);
}

std::int64_t alltoallv_bytes(const void* send, const int scounts[], MPI_Datatype stype, const int rcounts[],
                             MPI_Datatype rtype, MPI_Comm comm) {
  return send == MPI_IN_PLACE ? sum_bytes(rcounts, rtype, peers(comm)) : sum_bytes(scounts, stype, peers(comm));
}

std::int64_t alltoallw_bytes(const void* send, const int scounts[], const MPI_Datatype stypes[], const int rcounts[],
                             const MPI_Datatype rtypes[], MPI_Comm comm) {
  const bool in_place = send == MPI_IN_PLACE;
  const int* counts = in_place ? rcounts : scounts;
  const MPI_Datatype* types = in_place ? rtypes : stypes;
  std::int64_t total = 0;
  for (int i = 0, n = peers(comm); i < n; ++i) total += bytes_of(counts[i], types[i]);
  return total;
}

}  // namespace commscope::mpiprof
