// One collective algorithm = one implementation of this interface, in one file
// (src/algorithms/<name>.cpp). The communicator validates arguments; algorithms only move data.
#pragma once

#include <cstddef>
#include <memory>
#include <optional>
#include <span>
#include <string_view>
#include <utility>
#include <vector>

#include "commscope/collectives/transport.hpp"
#include "commscope/collectives/types.hpp"

namespace commscope {

// One collective call, after validation. Counts follow NCCL's conventions:
//   allreduce, reduce, broadcast: `count` elements in and out;
//   allgather: `count` elements in, count * n out (rank r's block at r * count);
//   reducescatter: count * n in, `count` out (rank r gets block r);
//   alltoall: count * n in and out (block j of the input goes to rank j);
//   gather: `count` in, count * n out at the root (rank r's block at r * count);
//   scatter: count * n in at the root (block r goes to rank r), `count` out;
//   sendrecv: `count` in, sent to rank (rank + 1) % n; `count` out, from (rank - 1 + n) % n;
//   alltoallv: per-peer counts and displacements below; `count` is the same on every rank
//     and bounds what any rank sends or receives in all (nccl-tests' size of alltoallv is the
//     largest such total); 0 means no rank moves anything.
// In place: send == recv, except allgather and gather (send == recv + rank*count) and
// reducescatter and scatter (recv == send + rank*count), as in NCCL; alltoallv has no in-place
// form. reduce, gather: recv is used at the root only. broadcast, scatter: send is read at the
// root only.
struct CollArgs {
  Collective coll = Collective::allreduce;
  const void* send = nullptr;
  void* recv = nullptr;
  std::size_t count = 0;
  DataType type = DataType::f32;
  ReduceOp op = ReduceOp::sum;
  int root = 0;
  // alltoallv only (empty otherwise), n entries each, in elements (MPI_Alltoallv's layout):
  // send_counts[j] elements at send + send_displs[j] go to rank j, and recv_counts[i] elements
  // from rank i land at recv + recv_displs[i]. Rank i's send_counts[j] must equal rank j's
  // recv_counts[i] (a mismatch is the caller's bug: a truncation error or a timeout).
  std::span<const std::size_t> send_counts = {}, send_displs = {}, recv_counts = {}, recv_displs = {};

  // The same call: every field, the alltoallv spans by address and length (their contents are
  // the caller's to keep unchanged between calls that reuse them).
  bool operator==(const CollArgs& o) const noexcept;
};

struct AlgoOptions {
  // Pipeline segment of the ring algorithm (bytes): bounds the scratch memory and lets the
  // reduction of one segment overlap the transfer of the next.
  std::size_t segment_bytes = std::size_t{1} << 20;
  // Options of particular algorithms, each in its own struct (ShmOptions in shm_options.hpp,
  // HierOptions in hier_options.hpp) under its algorithm's name (the struct's kAlgorithm): set
  // by the caller with set(), read by the algorithm with get(). Copies share them (immutable).
  std::vector<std::pair<std::string_view, std::shared_ptr<const void>>> by_algorithm = {};

  // Sets algorithm O::kAlgorithm's options, replacing any set before.
  template <class O>
  AlgoOptions& set(O options) {
    std::shared_ptr<const void> kept = std::make_shared<const O>(std::move(options));
    for (auto& [algo, o] : by_algorithm)
      if (algo == O::kAlgorithm) {
        o = std::move(kept);
        return *this;
      }
    by_algorithm.emplace_back(O::kAlgorithm, std::move(kept));
    return *this;
  }
  // Algorithm O::kAlgorithm's options: those set, else O's defaults.
  template <class O>
  const O& get() const {
    for (const auto& [algo, o] : by_algorithm)
      if (algo == O::kAlgorithm) return *static_cast<const O*>(o.get());
    static const O defaults{};
    return defaults;
  }
};

// Alpha-beta-gamma cost: t = alpha * a + beta * n * B + gamma * n * G for a message of n
// bytes, with a the latency (s), B the transfer time (s/byte), G the reduction time (s/byte).
struct Cost {
  double alpha = 0;
  double beta = 0;
  double gamma = 0;
  double seconds(double bytes, double a, double b, double g) const {
    return alpha * a + beta * bytes * b + gamma * bytes * g;
  }
};

class Algorithm {
 public:
  virtual ~Algorithm() = default;
  virtual std::string_view name() const = 0;
  virtual std::string_view description() const = 0;
  virtual bool supports(Collective c) const = 0;
  virtual void run(Transport& transport, const CollArgs& args, const AlgoOptions& options) const = 0;
  // The textbook cost of this algorithm on p ranks for an n-byte array (nccl-tests' size);
  // nullopt where the algorithm is chosen inside a library and has no single model.
  virtual std::optional<Cost> cost(Collective c, int p, double bytes, const AlgoOptions& options) const = 0;
  // nccl-tests' bus-bandwidth factor; the same for every algorithm of a collective, so that
  // busbw compares algorithms on one scale.
  double busbw_factor(Collective c, int nranks) const { return commscope::busbw_factor(c, nranks); }
};

// The hier algorithm's cost on `nodes` nodes of `per_node` ranks each, in two levels: `intra`
// in shm's terms (a flag handoff, B and G per byte copied and reduced in memory), `inter` in the
// network's (a its latency, B per byte through a node's link, which the node's ranks share, G per
// byte reduced). Algorithm::cost of hier is `inter` with one rank per node.
struct HierCost {
  Cost intra, inter;
};
HierCost hier_cost(Collective c, int nodes, int per_node, double bytes, const AlgoOptions& options);

// Every algorithm compiled in, in a fixed order: mpi, ring, tree, rhd, shm, hier.
std::span<const Algorithm* const> algorithms();
// Look up by name; throws UnknownName listing the names that exist.
const Algorithm& find_algorithm(std::string_view name);

}  // namespace commscope
