// Binomial-tree scatter, gather, broadcast and reduce, shared by the tree and rhd algorithms.
#include "common.hpp"

namespace commscope::detail {

int binomial_subtree(int u, int n) {
  int mask = 1;
  while (mask < n && !(u & mask)) mask <<= 1;
  return std::min(mask, n - u);
}

void binomial_scatter(Transport& t, Buf buf, int n, int me, const UnitToRank& real, const UnitRange& range) {
  int mask = 1;
  while (mask < n) {
    if (me & mask) {
      const auto [first, last] = range(me, std::min(me + mask, n));
      t.recv(buf.at(first), buf.bytes(last - first), real(me - mask));
      break;
    }
    mask <<= 1;
  }
  for (mask >>= 1; mask > 0; mask >>= 1) {
    if (me + mask < n) {
      const auto [first, last] = range(me + mask, std::min(me + 2 * mask, n));
      t.send(buf.at(first), buf.bytes(last - first), real(me + mask));
    }
  }
}

void binomial_gather(Transport& t, Buf buf, int n, int me, const UnitToRank& real, const UnitRange& range,
                     const void* own) {
  for (int mask = 1; mask < n; mask <<= 1) {
    if (me & mask) {
      const auto [first, last] = range(me, me + binomial_subtree(me, n));
      t.send(own && binomial_leaf(me, n) ? own : buf.at(first), buf.bytes(last - first), real(me - mask));
      return;
    }
    if (me + mask < n) {
      const auto [first, last] = range(me + mask, std::min(me + 2 * mask, n));
      t.recv(buf.at(first), buf.bytes(last - first), real(me + mask));
    }
  }
}

void binomial_bcast(Transport& t, Buf buf, std::size_t count, int n, int me, const UnitToRank& real) {
  int mask = 1;
  while (mask < n) {
    if (me & mask) {
      t.recv(buf.base, buf.bytes(count), real(me - mask));
      break;
    }
    mask <<= 1;
  }
  for (mask >>= 1; mask > 0; mask >>= 1) {
    if (me + mask < n) t.send(buf.base, buf.bytes(count), real(me + mask));
  }
}

void binomial_reduce(Transport& t, Buf in, Buf acc, Buf tmp, std::size_t count, DataType type, ReduceOp op, int n,
                     int me, const UnitToRank& real) {
  const void* cur = in.base;  // where this unit's partial result lives so far
  for (int mask = 1; mask < n; mask <<= 1) {
    if (me & mask) {
      t.send(cur, in.bytes(count), real(me - mask));
      return;
    }
    if (me + mask < n) {
      t.recv(tmp.base, tmp.bytes(count), real(me + mask));
      t.reduce(acc.base, cur, tmp.base, count, type, op);
      cur = acc.base;
    }
  }
  if (cur != acc.base) t.copy(acc.base, cur, acc.bytes(count));  // root of a 1-unit tree
}

}  // namespace commscope::detail
