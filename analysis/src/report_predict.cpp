// commscope-report predict: a model's iteration at other rank counts, from formulas and the
// alpha-beta fits of the collectives measured on this cluster.

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "bench_fits.hpp"
#include "commscope/analysis/inputs.hpp"
#include "commscope/analysis/model_math.hpp"
#include "report_writer.hpp"

namespace commscope::analysis {

namespace {

// A fit measured on p0 ranks, carried to p ranks with its algorithm's own textbook scaling
// (carry_fit_us: a tree's log p, a ring's p - 1; the ring's for mpi, shm and hier).
double carried_time_us(const Measured& m, int p, double bytes) {
  return carry_fit_us(*m.fit, parse_collective(m.collective), m.algorithm, m.nranks, p, bytes);
}

// The fastest measured algorithm's time for one call of `collective` on p ranks (carried from the
// bench's rank count), or nullopt where the file has no such measurements.
struct Priced {
  double us = 0;
  std::string algorithm;
};
std::optional<Priced> price(const BenchData& data, const std::string& file, const std::string& collective, int p,
                            double bytes) {
  const auto coll = std::find_if(data.begin(), data.end(), [&](const auto& c) { return c.first == collective; });
  if (coll == data.end()) return std::nullopt;
  Priced best{std::numeric_limits<double>::infinity(), ""};
  for (const Measured& m : coll->second) {
    if (!m.fit) continue;
    const double t = carried_time_us(m, p, bytes);
    if (t < best.us) best = {t, m.algorithm};
  }
  if (best.algorithm.empty()) throw InputError(file + ": too few " + collective + " sizes to fit");
  return best;
}

bool has_fit(const BenchData& data, const std::string& collective) {
  const auto coll = std::find_if(data.begin(), data.end(), [&](const auto& c) { return c.first == collective; });
  return coll != data.end() &&
         std::any_of(coll->second.begin(), coll->second.end(), [](const Measured& m) { return m.fit.has_value(); });
}

}  // namespace

void report_predict(const PredictOptions& o, const ReportOptions& options) {
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
  if (o.vocab) shape.vocab = shape.padded_vocab = o.vocab;
  if (shape.d_model % shape.heads != 0)
    throw std::invalid_argument("--dim " + std::to_string(shape.d_model) + " is not a multiple of --heads " +
                                std::to_string(shape.heads));
  // The 3D layout: g = dp x tp x pp. Megatron splits heads over tp and layers over pp.
  const int tp = o.tp, pp = o.pp, mb = o.micro_batches;
  if (tp < 1 || pp < 1 || mb < 1) throw std::invalid_argument("--tp, --pp and --micro-batches must be >= 1");
  if (shape.heads % tp != 0)
    throw std::invalid_argument("--tp " + std::to_string(tp) + " does not divide the " + std::to_string(shape.heads) +
                                " heads");
  if (shape.layers % pp != 0)
    throw std::invalid_argument("--pp " + std::to_string(pp) + " does not divide the " + std::to_string(shape.layers) +
                                " layers");
  const long long mp = static_cast<long long>(tp) * pp;  // ranks of one model replica
  for (int g : o.gpus)
    if (g % mp != 0)
      throw std::invalid_argument("--gpus " + std::to_string(g) + " is not a multiple of --tp x --pp = " +
                                  std::to_string(tp) + " x " + std::to_string(pp) + " = " + std::to_string(mp));
  const bool layout_3d = tp > 1 || pp > 1 || mb > 1;
  preflight(o.bench, "bench");
  const BenchFile bench = read_bench_file(o.bench);
  if (bench.nranks < 2)
    throw InputError(o.bench + ": measured on " + std::to_string(bench.nranks) +
                     " rank; predicting other rank counts needs a bench run on 2 or more");
  const BenchData data = measurements(bench);

  const double b = o.batch, s = shape.seq, d = shape.d_model, l = shape.layers;
  const double P = shape.vocab > 0
                       ? params_gpt2_exact(shape.padded_vocab > 0 ? shape.padded_vocab : shape.vocab, s, d, l)
                       : params_approx(d, l);
  // One micro-batch of the whole model; per rank: M micro-batches over tp x pp ranks.
  const double flops_mb =
      shape.vocab > 0 ? flops_per_iteration_with_head(b, s, d, l, shape.vocab) : flops_per_iteration(b, s, d, l);
  const double flops = flops_mb * mb / mp;
  const double act_mb = activation_bytes(b, s, d, l, shape.heads);
  // 1F1B: the first stage holds min(M, pp) micro-batches of its l / pp layers; tp splits them.
  const double act = act_mb * std::min(mb, pp) / mp;
  const double t_comp = flops / o.flops;
  const double P_rank = P / mp;  // parameters per rank: tp splits every layer, pp the layers
  // ZeRO-3 gathers the tied embedding (wte split over tp, wpe whole) once more for the head when one
  // stage holds both ends of the model; with pp > 1 they are on different stages.
  const double head_params =
      shape.vocab > 0 && pp == 1 ? (shape.padded_vocab > 0 ? shape.padded_vocab : shape.vocab) * d / tp + s * d : 0;

  ReportWriter w(options, "commscope prediction: " + shape.name + ", ZeRO stage " + std::to_string(o.zero));
  if (!layout_3d) {
    w.text("Model: " + std::to_string(shape.layers) + " layers, " + std::to_string(shape.d_model) + " channels, " +
           std::to_string(shape.heads) + " heads, sequence " + std::to_string(shape.seq) + ", vocabulary " +
           std::to_string(shape.vocab) + "; " + format_number(P / 1e6) + " M parameters; per GPU and iteration " +
           format_number(flops / 1e12) + " TFLOP (forward + backward" +
           (shape.vocab > 0 ? ", output head included" : "") + ") = " + format_number(t_comp * 1e3) + " ms at " +
           format_number(o.flops / 1e12) + " TFLOP/s; activations " + format_bytes(act) +
           " (b (34 s d + 5 a s^2) l, 16-bit, no recomputation).");
  } else {
    w.text("Model: " + std::to_string(shape.layers) + " layers, " + std::to_string(shape.d_model) + " channels, " +
           std::to_string(shape.heads) + " heads, sequence " + std::to_string(shape.seq) + ", vocabulary " +
           std::to_string(shape.vocab) + "; " + format_number(P / 1e6) + " M parameters, " +
           format_number(P_rank / 1e6) + " M per rank (P / (tp pp)); per micro-batch " +
           format_number(flops_mb / 1e12) + " TFLOP (forward + backward" +
           (shape.vocab > 0 ? ", output head included" : "") + "), per rank and step " + format_number(flops / 1e12) +
           " TFLOP (M / (tp pp) of it) = " + format_number(t_comp * 1e3) + " ms at " + format_number(o.flops / 1e12) +
           " TFLOP/s; activations per micro-batch " + format_bytes(act_mb) +
           " (b (34 s d + 5 a s^2) l, 16-bit, no recomputation), per rank " + format_bytes(act) +
           " (1F1B: min(M, pp) micro-batches in flight on the first stage, / (tp pp)).");
  }
  w.text("Communication is priced with the alpha-beta fits of " + o.bench + " (" + std::to_string(bench.nranks) +
         " ranks), carried to each rank count with each algorithm's own textbook alpha and byte terms (ring, tree, "
         "rhd; the ring's for mpi, shm and hier, whose shape the library chooses inside); for each call the "
         "fastest measured algorithm. No overlap of communication with compute is assumed (the overlapped bound "
         "is max of the two).");

  // Tensor- and pipeline-parallel calls: the same at every rank count.
  const Layout layout{tp, pp, mb};
  const ModelParallelComm mpc = model_parallel_comm(b, s, d, shape.layers, layout, o.bytes_per_param);
  const double act_bytes = b * s * d * o.bytes_per_param;  // one micro-batch's activation between layers
  double t_tp = 0;
  std::vector<std::vector<std::string>> mp_rows;  // ranks column left out
  for (const CommCall& call : mpc.tensor) {
    const auto priced = price(data, o.bench, call.collective, tp, call.bytes_per_call);
    if (!priced)
      throw InputError(o.bench + ": has no allreduce measurements (--tp " + std::to_string(tp) + " needs them)");
    t_tp += call.calls * priced->us / 1e6;
    mp_rows.push_back({call.collective, call.purpose + ", " + std::to_string(tp) + " ranks", std::to_string(call.calls),
                       format_bytes(call.bytes_per_call), priced->algorithm,
                       format_number(call.calls * priced->us / 1e3)});
  }
  // Pipeline sends: the bench's sendrecv (a ring shift: each rank sends to one neighbour and
  // receives from the other, as an interior stage does), uncarried (one message per rank at any
  // rank count); without one, a 2-rank allreduce: its ring moves the same S bytes each way per
  // rank, with 2 latencies and a reduction, an upper bound.
  double t_p2p = 0;
  std::string p2p_source;
  for (const CommCall& call : mpc.pipeline) {
    std::optional<Priced> priced;
    std::string collective = call.collective, algorithm;
    if (has_fit(data, "sendrecv")) {
      priced = price(data, o.bench, "sendrecv", 2, call.bytes_per_call);
      algorithm = priced->algorithm;
      p2p_source =
          "the bench's sendrecv fit (its ring shift sends to one neighbour and receives from the other, as an "
          "interior stage does; one message per rank, not carried)";
    } else {
      priced = price(data, o.bench, "allreduce", 2, call.bytes_per_call);
      if (!priced)
        throw InputError(o.bench + ": has neither sendrecv nor allreduce measurements (--pp " + std::to_string(pp) +
                         " needs one)");
      collective = "allreduce";
      algorithm = priced->algorithm + " (2 ranks, for sendrecv)";
      p2p_source =
          "the bench's allreduce fit carried to 2 ranks, as the file has no sendrecv (a 2-rank ring "
          "allreduce moves the same S bytes each way per rank, with 2 latencies and a reduction: an upper "
          "bound of one send and receive)";
    }
    t_p2p += call.calls * priced->us / 1e6;
    mp_rows.push_back({collective, call.purpose, std::to_string(call.calls), format_bytes(call.bytes_per_call),
                       algorithm, format_number(call.calls * priced->us / 1e3)});
  }
  const double bubble = pipeline_bubble_fraction(pp, mb);
  // compute + tp comm + pp sends of M micro-batches, stretched by the bubble: work (M + pp - 1) / M.
  const double work = t_comp + t_tp + t_p2p;
  const double t_pipe = pipeline_step_time(work, pp, mb);
  if (layout_3d) {
    std::string text = "Layout (dp,tp,pp): g = dp x " + std::to_string(tp) + " x " + std::to_string(pp) + "; " +
                       std::to_string(mb) + " micro-batches of " + std::to_string(o.batch) +
                       " sequences per step and pipeline (global batch b M dp = " +
                       std::to_string(static_cast<long long>(mb) * o.batch) + " x dp sequences). ";
    if (tp > 1)
      text += "Tensor parallelism: 4 allreduces per layer and micro-batch (2 forward, 2 backward) of b s d x " +
              std::to_string(o.bytes_per_param) + " bytes = " + format_bytes(act_bytes) + " over " +
              std::to_string(tp) + " ranks, " + std::to_string(shape.layers / pp) +
              " layers per stage: " + format_number(t_tp * 1e3) + " ms per step. ";
    if (pp > 1)
      text += "Pipeline: one activation forward and one gradient backward of " + format_bytes(act_bytes) +
              " per micro-batch between neighbouring stages, priced with " + p2p_source + ": " +
              format_number(t_p2p * 1e3) + " ms per step. ";
    text += "Bubble (pp - 1)/(M + pp - 1) = " + std::to_string(pp - 1) + "/" + std::to_string(mb + pp - 1) + " = " +
            format_number(100 * bubble, 4) +
            "% of the pipeline's time. Step = (compute + tp comm + pp p2p) (M + pp - "
            "1)/M + data-parallel comm = " +
            format_number(work * 1e3) + " ms x " + format_number((mb + pp - 1.0) / mb, 4) +
            " + dp comm. Data parallelism: the ZeRO stage's collectives over dp = g / (tp pp) ranks on P / (tp pp) "
            "parameters, once per step; only they may overlap the pipeline (overlapped = max of the two).";
    w.text(text);
  }

  Table calls({"ranks", "collective", "purpose", "calls", "bytes_per_call", "algorithm", "time_ms"});
  Table summary({"ranks", "layout", "compute_ms", "tp_comm_ms", "pp_p2p_ms", "bubble_ms", "bubble_share", "comm_ms",
                 "iteration_ms", "overlapped_ms", "throughput_speedup", "comm_share", "memory_per_gpu"});
  double first_iter = 0;
  int first_p = 0;
  for (int g : o.gpus) {
    const int p = static_cast<int>(g / mp);  // data-parallel ranks
    for (const auto& row : mp_rows) {
      std::vector<std::string> cells{std::to_string(g)};
      cells.insert(cells.end(), row.begin(), row.end());
      calls.add(std::move(cells));
    }
    const CommVolume vol = zero_comm_volume(o.zero, p, P_rank, o.bytes_per_param, 1, head_params);
    double t_comm = 0;
    for (const CommCall& call : vol.calls) {
      if (p == 1) break;
      const auto priced = price(data, o.bench, call.collective, p, call.bytes_per_call);
      if (!priced)
        throw InputError(o.bench + ": has no " + call.collective + " measurements (ZeRO stage " +
                         std::to_string(o.zero) + " needs them)");
      t_comm += call.calls * priced->us / 1e6;
      calls.add({std::to_string(g), call.collective, call.purpose + (layout_3d ? ", dp " + std::to_string(p) : ""),
                 std::to_string(call.calls), format_bytes(call.bytes_per_call), priced->algorithm,
                 format_number(call.calls * priced->us / 1e3)});
    }
    // Model state per GPU (mixed precision: 2-byte params and grads + 12 bytes of fp32 master
    // weights and Adam moments; fp32: 4 + 4 + 8), of P / (tp pp) parameters, sharded over dp by
    // the ZeRO stage.
    const double pb = o.bytes_per_param, gb = o.bytes_per_param, ob = o.bytes_per_param == 2 ? 12.0 : 8.0;
    const double sh = 1.0 / p;
    const double mem = P_rank * (o.zero >= 3 ? pb * sh : pb) + P_rank * (o.zero >= 2 ? gb * sh : gb) +
                       P_rank * (o.zero >= 1 ? ob * sh : ob) + act;
    const double t_iter = t_pipe + t_comm;
    // Throughput (sequences per second, b M dp / t_iter) relative to the first rank count: tp, pp
    // and M are the same in every row, so dp scales as g.
    if (first_p == 0) first_p = g, first_iter = t_iter;
    std::string layout_cell = "(";  // appended: GCC 12's -Wrestrict misfires on "(" + std::string
    layout_cell.append(std::to_string(p)).append(",").append(std::to_string(tp)).append(",");
    layout_cell.append(std::to_string(pp)).append(")");
    summary.add({std::to_string(g), layout_cell, format_number(t_comp * 1e3), format_number(t_tp * 1e3),
                 format_number(t_p2p * 1e3), format_number((t_pipe - work) * 1e3), format_number(100 * bubble, 4) + "%",
                 format_number(t_comm * 1e3), format_number(t_iter * 1e3),
                 format_number(std::max(t_pipe, t_comm) * 1e3),
                 format_number(static_cast<double>(g) / first_p * first_iter / t_iter),
                 format_number(100 * (t_comm + t_tp + t_p2p) / t_iter, 3) + "%", format_bytes(mem)});
  }
  if (layout_3d)
    w.section("Predicted step (micro-batch " + std::to_string(o.batch) + " sequences, " + std::to_string(mb) +
              " micro-batches per step and pipeline)");
  else
    w.section("Predicted iteration (batch " + std::to_string(o.batch) + " sequences per GPU)");
  w.table("prediction", summary);
  w.section(layout_3d ? "Communication per step" : "Communication per iteration");
  w.table("communication", calls);
  w.finish();
}

}  // namespace commscope::analysis
