// commscope-report predict: a model's iteration at other rank counts, from formulas and the
// alpha-beta fits of the collectives measured on this cluster.

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

#include "bench_fits.hpp"
#include "commscope/analysis/inputs.hpp"
#include "commscope/analysis/model_math.hpp"
#include "report_writer.hpp"

namespace commscope::analysis {

namespace {

// A fit measured on p0 ranks, carried to p ranks with the ring algorithm's textbook scaling:
// t_p(S) = alpha (alpha terms at p / at p0) + beta_eff S (byte terms at p / at p0). (Any ring
// term ratio would do; the ring's is the bandwidth-optimal one the large ZeRO messages use.)
double carried_time_us(const Measured& m, int p, double bytes) {
  const Collective c = parse_collective(m.collective);
  const auto at_p = textbook_cost(c, TextbookAlgorithm::ring, p);
  const auto at_p0 = textbook_cost(c, TextbookAlgorithm::ring, m.nranks);
  if (!at_p || !at_p0 || at_p0->alpha_count <= 0 || at_p0->beta_factor <= 0) return m.fit->predict_us(bytes);
  return m.fit->alpha_us * at_p->alpha_count / at_p0->alpha_count +
         m.fit->beta_us_per_byte * bytes * at_p->beta_factor / at_p0->beta_factor;
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
  const double flops =
      shape.vocab > 0 ? flops_per_iteration_with_head(b, s, d, l, shape.vocab) : flops_per_iteration(b, s, d, l);
  const double act = activation_bytes(b, s, d, l, shape.heads);
  const double t_comp = flops / o.flops;

  ReportWriter w(options, "commscope prediction: " + shape.name + ", ZeRO stage " + std::to_string(o.zero));
  w.text("Model: " + std::to_string(shape.layers) + " layers, " + std::to_string(shape.d_model) + " channels, " +
         std::to_string(shape.heads) + " heads, sequence " + std::to_string(shape.seq) + ", vocabulary " +
         std::to_string(shape.vocab) + "; " + format_number(P / 1e6) + " M parameters; per GPU and iteration " +
         format_number(flops / 1e12) + " TFLOP (forward + backward" +
         (shape.vocab > 0 ? ", output head included" : "") + ") = " + format_number(t_comp * 1e3) + " ms at " +
         format_number(o.flops / 1e12) + " TFLOP/s; activations " + format_bytes(act) +
         " (b (34 s d + 5 a s^2) l, 16-bit, no recomputation).");
  w.text("Communication is priced with the alpha-beta fits of " + o.bench + " (" + std::to_string(bench.nranks) +
         " ranks), carried to each rank count with the ring's textbook alpha and byte terms; for each call the "
         "fastest measured algorithm. No overlap of communication with compute is assumed (the overlapped bound "
         "is max of the two).");

  Table calls({"ranks", "collective", "purpose", "calls", "bytes_per_call", "algorithm", "time_ms"});
  Table summary({"ranks", "compute_ms", "comm_ms", "iteration_ms", "overlapped_ms", "throughput_speedup", "comm_share",
                 "memory_per_gpu"});
  double first_iter = 0;
  int first_p = 0;
  for (int p : o.gpus) {
    const CommVolume vol = zero_comm_volume(o.zero, p, P, o.bytes_per_param);
    double t_comm = 0;
    for (const CommCall& call : vol.calls) {
      if (p == 1) break;
      const auto coll =
          std::find_if(data.begin(), data.end(), [&](const auto& c) { return c.first == call.collective; });
      if (coll == data.end())
        throw InputError(o.bench + ": has no " + call.collective + " measurements (ZeRO stage " +
                         std::to_string(o.zero) + " needs them)");
      double best = std::numeric_limits<double>::infinity();
      std::string best_algo;
      for (const Measured& m : coll->second) {
        if (!m.fit) continue;
        const double t = carried_time_us(m, p, call.bytes_per_call);
        if (t < best) best = t, best_algo = m.algorithm;
      }
      if (best_algo.empty()) throw InputError(o.bench + ": too few " + call.collective + " sizes to fit");
      t_comm += call.calls * best / 1e6;
      calls.add({std::to_string(p), call.collective, call.purpose, std::to_string(call.calls),
                 format_bytes(call.bytes_per_call), best_algo, format_number(call.calls * best / 1e3)});
    }
    // Model state per GPU (mixed precision: 2-byte params and grads + 12 bytes of fp32 master
    // weights and Adam moments; fp32: 4 + 4 + 8), sharded by the ZeRO stage.
    const double pb = o.bytes_per_param, gb = o.bytes_per_param, ob = o.bytes_per_param == 2 ? 12.0 : 8.0;
    const double sh = 1.0 / p;
    const double mem =
        P * (o.zero >= 3 ? pb * sh : pb) + P * (o.zero >= 2 ? gb * sh : gb) + P * (o.zero >= 1 ? ob * sh : ob) + act;
    const double t_iter = t_comp + t_comm;
    if (first_p == 0) first_p = p, first_iter = t_iter;
    summary.add({std::to_string(p), format_number(t_comp * 1e3), format_number(t_comm * 1e3),
                 format_number(t_iter * 1e3), format_number(std::max(t_comp, t_comm) * 1e3),
                 format_number(static_cast<double>(p) / first_p * first_iter / t_iter),
                 format_number(100 * t_comm / t_iter, 3) + "%", format_bytes(mem)});
  }
  w.section("Predicted iteration (batch " + std::to_string(o.batch) + " sequences per GPU)");
  w.table("prediction", summary);
  w.section("Communication per iteration");
  w.table("communication", calls);
  w.finish();
}

}  // namespace commscope::analysis
