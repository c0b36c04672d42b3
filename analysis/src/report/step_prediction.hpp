#pragma once
// One training step of a GPT-2 shaped model in a (dp, tp, pp) layout, priced with the alpha-beta
// fits of a bench file: what `predict` prints for each rank count and what `scaling --bench`
// sets against the measured steps of the trainer's runs.
//
// Per rank of the last stage (the busiest: model_math.hpp's last_stage_params and
// model_parallel_comm) and step: compute = the step's FLOPs (M micro-batches, output head
// included) / (tp pp) at the given rate; tensor-parallel calls and pipeline sends as
// model_parallel_comm counts them, each call priced with the fastest measured algorithm carried
// to its group's size; the pipeline stretches (compute + tp + pp) by (M + pp - 1) / M (1F1B or
// GPipe, equal stages); then, not overlapped, the first and last stage's embedding allreduce
// (pp > 1) and the ZeRO stage's data-parallel collectives over dp ranks on the rank's parameters
// (ZeRO-2's reduce-scatters and ZeRO-3's calls once per micro-batch).

#include <string>
#include <vector>

#include "bench_fits.hpp"
#include "commscope/analysis/model_math.hpp"

namespace commscope::analysis {

struct StepInputs {
  ModelShape shape;  // seq: the step's sequence length; vocab 0: no output head
  double batch = 1;  // micro-batch size b (sequences one replica runs per micro-batch)
  Layout layout;
  int dp = 1;               // data-parallel ranks
  int zero = 0;             // ZeRO stage 0..3 (DDP: 0)
  int bytes_per_param = 2;  // 2 (bf16) or 4 (fp32): parameters, gradients and activations moved
  double flops = 0;         // per-rank compute rate, FLOP/s
};

// "(dp,tp,pp)", as the predict and scaling tables name a layout.
std::string layout_name(int dp, int tp, int pp);

// One priced call of the step, as the communication tables print it.
struct PricedCall {
  std::string collective, purpose;
  int calls = 0;
  double bytes_per_call = 0;
  std::string algorithm;  // "-" when not priced (no bench file)
  double ms = 0;          // all calls; NaN when not priced
  std::string note;       // what the price rests on beyond the measurements ("" when nothing)
};

struct StepPrediction {
  double params = 0, params_rank = 0;   // the model's, and one last-stage rank's (last_stage_params)
  double flops_mb = 0, flops_rank = 0;  // one micro-batch of the whole model; one rank's step
  double act_mb = 0, act_rank = 0;      // activation bytes (16-bit): a micro-batch's; a rank's
  double act_bytes = 0;                 // one activation between layers, b s d x bytes_per_param
  double compute_s = 0, tp_s = 0, p2p_s = 0;
  double bubble = 0;        // (pp - 1)/(M + pp - 1)
  double work_s = 0;        // compute + tp + p2p
  double pipe_s = 0;        // work stretched by the pipeline's fill and drain
  double embedding_s = 0;   // the first and last stage's sum of segment 0's gradients (pp > 1)
  double dp_s = 0;          // data-parallel collectives
  double memory_bytes = 0;  // model state and activations per rank
  double iteration_s() const { return pipe_s + embedding_s + dp_s; }
  std::vector<PricedCall> model_parallel;  // tp calls, pp sends, the embedding allreduce
  std::vector<PricedCall> data_parallel;   // the ZeRO stage's collectives (none on one dp rank)
  std::string p2p_source;                  // how the pipeline's sends were priced
};

// The fits of a bench file for pricing calls at other rank counts: InputError for a file that is
// not a bench file or was measured on one rank (`purpose` says what needed more).
struct PricingBench {
  std::string path;
  BenchData data;
  int nranks = 0;          // the bench's rank count
  int ranks_per_node = 0;  // the most ranks it ran on one node (nranks / nhosts, rounded up)
  int nhosts = 1;
  std::string device;  // "cpu" or "cuda"
  // Whether `algorithm`'s fit may price a group of p ranks: shm never leaves a node, so not
  // beyond the bench's ranks per node; hier measured on one node has no inter-node level to carry.
  bool valid(const std::string& algorithm, int p) const;
};
PricingBench read_pricing_bench(const std::string& bench_file, const std::string& purpose);

// A compute rate of another device class than the bench's communication: a CPU bench with a
// GPU's rate (above 1e13 FLOP/s per rank, more than any CPU rank computes) or a GPU bench with a
// CPU's (below 1e12); "" when they match.
std::string device_mix(const PricingBench& bench, double flops);

// FLOPs of one micro-batch of the whole model (output head included where the vocabulary is
// known), and one rank's share of a step's M of them (/ (tp pp)); any split, even or not.
double micro_batch_flops(const StepInputs& in);
double step_flops_per_rank(const StepInputs& in);

// Throws InputError naming the bench file where the fits a call needs are missing. Without a
// bench (null), compute and memory alone: every call listed unpriced (its time NaN), the
// communication times 0.
StepPrediction predict_step(const PricingBench* bench, const StepInputs& in);

}  // namespace commscope::analysis
