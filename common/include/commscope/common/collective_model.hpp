// The vocabulary of collectives that the library (collectives), the bench and the report
// (analysis) share, in one header that depends on nothing: the collectives and their names,
// nccl-tests' bus-bandwidth factor, and the alpha-beta-gamma cost terms of the ring, the one
// algorithm whose terms the library's cost model and the report's textbook curves both use.
// Installed with the collectives library's headers (types.hpp includes it).
#pragma once

#include <array>
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

}  // namespace commscope
