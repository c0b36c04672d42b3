// commscope-doctor, phase 3: an f32 sum allreduce inside each node, the nodes at once, each on its
// own ranks: a node whose memory or shared-memory transport is slow shows against the others.
#include <algorithm>
#include <array>
#include <cstdio>
#include <vector>

#include "commscope/common/byte_size.hpp"
#include "commscope/common/stats.hpp"
#include "commscope/common/timing.hpp"
#include "doctor.hpp"

namespace commscope::doctor {

using stats::median;
using timing::now_s;

void run_nodes(Communicator& world, const Options& o, const Layout& layout, Output* file) {
  const int rank = world.rank(), p = world.size();
  Communicator node = world.split_by_node();
  const std::size_t bytes = parse_size(o.node_bytes) / 4 * 4;
  const std::size_t count = bytes / 4;
  const int n = node.size();
  double t_med = kNaN;
  if (n > 1) {
    std::vector<float> in(count, 1.0f), out(count);
    std::vector<double> times;
    for (int i = 0; i < 1 + o.node_iters; ++i) {
      node.barrier();
      const double t0 = now_s();
      node.allreduce(in.data(), out.data(), count, DataType::f32, ReduceOp::sum, o.node_algo);
      double dt = now_s() - t0, slowest = 0;
      MPI_Allreduce(&dt, &slowest, 1, MPI_DOUBLE, MPI_MAX, node.mpi_comm());
      if (i >= 1) times.push_back(slowest);
    }
    t_med = median(times);
  }
  std::array<double, 2> send{node.rank() == 0 ? static_cast<double>(layout.node[rank]) : -1.0, t_med};
  std::vector<double> all(rank == 0 ? 2 * static_cast<std::size_t>(p) : 0);
  MPI_Gather(send.data(), 2, MPI_DOUBLE, all.data(), 2, MPI_DOUBLE, 0, world.mpi_comm());
  if (rank == 0) {
    std::printf("# nodes: f32 sum allreduce of %zu B (%s) inside each node, the nodes at once\n", bytes,
                o.node_algo.c_str());
    std::vector<NodeRow> rows;
    for (int s = 0; s < p; ++s) {
      if (all[2 * s] < 0) continue;
      NodeRow row;
      row.node = static_cast<std::int64_t>(all[2 * s]);
      h5::set_fixed(row.host, layout.node_host[static_cast<std::size_t>(row.node)]);
      row.ranks = std::count(layout.node.begin(), layout.node.end(), row.node);
      row.bytes = static_cast<std::int64_t>(bytes);
      row.allreduce_us = all[2 * s + 1] * 1e6;
      row.busbw_GBps = row.ranks > 1 ? busbw_factor(Collective::allreduce, static_cast<int>(row.ranks)) *
                                           static_cast<double>(bytes) / all[2 * s + 1] / 1e9
                                     : kNaN;
      rows.push_back(row);
      if (row.ranks > 1) {
        std::printf("  node %4lld %-16s %3lld ranks %12.1f us %8.3f GB/s\n", static_cast<long long>(row.node),
                    layout.node_host[static_cast<std::size_t>(row.node)].c_str(), static_cast<long long>(row.ranks),
                    row.allreduce_us, row.busbw_GBps);
      } else {
        std::printf("  node %4lld %-16s %3lld rank: no allreduce inside it\n", static_cast<long long>(row.node),
                    layout.node_host[static_cast<std::size_t>(row.node)].c_str(), static_cast<long long>(row.ranks));
      }
    }
    file->add(rows);
  }
}

}  // namespace commscope::doctor
