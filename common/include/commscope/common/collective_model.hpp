// The vocabulary of collectives that the library (collectives), the bench and the report
// (analysis) share, in one header that depends on nothing: the collectives and their names,
// nccl-tests' bus-bandwidth factor, and the alpha-beta-gamma cost terms of the ring (the
// library's cost model and the report's textbook curves both use them) and of shm (the library's;
// the report draws no shm curve yet).
// Installed with the collectives library's headers (types.hpp includes it).
#pragma once

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
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

// What shm's cost depends on besides the call: the bytes a step moves per rank (its chunk, at
// least 1), the size from which a call goes direct (ranks read each other's buffers, assumed
// possible), and the size from which allreduce and reduce run two-shot.
struct ShmCostSettings {
  double chunk_bytes = 1;
  double direct_bytes = 0;
  double two_shot_bytes = 0;
};

// The collectives shm runs direct from ShmCostSettings::direct_bytes.
constexpr bool shm_has_direct(Collective c) {
  return c == Collective::allgather || c == Collective::gather || c == Collective::broadcast ||
         c == Collective::scatter || c == Collective::reducescatter || c == Collective::allreduce;
}

// shm's terms on p ranks of one node for n bytes (the derivation: collectives/src/algorithms/shm.cpp),
// with k steps of at most a chunk: allreduce and reduce one-shot k a + nB + (p-1) nG, two-shot
// 2k a + (2p-1)/p nB + (p-1)/p nG; reducescatter k a + nB + (p-1)/p nG; alltoall
// k a + (2p-1)/p nB; sendrecv k a + 2nB; the others k a + nB. Direct: allreduce
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
      return CostTerms{k, 1, f};
    case Collective::alltoall:
      return CostTerms{k, (2 * q - 1) / q, 0};
    case Collective::sendrecv:
      return CostTerms{k, 2, 0};
    default:
      return CostTerms{k, 1, 0};
  }
}

}  // namespace commscope
