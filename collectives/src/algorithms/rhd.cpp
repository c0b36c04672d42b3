// Recursive halving / doubling (Thakur, Rabenseifner, Gropp 2005). Non-power-of-two rank
// counts fold the odd ranks among the first 2(p - p2) onto their even neighbours (Fold), run
// the power-of-two algorithm on p2 ranks, and hand the result back.
//   allreduce:     Rabenseifner: recursive-halving reduce-scatter + recursive-doubling allgather,
//                  the halves to the nearest rank first (Order)
//                  2 lg p a + 2(p-1)/p nB + (p-1)/p nG
//   reducescatter: recursive halving                    lg p a + (p-1)/p n(B+G)
//   allgather:     recursive doubling                   lg p a + (p-1)/p nB
//   reduce:        recursive halving + binomial gather  2 lg p a + 2(p-1)/p nB + (p-1)/p nG
//   broadcast:     binomial scatter + recursive-doubling allgather
//                                                       2 lg p a + 2(p-1)/p nB
//   alltoall, alltoallv: none
//   gather, scatter: none: recursive doubling/halving of a gather or scatter is the binomial
//                  tree's exchange pattern, which `tree` has
//   sendrecv:      none (one message to a neighbour)
// (costs for p a power of two; the fold adds one full-size exchange before and after)
#include <cmath>

#include "common.hpp"

namespace commscope {
namespace {

using detail::Blocks;
using detail::Buf;
using detail::Fold;
using detail::RankMap;
using detail::UnitRange;

// The order in which the halving meets its partners. Recursive halving exchanges its largest
// halves with the farthest virtual rank (p2/2 away) first, so that group v ends at virtual rank v
// (reducescatter and reduce need that); `near` with the nearest first, the distance doubling as
// the vector halves, as the MPI libraries run Rabenseifner's allreduce (Open MPI's
// redscat_allgather, MPICH's): the same steps over the virtual ranks in bit-reversed order, so a
// node's consecutively numbered ranks exchange the largest halves among themselves and only the
// smaller parts cross between nodes. at() maps a virtual rank to its place in the steps and back.
struct Order {
  int bits = 0;  // lg p2
  bool near = false;
  int at(int v) const {
    if (!near) return v;
    int r = 0;
    for (int b = 0; b < bits; ++b) r |= ((v >> b) & 1) << (bits - 1 - b);
    return r;
  }
};

Order near_order(const Fold& fold) {
  Order o{0, true};
  while ((1 << o.bits) < fold.p2) ++o.bits;
  return o;
}

// Recursive-halving reduce-scatter over the p2 "groups" of `in` (range(lo, hi) gives the
// elements of groups [lo, hi)). Extra ranks send their whole input to their partner and
// return false. Otherwise, on return, acc holds this rank's group order.at(fold.virt(me)) fully
// reduced (other parts of acc are scratch). tmp must hold range(0, p2) elements.
bool halving(Transport& t, const CollArgs& a, Buf in, Buf acc, Buf tmp, const Fold& fold, int me, const RankMap& map,
             const UnitRange& range, const Order& order = {}) {
  const auto [first, last] = range(0, fold.p2);
  const std::size_t total = last - first;
  if (fold.is_extra(me)) {
    t.send(in.base, in.bytes(total), map.real(me - 1));
    return false;
  }
  const void* cur = in.base;  // where this rank's partial results live
  if (fold.folded(me)) {
    t.recv(tmp.base, tmp.bytes(total), map.real(me + 1));
    t.reduce(acc.base, in.base, tmp.base, total, a.type, a.op);
    cur = acc.base;
  }
  const int v = order.at(fold.virt(me));
  int lo = 0, hi = fold.p2;
  for (int mask = fold.p2 / 2; mask > 0; mask /= 2) {
    const int mid = lo + (hi - lo) / 2;
    const bool upper = v & mask;
    const auto [kf, kl] = upper ? range(mid, hi) : range(lo, mid);  // kept
    const auto [gf, gl] = upper ? range(lo, mid) : range(mid, hi);  // given away
    const Buf c = detail::cbuf(cur, in.esize);
    const int peer = map.real(fold.rel_of(order.at(v ^ mask)));
    t.sendrecv(c.at(gf), c.bytes(gl - gf), peer, tmp.base, tmp.bytes(kl - kf), peer);
    t.reduce(acc.at(kf), c.at(kf), tmp.base, kl - kf, a.type, a.op);
    cur = acc.base;
    if (upper)
      lo = mid;
    else
      hi = mid;
  }
  if (cur != acc.base) t.copy(acc.base, cur, acc.bytes(total));  // one rank: nothing reduced
  return true;
}

// Recursive-doubling allgather among the p2 non-extra ranks, each holding its group
// order.at(fold.virt(me)) in out, then the whole array to every extra rank.
void doubling(Transport& t, Buf out, const Fold& fold, int me, const RankMap& map, const UnitRange& range,
              const void* own = nullptr, const Order& order = {}) {
  const auto [first, last] = range(0, fold.p2);
  const std::size_t total = last - first;
  if (fold.is_extra(me)) {
    t.recv(out.base, out.bytes(total), map.real(me - 1));
    return;
  }
  const int v = order.at(fold.virt(me));
  for (int mask = 1; mask < fold.p2; mask *= 2) {
    const int peer = v ^ mask;
    const int mine = v / mask * mask, theirs = peer / mask * mask;
    const auto [mf, ml] = range(mine, mine + mask);
    const auto [tf, tl] = range(theirs, theirs + mask);
    const int peer_rank = map.real(fold.rel_of(order.at(peer)));
    t.sendrecv(mask == 1 && own ? own : out.at(mf), out.bytes(ml - mf), peer_rank, out.at(tf), out.bytes(tl - tf),
               peer_rank);
    // The later steps send the block on from `out`: in place once the first has sent it.
    if (mask == 1 && own) t.copy(out.at(mf), own, out.bytes(ml - mf));
  }
  if (fold.folded(me)) t.send(out.base, out.bytes(total), map.real(me + 1));
}

// Groups = the p2 near-equal blocks of `count` elements.
UnitRange even_groups(std::size_t count, int p2) {
  return [b = Blocks{count, p2}](int lo, int hi) { return std::pair{b.offset(lo), b.offset(hi)}; };
}
// Groups = the original per-rank blocks that each virtual rank stands for.
UnitRange folded_groups(const Blocks& blocks, const Fold& fold) {
  return [blocks, fold](int lo, int hi) {
    const int lb = lo < fold.p2 ? fold.first_block(lo) : blocks.parts;
    const int hb = hi < fold.p2 ? fold.first_block(hi) : blocks.parts;
    return std::pair{blocks.offset(lb), blocks.offset(hb)};
  };
}

void allreduce(Transport& t, const CollArgs& a) {
  const std::size_t es = type_size(a.type);
  const Fold fold(t.size());
  const RankMap map{t.size(), 0};
  const int me = t.rank();
  Buf in = detail::cbuf(a.send, es), out{a.recv, es};
  Buf tmp{t.scratch(0, in.bytes(a.count)), es};
  const UnitRange groups = even_groups(a.count, fold.p2);
  const Order near = near_order(fold);
  if (halving(t, a, in, out, tmp, fold, me, map, groups, near) && a.op == ReduceOp::avg) {
    const int g = near.at(fold.virt(me));
    const auto [f, l] = groups(g, g + 1);
    t.divide(out.at(f), l - f, a.type, t.size());
  }
  doubling(t, out, fold, me, map, groups, nullptr, near);
}

void reducescatter(Transport& t, const CollArgs& a) {
  const std::size_t es = type_size(a.type);
  const Fold fold(t.size());
  const RankMap map{t.size(), 0};
  const int me = t.rank();
  if (t.size() == 1) return t.copy(a.recv, a.send, a.count * es);  // no scratch round trip for one rank
  const Blocks blocks{a.count * static_cast<std::size_t>(t.size()), t.size()};
  Buf in = detail::cbuf(a.send, es);
  Buf tmp{t.scratch(0, in.bytes(blocks.count)), es};
  Buf acc{t.scratch(1, in.bytes(blocks.count)), es};
  if (!halving(t, a, in, acc, tmp, fold, me, map, folded_groups(blocks, fold))) {
    t.recv(a.recv, in.bytes(a.count), map.real(me - 1));  // our block, reduced by the partner
    return;
  }
  if (a.op == ReduceOp::avg) {
    const int v = fold.virt(me);
    const std::size_t f = blocks.offset(fold.first_block(v)), l = blocks.offset(fold.last_block(v));
    t.divide(acc.at(f), l - f, a.type, t.size());
  }
  if (fold.folded(me)) t.send(acc.at(blocks.offset(me + 1)), acc.bytes(a.count), map.real(me + 1));
  t.copy(a.recv, acc.at(blocks.offset(me)), acc.bytes(a.count));
}

// Every rank holds block `me` (relative numbering) of out, or (`own`, a rank whose group is its
// block alone) sends it from there on the first step and then copies it into out; afterwards all
// blocks.
void allgather_blocks(Transport& t, Buf out, const Blocks& blocks, int me, const RankMap& map,
                      const void* own = nullptr) {
  const Fold fold(t.size());
  if (fold.is_extra(me)) {
    t.send(out.at(blocks.offset(me)), out.bytes(blocks.size(me)), map.real(me - 1));
  } else if (fold.folded(me)) {
    t.recv(out.at(blocks.offset(me + 1)), out.bytes(blocks.size(me + 1)), map.real(me + 1));
  }
  doubling(t, out, fold, me, map, folded_groups(blocks, fold), own);
}

// A rank whose group is its own block alone (not folded with a neighbour's) sends it from the send
// buffer, which it has not just written, and copies it into place after that first step (as the
// ring allgather: ring.cpp); the others copy it first, as their first messages carry it from `out`.
void allgather(Transport& t, const CollArgs& a) {
  const std::size_t es = type_size(a.type);
  const int me = t.rank();
  Buf out{a.recv, es};
  const Blocks blocks{a.count * static_cast<std::size_t>(t.size()), t.size()};
  const bool in_place = a.send == out.at(blocks.offset(me));
  const bool alone = !Fold(t.size()).folded(me);
  if (!in_place && !alone) t.copy(out.at(blocks.offset(me)), a.send, out.bytes(a.count));
  allgather_blocks(t, out, blocks, me, RankMap{t.size(), 0}, in_place || !alone ? nullptr : a.send);
  if (!in_place && alone && t.size() == 1) t.copy(out.base, a.send, out.bytes(a.count));  // no step to send it
}

// van de Geijn: scatter the root's array in p blocks, then allgather them. The root scatters from
// the send buffer, which it has not just written (as the allgather sends a rank's own block), and
// the allgather brings every block back into its receive buffer but its own: the root sends that
// from the send buffer too where it is a group of its own in the fold (copying it in after the
// first step), else copies it in first. No copy of the whole array.
void broadcast(Transport& t, const CollArgs& a) {
  const std::size_t es = type_size(a.type);
  const RankMap map{t.size(), a.root};
  const int me = map.rel(t.rank());
  Buf out{a.recv, es};
  const Blocks blocks{a.count, t.size()};
  const bool apart = me == 0 && a.send != a.recv;  // the root, its array not in place
  detail::binomial_scatter(
      t, apart ? detail::cbuf(a.send, es) : out, t.size(), me, [&](int u) { return map.real(u); },
      [&](int lo, int hi) {
        return std::pair{blocks.offset(lo), blocks.offset(hi)};
      });
  const bool send_own = apart && t.size() > 1 && !Fold(t.size()).folded(me);
  if (apart && !send_own) t.copy(out.base, a.send, out.bytes(blocks.size(0)));
  allgather_blocks(t, out, blocks, me, map, send_own ? a.send : nullptr);
}

// Rabenseifner's reduce: recursive-halving reduce-scatter, then a binomial gather of the
// groups to virtual rank 0, which is the root (relative rank 0 is never folded away).
void reduce(Transport& t, const CollArgs& a) {
  const std::size_t es = type_size(a.type);
  const Fold fold(t.size());
  const RankMap map{t.size(), a.root};
  const int me = map.rel(t.rank());
  Buf in = detail::cbuf(a.send, es);
  Buf tmp{t.scratch(0, in.bytes(a.count)), es};
  Buf acc = me == 0 ? Buf{a.recv, es} : Buf{t.scratch(1, in.bytes(a.count)), es};
  const UnitRange groups = even_groups(a.count, fold.p2);
  if (!halving(t, a, in, acc, tmp, fold, me, map, groups)) return;
  const int v = fold.virt(me);
  if (a.op == ReduceOp::avg) {
    const auto [f, l] = groups(v, v + 1);
    t.divide(acc.at(f), l - f, a.type, t.size());
  }
  detail::binomial_gather(
      t, acc, fold.p2, v, [&](int u) { return map.real(fold.rel_of(u)); }, groups);
}

class RhdAlgorithm final : public Algorithm {
 public:
  std::string_view name() const override { return "rhd"; }
  std::string_view description() const override {
    return "recursive halving/doubling: Rabenseifner allreduce and reduce, recursive-halving reducescatter, "
           "recursive-doubling allgather, scatter+allgather broadcast";
  }
  bool supports(Collective c) const override {
    return c == Collective::allreduce || c == Collective::reducescatter || c == Collective::allgather ||
           c == Collective::reduce || c == Collective::broadcast;
  }
  void run(Transport& t, const CollArgs& a, const AlgoOptions&) const override {
    switch (a.coll) {
      case Collective::allreduce:
        return allreduce(t, a);
      case Collective::reducescatter:
        return reducescatter(t, a);
      case Collective::allgather:
        return allgather(t, a);
      case Collective::reduce:
        return reduce(t, a);
      case Collective::broadcast:
        return broadcast(t, a);
      case Collective::alltoall:
      case Collective::gather:
      case Collective::scatter:
      case Collective::sendrecv:
      case Collective::alltoallv:
        detail::unsupported(name(), a.coll);
    }
  }
  std::optional<Cost> cost(Collective c, int p, double, const AlgoOptions&) const override {
    const std::optional<CostTerms> t = rhd_cost_terms(c, p);  // the report's textbook curves' too
    if (!t) return std::nullopt;
    return Cost{t->alpha_count, t->beta_factor, t->gamma_factor};
  }
};

}  // namespace

const Algorithm& rhd_algorithm() {
  static const RhdAlgorithm instance;
  return instance;
}

}  // namespace commscope
