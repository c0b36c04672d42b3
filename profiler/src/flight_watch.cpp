#include "commscope/profiler/flight_watch.hpp"

#include <dlfcn.h>
#include <mpi.h>

#include <array>
#include <cstdio>
#include <cstring>
#include <memory>
#include <vector>

#include "commscope/collectives/communicator.hpp"
#include "commscope/collectives/types.hpp"
#include "commscope/profiler/flight.hpp"
#include "commscope/profiler/recorder.hpp"
#include "commscope/profiler/session.hpp"

namespace commscope::profiler::flight {
namespace {

// A communicator's ring: its calls numbered from 0 (every member makes them in the same order),
// each with its operation, bytes, datatype, reduction and root.
class RingWatch final : public CallWatch {
 public:
  explicit RingWatch(int ring) : ring_(ring) {
    for (Collective c : kAllCollectives) ops_[static_cast<std::size_t>(c)] = name_id(collective_name(c));
    for (DataType t : kAllDataTypes) types_[static_cast<std::size_t>(t)] = name_id(to_string(t));
    for (ReduceOp o : kAllReduceOps) reductions_[static_cast<std::size_t>(o)] = name_id(to_string(o));
    barrier_ = name_id("barrier");
  }
  std::uint64_t posted(const CollArgs* a) noexcept override {
    const std::int64_t t = now();
    if (a == nullptr) return flight::posted(ring_, seq_++, barrier_, 0, -1, 0, t).at;
    Detail d;
    d.type = types_[static_cast<std::size_t>(a->type)];
    if (is_reducing(a->coll)) d.reduction = reductions_[static_cast<std::size_t>(a->op)];
    if (is_rooted(a->coll)) d.root = a->root;
    const auto bytes = static_cast<std::int64_t>(a->count * type_size(a->type));
    return flight::posted(ring_, seq_++, ops_[static_cast<std::size_t>(a->coll)], bytes, -1, 0, t, d).at;
  }
  void completed(std::uint64_t token) noexcept override { flight::completed({ring_, token}, now()); }

 private:
  int ring_;
  std::int64_t seq_ = 0;
  std::array<std::uint32_t, kAllCollectives.size()> ops_{};
  std::array<std::uint32_t, kAllDataTypes.size()> types_{};
  std::array<std::uint32_t, kAllReduceOps.size()> reductions_{};
  std::uint32_t barrier_ = 0;
};

}  // namespace

std::vector<std::string> world_hosts(AllgatherCall allgather, ProcessorNameCall processor_name) {
  char host[MPI_MAX_PROCESSOR_NAME + 1] = {};
  int len = 0, rank = 0, size = 1;
  processor_name(host, &len);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  std::vector<std::string> hosts(static_cast<std::size_t>(size));
  std::vector<char> all(hosts.size() * MPI_MAX_PROCESSOR_NAME);
  if (allgather(host, MPI_MAX_PROCESSOR_NAME, MPI_CHAR, all.data(), MPI_MAX_PROCESSOR_NAME, MPI_CHAR, MPI_COMM_WORLD) !=
      MPI_SUCCESS) {
    hosts[static_cast<std::size_t>(rank)].assign(host, static_cast<std::size_t>(len));
    return hosts;
  }
  for (std::size_t r = 0; r < hosts.size(); ++r) {
    const char* h = all.data() + r * MPI_MAX_PROCESSOR_NAME;
    hosts[r].assign(h, strnlen(h, MPI_MAX_PROCESSOR_NAME));
  }
  return hosts;
}

bool start_tool(const char* tool, const std::string& output) {
  // libcommscope-mpiprof.so, preloaded, records every MPI call of this process already.
  using Probe = int (*)();
  if (auto library = reinterpret_cast<Probe>(dlsym(RTLD_DEFAULT, "commscope_mpiprof_flight"));
      library != nullptr && library() != 0)
    return false;
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const std::string warning =
      start(rank, size, output.empty() ? std::string(tool) : output, world_hosts(), tool, false);
  if (!warning.empty()) std::fprintf(stderr, "%s: %s\n", tool, warning.c_str());
  if (!on()) return false;
  watch_sigusr1();
  return true;
}

void watch(Communicator& comm, std::string_view label) {
  if (!on()) return;
  // "": MPI_COMM_WORLD's ring (a tool's duplicate of it), opened at start.
  const int ring = label.empty() ? 0 : open_ring(name_id(label), world_ranks(comm.mpi_comm()));
  if (ring >= 0) comm.watch(std::make_shared<RingWatch>(ring));
}

}  // namespace commscope::profiler::flight
