// Binomial-tree algorithms (latency-optimal, ceil(lg p) rounds, each moving the whole array).
//   reduce:        binomial reduce to the root         ceil(lg p)(a + nB + nG)
//   broadcast:     binomial broadcast from the root    ceil(lg p)(a + nB)
//   allreduce:     reduce to rank 0 + broadcast        2 ceil(lg p)(a + nB) + ceil(lg p) nG
//   allgather:     binomial gather to 0 + broadcast    ceil(lg p)(2a + nB) + (p-1)/p nB
//   reducescatter: reduce to 0 + binomial scatter      ceil(lg p)(2a + nB + nG) + (p-1)/p nB
//   gather:        binomial gather to the root         ceil(lg p) a + (p-1)/p nB
//   scatter:       binomial scatter from the root      ceil(lg p) a + (p-1)/p nB
//   alltoall, alltoallv: none (a tree only adds hops to a personalised exchange)
//   sendrecv:      none (one message to a neighbour: nothing for a tree to shape)
// A non-zero root of gather/scatter holds the array in rank order, the tree wants it in
// relative order: the root rotates it through scratch (one extra local copy of the array).
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
  // The root sends from the send buffer, which it has not just written, and copies it after (ring.cpp).
  detail::binomial_bcast(t, me == 0 ? detail::cbuf(a.send, es) : out, a.count, t.size(), me,
                         [&](int u) { return map.real(u); });
  if (me == 0 && a.send != a.recv) t.copy(out.base, a.send, out.bytes(a.count));
}

void allgather(Transport& t, const CollArgs& a) {
  const std::size_t es = type_size(a.type);
  const int p = t.size(), me = t.rank();
  const auto real = [](int u) { return u; };
  Buf out{a.recv, es};
  const Blocks blocks{a.count * static_cast<std::size_t>(p), p};
  // A leaf sends its block from the send buffer and copies nothing: the broadcast brings the
  // whole array, its own block too. The others gather into the output.
  const bool leaf = detail::binomial_leaf(me, p);
  if (!leaf) t.copy(out.at(blocks.offset(me)), a.send, out.bytes(a.count));
  detail::binomial_gather(
      t, out, p, me, real,
      [&](int lo, int hi) {
        return std::pair{blocks.offset(lo), blocks.offset(hi)};
      },
      leaf ? a.send : nullptr);
  detail::binomial_bcast(t, out, blocks.count, p, me, real);
}

void reducescatter(Transport& t, const CollArgs& a) {
  const std::size_t es = type_size(a.type);
  const int p = t.size(), me = t.rank();
  const auto real = [](int u) { return u; };
  if (p == 1) return t.copy(a.recv, a.send, a.count * es);  // no scratch round trip for one rank
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

// The element range of units [lo, hi) in a buffer that holds the blocks of units [me, ...)
// from its start: a non-root rank keeps only its subtree's blocks.
detail::UnitRange from_me(int me, std::size_t blk) {
  return [me, blk](int lo, int hi) {
    return std::pair{static_cast<std::size_t>(lo - me) * blk, static_cast<std::size_t>(hi - me) * blk};
  };
}

// Copy the blocks of `src` from rank order to relative (unit) order in `dst`, or back. Units
// [0, p - root) are ranks [root, p); units [p - root, p) are ranks [0, root).
void rotate(Transport& t, Buf dst, Buf src, std::size_t blk, int p, int root, bool to_units) {
  const std::size_t head = static_cast<std::size_t>(p - root) * blk, tail = static_cast<std::size_t>(root) * blk;
  if (to_units) {
    t.copy(dst.base, src.at(tail), dst.bytes(head));
    t.copy(dst.at(head), src.base, dst.bytes(tail));
  } else {
    t.copy(dst.at(tail), src.base, dst.bytes(head));
    t.copy(dst.base, src.at(head), dst.bytes(tail));
  }
}

void gather(Transport& t, const CollArgs& a) {
  const std::size_t es = type_size(a.type), blk = a.count;
  const detail::RankMap map{t.size(), a.root};
  const int p = t.size(), me = map.rel(t.rank());
  const int units = detail::binomial_subtree(me, p);
  // Rank 0 as the root gathers straight into recv; everyone else into scratch.
  const bool direct = me == 0 && a.root == 0;
  Buf buf = direct ? Buf{a.recv, es} : Buf{t.scratch(0, es * blk * static_cast<std::size_t>(units)), es};
  // A leaf sends its block straight from the send buffer; the others gather into buf.
  const bool leaf = detail::binomial_leaf(me, p);
  if (!leaf) t.copy(buf.base, a.send, buf.bytes(blk));
  detail::binomial_gather(
      t, buf, p, me, [&](int u) { return map.real(u); }, from_me(me, blk), leaf ? a.send : nullptr);
  if (me == 0 && !direct) rotate(t, Buf{a.recv, es}, buf, blk, p, a.root, false);
}

void scatter(Transport& t, const CollArgs& a) {
  const std::size_t es = type_size(a.type), blk = a.count;
  const detail::RankMap map{t.size(), a.root};
  const int p = t.size(), me = map.rel(t.rank());
  const int units = detail::binomial_subtree(me, p);
  Buf buf{a.recv, es};  // a leaf receives its one block straight into recv
  if (me == 0) {
    buf = detail::cbuf(a.send, es);  // only read: the root never receives
    if (a.root != 0) {
      buf = Buf{t.scratch(0, es * blk * static_cast<std::size_t>(p)), es};
      rotate(t, buf, detail::cbuf(a.send, es), blk, p, a.root, true);
    }
  } else if (units > 1) {
    buf = Buf{t.scratch(0, es * blk * static_cast<std::size_t>(units)), es};
  }
  detail::binomial_scatter(
      t, buf, p, me, [&](int u) { return map.real(u); }, from_me(me, blk));
  t.copy(a.recv, buf.base, buf.bytes(blk));
}

class TreeAlgorithm final : public Algorithm {
 public:
  std::string_view name() const override { return "tree"; }
  std::string_view description() const override {
    return "binomial tree: reduce, broadcast, gather, scatter, reduce+broadcast, gather+broadcast, "
           "reduce+scatter";
  }
  bool supports(Collective c) const override {
    return c != Collective::alltoall && c != Collective::alltoallv && c != Collective::sendrecv;
  }
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
      case Collective::gather:
        return gather(t, a);
      case Collective::scatter:
        return scatter(t, a);
      case Collective::alltoall:
      case Collective::sendrecv:
      case Collective::alltoallv:
        detail::unsupported(name(), a.coll);
    }
  }
  std::optional<Cost> cost(Collective c, int p, double, const AlgoOptions&) const override {
    const std::optional<CostTerms> t = tree_cost_terms(c, p);  // the report's binomial curves' too
    if (!t) return std::nullopt;
    return Cost{t->alpha_count, t->beta_factor, t->gamma_factor};
  }
};

}  // namespace

const Algorithm& tree_algorithm() {
  static const TreeAlgorithm instance;
  return instance;
}

}  // namespace commscope
