#include "communicators.hpp"

#include <atomic>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "commscope/formats/events.hpp"
#include "commscope/profiler/flight.hpp"
#include "commscope/profiler/recorder.hpp"
#include "commscope/profiler/session.hpp"
#include "commscope/profiler/vocabulary.hpp"

namespace commscope::mpiprof {
namespace {

namespace pf = commscope::profiler;
namespace flight = commscope::profiler::flight;

struct CommunicatorInfo {
  std::uint32_t label = 0;  // "mpi[0,2]", "mpi[0,2]#1", "mpi[0,1|2,3]"; 0 for MPI_COMM_WORLD's (the session's)
  std::atomic<std::int64_t> count{0};
  int world_rank = -1;     // this rank's
  std::vector<int> peers;  // the world ranks a message's rank names (an intercommunicator: its remote group)
  std::mutex links_mutex;  // threads may send on one communicator (MPI_THREAD_MULTIPLE)
  std::vector<std::uint32_t> to, from;  // per peer: the label's id, 0 until first used
  int flight_ring = -1;                 // its ring in the flight recorder (flight.hpp), -1: none
};

// Guards the counts below and the making of every communicator's info: two threads making the
// first call on one communicator at once (MPI_THREAD_MULTIPLE) must not both make it, or the
// second's MPI_Comm_set_attr has the delete callback free the first's while that thread reads
// it, and the communicator takes two numbers.
std::mutex g_identity;
// By a label without its number ("mpi[0,2]"): how many communicators this rank has seen created
// with those members.
std::map<std::string, int> g_created;

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

CommunicatorInfo* attribute(MPI_Comm comm, int key) {
  void* value = nullptr;
  int found = 0;
  if (PMPI_Comm_get_attr(comm, key, &value, &found) == MPI_SUCCESS && found)
    return static_cast<CommunicatorInfo*>(value);
  return nullptr;
}

// The world ranks of comm's members (its remote group's when `remote`), by their rank there.
std::vector<int> members(MPI_Comm comm, bool remote) {
  if (!remote) return pf::world_ranks(comm);  // its MPI calls are not wrapped
  MPI_Group group = MPI_GROUP_NULL;
  if (PMPI_Comm_remote_group(comm, &group) != MPI_SUCCESS) return {};
  std::vector<int> out = pf::world_ranks(group);
  PMPI_Group_free(&group);
  return out;
}

bool is_world(MPI_Comm comm) {
  int same = MPI_UNEQUAL;
  return comm == MPI_COMM_WORLD || (PMPI_Comm_compare(comm, MPI_COMM_WORLD, &same) == MPI_SUCCESS && same == MPI_IDENT);
}

// comm's info, made and attached now, with the next number of its members. Under g_identity.
CommunicatorInfo* make_info(MPI_Comm comm, int key) {
  auto* info = new CommunicatorInfo;
  int inter = 0;
  PMPI_Comm_test_inter(comm, &inter);
  PMPI_Comm_rank(MPI_COMM_WORLD, &info->world_rank);
  std::vector<int> local = members(comm, false);
  info->peers = inter ? members(comm, true) : local;
  // MPI_COMM_WORLD's collectives are the session's own (label 0); its messages need only peers.
  if (!is_world(comm)) {
    const std::string first =
        inter ? pf::intercommunicator_label("mpi", local, info->peers) : pf::communicator_label("mpi", local);
    const int k = g_created[first]++;
    info->label = pf::name_id(k == 0  ? first
                              : inter ? pf::intercommunicator_label("mpi", local, info->peers, k)
                                      : pf::communicator_label("mpi", local, k));
  }
  if (!is_world(comm) && flight::on()) {
    std::vector<int> all = local;
    if (inter) all.insert(all.end(), info->peers.begin(), info->peers.end());
    info->flight_ring = flight::open_ring(info->label, std::move(all));
  }
  info->to.assign(info->peers.size(), 0);
  info->from.assign(info->peers.size(), 0);
  if (PMPI_Comm_set_attr(comm, key, info) != MPI_SUCCESS) {
    delete info;
    return nullptr;
  }
  return info;
}

CommunicatorInfo* info_of(MPI_Comm comm) {
  const int key = keyval();
  if (key == MPI_KEYVAL_INVALID) return nullptr;
  if (CommunicatorInfo* info = attribute(comm, key)) return info;
  std::lock_guard lock(g_identity);
  if (CommunicatorInfo* info = attribute(comm, key)) return info;  // another thread made it meanwhile
  return make_info(comm, key);
}

std::uint32_t link(MPI_Comm comm, int peer, bool to) {
  // MPI_PROC_NULL and MPI_ANY_SOURCE are negative; nothing is recorded outside the session.
  if (comm == MPI_COMM_NULL || peer < 0 || !pf::recording()) return 0;
  CommunicatorInfo* info = info_of(comm);
  if (info == nullptr || static_cast<std::size_t>(peer) >= info->peers.size()) return 0;
  const auto i = static_cast<std::size_t>(peer);
  if (info->peers[i] < 0) return 0;  // a process outside MPI_COMM_WORLD (MPI_UNDEFINED)
  std::lock_guard lock(info->links_mutex);
  std::uint32_t& id = to ? info->to[i] : info->from[i];
  if (id == 0)
    id = pf::name_id(to ? pf::link_label("mpi", info->world_rank, info->peers[i])
                        : pf::link_label("mpi", info->peers[i], info->world_rank));
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
  return {info->label, info->count.fetch_add(1, std::memory_order_relaxed), info->flight_ring};
}

int flight_ring(MPI_Comm comm) {
  if (comm == MPI_COMM_NULL || comm == MPI_COMM_WORLD) return 0;
  CommunicatorInfo* info = info_of(comm);
  return info == nullptr ? -1 : info->flight_ring;
}

void created(MPI_Comm comm) {
  if (comm != MPI_COMM_NULL) (void)info_of(comm);
}

}  // namespace commscope::mpiprof
