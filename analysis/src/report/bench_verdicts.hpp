#pragma once
// commscope-report bench's statements about one collective: which algorithm is fastest at each
// size (measured, and by the fits) where the spread allows naming one, and each algorithm's fit
// regimes in words.

#include <optional>
#include <span>
#include <string>
#include <vector>

#include "bench_fits.hpp"
#include "commscope/analysis/fastest.hpp"
#include "commscope/model/expected_time.hpp"

namespace commscope::analysis {

struct SizeVerdicts {
  std::vector<double> sizes;  // ascending, bytes
  std::vector<Verdict> verdicts;
};

// At the sizes every algorithm measured, from the measured times and spreads.
SizeVerdicts measured_verdicts(std::span<const Measured> algos);

// On `grid` (ascending sizes), from each algorithm's regime there; the algorithms without a fit
// are left out. A regime that does not fit gives no time (the verdict is unknown). The fitted time
// carries the spread measured at the regime's nearest size, widened to hold the fit's own value
// there, and scaled along the fit: f(s) / f(m) x hull(p10..p90 at m, f(m)).
SizeVerdicts fitted_verdicts(std::span<const Measured> algos, std::span<const double> grid);

// "8 B to 4 KiB: alpha 0.71 us, 5.3 GB/s, R^2 0.97"; "... flat at alpha 0.71 us (every size within
// 15%, R^2 0.42: no bandwidth term resolved)"; "... does not fit (R^2 0.31, off by up to 250%)".
std::string describe_regime(const Regime& r);

// The run set against its machine model (docs/verdicts.md), for files that recorded one: the
// model with the expectations' alpha (the doctor's latency, else the run's own, from `data`),
// where the ranks ran, and what the report says about both. nullopt for a file without a model.
struct ModelJudgement {
  MachineModel model;
  std::vector<int> placement;
  std::string note;
  std::string nccl_algo;       // the run's NCCL_ALGO (/meta/env), which prices its nccl rows; "" where unset
  ExpectationOptions options;  // the run's settings that change a price (/meta segment_bytes, shm_adapt_bytes)
};
std::optional<ModelJudgement> model_judgement(const std::vector<BenchFile>& runs, const BenchData& data);

}  // namespace commscope::analysis
