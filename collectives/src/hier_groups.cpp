#include "hier_groups.hpp"

#include <algorithm>
#include <string>

#include "commscope/collectives/error.hpp"

namespace commscope::detail {
namespace {

// Frees a communicator this file made once its transport has duplicated it (or on error).
struct CommGuard {
  MPI_Comm comm = MPI_COMM_NULL;
  CommGuard() = default;
  CommGuard(const CommGuard&) = delete;
  CommGuard& operator=(const CommGuard&) = delete;
  ~CommGuard() {
    int finalized = 0;
    MPI_Finalized(&finalized);
    if (!finalized && comm != MPI_COMM_NULL) MPI_Comm_free(&comm);
  }
};

}  // namespace

HierGroups::HierGroups(MpiTransport& parent, int test_nodes) : test_nodes_(std::max(0, test_nodes)) {
  const MPI_Comm comm = parent.comm();
  const int rank = parent.rank(), size = parent.size();
  // Key = rank: node ranks (local indices) follow communicator order. The communicators made
  // here inherit the parent's MPI_ERRORS_RETURN.
  CommGuard node;
  if (test_nodes_ > 0) {
    COMMSCOPE_MPI_CHECK(MPI_Comm_split(comm, rank % test_nodes_, rank, &node.comm));
  } else {
    COMMSCOPE_MPI_CHECK(MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &node.comm));
  }
  // Every rank learns every rank's node (named by its lowest rank), so that all of them derive
  // the same layout and take the same decisions without further communication.
  int leader = rank;
  COMMSCOPE_MPI_CHECK(MPI_Allreduce(MPI_IN_PLACE, &leader, 1, MPI_INT, MPI_MIN, node.comm));
  std::vector<int> leader_of(static_cast<std::size_t>(size));
  COMMSCOPE_MPI_CHECK(MPI_Allgather(&leader, 1, MPI_INT, leader_of.data(), 1, MPI_INT, comm));
  std::vector<int> leaders = leader_of;
  std::sort(leaders.begin(), leaders.end());
  leaders.erase(std::unique(leaders.begin(), leaders.end()), leaders.end());
  ranks_.resize(leaders.size());
  node_of_.resize(static_cast<std::size_t>(size));
  local_of_.resize(static_cast<std::size_t>(size));
  for (int r = 0; r < size; ++r) {
    const auto k =
        std::lower_bound(leaders.begin(), leaders.end(), leader_of[static_cast<std::size_t>(r)]) - leaders.begin();
    node_of_[static_cast<std::size_t>(r)] = static_cast<int>(k);
    local_of_[static_cast<std::size_t>(r)] = static_cast<int>(ranks_[static_cast<std::size_t>(k)].size());
    ranks_[static_cast<std::size_t>(k)].push_back(r);
  }
  node_index_ = node_of(rank);
  local_ = local_of(rank);
  min_ = max_ = node_size(0);
  for (int k = 0; k < nodes(); ++k) {
    min_ = std::min(min_, node_size(k));
    max_ = std::max(max_, node_size(k));
  }
  CommGuard cross;
  COMMSCOPE_MPI_CHECK(MPI_Comm_split(comm, local_, node_index_, &cross.comm));
  node_transport_ = std::make_unique<MpiTransport>(node.comm, parent.timeout_s());
  cross_transport_ = std::make_unique<MpiTransport>(cross.comm, parent.timeout_s());
  for (MpiTransport* t : {node_transport_.get(), cross_transport_.get()})
    t->set_yield_when_idle(parent.yield_when_idle());
  if (node_transport_->rank() != local_ || node_transport_->size() != node_size(node_index_)) {
    throw TransportError(
        "hier: the node communicator disagrees with the gathered layout (rank " + std::to_string(rank) +
        ": local index " + std::to_string(local_) + " of " + std::to_string(node_size(node_index_)) + ", node rank " +
        std::to_string(node_transport_->rank()) + " of " + std::to_string(node_transport_->size()) + ")");
  }
}

}  // namespace commscope::detail
