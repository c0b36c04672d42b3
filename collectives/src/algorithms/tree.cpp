// Binomial-tree algorithms (latency-optimal, ceil(lg p) rounds, each moving the whole array).
//   reduce:        binomial reduce to the root         ceil(lg p)(a + nB + nG)
//   broadcast:     binomial broadcast from the root    ceil(lg p)(a + nB)
//   allreduce:     reduce to rank 0 + broadcast        2 ceil(lg p)(a + nB) + ceil(lg p) nG
//   allgather:     binomial gather to 0 + broadcast    ceil(lg p)(2a + nB) + (p-1)/p nB
//   reducescatter: reduce to 0 + binomial scatter      ceil(lg p)(2a + nB + nG) + (p-1)/p nB
//   alltoall:      none (a tree only adds hops to a personalised exchange)
#include <cmath>

#include "common.hpp"

namespace commscope {
namespace {

using detail::Blocks;
using detail::Buf;

void allreduce(Transport& t, const CollArgs& a) {
  const std::size_t es = type_size(a.type);
  const int p = t.size(), me = t.rank();
  const auto real = [](int u) { return u; };
  Buf in = detail::cbuf(a.send, es), out{a.recv, es};
  // Every rank's recv buffer is overwritten by the broadcast, so it doubles as accumulator.
  Buf tmp{t.scratch(0, out.bytes(a.count)), es};
  detail::binomial_reduce(t, in, out, tmp, a.count, a.type, a.op, p, me, real);
  if (me == 0 && a.op == ReduceOp::avg) t.divide(out.base, a.count, a.type, p);
  detail::binomial_bcast(t, out, a.count, p, me, real);
}

void reduce(Transport& t, const CollArgs& a) {
  const std::size_t es = type_size(a.type);
  const detail::RankMap map{t.size(), a.root};
  const int p = t.size(), me = map.rel(t.rank());
  Buf in = detail::cbuf(a.send, es);
  Buf tmp{t.scratch(0, in.bytes(a.count)), es};
  Buf acc = me == 0 ? Buf{a.recv, es} : Buf{t.scratch(1, in.bytes(a.count)), es};
  detail::binomial_reduce(t, in, acc, tmp, a.count, a.type, a.op, p, me, [&](int u) { return map.real(u); });
  if (me == 0 && a.op == ReduceOp::avg) t.divide(acc.base, a.count, a.type, p);
}

void broadcast(Transport& t, const CollArgs& a) {
  const std::size_t es = type_size(a.type);
  const detail::RankMap map{t.size(), a.root};
  const int me = map.rel(t.rank());
  Buf out{a.recv, es};
  if (me == 0) t.copy(out.base, a.send, out.bytes(a.count));
  detail::binomial_bcast(t, out, a.count, t.size(), me, [&](int u) { return map.real(u); });
}

void allgather(Transport& t, const CollArgs& a) {
  const std::size_t es = type_size(a.type);
  const int p = t.size(), me = t.rank();
  const auto real = [](int u) { return u; };
  Buf out{a.recv, es};
  const Blocks blocks{a.count * static_cast<std::size_t>(p), p};
  t.copy(out.at(blocks.offset(me)), a.send, out.bytes(a.count));
  detail::binomial_gather(t, out, p, me, real, [&](int lo, int hi) {
    return std::pair{blocks.offset(lo), blocks.offset(hi)};
  });
  detail::binomial_bcast(t, out, blocks.count, p, me, real);
}

void reducescatter(Transport& t, const CollArgs& a) {
  const std::size_t es = type_size(a.type);
  const int p = t.size(), me = t.rank();
  const auto real = [](int u) { return u; };
  const Blocks blocks{a.count * static_cast<std::size_t>(p), p};
  Buf in = detail::cbuf(a.send, es);
  Buf tmp{t.scratch(0, in.bytes(blocks.count)), es};
  Buf acc{t.scratch(1, in.bytes(blocks.count)), es};
  detail::binomial_reduce(t, in, acc, tmp, blocks.count, a.type, a.op, p, me, real);
  detail::binomial_scatter(t, acc, p, me, real, [&](int lo, int hi) {
    return std::pair{blocks.offset(lo), blocks.offset(hi)};
  });
  t.copy(a.recv, acc.at(blocks.offset(me)), acc.bytes(a.count));
  if (a.op == ReduceOp::avg) t.divide(a.recv, a.count, a.type, p);
}

class TreeAlgorithm final : public Algorithm {
 public:
  std::string_view name() const override { return "tree"; }
  std::string_view description() const override {
    return "binomial tree: reduce, broadcast, reduce+broadcast, gather+broadcast, reduce+scatter";
  }
  bool supports(Collective c) const override { return c != Collective::alltoall; }
  void run(Transport& t, const CollArgs& a, const AlgoOptions&) const override {
    switch (a.coll) {
      case Collective::allreduce:
        return allreduce(t, a);
      case Collective::reduce:
        return reduce(t, a);
      case Collective::broadcast:
        return broadcast(t, a);
      case Collective::allgather:
        return allgather(t, a);
      case Collective::reducescatter:
        return reducescatter(t, a);
      case Collective::alltoall:
        detail::unsupported(name(), a.coll);
    }
  }
  std::optional<Cost> cost(Collective c, int p, double, const AlgoOptions&) const override {
    const double l = detail::ceil_log2(p), f = (p - 1.0) / p;
    switch (c) {
      case Collective::reduce:
        return Cost{l, l, l};
      case Collective::broadcast:
        return Cost{l, l, 0};
      case Collective::allreduce:
        return Cost{2 * l, 2 * l, l};
      case Collective::allgather:
        return Cost{2 * l, l + f, 0};
      case Collective::reducescatter:
        return Cost{2 * l, l + f, l};
      case Collective::alltoall:
        return std::nullopt;
    }
    return std::nullopt;
  }
};

}  // namespace

const Algorithm& tree_algorithm() {
  static const TreeAlgorithm instance;
  return instance;
}

}  // namespace commscope
