#include "step_prediction.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <optional>

#include "commscope/analysis/inputs.hpp"
#include "commscope/model/format.hpp"

namespace commscope::analysis {

namespace {

// A fit measured on p0 ranks, carried to p ranks with its algorithm's own textbook scaling
// (carry_fit_us: a tree's log p, a ring's p - 1; the ring's for mpi, shm and hier).
double carried_time_us(const Measured& m, int p, double bytes) {
  return carry_fit_us(*m.fit, parse_collective(m.collective), m.algorithm, m.nranks, p, bytes);
}

// The fastest measured algorithm valid for p ranks, its time for one call of `collective` (carried
// from the bench's rank count), and a note where the size lies outside its measured sizes; nullopt
// where the file has no such measurements. Without a bench: unpriced (NaN, "-").
struct Priced {
  double us = 0;
  std::string algorithm, note;
};
std::optional<Priced> price(const PricingBench* bench, const std::string& collective, int p, double bytes) {
  if (bench == nullptr) return Priced{std::numeric_limits<double>::quiet_NaN(), "-", ""};
  const BenchData& data = bench->data;
  const auto coll = std::find_if(data.begin(), data.end(), [&](const auto& c) { return c.first == collective; });
  if (coll == data.end()) return std::nullopt;
  Priced best{std::numeric_limits<double>::infinity(), "", ""};
  const Measured* chosen = nullptr;
  std::string invalid, negative;
  for (const Measured& m : coll->second) {
    if (!m.fit) continue;
    if (!bench->valid(m.algorithm, p)) {
      invalid += (invalid.empty() ? "" : ", ") + m.algorithm;
      continue;
    }
    const double t = carried_time_us(m, p, bytes);
    if (!(t > 0)) {  // a fit whose line falls below zero out there prices nothing
      negative += (negative.empty() ? "" : ", ") + m.algorithm;
      continue;
    }
    if (t < best.us) best = {t, m.algorithm, ""}, chosen = &m;
  }
  if (chosen == nullptr)
    throw InputError(bench->path + ": too few " + collective + " sizes to fit" +
                     (invalid.empty() && negative.empty()
                          ? ""
                          : " with an algorithm valid on " + std::to_string(p) + " ranks and a positive time at " +
                                format_bytes(bytes)));
  if (bytes > chosen->bytes.back())
    best.note = "beyond the measured sizes (up to " + format_bytes(chosen->bytes.back()) + ")";
  else if (bytes < chosen->bytes.front())
    best.note = "below the measured sizes (from " + format_bytes(chosen->bytes.front()) + ")";
  if (!invalid.empty())
    best.note += (best.note.empty() ? "" : "; ") + invalid + " left out (not valid on " + std::to_string(p) +
                 " ranks from a bench of " + std::to_string(bench->ranks_per_node) + " ranks per node)";
  if (!negative.empty()) best.note += (best.note.empty() ? "" : "; ") + negative + " left out (a time <= 0 there)";
  return best;
}

bool has_fit(const PricingBench* bench, const std::string& collective) {
  if (bench == nullptr) return true;
  const BenchData& data = bench->data;
  const auto coll = std::find_if(data.begin(), data.end(), [&](const auto& c) { return c.first == collective; });
  return coll != data.end() &&
         std::any_of(coll->second.begin(), coll->second.end(), [](const Measured& m) { return m.fit.has_value(); });
}

// ZeRO-2 reduce-scatters each micro-batch's gradients and ZeRO-3 also gathers the parameters for
// each micro-batch's forward and backward (as commscope-train does): those calls M times a step.
CommVolume per_micro_batch(CommVolume v, int micro_batches) {
  for (CommCall& c : v.calls)
    if (v.stage == 3 || (v.stage == 2 && c.collective == "reducescatter"))
      c.calls *= micro_batches, c.per_gpu_bytes *= micro_batches;
  return v;
}

// The ZeRO stage's collectives over the v.ranks data-parallel ranks -> r.dp_s, r.data_parallel.
// One call's time (s) to add to a part of the step: 0 when unpriced (no bench).
double seconds(const CommCall& call, const Priced& priced) {
  return std::isnan(priced.us) ? 0.0 : call.calls * priced.us / 1e6;
}
PricedCall priced_call(const CommCall& call, const Priced& priced, const std::string& collective,
                       const std::string& purpose, const std::string& algorithm) {
  return {collective, purpose, call.calls, call.bytes_per_call, algorithm, call.calls * priced.us / 1e3, priced.note};
}

void price_data_parallel(const PricingBench* bench, int zero, const CommVolume& v, StepPrediction& r) {
  for (const CommCall& call : v.calls) {
    const auto priced = price(bench, call.collective, v.ranks, call.bytes_per_call);
    if (!priced)
      throw InputError(bench->path + ": has no " + call.collective + " measurements (ZeRO stage " +
                       std::to_string(zero) + " needs them)");
    r.dp_s += seconds(call, *priced);
    r.data_parallel.push_back(priced_call(call, *priced, call.collective, call.purpose, priced->algorithm));
  }
}

// The first and last stage's sum of segment 0's gradients (2 ranks) -> r.embedding_s, r.model_parallel.
void price_embedding(const PricingBench* bench, const CommCall& call, StepPrediction& r) {
  const auto priced = price(bench, call.collective, 2, call.bytes_per_call);
  if (!priced)
    throw InputError(bench->path +
                     ": has no allreduce measurements (--pp needs them for the sum of the embedding's gradients)");
  r.embedding_s = seconds(call, *priced);
  r.model_parallel.push_back(priced_call(call, *priced, call.collective, call.purpose, priced->algorithm));
}

}  // namespace

std::string layout_name(int dp, int tp, int pp) {
  std::string s = "(";  // appended: GCC 12's -Wrestrict misfires on "(" + std::string
  s.append(std::to_string(dp)).append(",").append(std::to_string(tp)).append(",").append(std::to_string(pp));
  return s.append(")");
}

PricingBench read_pricing_bench(const std::string& bench_file, const std::string& purpose) {
  preflight(bench_file, "bench");
  const BenchFile bench = read_bench_file(bench_file);
  if (bench.nranks < 2)
    throw InputError(bench_file + ": measured on " + std::to_string(bench.nranks) + " rank; " + purpose +
                     " needs a bench run on 2 or more");
  PricingBench out{bench_file, measurements(bench), bench.nranks, bench.nranks, 1, bench.device};
  out.nhosts = std::max(1, std::atoi(bench.meta_value("nhosts").c_str()));
  out.ranks_per_node = (bench.nranks + out.nhosts - 1) / out.nhosts;
  return out;
}

bool PricingBench::valid(const std::string& algorithm, int p) const {
  if (algorithm == "shm") return p <= ranks_per_node;
  if (algorithm == "hier") return nhosts > 1 || p <= ranks_per_node;
  return true;
}

std::string device_mix(const PricingBench& bench, double flops) {
  if (bench.device == "cpu" && flops > 1e13)
    return "communication measured on CPUs, compute at a GPU's rate (" + format_number(flops / 1e12) + " TFLOP/s)";
  if (bench.device == "cuda" && flops < 1e12)
    return "communication measured on GPUs, compute at a CPU's rate (" + format_number(flops / 1e12) + " TFLOP/s)";
  return "";
}

double micro_batch_flops(const StepInputs& in) {
  const ModelShape& m = in.shape;
  return m.vocab > 0 ? flops_per_iteration_with_head(in.batch, m.seq, m.d_model, m.layers, m.vocab)
                     : flops_per_iteration(in.batch, m.seq, m.d_model, m.layers);
}

double step_flops_per_rank(const StepInputs& in) {
  return micro_batch_flops(in) * in.layout.micro_batches / (static_cast<double>(in.layout.tp) * in.layout.pp);
}

StepPrediction predict_step(const PricingBench* bench, const StepInputs& in) {
  const ModelShape& shape = in.shape;
  const int tp = in.layout.tp, pp = in.layout.pp, mb = in.layout.micro_batches;
  const double mp = static_cast<double>(tp) * pp;  // ranks of one model replica
  const double b = in.batch, s = shape.seq, d = shape.d_model, l = shape.layers;
  const bool head = shape.vocab > 0;  // with embeddings and the tied head (else the blocks' matrices only)
  const double vocab_rows = shape.padded_vocab > 0 ? shape.padded_vocab : shape.vocab;
  StepPrediction r;
  r.params = head ? params_gpt2_exact(vocab_rows, shape.positions(), d, l) : params_approx(d, l);
  r.flops_mb = micro_batch_flops(in);
  r.flops_rank = step_flops_per_rank(in);
  r.act_mb = activation_bytes(b, s, d, l, shape.heads);
  // 1F1B: the first stage holds min(M, pp) micro-batches of its l / pp layers; tp splits them.
  r.act_rank = r.act_mb * std::min(mb, pp) / mp;
  r.compute_s = r.flops_rank / in.flops;
  // The last stage's rank: its layers' shares, segment 0 and the final layernorm (the blocks' matrices
  // split evenly without a head).
  const StageParams stage = head ? last_stage_params(vocab_rows, shape.positions(), d, shape.layers, tp, pp)
                                 : StageParams{0, r.params / mp, 0};
  r.params_rank = stage.total();
  r.act_bytes = b * s * d * in.bytes_per_param;
  // ZeRO-3 gathers the tied embedding (wte split over tp, wpe whole) once more for the head when one
  // stage holds both ends of the model; with pp > 1 they are on different stages.
  const double head_params = pp == 1 ? stage.embeddings : 0;

  // Tensor- and pipeline-parallel calls: the same at every rank count.
  const ModelParallelComm mpc = model_parallel_comm(b, s, d, shape.layers, in.layout, in.bytes_per_param, head);
  for (const CommCall& call : mpc.tensor) {
    const auto priced = price(bench, call.collective, tp, call.bytes_per_call);
    if (!priced)
      throw InputError(bench->path + ": has no " + call.collective + " measurements (--tp " + std::to_string(tp) +
                       (in.layout.sp ? " --sp" : "") + " needs them)");
    r.tp_s += seconds(call, *priced);
    r.model_parallel.push_back(priced_call(call, *priced, call.collective,
                                           call.purpose + ", " + std::to_string(tp) + " ranks", priced->algorithm));
  }
  // Pipeline sends: the bench's sendrecv (a ring shift: each rank sends to one neighbour and
  // receives from the other, as an interior stage does), uncarried (one message per rank at any
  // rank count); without one, a 2-rank allreduce: its ring moves the same S bytes each way per
  // rank, with 2 latencies and a reduction, an upper bound.
  for (const CommCall& call : mpc.pipeline) {
    std::optional<Priced> priced;
    std::string collective = call.collective, algorithm;
    if (has_fit(bench, "sendrecv")) {
      priced = price(bench, "sendrecv", 2, call.bytes_per_call);
      algorithm = priced->algorithm;
      r.p2p_source =
          "the bench's sendrecv fit (its ring shift sends to one neighbour and receives from the other, as an "
          "interior stage does; one message per rank, not carried)";
    } else {
      priced = price(bench, "allreduce", 2, call.bytes_per_call);
      if (!priced)
        throw InputError(bench->path + ": has neither sendrecv nor allreduce measurements (--pp " + std::to_string(pp) +
                         " needs one)");
      collective = "allreduce";
      algorithm = priced->algorithm + " (2 ranks, for sendrecv)";
      r.p2p_source =
          "the bench's allreduce fit carried to 2 ranks, as the file has no sendrecv (a 2-rank ring "
          "allreduce moves the same S bytes each way per rank, with 2 latencies and a reduction: an upper "
          "bound of one send and receive)";
    }
    if (bench == nullptr) r.p2p_source = "nothing: no bench file, so not priced";
    r.p2p_s += seconds(call, *priced);
    r.model_parallel.push_back(priced_call(call, *priced, collective, call.purpose, algorithm));
  }
  r.bubble = pipeline_bubble_fraction(pp, mb);
  // compute + tp comm + pp sends of M micro-batches, stretched by the bubble: work (M + pp - 1) / M.
  r.work_s = r.compute_s + r.tp_s + r.p2p_s;
  r.pipe_s = pipeline_step_time(r.work_s, pp, mb);

  const int p = in.dp;
  if (pp > 1 && head) price_embedding(bench, embedding_allreduce(stage.embeddings, in.zero, p, in.bytes_per_param), r);
  if (p > 1)
    price_data_parallel(
        bench, in.zero,
        per_micro_batch(zero_comm_volume(in.zero, p, r.params_rank, in.bytes_per_param, 1, head_params), mb), r);
  // Model state per rank (mixed precision: 2-byte params and grads + 12 bytes of fp32 master
  // weights and Adam moments; fp32: 4 + 4 + 8), of the last stage's parameters, sharded over dp
  // by the ZeRO stage.
  const double pb = in.bytes_per_param, gb = in.bytes_per_param, ob = in.bytes_per_param == 2 ? 12.0 : 8.0;
  const double sh = 1.0 / p;
  r.memory_bytes = r.params_rank * (in.zero >= 3 ? pb * sh : pb) + r.params_rank * (in.zero >= 2 ? gb * sh : gb) +
                   r.params_rank * (in.zero >= 1 ? ob * sh : ob) + r.act_rank;
  return r;
}

}  // namespace commscope::analysis
