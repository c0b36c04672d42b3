// Ring algorithms (bandwidth-optimal, latency linear in p), pipelined in segments.
//   allreduce:     ring reduce-scatter + ring allgather   2(p-1)a + 2(p-1)/p nB + (p-1)/p nG
//   reducescatter: ring                                  (p-1)a + (p-1)/p n(B+G)
//   allgather:     ring                                  (p-1)a + (p-1)/p nB
//   reduce:        pipelined chain ending at the root    (p-2+k)(a + n/k (B+G)), k segments
//   broadcast:     pipelined chain starting at the root  (p-2+k)(a + n/k B)
//   alltoall:      pairwise exchange, p-1 steps          (p-1)a + (p-1)/p nB
//   gather:        chain to the root, a block a step     (p-1)a + (p-1)/p nB
//   scatter:       chain from the root, a block a step   (p-1)a + (p-1)/p nB
//   sendrecv:      the ring shift, one message           a + nB
//   alltoallv:     pairwise exchange, p-1 steps          none: a step lasts as long as the larger
//                                                        of its blocks, which the pattern decides
#include <algorithm>
#include <cmath>
#include <functional>

#include "common.hpp"

namespace commscope {
namespace {

using detail::Blocks;
using detail::Buf;

std::size_t segment_elems(const AlgoOptions& o, std::size_t esize) {
  return std::max<std::size_t>(1, o.segment_bytes / esize);
}

// One ring reduce-scatter step, pipelined: send `slen` elements at `sbuf` to `to`, receive
// `rlen` elements from `from` and store dst = local op received. The receive of segment j+1
// is in flight while segment j is reduced (double-buffered scratch slots 0 and 1).
void exchange_reduce(Transport& t, const CollArgs& a, const AlgoOptions& o, Buf sbuf, std::size_t slen, int to,
                     Buf local, Buf dst, std::size_t rlen, int from) {
  const std::size_t seg = segment_elems(o, sbuf.esize);
  const std::size_t ns = (slen + seg - 1) / seg, nr = (rlen + seg - 1) / seg, nmax = std::max(ns, nr);
  const std::size_t tmp_elems = std::min(seg, rlen);
  Buf tmp[2] = {{t.scratch(0, sbuf.bytes(tmp_elems)), sbuf.esize}, {t.scratch(1, sbuf.bytes(tmp_elems)), sbuf.esize}};
  auto seg_len = [&](std::size_t len, std::size_t j) { return std::min(seg, len - j * seg); };
  auto post = [&](std::size_t j) {
    if (j < nr) t.post_recv(tmp[j & 1].base, sbuf.bytes(seg_len(rlen, j)), from);
    if (j < ns) t.post_send(sbuf.at(j * seg), sbuf.bytes(seg_len(slen, j)), to);
  };
  post(0);
  for (std::size_t j = 0; j < nmax; ++j) {
    t.wait();  // segment j has arrived (and segment j-1's reduction is done)
    if (j + 1 < nmax) post(j + 1);
    if (j < nr) t.reduce(dst.at(j * seg), local.at(j * seg), tmp[j & 1].base, seg_len(rlen, j), a.type, a.op);
  }
}

// Ring reduce-scatter over `blocks` of `in`, leaving rank r's fully reduced block r at
// block_dst(r, last step). block_dst(b, step) says where the partial result of block b
// received at `step` is kept; the next step sends it on.
template <typename BlockDst>
void ring_reduce_scatter(Transport& t, const CollArgs& a, const AlgoOptions& o, Buf in, const Blocks& blocks,
                         BlockDst block_dst) {
  const int p = t.size(), r = t.rank();
  const int right = (r + 1) % p, left = (r - 1 + p) % p;
  Buf prev{};  // where the block received last step was reduced into
  for (int s = 0; s < p - 1; ++s) {
    const int sb = ((r - s - 1) % p + p) % p;  // block sent at this step
    const int rb = ((r - s - 2) % p + p) % p;  // block received and reduced at this step
    Buf src = s == 0 ? Buf{in.at(blocks.offset(sb)), in.esize} : prev;
    Buf dst = block_dst(rb, s);
    exchange_reduce(t, a, o, src, blocks.size(sb), right, Buf{in.at(blocks.offset(rb)), in.esize}, dst, blocks.size(rb),
                    left);
    prev = dst;
  }
}

// Ring allgather of `blocks` in place in `buf`, where rank r holds block r, or sends it from
// `own` on the first step (allgather's send buffer, copied into `buf` after the ring): a buffer the
// rank has not just written. A receiver that reads a sender's lines just modified in its core's
// cache waits for them to be handed over: at 2 ranks on the 2-core VM the 1 MiB allgather went from
// 6.45 to 9.35 GB/s busbw (256 KiB: 4.42 to 8.29; MPI_Allgather beside it 9.8 and 9.7; medians of
// 8 runs of each build in turn), and in the VM's slow state, when that handover is slower still
// (docs/verdicts.md, "Stable inputs"), the old build read 1.7 GB/s.
void ring_allgather(Transport& t, Buf buf, const Blocks& blocks, const void* own = nullptr) {
  const int p = t.size(), r = t.rank();
  const int right = (r + 1) % p, left = (r - 1 + p) % p;
  for (int s = 0; s < p - 1; ++s) {
    const int sb = ((r - s) % p + p) % p, rb = ((r - s - 1) % p + p) % p;
    t.sendrecv(s == 0 && own ? own : buf.at(blocks.offset(sb)), buf.bytes(blocks.size(sb)), right,
               buf.at(blocks.offset(rb)), buf.bytes(blocks.size(rb)), left);
  }
}

void allreduce(Transport& t, const CollArgs& a, const AlgoOptions& o) {
  const std::size_t es = type_size(a.type);
  const int p = t.size(), r = t.rank();
  Buf in = detail::cbuf(a.send, es), out{a.recv, es};
  const Blocks blocks{a.count, p};
  if (p == 1) {
    t.copy(out.base, in.base, out.bytes(a.count));
  } else {
    ring_reduce_scatter(t, a, o, in, blocks, [&](int b, int) { return Buf{out.at(blocks.offset(b)), es}; });
  }
  if (a.op == ReduceOp::avg) t.divide(out.at(blocks.offset(r)), blocks.size(r), a.type, p);
  ring_allgather(t, out, blocks);
}

void reducescatter(Transport& t, const CollArgs& a, const AlgoOptions& o) {
  const std::size_t es = type_size(a.type);
  const int p = t.size();
  Buf in = detail::cbuf(a.send, es), out{a.recv, es};
  const Blocks blocks{a.count * static_cast<std::size_t>(p), p};
  if (p == 1) {
    t.copy(out.base, in.base, out.bytes(a.count));
  } else {
    // Intermediate blocks alternate between scratch slots 2 and 3; the last one is ours.
    Buf acc[2] = {{t.scratch(2, out.bytes(a.count)), es}, {t.scratch(3, out.bytes(a.count)), es}};
    ring_reduce_scatter(t, a, o, in, blocks, [&](int, int s) { return s == p - 2 ? out : acc[s & 1]; });
  }
  if (a.op == ReduceOp::avg) t.divide(out.base, a.count, a.type, p);
}

void allgather(Transport& t, const CollArgs& a) {
  const std::size_t es = type_size(a.type);
  const int p = t.size(), r = t.rank();
  Buf out{a.recv, es};
  const Blocks blocks{a.count * static_cast<std::size_t>(p), p};
  // The rank's own block goes out from the send buffer and is copied into place after the ring
  // (no step reads it from `out`; in place, it is there already).
  const bool in_place = a.send == out.at(blocks.offset(r));
  ring_allgather(t, out, blocks, in_place ? nullptr : a.send);
  if (!in_place) t.copy(out.at(blocks.offset(r)), a.send, out.bytes(a.count));
}

// Chain root <- 1 <- 2 <- ... <- p-1 in relative ranks, one segment at a time.
void reduce(Transport& t, const CollArgs& a, const AlgoOptions& o) {
  const std::size_t es = type_size(a.type);
  const detail::RankMap map{t.size(), a.root};
  const int p = t.size(), v = map.rel(t.rank());
  Buf in = detail::cbuf(a.send, es), out{a.recv, es};
  if (p == 1) {
    t.copy(out.base, in.base, out.bytes(a.count));
  } else {
    const std::size_t seg = segment_elems(o, es), nseg = (a.count + seg - 1) / seg;
    const std::size_t seg_cap = std::min(seg, a.count);
    Buf tmp[2] = {{t.scratch(0, in.bytes(seg_cap)), es}, {t.scratch(1, in.bytes(seg_cap)), es}};
    Buf acc[2] = {{t.scratch(2, in.bytes(seg_cap)), es}, {t.scratch(3, in.bytes(seg_cap)), es}};
    const int from = map.real(v + 1), to = map.real(v - 1 + p);
    for (std::size_t j = 0; j < nseg; ++j) {
      const std::size_t len = std::min(seg, a.count - j * seg);
      if (v < p - 1) t.post_recv(tmp[j & 1].base, in.bytes(len), from);
      t.wait();  // segment j in, segment j-1 out
      const void* result = in.at(j * seg);
      if (v < p - 1) {
        void* dst = v == 0 ? out.at(j * seg) : acc[j & 1].base;
        t.reduce(dst, in.at(j * seg), tmp[j & 1].base, len, a.type, a.op);
        result = dst;
      }
      if (v > 0) t.post_send(result, in.bytes(len), to);
    }
    t.wait();
  }
  if (v == 0 && a.op == ReduceOp::avg) t.divide(out.base, a.count, a.type, p);
}

// Chain root -> 1 -> 2 -> ... -> p-1 in relative ranks, one segment at a time. The root sends
// from the send buffer, which it has not just written, and copies it into its receive buffer after
// (as the allgathers send a rank's own block, above).
void broadcast(Transport& t, const CollArgs& a, const AlgoOptions& o) {
  const std::size_t es = type_size(a.type);
  const detail::RankMap map{t.size(), a.root};
  const int p = t.size(), v = map.rel(t.rank());
  Buf out{a.recv, es};
  const Buf from = v == 0 ? detail::cbuf(a.send, es) : out;
  const std::size_t seg = segment_elems(o, es), nseg = (a.count + seg - 1) / seg;
  for (std::size_t j = 0; j < nseg; ++j) {
    const std::size_t len = std::min(seg, a.count - j * seg);
    if (v > 0) {
      t.post_recv(out.at(j * seg), out.bytes(len), map.real(v - 1));
      t.wait();  // segment j in, segment j-1 forwarded
    }
    if (v < p - 1) t.post_send(from.at(j * seg), out.bytes(len), map.real(v + 1));
  }
  t.wait();
  if (v == 0 && a.send != a.recv) t.copy(out.base, a.send, out.bytes(a.count));
}

// A block of a peer's data in a buffer, in elements.
struct Block {
  std::size_t offset = 0, count = 0;
};
using PeerBlock = std::function<Block(int peer)>;

// Pairwise exchange: at step s rank r swaps blocks with peer (s - r) mod p, which picks r
// back, so the exchange also works in place (through a scratch block).
void pairwise(Transport& t, Buf in, Buf out, bool in_place, const PeerBlock& sent, const PeerBlock& received) {
  const int p = t.size(), r = t.rank();
  for (int s = 0; s < p; ++s) {
    const int peer = ((s - r) % p + p) % p;
    const Block sb = sent(peer), rb = received(peer);
    if (peer == r) {
      t.copy(out.at(rb.offset), in.at(sb.offset), out.bytes(rb.count));
    } else if (in_place) {
      Buf tmp{t.scratch(0, out.bytes(rb.count)), out.esize};
      t.sendrecv(in.at(sb.offset), in.bytes(sb.count), peer, tmp.base, tmp.bytes(rb.count), peer);
      t.copy(out.at(rb.offset), tmp.base, out.bytes(rb.count));
    } else {
      t.sendrecv(in.at(sb.offset), in.bytes(sb.count), peer, out.at(rb.offset), out.bytes(rb.count), peer);
    }
  }
}

void alltoall(Transport& t, const CollArgs& a) {
  const std::size_t es = type_size(a.type);
  const PeerBlock block = [&](int peer) { return Block{static_cast<std::size_t>(peer) * a.count, a.count}; };
  pairwise(t, detail::cbuf(a.send, es), Buf{a.recv, es}, a.send == a.recv, block, block);
}

void alltoallv(Transport& t, const CollArgs& a) {
  const std::size_t es = type_size(a.type);
  const auto j = [](int peer) { return static_cast<std::size_t>(peer); };
  const PeerBlock sent = [&](int peer) { return Block{a.send_displs[j(peer)], a.send_counts[j(peer)]}; };
  const PeerBlock received = [&](int peer) { return Block{a.recv_displs[j(peer)], a.recv_counts[j(peer)]}; };
  pairwise(t, detail::cbuf(a.send, es), Buf{a.recv, es}, false, sent, received);
}

// Chain p-1 -> ... -> 1 -> root in relative ranks, one block per step: rank v sends its own
// block, then forwards those of v+1 .. p-1 one step after they arrive (double-buffered scratch),
// so the root receives one block per step for p-1 steps.
void gather(Transport& t, const CollArgs& a) {
  const std::size_t es = type_size(a.type), blk = a.count;
  const detail::RankMap map{t.size(), a.root};
  const int p = t.size(), v = map.rel(t.rank());
  Buf out{a.recv, es};
  if (v == 0) {
    const auto at = [&](int rel) { return out.at(static_cast<std::size_t>(map.real(rel)) * blk); };
    t.copy(at(0), a.send, out.bytes(blk));
    for (int b = 1; b < p; ++b) t.recv(at(b), out.bytes(blk), map.real(1));
    return;
  }
  Buf tmp[2] = {{t.scratch(0, out.bytes(blk)), es}, {t.scratch(1, out.bytes(blk)), es}};
  for (int s = 0; v + s < p; ++s) {  // step s sends block v + s and receives block v + s + 1
    if (v + s + 1 < p) t.post_recv(tmp[s & 1].base, out.bytes(blk), map.real(v + 1));
    t.post_send(s == 0 ? a.send : tmp[(s - 1) & 1].base, out.bytes(blk), map.real(v - 1));
    t.wait();
  }
}

// Chain root -> 1 -> ... -> p-1 in relative ranks: the root sends the blocks of p-1, p-2, ..., 1
// in that order; rank v receives blocks p-1 down to v, keeps the last (its own) and forwards
// each of the others one step after it arrives.
void scatter(Transport& t, const CollArgs& a) {
  const std::size_t es = type_size(a.type), blk = a.count;
  const detail::RankMap map{t.size(), a.root};
  const int p = t.size(), v = map.rel(t.rank());
  Buf in = detail::cbuf(a.send, es);
  if (v == 0) {
    const auto at = [&](int rel) { return in.at(static_cast<std::size_t>(map.real(rel)) * blk); };
    t.copy(a.recv, at(0), in.bytes(blk));
    for (int b = p - 1; b > 0; --b) t.send(at(b), in.bytes(blk), map.real(1));
    return;
  }
  Buf tmp[2] = {{t.scratch(0, in.bytes(blk)), es}, {t.scratch(1, in.bytes(blk)), es}};
  for (int s = 0; p - 1 - s >= v; ++s) {  // step s receives block p-1-s and forwards block p-s
    t.post_recv(p - 1 - s == v ? a.recv : tmp[s & 1].base, in.bytes(blk), map.real(v - 1));
    if (s > 0) t.post_send(tmp[(s - 1) & 1].base, in.bytes(blk), map.real(v + 1));
    t.wait();
  }
}

// The ring shift: one message to the right, one from the left. In place, the incoming message
// lands in scratch and is copied over the input once the outgoing one has left.
void sendrecv(Transport& t, const CollArgs& a) {
  const std::size_t bytes = a.count * type_size(a.type);
  const int p = t.size(), r = t.rank();
  if (p == 1) return t.copy(a.recv, a.send, bytes);
  void* dst = a.send == a.recv ? t.scratch(0, bytes) : a.recv;
  t.sendrecv(a.send, bytes, (r + 1) % p, dst, bytes, (r - 1 + p) % p);
  t.copy(a.recv, dst, bytes);
}

class RingAlgorithm final : public Algorithm {
 public:
  std::string_view name() const override { return "ring"; }
  std::string_view description() const override {
    return "ring reduce-scatter/allgather, pipelined chain reduce/broadcast/gather/scatter, pairwise "
           "alltoall/alltoallv, ring shift sendrecv";
  }
  bool supports(Collective) const override { return true; }
  void run(Transport& t, const CollArgs& a, const AlgoOptions& o) const override {
    switch (a.coll) {
      case Collective::allreduce:
        return allreduce(t, a, o);
      case Collective::reducescatter:
        return reducescatter(t, a, o);
      case Collective::allgather:
        return allgather(t, a);
      case Collective::reduce:
        return reduce(t, a, o);
      case Collective::broadcast:
        return broadcast(t, a, o);
      case Collective::alltoall:
        return alltoall(t, a);
      case Collective::gather:
        return gather(t, a);
      case Collective::scatter:
        return scatter(t, a);
      case Collective::sendrecv:
        return sendrecv(t, a);
      case Collective::alltoallv:
        return alltoallv(t, a);
    }
  }
  std::optional<Cost> cost(Collective c, int p, double n, const AlgoOptions& o) const override {
    // The terms the report's ring and pairwise-exchange curves use, and the chains'.
    const std::optional<CostTerms> t = ring_cost_terms(c, p, n, static_cast<double>(o.segment_bytes));
    if (!t) return std::nullopt;
    return Cost{t->alpha_count, t->beta_factor, t->gamma_factor};
  }
};

}  // namespace

const Algorithm& ring_algorithm() {
  static const RingAlgorithm instance;
  return instance;
}

}  // namespace commscope
