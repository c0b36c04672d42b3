// Shared memory among the ranks of one node: every rank copies a chunk of its input into a slot
// of a node segment (MPI_Win_allocate_shared) and reads its peers' slots directly; sequence-number
// flags in the segment order the steps, with no MPI call per chunk. A step moves at most
// ShmOptions::chunk_bytes per rank (blocked collectives: that divided among the p blocks);
// a rank reuses a slot once every peer is done with the step that last filled it, so with
// kShmSlotsPerRank slots a fast rank runs ahead of slow ones by that many steps.
//
// Costs, for k steps, B the time per byte of a copy between cores, G of a reduction, n the
// array size as nccl-tests counts it (busbw factors are those of every algorithm):
//   allreduce one-shot (n < two_shot_bytes): copy in, every rank reduces all p slots
//                                                      k a + nB + (p-1) nG
//   allreduce two-shot: copy in the p-1 other slices, rank r reduces slice r of every slot (its
//                  own from its input) into its slot, then every rank copies out the p reduced
//                  slices (its own from its caches)   2k a + (2p-1)/p nB + (p-1)/p nG
//   reduce: one-shot (the root reduces; it fills no slot, reading its own elements from its
//                  input) below the same switch, two-shot (slices reduced in parallel, the root
//                  copies them out) above: as allreduce
//   reducescatter: copy in the p-1 other blocks, rank r reduces block r of every slot and of
//                  its input                           k a + (p-1)/p nB + (p-1)/p nG
//                  (its block streamed: all p blocks through the slot, nB)
//   allgather, gather: copy in, copy out the own block and the p-1 others'   k a + (p+1)/p nB
//                  (gather: the root copies in nothing, as no peer reads its slot   k a + nB)
//   broadcast: the root copies its array into its output, then in; the others copy out
//                                                                      k a + 2nB
//   scatter: the root copies in (its own block out), the others copy out   k a + nB
//   alltoall: copy in all p blocks, copy out block r of every slot  k a + (2p-1)/p nB
//   sendrecv: copy in, the right neighbour copies out                  k a + 2nB
// Direct (where the kernel lets ranks read each other's memory; from ShmOptions::direct_bytes
// always, off by default, and from adapt_bytes when it measured faster than the slots at the
// call's size class): one step for the whole call, whose flags publish the buffers' addresses;
// each rank copies what it needs straight from its peers' buffers (process_vm_readv), so
// every byte is copied once instead of into the segment and out again:
//   allgather, gather: read the p-1 other blocks        a + (p-1)/p nB
//   broadcast, scatter: read (a block of) the root's    a + nB (scatter: (p-1)/p nB)
//   reducescatter: read block r of the p-1 others' inputs, reduce   a + (p-1)/p nB + (p-1)/p nG
//   allreduce: the same into slice r of the output, then read the p-1 other slices from their
//              owners' outputs                            2a + 2(p-1)/p nB + (p-1)/p nG
// Every element is combined in one order for all ranks (one-shot: rank order on every rank;
// two-shot: by its slice's owner alone), so all ranks get identical bits.
// A communicator whose ranks span nodes is refused (UnsupportedCollective).
#include <algorithm>
#include <bit>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <memory>
#include <sstream>
#include <string>
#include <thread>
#include <type_traits>

#if defined(__SSE2__)
#include <immintrin.h>
#endif

#include "../shm_segment.hpp"
#include "common.hpp"
#include "commscope/collectives/mpi_transport.hpp"
#include "commscope/collectives/shm_options.hpp"
#include "shm_steps.hpp"

namespace commscope {

// shm's cost settings from the options on a node of `node_ranks` ranks (hier prices its node
// level with them too).
ShmCostSettings shm_cost_settings(const AlgoOptions& o, int node_ranks);
namespace {

using namespace shm_detail;

std::size_t ceil_div(std::size_t a, std::size_t b) {
  return (a + b - 1) / b;
}

// Elements per step and per block: a rank's chunk divided among `blocks` blocks, rounded down
// to whole 64-byte lines where that leaves at least one.
std::size_t step_elems(const ShmOptions& o, std::size_t es, int blocks) {
  const std::size_t chunk = std::clamp<std::size_t>(o.chunk_bytes, 1, kShmSlotBytes);
  std::size_t n = std::max<std::size_t>(1, chunk / es / static_cast<std::size_t>(blocks));
  const std::size_t line = 64 / es;
  if (n >= line) n -= n % line;
  return n;
}

// dst[0, n) = the ranks' elements combined, rank q's at src(q): rank `first`'s, then the others
// in rank order. Ranks that must agree bit for bit pass the same `first`; src(q) may be dst
// only for q == first.
template <typename Src>
void reduce_ranks(MpiTransport& t, const CollArgs& a, void* dst, std::size_t n, int p, int first, Src src) {
  if (p == 1) {
    t.copy(dst, src(0), n * type_size(a.type));
  } else {
    bool started = false;
    for (int q = 0; q < p; ++q) {
      if (q == first) continue;
      if (started) {
        t.reduce(dst, dst, src(q), n, a.type, a.op);
      } else {
        const void* lhs = src(first);  // evaluated first: waits in a fixed order
        t.reduce(dst, lhs, src(q), n, a.type, a.op);
        started = true;
      }
    }
  }
  if (a.op == ReduceOp::avg) t.divide(dst, n, a.type, p);
}

// reduce_ranks into the caller's output. Streamed, in pieces that stay in L1: reduced into a
// scratch piece, then streamed out.
// `first`: the rank whose elements come first (all ranks that must agree pass the same); its
// src may be `out` where the output is not streamed.
template <typename Src>
void reduce_out(Steps& s, const CollArgs& a, void* out, std::size_t n, Src src, int first = 0) {
  const std::size_t es = type_size(a.type);
  if (!s.stream) return reduce_ranks(s.t, a, out, n, s.p, first, src);
  constexpr std::size_t kPieceBytes = 16 << 10;
  const std::size_t piece = std::max<std::size_t>(1, kPieceBytes / es);
  void* tmp = s.t.scratch(0, piece * es);
  for (std::size_t i = 0; i < n; i += piece) {
    const std::size_t len = std::min(piece, n - i);
    reduce_ranks(s.t, a, tmp, len, s.p, first, [&](int q) { return static_cast<const std::byte*>(src(q)) + i * es; });
    s.copy_out(static_cast<std::byte*>(out) + i * es, tmp, len * es);
  }
}

// Direct gather (`root` >= 0) or allgather: the gathering ranks read every peer's input.
void gather_direct(Steps& s, const CollArgs& a, int root) {
  const std::size_t es = type_size(a.type);
  const Buf in = detail::cbuf(a.send, es), out{a.recv, es};
  const bool gathers = root < 0 || s.me == root;
  s.finish_direct([&] {
    if (!gathers) return;
    s.t.copy(out.at(s.me * a.count), in.base, in.bytes(a.count));
    for (int k = 1; k < s.p; ++k) {
      const int q = (s.me + k) % s.p;
      s.read_send(q, 0, out.at(q * a.count), out.bytes(a.count));
    }
  });
}

// Direct broadcast, or scatter: every rank but the root reads (its block of) the root's input.
void from_root_direct(Steps& s, const CollArgs& a, bool scatter) {
  const std::size_t es = type_size(a.type);
  const Buf in = detail::cbuf(a.send, es), out{a.recv, es};
  const bool root = s.me == a.root;
  s.finish_direct([&] {
    if (root) return s.t.copy(out.base, in.at(scatter ? s.me * a.count : 0), in.bytes(a.count));
    s.read_send(a.root, in.bytes(scatter ? s.me * a.count : 0), out.base, out.bytes(a.count));
  });
}

// dst[0, n) = every rank's input elements [first, first + n) combined, this rank's first (from
// its own input, which may be dst: each element is read before it is written), the peers'
// read through the kernel a piece at a time into scratch that stays in the caches.
void reduce_from_peers(Steps& s, const CollArgs& a, void* dst, std::size_t first, std::size_t n) {
  const std::size_t es = type_size(a.type);
  const Buf in = detail::cbuf(a.send, es), out{dst, es};
  constexpr std::size_t kPieceBytes = 128 << 10;  // per peer
  const std::size_t piece = std::max<std::size_t>(1, kPieceBytes / es);
  auto* tmp = static_cast<std::byte*>(s.t.scratch(0, piece * es * static_cast<std::size_t>(s.p - 1)));
  // peer q's piece, q != me, at its distance from this rank
  auto staged = [&](int q) { return tmp + static_cast<std::size_t>((q - s.me + s.p) % s.p - 1) * piece * es; };
  for (std::size_t off = 0; off < n; off += piece) {
    const std::size_t len = std::min(piece, n - off);
    for (int k = 1; k < s.p; ++k) {
      const int q = (s.me + k) % s.p;
      s.read_send(q, in.bytes(first + off), staged(q), in.bytes(len));
    }
    reduce_ranks(s.t, a, out.at(off), len, s.p, s.me, [&](int q) -> const std::byte* {
      return q == s.me ? static_cast<const std::byte*>(in.at(first + off)) : staged(q);
    });
  }
}

// Direct reduce-scatter: rank r reduces block r of every rank's input into its output. Peers
// read only the blocks that are not theirs, which no rank writes (in place, a rank's output is
// its own block).
void reducescatter_direct(Steps& s, const CollArgs& a) {
  s.finish_direct([&] { reduce_from_peers(s, a, a.recv, static_cast<std::size_t>(s.me) * a.count, a.count); });
}

// Direct allreduce: rank r reduces slice r of every input into slice r of its output (as
// reducescatter_direct), says so, then reads every other slice from its owner's output. In place
// a rank overwrites slice q of its input only after q said slice q is reduced, so q no longer
// reads it. Each slice is reduced by its owner alone: all ranks get the same bits.
void allreduce_direct(Steps& s, const CollArgs& a) {
  const std::size_t es = type_size(a.type);
  const Buf out{a.recv, es};
  const Blocks slices{a.count, s.p};
  s.finish_direct([&] {
    reduce_from_peers(s, a, out.at(slices.offset(s.me)), slices.offset(s.me), slices.size(s.me));
    s.publish_reduced();
    for (int k = 1; k < s.p; ++k) {
      const int q = (s.me + k) % s.p;
      s.read_recv(q, out.bytes(slices.offset(q)), out.at(slices.offset(q)), out.bytes(slices.size(q)));
    }
  });
}

// allreduce, and reduce (`root` >= 0: only the root's output is written).
void all_reduce(Steps& s, const CollArgs& a, const ShmOptions& o, int root) {
  const std::size_t es = type_size(a.type);
  const std::size_t chunk = step_elems(o, es, 1);
  // Depends only on arguments every rank passes alike, so all ranks take the same variant.
  const bool two_shot = s.p > 1 && a.count * es >= shm_two_shot_switch(o, s.p, s.t.yield_when_idle());
  const Buf in = detail::cbuf(a.send, es), out{a.recv, es};
  const bool writes = root < 0 || s.me == root;
  s.stream = a.count * es >= kStreamOutputBytes;
  s.set_step_bytes(std::min(chunk, a.count) * es);
  const std::size_t nsteps = ceil_div(a.count, chunk);
  auto len_of = [&](std::size_t i) { return std::min(chunk, a.count - i * chunk); };
  if (!two_shot) {
    // Every rank combines in rank order, so all get the same bits. Own elements come from the
    // input (one pass fewer) unless it is the output, which the reduction overwrites.
    const bool own_input = a.send != a.recv;
    // In a reduce only the root reads the slots, its own elements from its input: nobody reads
    // its slot, so it fills none (the copy was the root's alone, on the call's longest path).
    const bool fills = !(root >= 0 && s.me == root && own_input);
    auto fill = [&](std::size_t i) {
      if (fills) s.t.copy(s.mine(), in.at(i * chunk), in.bytes(len_of(i)));
    };
    return s.run(nsteps, fill, [&](std::size_t i) {
      if (!writes) return;
      const std::size_t off = i * chunk;
      reduce_out(s, a, out.at(off), len_of(i), [&](int q) { return q == s.me && own_input ? in.at(off) : s.peer(q); });
    });
  }
  // Slice r of every slot is read by rank r only, so rank r reduces slice r (its own elements
  // first) into its own slot, while the peers read their slices of the same slot; the others
  // copy that result, so all ranks get the same bits. The copies out run a step late: by then
  // the peers have usually published their slices, so no rank waits on another's reduction.
  // The own slice is read from the input where that input is cache-sized, and copied into the
  // slot with the rest where it comes from memory (streamed sizes): the reduction loops read
  // memory far slower than memcpy does (reducing a 64 MiB input in place of copying it made
  // that allreduce 25% slower), while from the caches skipping the copy saves 1/p of it.
  const bool own_input = !s.stream;
  s.run(
      nsteps,
      [&](std::size_t i) {
        const Blocks slices{len_of(i), s.p};
        const std::size_t base = i * chunk;
        if (!own_input) return s.t.copy(s.mine(), in.at(base), in.bytes(len_of(i)));
        const std::size_t f = slices.offset(s.me), l = slices.size(s.me);
        s.t.copy(s.mine(), in.at(base), in.bytes(f));  // slices before the own one
        s.t.copy(s.mine() + (f + l) * es, in.at(base + f + l), in.bytes(len_of(i) - f - l));  // and after
      },
      [&](std::size_t i) {
        const Blocks slices{len_of(i), s.p};
        const std::size_t f = slices.offset(s.me);
        reduce_ranks(s.t, a, s.mine() + f * es, slices.size(s.me), s.p, s.me, [&](int q) -> const std::byte* {
          if (q == s.me && own_input) return static_cast<const std::byte*>(in.at(i * chunk + f));
          return s.peer(q) + f * es;
        });
        s.publish_reduced();
      },
      [&](std::size_t i) {
        if (!writes) return;
        const Blocks slices{len_of(i), s.p};
        for (int k = 0; k < s.p; ++k) {
          const int q = (s.me + k) % s.p;  // own slice first: it is ready
          const std::size_t f = slices.offset(q);
          s.copy_out(out.at(i * chunk + f), s.reduced(q) + f * es, out.bytes(slices.size(q)));
        }
      });
}

void reducescatter(Steps& s, const CollArgs& a, const ShmOptions& o) {
  const std::size_t es = type_size(a.type), per = step_elems(o, es, s.p);
  const Buf in = detail::cbuf(a.send, es), out{a.recv, es};
  s.stream = a.count * es >= kStreamOutputBytes;
  s.set_step_bytes(static_cast<std::size_t>(s.p) * std::min(per, a.count) * es);
  // The own block is read from the input (only this rank needs it), and combined first: in
  // place it is the output, which each element's reduction reads before it writes it. A
  // streamed one goes through the slot: arrays that large come from memory, which memcpy reads
  // faster than the reduction loop does (see all_reduce). Each block is reduced by its owner
  // alone, so no two ranks need to agree on the order.
  const bool own_input = !s.stream;
  s.run(
      ceil_div(a.count, per),
      [&](std::size_t i) {
        const std::size_t off = i * per, len = std::min(per, a.count - off);
        for (int q = 0; q < s.p; ++q)
          if (q != s.me || !own_input) s.t.copy(s.mine() + q * len * es, in.at(q * a.count + off), in.bytes(len));
      },
      [&](std::size_t i) {
        const std::size_t off = i * per, len = std::min(per, a.count - off);
        reduce_out(
            s, a, out.at(off), len,
            [&](int q) { return q == s.me && own_input ? in.at(s.me * a.count + off) : s.peer(q) + s.me * len * es; },
            own_input ? s.me : 0);
      });
}

// Every rank's `count` elements: gather (`root` >= 0) or allgather (-1).
void gather(Steps& s, const CollArgs& a, const ShmOptions& o, int root) {
  const std::size_t es = type_size(a.type), chunk = step_elems(o, es, 1);
  const Buf in = detail::cbuf(a.send, es), out{a.recv, es};
  s.stream = a.count * es * static_cast<std::size_t>(s.p) >= kStreamOutputBytes;
  s.set_step_bytes(std::min(chunk, a.count) * es);
  // The own block goes to the output chunk by chunk beside the copy into the slot, so the
  // input is read from memory once.
  const bool own_out = root < 0 || s.me == root;
  s.run(
      ceil_div(a.count, chunk),
      [&](std::size_t i) {
        const std::size_t off = i * chunk, len = std::min(chunk, a.count - off);
        if (root < 0 || s.me != root) s.t.copy(s.mine(), in.at(off), in.bytes(len));  // no peer reads the root's slot
        if (own_out) s.copy_out(out.at(s.me * a.count + off), in.at(off), in.bytes(len));
      },
      [&](std::size_t i) {
        if (root >= 0 && s.me != root) return;
        const std::size_t off = i * chunk, len = std::min(chunk, a.count - off);
        for (int k = 1; k < s.p; ++k) {
          const int q = (s.me + k) % s.p;
          s.copy_out(out.at(q * a.count + off), s.peer(q), out.bytes(len));
        }
      });
}

// The root's `count` elements to every rank: broadcast (scatter false), or its block r to
// rank r (scatter true).
void from_root(Steps& s, const CollArgs& a, const ShmOptions& o, bool scatter) {
  const std::size_t es = type_size(a.type), per = step_elems(o, es, scatter ? s.p : 1);
  const Buf in = detail::cbuf(a.send, es), out{a.recv, es};
  s.stream = a.count * es >= kStreamOutputBytes;
  s.set_step_bytes(static_cast<std::size_t>(scatter ? s.p : 1) * std::min(per, a.count) * es);
  const bool root = s.me == a.root;
  if (root) s.copy_out(out.base, in.at(scatter ? s.me * a.count : 0), in.bytes(a.count));
  s.run(
      ceil_div(a.count, per),
      [&](std::size_t i) {
        if (!root) return;
        const std::size_t off = i * per, len = std::min(per, a.count - off);
        if (!scatter) return s.t.copy(s.mine(), in.at(off), in.bytes(len));
        for (int q = 0; q < s.p; ++q)
          if (q != s.me) s.t.copy(s.mine() + q * len * es, in.at(q * a.count + off), in.bytes(len));
      },
      [&](std::size_t i) {
        if (root) return;
        const std::size_t off = i * per, len = std::min(per, a.count - off);
        s.copy_out(out.at(off), s.peer(a.root) + (scatter ? s.me * len * es : 0), out.bytes(len));
      });
}

void alltoall(Steps& s, const CollArgs& a, const ShmOptions& o) {
  const std::size_t es = type_size(a.type), per = step_elems(o, es, s.p);
  const Buf in = detail::cbuf(a.send, es), out{a.recv, es};
  s.stream = a.count * es * static_cast<std::size_t>(s.p) >= kStreamOutputBytes;
  s.set_step_bytes(static_cast<std::size_t>(s.p) * std::min(per, a.count) * es);
  s.run(
      ceil_div(a.count, per),
      [&](std::size_t i) {
        const std::size_t off = i * per, len = std::min(per, a.count - off);
        for (int q = 0; q < s.p; ++q)
          if (q != s.me) s.t.copy(s.mine() + q * len * es, in.at(q * a.count + off), in.bytes(len));
      },
      [&](std::size_t i) {
        // In place, block q of the output is block q of the input, already in the slot.
        const std::size_t off = i * per, len = std::min(per, a.count - off);
        s.copy_out(out.at(s.me * a.count + off), in.at(s.me * a.count + off), out.bytes(len));
        for (int k = 1; k < s.p; ++k) {
          const int q = (s.me + k) % s.p;
          s.copy_out(out.at(q * a.count + off), s.peer(q) + s.me * len * es, out.bytes(len));
        }
      });
}

void sendrecv(Steps& s, const CollArgs& a, const ShmOptions& o) {
  const std::size_t es = type_size(a.type), chunk = step_elems(o, es, 1);
  const Buf in = detail::cbuf(a.send, es), out{a.recv, es};
  s.stream = a.count * es >= kStreamOutputBytes;
  s.set_step_bytes(std::min(chunk, a.count) * es);
  const int left = (s.me - 1 + s.p) % s.p;
  s.run(
      ceil_div(a.count, chunk),
      [&](std::size_t i) { s.t.copy(s.mine(), in.at(i * chunk), in.bytes(std::min(chunk, a.count - i * chunk))); },
      [&](std::size_t i) {
        const std::size_t off = i * chunk;
        s.copy_out(out.at(off), s.peer(left), out.bytes(std::min(chunk, a.count - off)));
      });
}

// The collectives that read peers' buffers directly, from nccl-tests' size `bytes` on.
bool has_direct(Collective c) {
  return shm_has_direct(c);
}
// nccl-tests' size of a call of a collective with a direct form.
std::size_t direct_size(const ShmSegment& seg, const CollArgs& a) {
  const bool whole = a.coll == Collective::allgather || a.coll == Collective::gather || a.coll == Collective::scatter ||
                     a.coll == Collective::reducescatter;
  return a.count * type_size(a.type) * (whole ? static_cast<std::size_t>(seg.node_size()) : 1);
}
// How a call runs: through the slots, direct, or whichever of the two measures faster (from
// arguments every rank passes alike and the segment's agreed answer, so all ranks decide the
// same).
enum class Path { slots, direct, adaptive };
Path path(const ShmSegment& seg, const CollArgs& a, const ShmOptions& o) {
  if (!seg.direct() || !has_direct(a.coll) || seg.node_size() == 1) return Path::slots;
  const std::size_t bytes = direct_size(seg, a);
  if (bytes == 0) return Path::slots;
  if (bytes >= o.direct_bytes) return Path::direct;
  return bytes >= o.adapt_bytes ? Path::adaptive : Path::slots;
}
// An adaptive call's size class: the collective, in place or not (on this rank), and the power
// of two below its size.
std::uint32_t size_class(const ShmSegment& seg, const CollArgs& a, int me) {
  const auto log2 = static_cast<std::uint32_t>(std::bit_width(direct_size(seg, a)) - 1);
  const bool gathered = a.coll == Collective::allgather || a.coll == Collective::gather;
  const std::size_t block = static_cast<std::size_t>(me) * a.count * type_size(a.type);
  // in place: the input is the output's own block (gathers), the output the input's own block
  // (reduce-scatter), or the same array
  const bool in_place = gathered                              ? a.send == static_cast<const std::byte*>(a.recv) + block
                        : a.coll == Collective::reducescatter ? a.recv == static_cast<const std::byte*>(a.send) + block
                                                              : a.send == a.recv;
  return static_cast<std::uint32_t>(a.coll) << 8 | (in_place ? 1u << 7 : 0u) | log2;
}

void run_direct(Steps& s, const CollArgs& a) {
  switch (a.coll) {
    case Collective::allgather:
      return gather_direct(s, a, -1);
    case Collective::gather:
      return gather_direct(s, a, a.root);
    case Collective::broadcast:
      return from_root_direct(s, a, false);
    case Collective::scatter:
      return from_root_direct(s, a, true);
    case Collective::reducescatter:
      return reducescatter_direct(s, a);
    case Collective::allreduce:
      return allreduce_direct(s, a);
    default:
      break;
  }
  detail::unsupported("shm", a.coll);
}

void run_slots(Steps& s, const CollArgs& a, const ShmOptions& o) {
  switch (a.coll) {
    case Collective::allreduce:
      return all_reduce(s, a, o, -1);
    case Collective::reduce:
      return all_reduce(s, a, o, a.root);
    case Collective::reducescatter:
      return reducescatter(s, a, o);
    case Collective::allgather:
      return gather(s, a, o, -1);
    case Collective::gather:
      return gather(s, a, o, a.root);
    case Collective::broadcast:
      return from_root(s, a, o, false);
    case Collective::scatter:
      return from_root(s, a, o, true);
    case Collective::alltoall:
      return alltoall(s, a, o);
    case Collective::sendrecv:
      return sendrecv(s, a, o);
    case Collective::alltoallv:
      break;
  }
  detail::unsupported("shm", a.coll);
}

class ShmAlgorithm final : public Algorithm {
 public:
  std::string_view name() const override { return "shm"; }
  std::string_view description() const override {
    return "node shared memory (one node only): chunked segment, atomic step flags; one-shot / two-shot allreduce";
  }
  bool supports(Collective c) const override { return c != Collective::alltoallv; }
  void run(Transport& t, const CollArgs& a, const AlgoOptions& options) const override {
    if (!supports(a.coll)) detail::unsupported(name(), a.coll);
    const ShmOptions& o = options.get<ShmOptions>();
    MpiTransport* mt = t.as_mpi();
    if (!mt) throw UnsupportedCollective("algorithm 'shm' needs the MPI transport (host buffers over MPI)");
    // Made on the first call (collective: every rank's first shm call on this transport).
    ShmSegment& seg = t.algorithm_state<ShmSegment>(name(), [&] { return std::make_unique<ShmSegment>(mt->comm()); });
    if (!seg.single_node()) {
      throw UnsupportedCollective("algorithm 'shm' needs every rank on one node: this node holds " +
                                  std::to_string(seg.node_size()) + " of the communicator's " +
                                  std::to_string(t.size()) + " ranks (use ring, rhd or mpi across nodes)");
    }
    if (seg.broken()) {
      throw TransportError(
          "algorithm 'shm': this communicator's segment is unusable after a timeout (the ranks "
          "are at different steps); create a new Communicator");
    }
    Steps s(*mt, seg);
    switch (path(seg, a, o)) {
      case Path::slots:
        return run_slots(s, a, o);
      case Path::direct:
        s.publish(a.send, a.recv, nullptr);
        return run_direct(s, a);
      case Path::adaptive:
        break;
    }
    // Each rank times its whole call, the choice included; rank 0 decides by the slowest rank's
    // estimates.
    ShmPathTimes& times = seg.path_times(size_class(seg, a, s.me));
    const auto start = std::chrono::steady_clock::now();
    s.publish(a.send, a.recv, &times);
    const bool direct = s.choose_direct(times);
    if (direct) {
      run_direct(s, a);
    } else {
      s.end_announce();
      run_slots(s, a, o);
    }
    const auto ns = std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - start);
    detail::shm_record_call(times, direct, static_cast<std::uint64_t>(std::max<std::int64_t>(1, ns.count())));
  }
  std::optional<Cost> cost(Collective c, int p, double n, const AlgoOptions& o) const override {
    const std::optional<CostTerms> t = shm_cost_terms(c, p, n, shm_cost_settings(o, p));
    if (!t) return std::nullopt;
    return Cost{t->alpha_count, t->beta_factor, t->gamma_factor};
  }
};

}  // namespace

ShmCostSettings shm_cost_settings(const AlgoOptions& o, int node_ranks) {
  // Direct is assumed where the kernel allows it (the cost cannot know); the measured choice
  // (adapt_bytes) is priced as the slots: which path it takes is known only at run time.
  const ShmOptions& s = o.get<ShmOptions>();
  return {static_cast<double>(std::clamp<std::size_t>(s.chunk_bytes, 1, kShmSlotBytes)),
          static_cast<double>(s.direct_bytes), static_cast<double>(shm_two_shot_switch(s, node_ranks, false)),
          static_cast<double>(kStreamOutputBytes)};
}

const Algorithm& shm_algorithm() {
  static const ShmAlgorithm instance;
  return instance;
}

}  // namespace commscope
