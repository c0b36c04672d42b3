#pragma once
// Piecewise alpha-beta fits. A library switches protocol at some sizes (eager to rendezvous,
// one algorithm to another), and its time against size then jumps: Open MPI's allreduce on two
// ranks of one node goes from 1.4 ms at 8 MiB to 73 ms at 32 MiB, and one line through every
// size has R^2 = 0.10. Here the sizes are cut into at most a few regimes, each with its own
// line t = alpha + S / bandwidth (weighted by 1/t^2 as fit_alpha_beta), and each regime says
// whether its line holds.
//
// Method: for every k = 1..max_regimes, dynamic programming finds the cut of the (ascending)
// sizes into k contiguous regimes of at least min_points sizes each with the least total
// relative squared error RSS_k = sum ((t - fit) / t)^2. The k chosen minimises
//   score_k = n ln(max(RSS_k / n, noise_floor^2)) + penalty (k - 1):
// a further regime must cut n ln RSS by more than `penalty`. A plain BIC (3 ln n per regime) cuts
// noisy straight lines often (a quarter of 24-size lines with one cut allowed), as the best of
// ~20 breakpoints always gains something;
// the penalty of 30 was calibrated on simulated straight lines of 7 to 48 sizes with 5-30%
// noise, where the best cut gains more than 30 in fewer than 1 in 1000 trials (1 in 250 at 7
// sizes; 1 in 25 to 1 in 250 with 15% of the sizes stalled up to 3x), while a real protocol
// switch gains hundreds. The floor keeps a perfect line (RSS near 0) from being cut for rounding.

#include <cstddef>
#include <span>
#include <string_view>
#include <vector>

#include "commscope/analysis/alpha_beta.hpp"

namespace commscope::analysis {

struct PiecewiseOptions {
  std::size_t max_regimes = 4;
  std::size_t min_points = 3;  // sizes per regime: through two points any line fits exactly
  double noise_floor = 0.01;   // relative error (1%) that no better fit is believed below
  double penalty = 30;         // per regime beyond the first, in units of n ln RSS
};

// Whether a line describes its regime:
//   fits: R^2 >= kMinRSquared;
//   flat: R^2 lower, but every time of the regime within kFlatTolerance of alpha: the time does
//         not grow over the regime (latency-bound), R^2 then measures noise, and alpha holds
//         while the bandwidth term is not resolved;
//   poor: neither; the line is not reported as a fact ("does not fit").
enum class FitQuality { fits, flat, poor };
inline constexpr double kMinRSquared = 0.9;
inline constexpr double kFlatTolerance = 0.15;  // small messages: p10-p90 of per-call times is often +-10%
// `samples`: the ones `fit` was fitted to.
FitQuality fit_quality(const AlphaBetaFit& fit, std::span<const Sample> samples);
std::string_view fit_quality_name(FitQuality q);  // "fits", "flat", "does not fit"

struct Regime {
  std::size_t first = 0, last = 0;      // indices of its first and last sample (inclusive)
  double from_bytes = 0, to_bytes = 0;  // its smallest and largest size
  AlphaBetaFit fit;
  FitQuality quality = FitQuality::fits;
};

// The regimes of `samples` (one per size, sizes strictly ascending, times > 0), in size order,
// covering every sample. std::invalid_argument for fewer than 2 samples, sizes not ascending,
// times not > 0 or not finite, or options with min_points < 2 or max_regimes < 1.
std::vector<Regime> fit_piecewise(std::span<const Sample> samples, const PiecewiseOptions& options = {});

// The regime that describes `bytes`: the one whose size range holds it; between two regimes the
// nearer in log size; below the first or above the last, that one. `regimes` non-empty, in order.
const Regime& regime_at(std::span<const Regime> regimes, double bytes);

}  // namespace commscope::analysis
