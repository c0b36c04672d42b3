// Building blocks shared by the ring, tree and rhd algorithms (internal header).
#pragma once

#include <algorithm>
#include <cstddef>
#include <functional>
#include <string>

#include "commscope/collectives/algorithm.hpp"
#include "commscope/collectives/error.hpp"
#include "commscope/collectives/types.hpp"

namespace commscope::detail {

// A buffer of elements of one type: typed pointer arithmetic over a void*.
struct Buf {
  void* base = nullptr;
  std::size_t esize = 1;
  void* at(std::size_t elem) const { return static_cast<std::byte*>(base) + elem * esize; }
  std::size_t bytes(std::size_t elems) const { return elems * esize; }
};
inline Buf cbuf(const void* p, std::size_t esize) {
  return {const_cast<void*>(p), esize};
}

// `count` elements cut into `parts` contiguous blocks whose sizes differ by at most one
// (the first count % parts blocks get the extra element).
struct Blocks {
  std::size_t count = 0;
  int parts = 1;
  std::size_t offset(int i) const {
    const auto ui = static_cast<std::size_t>(i), np = static_cast<std::size_t>(parts);
    return ui * (count / np) + std::min(ui, count % np);
  }
  std::size_t size(int i) const { return offset(i + 1) - offset(i); }
  // Elements of blocks [lo, hi).
  std::size_t span(int lo, int hi) const { return offset(hi) - offset(lo); }
};

// Relative numbering for rooted algorithms: relative rank 0 is the root.
struct RankMap {
  int p = 1;
  int root = 0;
  int rel(int real) const { return (real - root + p) % p; }
  int real(int rel) const { return (rel + root) % p; }
};

// Folding p ranks onto the largest power of two p2 <= p for recursive halving/doubling:
// among the first 2*rem relative ranks (rem = p - p2) the odd ones are "extra": they hand
// their data to the even neighbour below and sit out the power-of-two phase. Relative rank 0
// is never extra, so a root keeps its place.
struct Fold {
  int p = 1;
  int p2 = 1;
  int rem = 0;
  explicit Fold(int nranks) : p(nranks) {
    while (p2 * 2 <= p) p2 *= 2;
    rem = p - p2;
  }
  // In one of the first rem pairs: the even rank takes its odd neighbour's part (is_extra: the odd
  // one); the others' groups are their own blocks alone.
  bool folded(int rel) const { return rel < 2 * rem; }
  bool is_extra(int rel) const { return folded(rel) && (rel & 1); }
  // Virtual rank in [0, p2) of a non-extra relative rank, and back.
  int virt(int rel) const { return folded(rel) ? rel / 2 : rel - rem; }
  int rel_of(int v) const { return v < rem ? 2 * v : v + rem; }
  // Original blocks [first, last) that virtual rank v stands for (its own, plus its extra's).
  int first_block(int v) const { return v < rem ? 2 * v : v + rem; }
  int last_block(int v) const { return v < rem ? 2 * v + 2 : v + rem + 1; }
};

inline int ceil_log2(int p) {
  int l = 0;
  while ((1 << l) < p) ++l;
  return l;
}
inline int floor_log2(int p) {
  int l = 0;
  while ((2 << l) <= p) ++l;
  return l;
}

[[noreturn]] inline void unsupported(std::string_view algo, Collective c) {
  throw UnsupportedCollective("algorithm '" + std::string(algo) + "' has no " + std::string(to_string(c)));
}

// ---- binomial trees over `n` units numbered 0..n-1 with unit 0 the root; unit u is rank
// real(u). `range(lo, hi)` gives the element range [first, last) of units [lo, hi) in buf.

using UnitToRank = std::function<int(int)>;
using UnitRange = std::function<std::pair<std::size_t, std::size_t>(int, int)>;

// Size of unit u's subtree: it holds units [u, u + binomial_subtree(u, n)) of a binomial tree
// of n units rooted at 0.
int binomial_subtree(int u, int n);
// A leaf: a unit other than the root whose subtree is itself alone (it only sends, once).
inline bool binomial_leaf(int u, int n) {
  return u != 0 && binomial_subtree(u, n) == 1;
}

// Root's buf holds every unit's range; afterwards unit u holds units [u, u + subtree) in buf.
void binomial_scatter(Transport& t, Buf buf, int n, int me, const UnitToRank& real, const UnitRange& range);
// Every unit holds its own range in buf; afterwards the root holds all of them. A leaf
// (binomial_leaf) sends from `own` where given, its send
// buffer, instead of from buf: the leaf need not copy its range into buf first, and a buffer it
// has not just written sends faster (ring.cpp's allgather).
void binomial_gather(Transport& t, Buf buf, int n, int me, const UnitToRank& real, const UnitRange& range,
                     const void* own = nullptr);
// Root's buf[0, count) goes to every unit's buf.
void binomial_bcast(Transport& t, Buf buf, std::size_t count, int n, int me, const UnitToRank& real);
// acc = in reduced over all units, at the root; non-roots use acc as their accumulator.
// `in` may equal `acc`. tmp must hold count elements.
void binomial_reduce(Transport& t, Buf in, Buf acc, Buf tmp, std::size_t count, DataType type, ReduceOp op, int n,
                     int me, const UnitToRank& real);

}  // namespace commscope::detail
