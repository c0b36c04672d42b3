// Communicator::split_by_node against the real node layout, run under mpirun on one or more
// hosts (the cluster tests run it on emulated hosts): every rank's node communicator holds
// exactly the ranks whose MPI processor name is its own, in world-rank order, and works (an
// allreduce over it counts its ranks); with --expect, the ranks per node, in the order the
// nodes first appear among the world ranks, must be that list.
//
//   mpirun -np 5 test_node_split [--expect 3,2]
#include <mpi.h>

#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include "commscope/collectives/communicator.hpp"

using namespace commscope;

namespace {

// "3,2" -> {3, 2}; empty on a malformed list.
std::vector<int> parse_counts(const std::string& s) {
  std::vector<int> out;
  std::size_t pos = 0;
  while (pos <= s.size()) {
    const std::size_t comma = std::min(s.find(',', pos), s.size());
    const std::string item = s.substr(pos, comma - pos);
    if (item.empty() || item.find_first_not_of("0123456789") != std::string::npos) return {};
    out.push_back(std::stoi(item));
    pos = comma + 1;
  }
  return out;
}

std::string join(const std::vector<int>& v) {
  std::string s;
  for (int x : v) {
    if (!s.empty()) s += ',';
    s += std::to_string(x);
  }
  return s;
}

}  // namespace

int main(int argc, char** argv) {
  MpiRuntime mpi(argc, argv);
  std::vector<int> expect;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--expect" && i + 1 < argc && !(expect = parse_counts(argv[++i])).empty()) continue;
    std::fprintf(stderr, "usage: test_node_split [--expect N,N,...]\n");
    return 2;
  }
  Communicator world;
  const int p = world.size(), r = world.rank();

  // Every rank's processor name (the node's host name under Open MPI), fixed width.
  char mine[MPI_MAX_PROCESSOR_NAME] = {};
  int len = 0;
  MPI_Get_processor_name(mine, &len);
  std::vector<char> all(static_cast<std::size_t>(p) * MPI_MAX_PROCESSOR_NAME);
  MPI_Allgather(mine, MPI_MAX_PROCESSOR_NAME, MPI_CHAR, all.data(), MPI_MAX_PROCESSOR_NAME, MPI_CHAR, world.mpi_comm());
  const auto name_of = [&](int rank) {
    return std::string(&all[static_cast<std::size_t>(rank) * MPI_MAX_PROCESSOR_NAME]);
  };

  // The layout the names say: nodes in order of first appearance, ranks per node; and the
  // world ranks on this rank's node, ascending.
  std::vector<std::string> nodes;
  std::vector<int> per_node, same_node;
  for (int q = 0; q < p; ++q) {
    const std::string n = name_of(q);
    std::size_t k = 0;
    while (k < nodes.size() && nodes[k] != n) ++k;
    if (k == nodes.size()) {
      nodes.push_back(n);
      per_node.push_back(0);
    }
    ++per_node[k];
    if (n == mine) same_node.push_back(q);
  }

  int problems = 0;
  const auto fail = [&](const std::string& what) {
    std::fprintf(stderr, "FAIL rank %d on %s: %s\n", r, mine, what.c_str());
    ++problems;
  };
  Communicator node = world.split_by_node();
  if (node.size() != static_cast<int>(same_node.size()))
    fail("node communicator has " + std::to_string(node.size()) + " ranks, the node " +
         std::to_string(same_node.size()));
  if (world.local_size() != node.size())
    fail("local_size() " + std::to_string(world.local_size()) + " differs from the node size " +
         std::to_string(node.size()));
  // Node ranks follow world ranks: the k-th rank of the node is the k-th world rank on it.
  std::vector<int> members(static_cast<std::size_t>(node.size()));
  MPI_Allgather(&r, 1, MPI_INT, members.data(), 1, MPI_INT, node.mpi_comm());
  if (node.size() == static_cast<int>(same_node.size()) && members != same_node)
    fail("node ranks are world ranks " + join(members) + ", the node's are " + join(same_node));
  int one = 1, counted = 0;
  node.allreduce(&one, &counted, 1, DataType::i32, ReduceOp::sum, "ring");
  if (counted != node.size()) fail("a ring allreduce over the node counted " + std::to_string(counted) + " ranks");
  if (!expect.empty() && per_node != expect) fail("ranks per node " + join(per_node) + ", expected " + join(expect));

  int total = 0;
  MPI_Allreduce(&problems, &total, 1, MPI_INT, MPI_SUM, world.mpi_comm());
  if (r == 0) {
    std::string layout;
    for (std::size_t k = 0; k < nodes.size(); ++k) {
      if (k) layout += ", ";
      layout += nodes[k];
      layout += ": ";
      layout += std::to_string(per_node[k]);
    }
    std::printf("split_by_node on %d ranks: %zu nodes (%s): %s\n", p, nodes.size(), layout.c_str(),
                total ? "FAILED" : "OK");
  }
  return total ? 1 : 0;
}
