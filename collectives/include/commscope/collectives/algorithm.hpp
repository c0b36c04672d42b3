// One collective algorithm = one implementation of this interface, in one file
// (src/algorithms/<name>.cpp). The communicator validates arguments; algorithms only move data.
#pragma once

#include <cstddef>
#include <optional>
#include <span>
#include <string_view>

#include "commscope/collectives/transport.hpp"
#include "commscope/collectives/types.hpp"

namespace commscope {

// One collective call, after validation. Counts follow NCCL's conventions:
//   allreduce, reduce, broadcast: `count` elements in and out;
//   allgather: `count` elements in, count * n out (rank r's block at r * count);
//   reducescatter: count * n in, `count` out (rank r gets block r);
//   alltoall: count * n in and out (block j of the input goes to rank j).
// In place: send == recv, except allgather (send == recv + rank*count) and reducescatter
// (recv == send + rank*count), as in NCCL. reduce: recv is used at the root only.
// broadcast: send is read at the root only.
struct CollArgs {
  Collective coll = Collective::allreduce;
  const void* send = nullptr;
  void* recv = nullptr;
  std::size_t count = 0;
  DataType type = DataType::f32;
  ReduceOp op = ReduceOp::sum;
  int root = 0;

  bool operator==(const CollArgs&) const = default;
};

struct AlgoOptions {
  // Pipeline segment of the ring algorithm (bytes): bounds the scratch memory and lets the
  // reduction of one segment overlap the transfer of the next.
  std::size_t segment_bytes = std::size_t{1} << 20;
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

// Every algorithm compiled in, in a fixed order: mpi, ring, tree, rhd.
std::span<const Algorithm* const> algorithms();
// Look up by name; throws UnknownName listing the names that exist.
const Algorithm& find_algorithm(std::string_view name);

}  // namespace commscope
