// commscope-report predict: a model's iteration at other rank counts, from formulas and the
// alpha-beta fits of the collectives measured on this cluster.

#include <algorithm>
#include <cmath>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "bench_fits.hpp"
#include "commscope/analysis/inputs.hpp"
#include "commscope/analysis/model_math.hpp"
#include "report_writer.hpp"
#include "step_prediction.hpp"

namespace commscope::analysis {

namespace {

// The model's shape from --model and the dimensions that override it; std::invalid_argument for a
// shape that cannot be.
ModelShape predicted_shape(const PredictOptions& o) {
  ModelShape shape;
  if (!o.model.empty()) {
    shape = model_preset(o.model);  // std::invalid_argument names the presets
  } else {
    if (o.layers < 1 || o.dim < 1 || o.heads < 1 || o.seq < 1)
      throw std::invalid_argument("predict needs --model or all of --layers --dim --heads --seq");
    shape.name = "custom";
  }
  if (o.layers) shape.layers = o.layers;
  if (o.dim) shape.d_model = o.dim;
  if (o.heads) shape.heads = o.heads;
  if (o.seq) shape.seq = o.seq;
  // The context (wpe's rows): the preset's, at least the step's sequence (commscope-train's rule).
  shape.context = std::max(shape.context, shape.seq);
  if (o.vocab) shape.vocab = shape.padded_vocab = o.vocab;
  if (shape.d_model % shape.heads != 0)
    throw std::invalid_argument("--dim " + std::to_string(shape.d_model) + " is not a multiple of --heads " +
                                std::to_string(shape.heads));
  return shape;
}

// The ranks of one model replica, tp x pp, once the 3D layout (g = dp x tp x pp; Megatron splits
// heads over tp and layers over pp) is checked against the shape and every --gpus.
long long replica_ranks(const PredictOptions& o, const ModelShape& shape) {
  const int tp = o.tp, pp = o.pp, mb = o.micro_batches;
  if (tp < 1 || pp < 1 || mb < 1) throw std::invalid_argument("--tp, --pp and --micro-batches must be >= 1");
  if (o.sp && tp < 2) throw std::invalid_argument("--sp needs --tp 2 or more");
  if (shape.heads % tp != 0)
    throw std::invalid_argument("--tp " + std::to_string(tp) + " does not divide the " + std::to_string(shape.heads) +
                                " heads");
  if (shape.layers % pp != 0)
    throw std::invalid_argument("--pp " + std::to_string(pp) + " does not divide the " + std::to_string(shape.layers) +
                                " layers");
  const long long mp = static_cast<long long>(tp) * pp;
  for (int g : o.gpus)
    if (g % mp != 0)
      throw std::invalid_argument("--gpus " + std::to_string(g) + " is not a multiple of --tp x --pp = " +
                                  std::to_string(tp) + " x " + std::to_string(pp) + " = " + std::to_string(mp));
  return mp;
}

// The report's first paragraph: the model, its compute and its activations (`first`: the first
// rank count's step; none of these figures depends on the rank count).
std::string model_text(const PredictOptions& o, const ModelShape& shape, const StepPrediction& first, bool layout_3d) {
  const double P = first.params, P_rank = first.params_rank, flops_mb = first.flops_mb, flops = first.flops_rank;
  const double act_mb = first.act_mb, act = first.act_rank, t_comp = first.compute_s;
  if (!layout_3d)
    return "Model: " + std::to_string(shape.layers) + " layers, " + std::to_string(shape.d_model) + " channels, " +
           std::to_string(shape.heads) + " heads, sequence " + std::to_string(shape.seq) + ", vocabulary " +
           std::to_string(shape.vocab) + "; " + format_number(P / 1e6) + " M parameters; per GPU and iteration " +
           format_number(flops / 1e12) + " TFLOP (forward + backward" +
           (shape.vocab > 0 ? ", output head included" : "") + ") = " + format_number(t_comp * 1e3) + " ms at " +
           format_number(o.flops / 1e12) + " TFLOP/s; activations " + format_bytes(act) +
           " (b (34 s d + 5 a s^2) l, 16-bit, no recomputation).";
  return "Model: " + std::to_string(shape.layers) + " layers, " + std::to_string(shape.d_model) + " channels, " +
         std::to_string(shape.heads) + " heads, sequence " + std::to_string(shape.seq) + ", vocabulary " +
         std::to_string(shape.vocab) + "; " + format_number(P / 1e6) + " M parameters, " + format_number(P_rank / 1e6) +
         " M per rank of the last stage (its layers' tensor-parallel shares, segment 0 (wte's vocabulary "
         "share and wpe, context " +
         std::to_string(shape.positions()) + ") and the final layernorm); per micro-batch " +
         format_number(flops_mb / 1e12) + " TFLOP (forward + backward" +
         (shape.vocab > 0 ? ", output head included" : "") + "), per rank and step " + format_number(flops / 1e12) +
         " TFLOP (M / (tp pp) of it) = " + format_number(t_comp * 1e3) + " ms at " + format_number(o.flops / 1e12) +
         " TFLOP/s; activations per micro-batch " + format_bytes(act_mb) +
         " (b (34 s d + 5 a s^2) l, 16-bit, no recomputation), per rank " + format_bytes(act) +
         " (1F1B: min(M, pp) micro-batches in flight on the first stage, / (tp pp)).";
}

// How communication is priced (from `bench`, or not at all without one); `mix` warns of a compute
// rate of another device than the bench's.
std::string pricing_text(const PredictOptions& o, const PricingBench* bench, const std::string& mix) {
  if (!bench)
    return "No --bench: communication is not priced (\"-\"); the compute and memory per rank alone, and the "
           "calls a step makes. Give a bench results file measured on 2 or more ranks to price them.";
  return "Communication is priced with the alpha-beta fits of " + o.bench + " (" + std::to_string(bench->nranks) +
         " ranks on " + std::to_string(bench->nhosts) + (bench->nhosts == 1 ? " node" : " nodes") + ", " +
         bench->device +
         "), carried to each rank count with each algorithm's own textbook alpha and byte terms (ring, tree, "
         "rhd; the ring's for mpi, shm and hier, whose shape the library chooses inside); for each call the "
         "fastest measured algorithm valid at its group's size (shm never leaves a node: not beyond the bench's " +
         std::to_string(bench->ranks_per_node) +
         " ranks per node; hier only there too when the bench ran on one node, which measured no link between "
         "nodes). No overlap of communication with compute is assumed (the overlapped bound is max of the two). "
         "The note columns say where a price rests on more than the measurements: a size beyond (or below) the "
         "sizes the fit was measured at, an algorithm left out, a compute rate of another device than the "
         "bench's." +
         (mix.empty() ? std::string() : " WARNING: " + mix + ".");
}

// The 3D layout's paragraph: tensor parallelism's calls, the pipeline's sends and bubble, and how
// a step's time adds up.
std::string layout_text(const PredictOptions& o, const ModelShape& shape, const StepPrediction& first) {
  const int tp = o.tp, pp = o.pp, mb = o.micro_batches;
  const double act_bytes = first.act_bytes, t_tp = first.tp_s, t_p2p = first.p2p_s, bubble = first.bubble,
               work = first.work_s;
  std::string text = "Layout (dp,tp,pp): g = dp x " + std::to_string(tp) + " x " + std::to_string(pp) + "; " +
                     std::to_string(mb) + " micro-batches of " + std::to_string(o.batch) +
                     " sequences per step and pipeline (global batch b M dp = " +
                     std::to_string(static_cast<long long>(mb) * o.batch) + " x dp sequences). ";
  if (tp > 1)
    text += std::string(o.sp ? "Tensor parallelism, sequence parallel: 4 reduce-scatters and 4 allgathers"
                             : "Tensor parallelism: 4 allreduces") +
            " per layer and micro-batch (2 forward, 2 backward) of b s d x " + std::to_string(o.bytes_per_param) +
            " bytes = " + format_bytes(act_bytes) + " over " + std::to_string(tp) + " ranks, " +
            std::to_string(shape.layers / pp) + " layers per stage" +
            (shape.vocab > 0 ? std::string(", and the ") + (pp == 1 ? "encoder's and the head's" : "head's") +
                                   " (the last stage's), the cross-entropy's row maximum and sums" +
                                   (o.sp ? ", the layernorms' weight gradients" : "")
                             : std::string(o.sp ? ", and the layernorms' weight gradients" : "")) +
            ": " + format_number(t_tp * 1e3) + " ms per step. ";
  if (pp > 1)
    text += "Pipeline: one activation forward and one gradient backward of " +
            format_bytes(o.sp ? act_bytes / tp : act_bytes) + (o.sp ? " (a rank's rows)" : "") +
            " per micro-batch between neighbouring stages, priced with " + first.p2p_source + ": " +
            format_number(t_p2p * 1e3) + " ms per step. ";
  text += "Bubble (pp - 1)/(M + pp - 1) = " + std::to_string(pp - 1) + "/" + std::to_string(mb + pp - 1) + " = " +
          format_number(100 * bubble, 4) +
          "% of the pipeline's time. Step = (compute + tp comm + pp p2p) (M + pp - "
          "1)/M + embedding allreduce + data-parallel comm = " +
          format_number(work * 1e3) + " ms x " + format_number((mb + pp - 1.0) / mb, 4) +
          " + embedding allreduce + dp comm. " +
          (pp > 1 && shape.vocab > 0
               ? "The first and last stage sum segment 0's gradients once per step (embedding_ms: an allreduce "
                 "over their 2 ranks, of a rank's data-parallel shard under ZeRO 2 and 3). "
               : "") +
          "Data parallelism: the ZeRO stage's collectives over dp = g / (tp pp) ranks on the rank's "
          "parameters, once per step (ZeRO-2's reduce-scatters and ZeRO-3's calls once per micro-batch); only "
          "they may overlap the pipeline (overlapped = max of the pipeline and the embedding allreduce, and "
          "them).";
  return text;
}

// The two tables: a step's time and memory per rank count (`summary`), and each call it makes
// (`calls`). Sizes as numbers of bytes in the CSV files (per_call_bytes, memory_per_gpu_bytes),
// as text on screen.
struct PredictionTables {
  Table calls{{"ranks", "collective", "purpose", "calls", "per_call", "algorithm", "time_ms", "note"}};
  Table summary{{"ranks", "layout", "compute_ms", "tp_comm_ms", "pp_p2p_ms", "bubble_ms", "bubble_share", "comm_ms",
                 "iteration_ms", "overlapped_ms", "throughput_speedup", "comm_share", "memory_per_gpu", "embedding_ms",
                 "note"}};
  PredictionTables() {
    calls.bytes_column(4);
    summary.bytes_column(12);
  }
};

PredictionTables prediction_tables(const PredictOptions& o, const std::vector<StepPrediction>& steps, long long mp,
                                   bool priced, const std::string& mix) {
  const int tp = o.tp, pp = o.pp;
  const bool layout_3d = tp > 1 || pp > 1 || o.micro_batches > 1;
  const StepPrediction& first = steps.front();
  const double t_comp = first.compute_s, t_tp = first.tp_s, t_p2p = first.p2p_s, bubble = first.bubble,
               work = first.work_s, t_pipe = first.pipe_s;
  PredictionTables t;
  // Communication's figures: "-" where nothing was priced (no bench).
  auto comm = [&](double v) { return priced ? format_number(v) : std::string("-"); };
  double first_iter = 0;
  int first_p = 0;
  for (std::size_t i = 0; i < o.gpus.size(); ++i) {
    const int g = o.gpus[i];
    const int p = static_cast<int>(g / mp);  // data-parallel ranks
    const StepPrediction& step = steps[i];
    bool beyond = false;
    auto add = [&](const PricedCall& c, const std::string& purpose) {
      t.calls.add({std::to_string(g), c.collective, purpose, std::to_string(c.calls), bytes_cell(c.bytes_per_call),
                   c.algorithm, comm(c.ms), c.note});
      beyond = beyond || !c.note.empty();
    };
    for (const PricedCall& c : step.model_parallel) add(c, c.purpose);
    for (const PricedCall& c : step.data_parallel) add(c, c.purpose + (layout_3d ? ", dp " + std::to_string(p) : ""));
    const double t_comm = step.dp_s, mem = step.memory_bytes, t_emb = step.embedding_s;
    const double t_iter = step.iteration_s();
    // Throughput (sequences per second, b M dp / t_iter) relative to the first rank count: tp, pp
    // and M are the same in every row, so dp scales as g.
    if (first_p == 0) first_p = g, first_iter = t_iter;
    std::string note = mix;
    if (beyond)
      note += (note.empty() ? "" : "; ") +
              std::string("a price rests on more than the measurements (see the calls' notes)");
    if (!priced) note = "communication not priced (no --bench)";
    t.summary.add({std::to_string(g), layout_name(p, tp, pp), format_number(t_comp * 1e3), comm(t_tp * 1e3),
                   comm(t_p2p * 1e3), format_number((t_pipe - work) * 1e3), format_number(100 * bubble, 4) + "%",
                   comm(t_comm * 1e3), comm(t_iter * 1e3), comm(std::max(t_pipe + t_emb, t_comm) * 1e3),
                   comm(static_cast<double>(g) / first_p * first_iter / t_iter),
                   priced ? format_number(100 * (t_comm + t_emb + t_tp + t_p2p) / t_iter, 3) + "%" : "-",
                   bytes_cell(mem), comm(t_emb * 1e3), note});
  }
  return t;
}

}  // namespace

void report_predict(const PredictOptions& o, const ReportOptions& options) {
  const ModelShape shape = predicted_shape(o);
  const long long mp = replica_ranks(o, shape);
  const int mb = o.micro_batches;
  const bool layout_3d = o.tp > 1 || o.pp > 1 || mb > 1;
  std::optional<PricingBench> bench;
  if (!o.bench.empty()) bench = read_pricing_bench(o.bench, "predicting other rank counts");
  const PricingBench* pricing = bench ? &*bench : nullptr;

  StepInputs in;
  in.shape = shape;
  in.batch = o.batch;
  in.layout = {o.tp, o.pp, mb, o.sp};
  in.zero = o.zero;
  in.bytes_per_param = o.bytes_per_param;
  in.flops = o.flops;
  // Every rank count priced before anything is written: a missing collective is one line and no
  // partial report. Everything but the data-parallel collectives is the same at every rank count.
  std::vector<StepPrediction> steps;
  for (int g : o.gpus) {
    in.dp = static_cast<int>(g / mp);
    steps.push_back(predict_step(pricing, in));
  }
  const std::string mix = bench ? device_mix(*bench, o.flops) : "";

  ReportWriter w(options, "commscope prediction: " + shape.name + ", ZeRO stage " + std::to_string(o.zero));
  w.text(model_text(o, shape, steps.front(), layout_3d));
  w.text(pricing_text(o, pricing, mix));
  if (layout_3d) w.text(layout_text(o, shape, steps.front()));
  const PredictionTables t = prediction_tables(o, steps, mp, pricing != nullptr, mix);
  if (layout_3d)
    w.section("Predicted step (micro-batch " + std::to_string(o.batch) + " sequences, " + std::to_string(mb) +
              " micro-batches per step and pipeline)");
  else
    w.section("Predicted iteration (batch " + std::to_string(o.batch) + " sequences per GPU)");
  w.table("prediction", t.summary);
  w.section(layout_3d ? "Communication per step" : "Communication per iteration");
  w.table("communication", t.calls);
  w.finish();
}

}  // namespace commscope::analysis
