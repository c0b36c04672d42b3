#include "communicators.hpp"

#include <atomic>
#include <mutex>
#include <vector>

#include "commscope/profiler/events.hpp"
#include "commscope/profiler/recorder.hpp"
#include "commscope/profiler/session.hpp"

namespace commscope::mpiprof {
namespace {

namespace pf = commscope::profiler;

struct CommunicatorInfo {
  std::uint32_t label = 0;
  std::atomic<std::int64_t> count{0};
  bool inter = false;
  int world_rank = -1;                  // this rank's
  std::vector<int> world;               // the members' world ranks, by their rank in the communicator
  std::mutex links_mutex;               // threads may send on one communicator (MPI_THREAD_MULTIPLE)
  std::vector<std::uint32_t> to, from;  // per member: the label's id, 0 until first used
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
  info->inter = inter != 0;
  PMPI_Comm_rank(MPI_COMM_WORLD, &info->world_rank);
  if (!inter) {
    info->world = pf::world_ranks(comm);  // its MPI calls are not wrapped
    info->label = pf::name_id(pf::communicator_label("mpi", info->world));
    info->to.assign(info->world.size(), 0);
    info->from.assign(info->world.size(), 0);
  }
  if (PMPI_Comm_set_attr(comm, key, info) != MPI_SUCCESS) {
    delete info;
    return nullptr;
  }
  return info;
}

std::uint32_t link(MPI_Comm comm, int peer, bool to) {
  // MPI_PROC_NULL and MPI_ANY_SOURCE are negative; nothing is recorded outside the session.
  if (comm == MPI_COMM_NULL || peer < 0 || !pf::recording()) return 0;
  CommunicatorInfo* info = info_of(comm);
  if (info == nullptr || info->inter || static_cast<std::size_t>(peer) >= info->world.size()) return 0;
  const auto i = static_cast<std::size_t>(peer);
  std::lock_guard lock(info->links_mutex);
  std::uint32_t& id = to ? info->to[i] : info->from[i];
  if (id == 0)
    id = pf::name_id(to ? pf::link_label("mpi", info->world_rank, info->world[i])
                        : pf::link_label("mpi", info->world[i], info->world_rank));
  return id;
}

}  // namespace

std::uint32_t link_to(MPI_Comm comm, int peer) {
  return link(comm, peer, true);
}

std::uint32_t link_from(MPI_Comm comm, int peer) {
  return link(comm, peer, false);
}

CollectiveInstance next_collective(MPI_Comm comm) {
  CommunicatorInfo* info = info_of(comm);
  if (info == nullptr || info->label == 0) return {};
  return {info->label, info->count.fetch_add(1, std::memory_order_relaxed)};
}

}  // namespace commscope::mpiprof
