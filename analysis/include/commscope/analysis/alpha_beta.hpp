#pragma once
// Alpha-beta models of collectives: fitting t = alpha + beta_eff * n to measurements, the
// textbook cost curves of docs/design.md ("Collectives"), and where the fastest algorithm changes.
// Units throughout: time in microseconds (the bench's float-us columns), sizes in bytes (the
// collective's array size S, as nccl-tests reports it), bandwidth in GB/s with GB = 1e9 bytes.

#include <cstddef>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "commscope/model/collective_model.hpp"
#include "commscope/model/format.hpp"

namespace commscope::analysis {

// ---------------------------------------------------------------- collectives and algorithms

// The library's vocabulary (model/collective_model.hpp): the collectives, their names, the
// busbw factor and the algorithms' cost terms are the library's own.
using commscope::busbw_factor;
using commscope::Collective;
using commscope::collective_name;
using commscope::CostTerms;
using commscope::parse_collective;  // std::invalid_argument for an unknown name

// The textbook algorithms (Thakur, Rabenseifner, Gropp 2005) that have a closed-form cost, and
// their names: the library's (collective_model.hpp).
using commscope::textbook_algorithm_name;
using commscope::TextbookAlgorithm;

// The cost terms of `a` running collective `c` on p ranks; nullopt when `a` is not a textbook
// algorithm of `c`: collective_model.hpp's textbook_cost_terms, the library's algorithms' own
// terms (ring, rhd, tree). For p a power of two (and for ring, binomial, pairwise at any p) these are
// the formulas of docs/design.md ("Collectives"):
//   allreduce ring 2(p-1)a + 2(p-1)/p nB + (p-1)/p nG; rabenseifner 2 lg p a + 2(p-1)/p nB + (p-1)/p nG;
//     recursive doubling lg p (a + nB + nG); binomial tree 2 ceil(lg p)(a + nB) + ceil(lg p) nG
//   allgather ring (p-1)a + (p-1)/p nB; recursive doubling lg p a + (p-1)/p nB
//   reducescatter ring (p-1)a + (p-1)/p n(B+G); recursive halving lg p a + (p-1)/p n(B+G)
//   reduce binomial tree ceil(lg p)(a + nB + nG); rabenseifner 2 lg p a + 2(p-1)/p nB + (p-1)/p nG
//   broadcast binomial ceil(lg p)(a + nB); scatter+allgather 2 lg p a + 2(p-1)/p nB
//   alltoall pairwise exchange (p-1)a + (p-1)/p nB
//   gather, scatter binomial tree ceil(lg p) a + (p-1)/p nB
//   sendrecv, alltoallv: none (one message; a time that depends on the count pattern)
// For the recursive algorithms at p not a power of two, lg p becomes lg p2 (p2 = the largest power
// of two <= p, (p-1)/p becomes (p2-1)/p2) plus the fold that collectives/src/algorithms/rhd.cpp
// does: one full-size exchange before and one after (+2 alpha, +n B on each side that moves the
// whole array, +n G where the fold reduces). Throws std::invalid_argument for p < 1.
std::optional<CostTerms> textbook_cost(Collective c, TextbookAlgorithm a, int p);

// The textbook algorithm behind one of our algorithm names for a collective:
//   "ring": ring (allreduce, allgather, reducescatter), pairwise exchange (alltoall); our ring
//           reduce/broadcast are segment-pipelined chains: no textbook curve
//   "rhd":  rabenseifner (allreduce, reduce), recursive doubling (allgather), recursive halving
//           (reducescatter), scatter+allgather (broadcast)
//   "tree": binomial tree (allreduce, reduce, broadcast, gather, scatter); our tree
//           allgather/reducescatter (gather/reduce + broadcast) have no textbook curve
//   "mpi", "nccl": none (the vendor library chooses inside)
//   "shm": none (node shared memory; no network textbook curve)
//   "hier": none (two levels: shm within nodes, a network algorithm among them)
// nullopt where there is no curve; std::invalid_argument for an unknown algorithm name.
std::optional<TextbookAlgorithm> textbook_algorithm_for(Collective c, std::string_view algorithm);

// Textbook time (us) of `algorithm` (our name) for c on p ranks and `bytes`, or nullopt.
struct CostParams {
  double alpha_us = 0;           // latency per message
  double beta_us_per_byte = 0;   // 1 / link bandwidth
  double gamma_us_per_byte = 0;  // reduction time per byte
};
std::optional<double> textbook_time_us(Collective c, std::string_view algorithm, int p, double bytes,
                                       const CostParams& params);

// ---------------------------------------------------------------- fitting t = alpha + beta_eff n

// One measurement of one (collective, algorithm, rank count).
struct Sample {
  double bytes = 0;    // S, the collective's array size (may be 0)
  double time_us = 0;  // time of one call, microseconds
};

enum class FitWeighting {
  // weights 1/t^2: minimises the sum of squared relative errors. Times span 5+ decades from
  // bytes to GiB; unweighted least squares is then decided by the few largest sizes and alpha
  // (the small-size regime) comes out with a large error, often negative. Relative weighting
  // gives each size the same say. Requires every time > 0.
  relative,
  // plain least squares on the times (every time >= 0).
  absolute,
};

struct AlphaBetaFit {
  double alpha_us = 0;            // intercept, never negative (see no_latency_term)
  double beta_us_per_byte = 0;    // slope
  double bandwidth_gbps = 0;      // 1 / beta in GB/s (1e9 bytes): 1e-3 / beta_us_per_byte; inf if beta <= 0
  double r_squared = 0;           // 1 - SS_res / SS_tot on the UNWEIGHTED times (the usual R^2 of the data)
  std::size_t samples = 0;        // samples used
  double max_relative_error = 0;  // max over samples of |fit - t| / t (samples with t > 0)
  FitWeighting weighting = FitWeighting::relative;
  // The free line's intercept came out below 0 (sizes whose time grows faster than their bytes,
  // a protocol or cache change inside the sizes): the fit is the best line with alpha >= 0, alpha
  // 0, and the sizes resolve no latency term.
  bool no_latency_term = false;
  double predict_us(double bytes) const { return alpha_us + beta_us_per_byte * bytes; }
};

// A fit (alpha, beta) of `algorithm` measured on `from` ranks, carried to `to` ranks at `bytes`
// with that algorithm's own textbook terms: alpha scaled by the ratio of its message counts,
// the byte term by the ratio of its byte factors (a binomial tree's 2 log p messages, a ring's
// 2(p-1)). Algorithms without a textbook curve (mpi, nccl, shm, hier) are carried with the
// ring's, the bandwidth-optimal shape large messages take; `carried_as` says which was used.
double carry_fit_us(const AlphaBetaFit& fit, Collective c, std::string_view algorithm, int from, int to, double bytes,
                    std::string* carried_as = nullptr);

// Weighted least squares with alpha >= 0 (a negative intercept refitted through the origin,
// no_latency_term); throws std::invalid_argument for fewer than 2 distinct sizes, negative
// or non-finite values, or (relative weighting) a time <= 0.
AlphaBetaFit fit_alpha_beta(std::span<const Sample> samples, FitWeighting weighting = FitWeighting::relative);
inline AlphaBetaFit fit_alpha_beta_unweighted(std::span<const Sample> samples) {
  return fit_alpha_beta(samples, FitWeighting::absolute);
}

// ---------------------------------------------------------------- crossovers

// One algorithm's times (us) over a size grid shared by all curves.
struct CostCurve {
  std::string name;
  std::vector<double> time_us;
};
// The curve of a fit (or textbook terms) on a grid.
CostCurve curve_from_fit(std::string name, const AlphaBetaFit& fit, std::span<const double> sizes);
// Powers of two from lo to hi bytes inclusive (lo, hi > 0; lo rounded up to a power of two).
std::vector<double> pow2_sizes(double lo, double hi);

struct Crossover {
  double bytes = 0;               // first grid size at which `to` is the fastest
  double interpolated_bytes = 0;  // where t_from = t_to, by linear interpolation between the two
                                  // grid sizes around the change (exact for alpha-beta lines)
  std::string from;               // fastest below
  std::string to;                 // fastest from `bytes` on
};
// Scans the grid (ascending sizes) and reports each change of the fastest curve (ties go to
// the earlier curve). Throws std::invalid_argument for no curves, an empty or non-ascending grid,
// or a curve whose length differs from the grid's.
std::vector<Crossover> find_crossovers(std::span<const double> sizes, std::span<const CostCurve> curves);
// "rhd below 32 KiB, ring above"; "rhd below 32 KiB, ring from 32 KiB to 4 MiB, tree above";
// "ring fastest at all sizes" (sizes are the grid sizes at which the fastest changes).
std::string describe_crossovers(std::span<const double> sizes, std::span<const CostCurve> curves);

}  // namespace commscope::analysis
