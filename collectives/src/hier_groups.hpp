// The node layout of a communicator, for the `hier` algorithm (internal header): the ranks that
// share this rank's node (the node transport) and the ranks with this rank's local index on the
// other nodes (the cross transport). The hier algorithm makes it on its first call (collective
// over the communicator) and keeps it on the MpiTransport as its AlgorithmState (freed with the
// transport, before the transport's communicator); docs/collectives.md describes it.
#pragma once

#include <memory>
#include <vector>

#include "commscope/collectives/mpi_transport.hpp"

namespace commscope::detail {

// Nodes are numbered by their lowest communicator rank; a node's ranks are numbered (local
// index) in communicator order. Communicator ranks of one node need not be contiguous
// (mpirun --map-by node deals them round robin), and nodes may hold different rank counts.
class HierGroups final : public AlgorithmState {
 public:
  // Collective over `parent`. test_nodes > 0 puts rank r on node r % test_nodes instead of
  // asking MPI which ranks share memory (a test aid: HierOptions::test_nodes).
  HierGroups(MpiTransport& parent, int test_nodes);
  HierGroups(const HierGroups&) = delete;
  HierGroups& operator=(const HierGroups&) = delete;

  // The ranks of this node, in communicator order: node-transport rank == local index.
  MpiTransport& node() { return *node_transport_; }
  // The ranks whose local index is this rank's, one per node that has that many ranks,
  // ordered by node index: in a group whose index is below min_node_size(), cross rank == node.
  MpiTransport& cross() { return *cross_transport_; }

  int nodes() const { return static_cast<int>(ranks_.size()); }
  int node_index() const { return node_index_; }
  int local_index() const { return local_; }
  int node_size(int k) const { return static_cast<int>(ranks_[static_cast<std::size_t>(k)].size()); }
  int min_node_size() const { return min_; }
  int max_node_size() const { return max_; }
  bool even() const { return min_ == max_; }
  // Communicator rank of local index j on node k, and the node and local index of a rank.
  int rank_of(int k, int j) const { return ranks_[static_cast<std::size_t>(k)][static_cast<std::size_t>(j)]; }
  int node_of(int rank) const { return node_of_[static_cast<std::size_t>(rank)]; }
  int local_of(int rank) const { return local_of_[static_cast<std::size_t>(rank)]; }
  int test_nodes() const { return test_nodes_; }

 private:
  std::unique_ptr<MpiTransport> node_transport_, cross_transport_;
  std::vector<std::vector<int>> ranks_;  // [node][local index] -> communicator rank
  std::vector<int> node_of_, local_of_;  // [communicator rank]
  int node_index_ = 0, local_ = 0, min_ = 1, max_ = 1, test_nodes_ = 0;
};

}  // namespace commscope::detail
