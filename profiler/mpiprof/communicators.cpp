#include "communicators.hpp"

#include <atomic>
#include <mutex>
#include <numeric>
#include <vector>

#include "commscope/profiler/events.hpp"
#include "commscope/profiler/recorder.hpp"

namespace commscope::mpiprof {
namespace {

namespace pf = commscope::profiler;

struct CommunicatorInfo {
  std::uint32_t label = 0;
  std::atomic<std::int64_t> count{0};
};

int delete_info(MPI_Comm, int, void* attribute, void*) {
  delete static_cast<CommunicatorInfo*>(attribute);
  return MPI_SUCCESS;
}

int keyval() {
  static int key = MPI_KEYVAL_INVALID;
  static std::once_flag once;
  std::call_once(once, [] { PMPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, delete_info, &key, nullptr); });
  return key;
}

// The members' world ranks, by their rank in `comm`.
std::vector<int> world_ranks_of(MPI_Comm comm) {
  MPI_Group group = MPI_GROUP_NULL, world = MPI_GROUP_NULL;
  PMPI_Comm_group(comm, &group);
  PMPI_Comm_group(MPI_COMM_WORLD, &world);
  int n = 0;
  PMPI_Group_size(group, &n);
  std::vector<int> mine(static_cast<std::size_t>(n)), theirs(static_cast<std::size_t>(n));
  std::iota(mine.begin(), mine.end(), 0);
  PMPI_Group_translate_ranks(group, n, mine.data(), world, theirs.data());
  PMPI_Group_free(&group);
  PMPI_Group_free(&world);
  return theirs;
}

CommunicatorInfo* info_of(MPI_Comm comm) {
  const int key = keyval();
  if (key == MPI_KEYVAL_INVALID) return nullptr;
  void* value = nullptr;
  int found = 0;
  if (PMPI_Comm_get_attr(comm, key, &value, &found) == MPI_SUCCESS && found)
    return static_cast<CommunicatorInfo*>(value);
  auto* info = new CommunicatorInfo;
  int inter = 0;
  PMPI_Comm_test_inter(comm, &inter);
  if (!inter) info->label = pf::name_id(pf::communicator_label("mpi", world_ranks_of(comm)));
  if (PMPI_Comm_set_attr(comm, key, info) != MPI_SUCCESS) {
    delete info;
    return nullptr;
  }
  return info;
}

}  // namespace

CollectiveInstance next_collective(MPI_Comm comm) {
  CommunicatorInfo* info = info_of(comm);
  if (info == nullptr || info->label == 0) return {};
  return {info->label, info->count.fetch_add(1, std::memory_order_relaxed)};
}

}  // namespace commscope::mpiprof
