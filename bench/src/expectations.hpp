// The bench's rows set against the run's machine model (docs/verdicts.md): every row's expected
// columns as it is written (expected_row, the function commscope-report recomputes them with, so
// the file's figures and the report's agree), and at the end of the run the verdict lines the
// report prints (analysis' rule over the run's out-of-place rows), for the footer of the table.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "commscope/model/expected_time.hpp"
#include "commscope/model/machine_model.hpp"
#include "commscope/model/row_expectation.hpp"
#include "rows.hpp"

namespace commscope::bench {

// "Verdicts against the machine model (of_expected = expected / measured time: good from 70%, ...)".
std::string verdict_thresholds();

class RunExpectations {
 public:
  // `model_text`: the model as the results header records it (Environment::machine_model; "" for
  // none), read back as the report reads it. `nccl_algo`: the run's NCCL_ALGO ("" where unset).
  // `verdicts`: keep the rows for verdict_lines (not for a run that ends only by a signal, -N 0,
  // whose rows would pile up for nothing).
  // `options`: the run's settings that change a price (run_expectation_options).
  RunExpectations(const std::string& model_text, int nranks, std::string nccl_algo, bool verdicts = true,
                  ExpectationOptions options = {});

  // The model again, as the header records it at the end of the run (its nodes' load added);
  // the placement is kept.
  void set_model(const std::string& model_text);
  // The run measured none of the machine's figures (no --out or -J records the model): where
  // nothing can be judged, the verdicts are one line that says how to have them.
  void set_figures_not_measured() { not_measured_ = true; }

  // Sets the row's expected_time_us, expected_busbw_GBps and of_expected (NaN where the model
  // lacks an input) and keeps its figures for the verdicts.
  void judge(ResultRow& row);

  // "allreduce ring from 16 MiB: busbw ... : good", as commscope-report bench's Verdict lines
  // (the latency per message: the model's, else the run's own smallest time per message); a line
  // saying why where the run cannot be judged; none without a model.
  std::vector<std::string> verdict_lines() const;

 private:
  std::optional<MachineModel> model_;
  std::vector<int> placement_;
  std::string problem_;  // why the model cannot place the run's ranks
  std::string nccl_algo_;
  ExpectationOptions options_;
  bool verdicts_ = true;
  bool not_measured_ = false;
  std::vector<ResultRow> rows_;  // out-of-place rows judged so far
};

}  // namespace commscope::bench
