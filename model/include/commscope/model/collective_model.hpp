// The vocabulary of collectives that the library (collectives), the bench and the report
// (analysis) share, in one header that depends on nothing: the collectives and their names,
// nccl-tests' bus-bandwidth factor, and every algorithm's alpha-beta-gamma cost terms: the
// ring's, rhd's, the tree's, shm's and hier's (per level), which the library's Algorithm::cost
// returns, the textbook algorithms' that the report draws (the same functions), and the one
// dispatch from an algorithm's name to its terms (cost_terms_of).
// Installed with the collectives library's headers (types.hpp includes it).
#pragma once

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>

namespace commscope {

enum class Collective : std::uint8_t {
  allreduce,
  allgather,
  reducescatter,
  reduce,
  broadcast,
  alltoall,
  gather,
  scatter,
  sendrecv,
  alltoallv
};

inline constexpr std::array kAllCollectives = {Collective::allreduce, Collective::allgather, Collective::reducescatter,
                                               Collective::reduce,    Collective::broadcast, Collective::alltoall,
                                               Collective::gather,    Collective::scatter,   Collective::sendrecv,
                                               Collective::alltoallv};

// "allreduce", ... as the bench, its files and the report spell them; std::invalid_argument for
// a value that is no Collective.
constexpr std::string_view collective_name(Collective c) {
  switch (c) {
    case Collective::allreduce:
      return "allreduce";
    case Collective::allgather:
      return "allgather";
    case Collective::reducescatter:
      return "reducescatter";
    case Collective::reduce:
      return "reduce";
    case Collective::broadcast:
      return "broadcast";
    case Collective::alltoall:
      return "alltoall";
    case Collective::gather:
      return "gather";
    case Collective::scatter:
      return "scatter";
    case Collective::sendrecv:
      return "sendrecv";
    case Collective::alltoallv:
      return "alltoallv";
  }
  throw std::invalid_argument("collective_name: invalid Collective value");
}

// True for the collectives that take a root rank.
constexpr bool is_rooted(Collective c) {
  return c == Collective::reduce || c == Collective::broadcast || c == Collective::gather || c == Collective::scatter;
}

// The Collective of a name as collective_name spells it: the library's, the bench's and the
// report's one parser. std::invalid_argument listing the valid names for any other name.
inline Collective parse_collective(std::string_view name) {
  std::string valid;
  for (const Collective c : kAllCollectives) {
    if (collective_name(c) == name) return c;
    valid += valid.empty() ? "" : ", ";
    valid += collective_name(c);
  }
  throw std::invalid_argument("unknown collective '" + std::string(name) + "' (valid: " + valid + ")");
}

// nccl-tests' bus-bandwidth factor, busbw = algbw x factor on p >= 1 ranks: allreduce 2(p-1)/p;
// allgather, reducescatter, alltoall, gather, scatter, alltoallv (p-1)/p; reduce, broadcast,
// sendrecv 1. For allreduce, allgather and reducescatter it is also the fraction of the array S
// one rank sends in a bandwidth-optimal algorithm. std::invalid_argument for p < 1 or a value
// that is no Collective.
constexpr double busbw_factor(Collective c, int p) {
  if (p < 1) throw std::invalid_argument("busbw_factor: rank count must be >= 1, got " + std::to_string(p));
  const double n = p;
  switch (c) {
    case Collective::allreduce:
      return 2.0 * (n - 1) / n;
    case Collective::allgather:
    case Collective::reducescatter:
    case Collective::alltoall:
    case Collective::gather:
    case Collective::scatter:
    case Collective::alltoallv:
      return (n - 1) / n;
    case Collective::reduce:
    case Collective::broadcast:
    case Collective::sendrecv:
      return 1.0;
  }
  throw std::invalid_argument("busbw_factor: invalid Collective value");
}

// t = alpha_count * alpha + beta_factor * n * beta + gamma_factor * n * gamma for an array of n
// bytes (alpha: latency per message, beta: time per byte sent, gamma: time per byte reduced; the
// time comes out in alpha's unit when beta and gamma are in that unit per byte).
struct CostTerms {
  double alpha_count = 0;
  double beta_factor = 0;
  double gamma_factor = 0;
  constexpr double time(double alpha, double beta, double gamma, double bytes) const {
    return alpha_count * alpha + beta_factor * bytes * beta + gamma_factor * bytes * gamma;
  }
};

// The ring's terms on p ranks (exact at any p, f = (p-1)/p): allreduce 2(p-1) a + 2f nB + f nG
// (a reduce-scatter then an allgather), reducescatter (p-1) a + f n(B+G), allgather, alltoall
// (pairwise exchange), gather and scatter (p-1) a + f nB; nullopt for the others (the library's
// ring reduce and broadcast are segment-pipelined chains, whose terms depend on the segment).
constexpr std::optional<CostTerms> ring_cost_terms(Collective c, int p) {
  const double q = p, f = (q - 1.0) / q;
  switch (c) {
    case Collective::allreduce:
      return CostTerms{2 * (q - 1), 2 * f, f};
    case Collective::reducescatter:
      return CostTerms{q - 1, f, f};
    case Collective::allgather:
    case Collective::alltoall:
    case Collective::gather:
    case Collective::scatter:
      return CostTerms{q - 1, f, 0};
    default:
      return std::nullopt;
  }
}

namespace cost_detail {
constexpr int ceil_log2(int p) {
  int l = 0;
  while ((1 << l) < p) ++l;
  return l;
}
constexpr int floor_log2(int p) {
  int l = 0;
  while ((2 << l) <= p) ++l;
  return l;
}
}  // namespace cost_detail

// The segments of the ring's reduce and broadcast chains for n bytes: at least one.
inline double ring_segments(double n, double segment_bytes) {
  return std::max(1.0, std::ceil(n / segment_bytes));
}

// The library's ring on p ranks for n bytes: ring_cost_terms above, and the chains: reduce
// (q-2+k) a + (q-2+k)/k n(B+G) and broadcast (q-2+k) a + (q-2+k)/k nB in k segments of at most
// `segment_bytes`, sendrecv a + nB (zero terms on one rank); nullopt for alltoallv.
inline std::optional<CostTerms> ring_cost_terms(Collective c, int p, double n, double segment_bytes) {
  if (const std::optional<CostTerms> t = ring_cost_terms(c, p)) return t;
  const double q = p;
  const double k = ring_segments(n, segment_bytes);
  switch (c) {
    case Collective::sendrecv:
      return p == 1 ? CostTerms{} : CostTerms{1, 1, 0};
    case Collective::reduce:
      return p == 1 ? CostTerms{} : CostTerms{q - 2 + k, (q - 2 + k) / k, (q - 2 + k) / k};
    case Collective::broadcast:
      return p == 1 ? CostTerms{} : CostTerms{q - 2 + k, (q - 2 + k) / k, 0};
    default:
      return std::nullopt;
  }
}

// Recursive halving / doubling on p ranks (collectives/src/algorithms/rhd.cpp): the power-of-two
// algorithm on p2 ranks (lg = lg p2, f = (p2-1)/p2) plus, where p > p2, the fold (e = 1: one full
// exchange in and one out): allreduce (Rabenseifner) (2lg+2e) a + (2f+2e) nB + (f+e) nG,
// reducescatter (lg+2e) a + (f+e) n(B+G), allgather (lg+2e) a + (f+e) nB, reduce
// (2lg+e) a + (2f+e) nB + (f+e) nG, broadcast (scatter + allgather) (ceil(lg p)+lg+2e) a +
// (2f+e) nB; nullopt for the others.
constexpr std::optional<CostTerms> rhd_cost_terms(Collective c, int p) {
  const int lg = cost_detail::floor_log2(p), p2 = 1 << lg;
  const double l = lg, f = (p2 - 1.0) / p2;
  const double e = p2 == p ? 0.0 : 1.0;
  switch (c) {
    case Collective::allreduce:
      return CostTerms{2 * l + 2 * e, 2 * f + 2 * e, f + e};
    case Collective::reducescatter:
      return CostTerms{l + 2 * e, f + e, f + e};
    case Collective::allgather:
      return CostTerms{l + 2 * e, f + e, 0};
    case Collective::reduce:
      return CostTerms{2 * l + e, 2 * f + e, f + e};
    case Collective::broadcast:
      return CostTerms{cost_detail::ceil_log2(p) + l + 2 * e, 2 * f + e, 0};
    default:
      return std::nullopt;
  }
}

// Binomial trees on p ranks, ceil(lg p) = l rounds (collectives/src/algorithms/tree.cpp): reduce
// l(a + nB + nG), broadcast l(a + nB), allreduce 2l(a + nB) + l nG, allgather 2l a + (l+f) nB,
// reducescatter 2l a + (l+f) nB + l nG, gather and scatter l a + f nB, f = (p-1)/p; nullopt for
// the others.
constexpr std::optional<CostTerms> tree_cost_terms(Collective c, int p) {
  const double l = cost_detail::ceil_log2(p), f = (p - 1.0) / p;
  switch (c) {
    case Collective::reduce:
      return CostTerms{l, l, l};
    case Collective::broadcast:
      return CostTerms{l, l, 0};
    case Collective::allreduce:
      return CostTerms{2 * l, 2 * l, l};
    case Collective::allgather:
      return CostTerms{2 * l, l + f, 0};
    case Collective::reducescatter:
      return CostTerms{2 * l, l + f, l};
    case Collective::gather:
    case Collective::scatter:
      return CostTerms{l, f, 0};
    default:
      return std::nullopt;
  }
}

// NCCL's tree allreduce, as NCCL_ALGO=Tree runs it (NCCL runs no other collective as a tree), on
// `nodes` nodes of at most `per_node` ranks: a chain through each node's ranks and a double binary
// tree between the nodes; the array in two halves, one a tree, each reduced up and broadcast down
// in pipelined chunks, so every link carries its bytes at once and the latency is the depth, up
// and down. chain: 2(s-1) a + nB over a link between two ranks of a node (both halves up and
// down: n each way) + nG (a rank reduces about the array once: its neighbour's or its children's
// halves); tree: 2 ceil(lg N) a + min(N,4)/2 nB through a node's link (n/2 each way per tree edge
// at the node: inside one tree (a parent, two children) and a leaf of the other (a parent), 4
// edges, 2n, as the ring's 2(p-1)/p n at large p; 2 nodes 1 edge a tree, n; 3 nodes 1.5 n). The
// levels run at once: t = (A_chain + A_tree) a + max(B_chain n / intra, B_tree n / link) +
// G_chain n / copy. Zero terms on one rank.
struct NcclTreeCostTerms {
  CostTerms chain;  // in each node (the reduction's gamma too)
  CostTerms tree;   // between the nodes
};
constexpr NcclTreeCostTerms nccl_tree_allreduce_cost_terms(int nodes, int per_node) {
  const int s = std::max(1, per_node), nn = std::max(1, nodes);
  if (s == 1 && nn == 1) return {};
  return {CostTerms{2.0 * (s - 1), s > 1 ? 1.0 : 0.0, 1.0},
          CostTerms{2.0 * cost_detail::ceil_log2(nn), nn > 1 ? std::min(nn, 4) / 2.0 : 0.0, 0.0}};
}

// The textbook algorithms (Thakur, Rabenseifner, Gropp 2005) that have a closed-form cost.
enum class TextbookAlgorithm : std::uint8_t {
  ring,                // allreduce, allgather, reducescatter
  rabenseifner,        // allreduce (recursive-halving reduce-scatter + recursive-doubling allgather), reduce
  recursive_doubling,  // allreduce, allgather
  recursive_halving,   // reducescatter
  binomial_tree,       // allreduce (reduce + broadcast), reduce, broadcast, gather, scatter
  scatter_allgather,   // broadcast (binomial scatter + recursive-doubling allgather)
  pairwise_exchange,   // alltoall
};
inline constexpr std::array kAllTextbookAlgorithms = {TextbookAlgorithm::ring,
                                                      TextbookAlgorithm::rabenseifner,
                                                      TextbookAlgorithm::recursive_doubling,
                                                      TextbookAlgorithm::recursive_halving,
                                                      TextbookAlgorithm::binomial_tree,
                                                      TextbookAlgorithm::scatter_allgather,
                                                      TextbookAlgorithm::pairwise_exchange};

constexpr std::string_view textbook_algorithm_name(TextbookAlgorithm a) {
  switch (a) {
    case TextbookAlgorithm::ring:
      return "ring";
    case TextbookAlgorithm::rabenseifner:
      return "rabenseifner";
    case TextbookAlgorithm::recursive_doubling:
      return "recursive_doubling";
    case TextbookAlgorithm::recursive_halving:
      return "recursive_halving";
    case TextbookAlgorithm::binomial_tree:
      return "binomial_tree";
    case TextbookAlgorithm::scatter_allgather:
      return "scatter_allgather";
    case TextbookAlgorithm::pairwise_exchange:
      return "pairwise_exchange";
  }
  throw std::invalid_argument("textbook_algorithm_name: invalid TextbookAlgorithm value");
}

// The algorithms whose names stand for the vendor library's choice (MPI's, NCCL's), made inside
// and hidden: no terms of their own, priced as the textbook algorithms (expected_time).
constexpr bool library_chooses(std::string_view algorithm) {
  return algorithm == "mpi" || algorithm == "nccl";
}

// What the terms of an algorithm depend on besides the collective and the ranks: the array's
// bytes and the ring's pipeline segment (its reduce and broadcast chains; AlgoOptions::segment_bytes).
struct CostOptions {
  double bytes = 0;
  double ring_segment_bytes = 1 << 20;
};

// The one dispatch from an algorithm's name to its terms: the library's flat algorithms "ring"
// (ring_cost_terms, its chains in segments of o.ring_segment_bytes for o.bytes), "rhd" and "tree"
// running c on p ranks; nullopt where the algorithm has no variant of c and for every other name
// (shm and hier have terms of their own over a node's settings: shm_cost_terms, hier_cost_terms;
// mpi and nccl: library_chooses).
inline std::optional<CostTerms> cost_terms_of(std::string_view algorithm, Collective c, int p,
                                              const CostOptions& o = {}) {
  if (algorithm == "ring") return ring_cost_terms(c, p, o.bytes, o.ring_segment_bytes);
  if (algorithm == "rhd") return rhd_cost_terms(c, p);
  if (algorithm == "tree") return tree_cost_terms(c, p);
  return std::nullopt;
}

// The library's algorithm that runs textbook algorithm `a` for `c` ("ring", "rhd", "tree"), ""
// where none does or `a` is not one of c's: ring (allreduce, allgather, reducescatter) and pairwise
// exchange (alltoall): the ring; rabenseifner (allreduce, reduce), recursive doubling (allgather),
// recursive halving (reducescatter), scatter + allgather (broadcast): rhd; binomial tree
// (allreduce, reduce, broadcast, gather, scatter): the tree. Recursive doubling's allreduce has
// terms but no algorithm of the library runs it.
constexpr std::string_view library_algorithm_of(Collective c, TextbookAlgorithm a) {
  using A = TextbookAlgorithm;
  switch (c) {
    case Collective::allreduce:
      return a == A::ring ? "ring" : a == A::rabenseifner ? "rhd" : a == A::binomial_tree ? "tree" : "";
    case Collective::allgather:
      return a == A::ring ? "ring" : a == A::recursive_doubling ? "rhd" : "";
    case Collective::reducescatter:
      return a == A::ring ? "ring" : a == A::recursive_halving ? "rhd" : "";
    case Collective::reduce:
      return a == A::binomial_tree ? "tree" : a == A::rabenseifner ? "rhd" : "";
    case Collective::broadcast:
      return a == A::binomial_tree ? "tree" : a == A::scatter_allgather ? "rhd" : "";
    case Collective::alltoall:
      return a == A::pairwise_exchange ? "ring" : "";
    case Collective::gather:
    case Collective::scatter:
      return a == A::binomial_tree ? "tree" : "";
    case Collective::sendrecv:
    case Collective::alltoallv:
      return "";
  }
  return "";
}

// The textbook algorithm that `algorithm` (the library's name) runs for `c` (library_algorithm_of
// read backwards); nullopt where it runs none (the ring's chains, the tree's allgather and
// reducescatter, shm, hier, mpi, nccl).
constexpr std::optional<TextbookAlgorithm> textbook_algorithm_of(Collective c, std::string_view algorithm) {
  if (algorithm.empty()) return std::nullopt;
  for (const TextbookAlgorithm a : kAllTextbookAlgorithms)
    if (library_algorithm_of(c, a) == algorithm) return a;
  return std::nullopt;
}

// The terms of textbook algorithm `a` running `c` on p >= 1 ranks, nullopt where `a` is not one
// of c's: the terms of the library's algorithm that runs it (library_algorithm_of, cost_terms_of),
// and recursive doubling allreduce, which no algorithm of the library runs:
// (lg+2e) a + (lg+2e) nB + (lg+e) nG.
inline std::optional<CostTerms> textbook_cost_terms(Collective c, TextbookAlgorithm a, int p) {
  if (c == Collective::allreduce && a == TextbookAlgorithm::recursive_doubling) {
    const int lg = cost_detail::floor_log2(p);
    const double l = lg, e = (1 << lg) == p ? 0.0 : 1.0;
    return CostTerms{l + 2 * e, l + 2 * e, l + e};
  }
  const std::string_view ours = library_algorithm_of(c, a);
  if (ours.empty()) return std::nullopt;
  return cost_terms_of(ours, c, p);
}

// What shm's cost depends on besides the call: the bytes a step moves per rank (its chunk, at
// least 1), the size from which a call goes direct (ranks read each other's buffers, assumed
// possible), the size from which allreduce and reduce run two-shot, and the output size from
// which shm streams its outputs (a rank's own block then goes through its slot with the rest:
// kStreamOutputBytes, common/stream_copy.hpp).
struct ShmCostSettings {
  double chunk_bytes = 1;
  double direct_bytes = 0;
  double two_shot_bytes = 0;
  double stream_bytes = std::numeric_limits<double>::infinity();
};

// The library's defaults (AlgoOptions{}) on a node of `node_ranks` ranks on their own cores: 256 KiB
// steps, never direct, two-shot from 64 KiB on 2 ranks, 4 KiB on 3, 2 KiB from 4 on
// (shm_two_shot_switch), outputs streamed from 32 MiB (collectives.unit.algorithms checks that
// they agree).
constexpr ShmCostSettings shm_default_cost_settings(int node_ranks) {
  return {262144.0, std::numeric_limits<double>::infinity(),
          node_ranks <= 2   ? 65536.0
          : node_ranks == 3 ? 4096.0
                            : 2048.0,
          33554432.0};
}

// The collectives shm runs direct from ShmCostSettings::direct_bytes.
constexpr bool shm_has_direct(Collective c) {
  return c == Collective::allgather || c == Collective::gather || c == Collective::broadcast ||
         c == Collective::scatter || c == Collective::reducescatter || c == Collective::allreduce;
}

// shm's terms on p ranks of one node for n bytes (the derivation: collectives/src/algorithms/shm.cpp),
// with k steps of at most a chunk: allreduce and reduce one-shot k a + nB + (p-1) nG, two-shot
// 2k a + (2p-1)/p nB + (p-1)/p nG; reducescatter k a + (p-1)/p nB +
// (p-1)/p nG (its block streamed: nB); alltoall
// k a + (2p-1)/p nB; sendrecv k a + 2nB; allgather k a + (p+1)/p nB (the own block out too),
// gather k a + nB (the root fills no slot, which no peer would read); broadcast k a + 2nB (the root's array into its output first); scatter k a + nB. Direct: allreduce
// 2a + 2f nB + f nG, the others a + f nB (broadcast nB; reducescatter + f nG), f = (p-1)/p.
// nullopt for alltoallv, zero terms on one rank.
inline std::optional<CostTerms> shm_cost_terms(Collective c, int p, double n, const ShmCostSettings& s) {
  if (c == Collective::alltoallv) return std::nullopt;
  if (p == 1) return CostTerms{};
  const double q = p, f = (q - 1) / q;
  const bool blocked = c == Collective::reducescatter || c == Collective::alltoall || c == Collective::scatter;
  const bool gathered = c == Collective::allgather || c == Collective::gather;
  // Steps: the array in chunks (the blocked collectives move n/p per rank-block in chunk/p
  // pieces, the gathers a block of n/p per step chunk).
  const double moved = blocked || gathered ? n / q : n;
  const double chunk = blocked ? s.chunk_bytes / q : s.chunk_bytes;
  const double k = std::max(1.0, std::ceil(moved / chunk));
  if (shm_has_direct(c) && n >= s.direct_bytes) {
    if (c == Collective::allreduce) return CostTerms{2, 2 * f, f};
    return CostTerms{1, c == Collective::broadcast ? 1.0 : f, c == Collective::reducescatter ? f : 0};
  }
  switch (c) {
    case Collective::allreduce:
    case Collective::reduce:
      if (n < s.two_shot_bytes) return CostTerms{k, 1, q - 1};
      return CostTerms{2 * k, (2 * q - 1) / q, f};
    case Collective::reducescatter:
      return CostTerms{k, n / q < s.stream_bytes ? f : 1, f};
    case Collective::alltoall:
      return CostTerms{k, (2 * q - 1) / q, 0};
    case Collective::sendrecv:
    case Collective::broadcast:
      return CostTerms{k, 2, 0};
    case Collective::allgather:
      return CostTerms{k, (q + 1) / q, 0};
    case Collective::gather:  // the root fills no slot
      return CostTerms{k, 1, 0};
    default:
      return CostTerms{k, 1, 0};
  }
}

// Where shm's copies through the slots go (the slots path: shm_cost_terms' beta_factor, split),
// for the slowest rank, as fractions of n: `in`, from a rank's input into its slot; `out`, from a
// slot (or an input chunk just copied, still in the caches) into a rank's output; `local`, from a
// rank's input straight to its output. A slot stays in the caches, so `in` and `out` move one side
// through memory, where `local` moves both (docs/verdicts.md, "The rate of a size"):
//   allreduce, reduce one-shot: in n; two-shot: in n (the p-1 other slices copied, the own one
//     reduced into the slot: each line written into a slot a peer read last), out (p-1)/p n (the
//     root's, for reduce; the own slice's copy out stays in the rank's caches)
//   reducescatter: in (p-1)/p n (the own block is reduced from the input into the output, until
//     the outputs are streamed: then n)     alltoall: in (p-1)/p n, out (p-1)/p n, local n/p
//   sendrecv: in n, out n                   allgather: in n/p, out n (the own block too)
//   gather (the root): out n (its own block and the others'; it fills no slot)
//   broadcast (the root): local n, in n     scatter (the root): in (p-1)/p n, local n/p
// nullopt for alltoallv, zeros on one rank.
struct ShmCopies {
  double in = 0, out = 0, local = 0;
};
inline std::optional<ShmCopies> shm_slot_copies(Collective c, int p, double n, const ShmCostSettings& s) {
  if (c == Collective::alltoallv) return std::nullopt;
  if (p == 1) return ShmCopies{};
  const double q = p, f = (q - 1) / q;
  switch (c) {
    case Collective::allreduce:
    case Collective::reduce:
      return n < s.two_shot_bytes ? ShmCopies{1, 0, 0} : ShmCopies{1, f, 0};
    case Collective::reducescatter:
      return ShmCopies{n / q < s.stream_bytes ? f : 1, 0, 0};
    case Collective::alltoall:
      return ShmCopies{f, f, 1 / q};
    case Collective::sendrecv:
      return ShmCopies{1, 1, 0};
    case Collective::allgather:
      return ShmCopies{1 / q, 1, 0};
    case Collective::gather:
      return ShmCopies{0, 1, 0};
    case Collective::broadcast:
      return ShmCopies{1, 0, 1};
    default:  // scatter
      return ShmCopies{f, 0, 1 / q};
  }
}

// hier's two levels (collectives/src/algorithms/hier.cpp): below this many bytes an even
// allreduce runs shm's allreduce of the whole array, then every cross group allreduces all of it.
inline constexpr double kHierSmallBytes = 4096;  // 4 KiB
// Cross calls of at least this many bytes (the sub-call's array) take the ring, smaller ones rhd
// (allreduce, allgather, reducescatter) or the tree (broadcast, reduce).
inline constexpr double kHierCrossRingBytes = 262144;  // 256 KiB
constexpr std::string_view hier_cross_algorithm(Collective c, double bytes) {
  if (bytes >= kHierCrossRingBytes) return "ring";
  return c == Collective::broadcast || c == Collective::reduce ? "tree" : "rhd";
}

// What hier's cost depends on besides the call: shm's settings on a node of the call's ranks per
// node, and the ring's segment (its chains among the nodes).
struct HierCostSettings {
  ShmCostSettings shm;
  double ring_segment_bytes = 1;
};

// hier's cost in two levels, per_node ranks on each of `nodes` nodes: `intra` in shm's terms (a
// flag handoff; B and G per byte copied and reduced in memory), `inter` in the network's (a its
// latency, B per byte through a node's link, which the node's ranks share, G per byte reduced).
// Each phase adds its sub-call's terms for n_sub of the call's n bytes: alpha as they are, beta x
// n_sub/n x (the ranks of a node whose cross calls share its link at once), gamma x n_sub/n.
//   allreduce: shm reducescatter + cross allreduce of n/s (s-fold share) + shm allgather (below
//     kHierSmallBytes: shm allreduce + cross allreduce of n, s-fold share; one rank per node:
//     the cross allreduce alone); allgather, reducescatter: shm's call + cross call of n/s
//     (s-fold share); broadcast, reduce: shm's call + cross call of n. One node: shm's terms for
//     the whole call. Zero terms for the others.
struct HierCostTerms {
  CostTerms intra, inter;
};
inline HierCostTerms hier_cost_terms(Collective c, int nodes, int per_node, double n, const HierCostSettings& o) {
  HierCostTerms h;
  const int s = std::max(1, per_node), nn = std::max(1, nodes);
  const double ds = s;
  auto add = [n](CostTerms& sum, const std::optional<CostTerms>& k, double n_sub, double share) {
    const CostTerms t = k.value_or(CostTerms{});
    const double f = n > 0 ? n_sub / n : 0;
    sum.alpha_count += t.alpha_count;
    sum.beta_factor += t.beta_factor * f * share;
    sum.gamma_factor += t.gamma_factor * f;
  };
  auto intra = [&](Collective cc) { add(h.intra, shm_cost_terms(cc, s, n, o.shm), n, 1); };
  if (nn == 1) {
    intra(c);
    return h;
  }
  auto inter = [&](Collective cc, double n_sub, double share) {
    const std::string_view a = hier_cross_algorithm(cc, n_sub);
    const std::optional<CostTerms> k = a == "ring"   ? ring_cost_terms(cc, nn, n_sub, o.ring_segment_bytes)
                                       : a == "tree" ? tree_cost_terms(cc, nn)
                                                     : rhd_cost_terms(cc, nn);
    add(h.inter, k, n_sub, share);
  };
  switch (c) {
    case Collective::allreduce:
      if (s == 1) {
        inter(c, n, 1);
      } else if (n < kHierSmallBytes) {
        intra(c);
        inter(c, n, ds);
      } else {
        intra(Collective::reducescatter);
        inter(c, n / ds, ds);
        intra(Collective::allgather);
      }
      break;
    case Collective::allgather:
    case Collective::reducescatter:
      if (s > 1) intra(c);
      inter(c, n / ds, ds);
      break;
    case Collective::broadcast:
    case Collective::reduce:
      if (s > 1) intra(c);
      inter(c, n, 1);
      break;
    default:
      break;
  }
  return h;
}

}  // namespace commscope
