#include "commscope/analysis/model_math.hpp"

#include <array>
#include <cmath>
#include <limits>
#include <numbers>
#include <stdexcept>

#include "commscope/analysis/alpha_beta.hpp"
#include "commscope/common/model_flops.hpp"

namespace commscope::analysis {
namespace {

// Throws unless x is finite and >= lo (or > lo when strict).
double check(double x, const char* what, double lo = 0.0, bool strict = false) {
  if (!std::isfinite(x) || x < lo || (strict && x == lo)) {
    throw std::invalid_argument(std::string("commscope::analysis: ") + what + " out of range (" + std::to_string(x) +
                                ")");
  }
  return x;
}
double positive(double x, const char* what) {
  return check(x, what, 0.0, true);
}

struct PresetRow {
  const char* name;
  int layers, d_model, heads, seq, vocab;
};
// The rows documented in model_math.hpp.
constexpr std::array kPresets = {
    PresetRow{"125m", 12, 768, 12, 1024, 50257},  PresetRow{"1.3b", 24, 2064, 24, 1024, 50257},
    PresetRow{"6.7b", 32, 4096, 32, 1024, 50257}, PresetRow{"gpt2-124m", 12, 768, 12, 1024, 50257},
    PresetRow{"small", 6, 384, 6, 256, 256},      PresetRow{"tiny", 2, 32, 2, 32, 256},
};

int pad_to_128(int v) {
  return (v + 127) / 128 * 128;
}

// ---- E[max of p standard normals]

// log Phi(x) without cancellation for large positive x.
double log_normal_cdf(double x) {
  const double tail = 0.5 * std::erfc(std::abs(x) / std::numbers::sqrt2);  // Phi(-|x|)
  return x < 0 ? std::log(tail) : std::log1p(-tail);
}

// x p phi(x) Phi(x)^(p-1)
double max_density_times_x(double x, double p) {
  const double log_phi = -0.5 * x * x - 0.5 * std::log(2.0 * std::numbers::pi);
  return x * p * std::exp(log_phi + (p - 1.0) * log_normal_cdf(x));
}

template <class F>
double simpson_step(const F& f, double a, double b, double fa, double fm, double fb, double whole, double eps,
                    int depth) {
  const double m = 0.5 * (a + b), lm = 0.5 * (a + m), rm = 0.5 * (m + b);
  const double flm = f(lm), frm = f(rm);
  const double left = (m - a) / 6.0 * (fa + 4.0 * flm + fm);
  const double right = (b - m) / 6.0 * (fm + 4.0 * frm + fb);
  const double delta = left + right - whole;
  if (depth <= 0 || std::abs(delta) <= 15.0 * eps) return left + right + delta / 15.0;  // Richardson
  return simpson_step(f, a, m, fa, flm, fm, left, 0.5 * eps, depth - 1) +
         simpson_step(f, m, b, fm, frm, fb, right, 0.5 * eps, depth - 1);
}

// Adaptive Simpson on `panels` equal panels (so that a narrow peak is never stepped over).
template <class F>
double integrate(const F& f, double lo, double hi, int panels, double eps_per_panel) {
  double sum = 0.0;
  const double h = (hi - lo) / panels;
  for (int i = 0; i < panels; ++i) {
    const double a = lo + i * h, b = a + h, m = 0.5 * (a + b);
    const double fa = f(a), fm = f(m), fb = f(b);
    sum += simpson_step(f, a, b, fa, fm, fb, h / 6.0 * (fa + 4.0 * fm + fb), eps_per_panel, 40);
  }
  return sum;
}

}  // namespace

ModelShape model_preset(std::string_view name) {
  for (const auto& r : kPresets) {
    if (name == r.name)
      return ModelShape{r.name, r.layers, r.d_model, r.heads, r.seq, r.vocab, pad_to_128(r.vocab), r.seq};
  }
  std::string known;
  for (const auto& r : kPresets) known += std::string(known.empty() ? "" : ", ") + r.name;
  throw std::invalid_argument("unknown model preset '" + std::string(name) + "' (known: " + known + ")");
}

std::vector<std::string> model_preset_names() {
  std::vector<std::string> names;
  for (const auto& r : kPresets) names.emplace_back(r.name);
  return names;
}

double params_approx(double d, double l) {
  return 12.0 * check(d, "d") * check(d, "d") * check(l, "l");
}

double params_gpt2_exact(double vocab, double max_seq, double d, double l) {
  check(vocab, "vocab");
  check(max_seq, "max_seq");
  check(d, "d");
  check(l, "l");
  return vocab * d + max_seq * d + l * (12.0 * d * d + 13.0 * d) + 2.0 * d;
}

StageParams last_stage_params(double vocab, double max_seq, double d, int layers, int tp, int pp) {
  check(vocab, "vocab");
  check(max_seq, "max_seq");
  check(d, "d");
  if (tp < 1 || pp < 1 || layers < 1 || layers % pp != 0)
    throw std::invalid_argument("last_stage_params: tp and pp must be >= 1 and pp must divide the layers");
  StageParams p;
  p.embeddings = vocab * d / tp + max_seq * d;
  p.layers = static_cast<double>(layers / pp) * ((12.0 * d * d + 7.0 * d) / tp + 6.0 * d);
  p.final_norm = 2.0 * d;
  return p;
}

double flops_per_iteration(double b, double s, double d, double l) {
  check(b, "b");
  check(s, "s");
  check(d, "d");
  check(l, "l");
  return transformer_flops(b, s, d, l);
}

double flops_per_iteration_with_head(double b, double s, double d, double l, double vocab) {
  return flops_per_iteration(b, s, d, l) + 6.0 * b * s * d * check(vocab, "vocab");
}

double activation_bytes(double b, double s, double d, double l, double heads) {
  check(b, "b");
  check(s, "s");
  check(d, "d");
  check(l, "l");
  check(heads, "heads");
  return b * (34.0 * s * d + 5.0 * heads * s * s) * l;
}

double megatron_tflops_per_gpu(double global_batch, double s, double l, double h, double vocab, double gpus,
                               double seconds_per_iteration) {
  check(global_batch, "global_batch");
  check(s, "s");
  positive(l, "l");
  positive(h, "h");
  check(vocab, "vocab");
  positive(gpus, "gpus");
  positive(seconds_per_iteration, "seconds_per_iteration");
  const double flops = 96.0 * global_batch * s * l * h * h * (1.0 + s / (6.0 * h) + vocab / (16.0 * l * h));
  return flops / (1e12 * gpus * seconds_per_iteration);
}

double CommVolume::per_gpu_bytes() const {
  double sum = 0.0;
  for (const auto& c : calls) sum += c.per_gpu_bytes;
  return sum;
}

CommVolume zero_comm_volume(int stage, int ranks, double params, double bytes_per_param, int buckets,
                            double head_params) {
  if (stage < 0 || stage > 3) throw std::invalid_argument("zero_comm_volume: stage must be 0..3");
  if (ranks < 1) throw std::invalid_argument("zero_comm_volume: ranks must be >= 1");
  if (buckets < 1) throw std::invalid_argument("zero_comm_volume: buckets must be >= 1");
  check(params, "params");
  check(head_params, "head_params");
  positive(bytes_per_param, "bytes_per_param");
  CommVolume v{stage, ranks, params, bytes_per_param, {}};
  auto add = [&](Collective c, const char* purpose, double count = -1, int calls = 0) {
    CommCall call;
    call.collective = std::string(collective_name(c));
    call.purpose = purpose;
    call.count = count >= 0 ? count : params / buckets;
    call.calls = calls > 0 ? calls : buckets;
    call.bytes_per_call = call.count * bytes_per_param;
    call.per_gpu_bytes = call.calls * call.bytes_per_call * busbw_factor(c, ranks);
    v.calls.push_back(std::move(call));
  };
  switch (stage) {
    case 0:
      add(Collective::allreduce, "grads");
      break;
    case 1:  // what commscope-train does (a ZeRO-1 that allreduced would move twice the reduce-scatter's bytes)
      add(Collective::reducescatter, "grads");
      add(Collective::allgather, "params");
      break;
    case 2:
      add(Collective::reducescatter, "grads");
      add(Collective::allgather, "params");
      break;
    default:
      add(Collective::allgather, "params (forward)");
      add(Collective::allgather, "params (backward)");
      // The tied embedding again for the head: gathered for the encoder and the head in forward,
      // for the head alone in backward (the encoder's backward reads no parameters).
      if (head_params > 0) add(Collective::allgather, "params (tied head)", head_params, 1);
      add(Collective::reducescatter, "grads");
      break;
  }
  return v;
}

CommCall embedding_allreduce(double embeddings, int zero, int dp, double bytes_per_param) {
  check(embeddings, "embeddings");
  positive(bytes_per_param, "bytes_per_param");
  if (zero < 0 || zero > 3 || dp < 1) throw std::invalid_argument("embedding_allreduce: zero 0..3 and dp >= 1");
  CommCall c;
  c.collective = std::string(collective_name(Collective::allreduce));
  c.purpose = "embedding gradients (first and last stage)";
  c.count = zero >= 2 ? embeddings / dp : embeddings;
  c.calls = 1;
  c.bytes_per_call = c.count * bytes_per_param;
  c.per_gpu_bytes = c.bytes_per_call * busbw_factor(Collective::allreduce, 2);
  return c;
}

ModelParallelComm model_parallel_comm(double b, double s, double d, int layers, const Layout& layout,
                                      double bytes_per_activation, bool head) {
  check(b, "b");
  check(s, "s");
  check(d, "d");
  positive(bytes_per_activation, "bytes_per_activation");
  if (layout.tp < 1 || layout.pp < 1 || layout.micro_batches < 1)
    throw std::invalid_argument("model_parallel_comm: tp, pp and micro-batches must be >= 1");
  if (layers < 1 || layers % layout.pp != 0)
    throw std::invalid_argument("model_parallel_comm: pp must divide the layers");
  const int m = layout.micro_batches, stage_layers = layers / layout.pp;
  const long long tp_calls = 4LL * stage_layers * m;
  if (tp_calls > std::numeric_limits<int>::max())
    throw std::invalid_argument("model_parallel_comm: " + std::to_string(tp_calls) + " allreduces per step");
  ModelParallelComm v;
  const double count = b * s * d;  // A's elements
  auto call = [&](Collective c, std::string purpose, int calls, int ranks, double elements) {
    CommCall x;
    x.collective = std::string(collective_name(c));
    x.purpose = std::move(purpose);
    x.count = elements;
    x.calls = calls;
    x.bytes_per_call = elements * bytes_per_activation;
    x.per_gpu_bytes = calls * x.bytes_per_call * busbw_factor(c, ranks);
    return x;
  };
  if (layout.tp > 1) {
    const int tp = layout.tp, ends = layout.pp == 1 ? 2 : 1;  // the encoder's and the head's calls, or the head's
    const std::vector<Collective> sums =
        layout.sp ? std::vector{Collective::reducescatter, Collective::allgather} : std::vector{Collective::allreduce};
    const std::string mode = layout.sp ? "tp sequence parallel" : "tp";
    const std::string ends_purpose =
        layout.pp == 1 ? "encoder and head activations (" + mode + ")" : "head activations (" + mode + ", last stage)";
    for (Collective c : sums) {
      v.tensor.push_back(call(c, "activations (" + mode + ", 2 forward + 2 backward per layer)",
                              static_cast<int>(tp_calls), tp, count));
      if (head) v.tensor.push_back(call(c, ends_purpose, ends * m, tp, count));
    }
    if (layout.sp)
      v.tensor.push_back(call(Collective::allreduce, "layernorm weight gradients (" + mode + ")",
                              (2 * stage_layers + (head ? 1 : 0)) * m, tp, 2 * d));
    if (head) {
      v.tensor.push_back(call(Collective::allreduce, "cross-entropy row sums (tp)", 2 * m, tp, b * s));
      v.tensor.push_back(call(Collective::allreduce, "cross-entropy row maxima (tp, max)", m, tp, b * s));
    }
  }
  // Sequence parallel: a stage sends its rows only.
  const double message = layout.sp && layout.tp > 1 ? count / layout.tp : count;
  if (layout.pp > 1) {
    v.pipeline.push_back(call(Collective::sendrecv, "activations (pp, forward)", m, 2, message));
    v.pipeline.push_back(call(Collective::sendrecv, "gradients (pp, backward)", m, 2, message));
  }
  return v;
}

double pipeline_bubble_fraction(int pp, int micro_batches) {
  if (pp < 1 || micro_batches < 1) throw std::invalid_argument("pipeline_bubble_fraction: pp and M must be >= 1");
  return (pp - 1.0) / (micro_batches + pp - 1.0);
}

double pipeline_step_time(double work, int pp, int micro_batches) {
  check(work, "work");
  if (pp < 1 || micro_batches < 1) throw std::invalid_argument("pipeline_step_time: pp and M must be >= 1");
  return work + work * (pp - 1.0) / micro_batches;
}

double speedup(double t_iter_g, double t_iter_n) {
  return positive(t_iter_g, "t_iter_g") / positive(t_iter_n, "t_iter_n");
}

double comm_efficiency(double t_comm_g, double t_comm_n) {
  return positive(t_comm_g, "t_comm_g") / positive(t_comm_n, "t_comm_n");
}

double predicted_speedup(double r_comp, double r_comm, double eff, double w) {
  check(r_comp, "r_comp");
  check(r_comm, "r_comm");
  positive(eff, "eff");
  positive(w, "w");
  if (r_comp + r_comm <= 0.0) throw std::invalid_argument("predicted_speedup: r_comp + r_comm must be > 0");
  return (r_comp + r_comm) / (r_comp * w + r_comm / eff);
}

double strong_scaling_efficiency(double t_iter_g, double t_iter_n, int g, int n) {
  if (g < 1 || n < 1) throw std::invalid_argument("strong_scaling_efficiency: rank counts must be >= 1");
  return speedup(t_iter_g, t_iter_n) * g / n;
}

double weak_scaling_efficiency(double t_iter_g, double t_iter_n) {
  return speedup(t_iter_g, t_iter_n);
}

double expected_max_std_normal(std::int64_t p) {
  if (p < 1) throw std::invalid_argument("expected_max_std_normal: p must be >= 1");
  if (p == 1) return 0.0;  // E[X] of one standard normal
  const double pd = static_cast<double>(p);
  // 400 panels of 0.05: the density of the maximum has a standard deviation > 0.15 for p <= 1e9.
  return integrate([pd](double x) { return max_density_times_x(x, pd); }, -10.0, 10.0, 400, 1e-13);
}

double straggler_bound(double mu, double sigma, std::int64_t p) {
  if (!std::isfinite(mu)) throw std::invalid_argument("straggler_bound: mu must be finite");
  return mu + check(sigma, "sigma") * expected_max_std_normal(p);
}

}  // namespace commscope::analysis
