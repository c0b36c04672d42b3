#include "run/preflight.hpp"

#include <algorithm>
#include <cstdint>
#include <limits>
#include <string>

#include "backends/backend.hpp"
#include "commscope/collectives/error.hpp"
#include "commscope/collectives/mpi_transport.hpp"
#include "commscope/common/memory_headroom.hpp"
#include "commscope/common/output_path.hpp"
#include "run/run_lines.hpp"

namespace commscope::bench {

void check_host_memory(const Options& o, const std::vector<Case>& cases, const Communicator& comm) {
  if (o.device != "cpu") return;
  std::size_t largest = 0, buffers = 0, biggest = 0;
  for (const Case& c : cases) {
    const Layout l = buffer_layout(c, comm.rank(), o.unalign);
    largest = std::max(largest, c.bytes);
    buffers = std::max(buffers, l.a_bytes + l.b_bytes);
    biggest = std::max({biggest, l.a_bytes, l.b_bytes});
  }
  const std::uint64_t need = buffers + 2 * biggest;
  const MemoryHeadroom mine = memory_headroom();
  // -1 (no limit) as the largest value, so that the minimum over ranks is the tightest limit.
  auto limit = [](std::int64_t v) {
    return v < 0 ? std::numeric_limits<long long>::max() : static_cast<long long>(v);
  };
  long long mins[4] = {limit(mine.address_space), limit(mine.data), limit(mine.available), limit(mine.cgroup)},
            least[4];
  COMMSCOPE_MPI_CHECK(MPI_Allreduce(mins, least, 4, MPI_LONG_LONG, MPI_MIN, comm.mpi_comm()));
  auto back = [](long long v) {
    return v == std::numeric_limits<long long>::max() ? std::int64_t{-1} : std::int64_t{v};
  };
  const MemoryHeadroom h{back(least[0]), back(least[1]), back(least[2]), back(least[3])};
  if (const std::string over = memory_shortfall(h, need, comm.local_size()); !over.empty())
    throw InvalidArgument("-e " + memory_text(static_cast<long long>(o.max_bytes)) + ": arrays of " +
                          memory_text(static_cast<long long>(largest)) + " need about " + bytes_text(need) +
                          " on each rank (send and receive buffers, growth and scratch; " +
                          std::to_string(comm.local_size()) + " on a node), " + over);
}

std::string output_paths_problem(const Options& o) {
  if (const std::string p = o.json_out.empty() ? "" : output_path_problem(o.json_out); !p.empty())
    return "cannot create -J/--output_file '" + o.json_out + "': " + p;
  if (const std::string q = o.out.empty() ? "" : output_path_problem(o.out); !q.empty())
    return "cannot create --out '" + o.out + "': " + q;
  return "";
}

void check_output_paths(const Options& o, MPI_Comm comm) {
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  const std::string error = rank == 0 ? output_paths_problem(o) : std::string();
  int failed = !error.empty();
  MPI_Bcast(&failed, 1, MPI_INT, 0, comm);
  if (failed) throw InvalidArgument(rank == 0 ? error : std::string());
}

}  // namespace commscope::bench
