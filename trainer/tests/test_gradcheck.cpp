// Gradient checks of the GPT-2 model (trainer/src/model.cpp) and its layer kernels
// (trainer/src/kernels.cpp), plus the model's precision, hooks and initialisation contracts.
//
// Finite differences: central, (f(x + h) - f(x - h)) / 2h with h = 1e-5, in double. The error of
// one element is |analytic - numeric| / max(|analytic|, |numeric|, floor): relative for gradients
// above the floor, absolute (scaled by 1/floor) below it, where the difference's own rounding
// (~1e-16 |f| / h) dominates.

#include <gtest/gtest.h>
#include <omp.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <initializer_list>
#include <limits>
#include <numbers>
#include <random>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "../src/kernels.hpp"
#include "commscope/trainer/model.hpp"
#include "gradcheck_common.hpp"

namespace ct = commscope::trainer;
namespace kn = commscope::trainer::kernels;

namespace {

using Vec = std::vector<double>;

constexpr double kStep = 1e-5;
// Kernels: inputs and output weights are N(0, 1), so gradients are O(1).
constexpr double kKernelFloor = 1e-3;
constexpr double kKernelBound = 1e-6;
// Whole model: gradients range down to ~1e-4 (deep weights at init scale), the loss is ~5.
constexpr double kModelFloor = 1e-5;
constexpr double kModelBound = 1e-5;

Vec randn(std::size_t n, std::uint64_t seed, double sd = 1.0) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> normal(0.0, sd);
  Vec v(n);
  for (double& x : v) x = normal(rng);
  return v;
}

double dot(const Vec& a, const Vec& b) {
  double s = 0;
  for (std::size_t i = 0; i < a.size(); ++i) s += a[i] * b[i];
  return s;
}

Vec minus(const Vec& a, const Vec& b) {
  Vec d(a.size());
  for (std::size_t i = 0; i < a.size(); ++i) d[i] = a[i] - b[i];
  return d;
}

using ct::gradcheck::rel_error;

// Central difference of f() with respect to x.
template <class F>
double numeric_grad(double& x, const F& f) {
  const double saved = x;
  x = saved + kStep;
  const double plus = f();
  x = saved - kStep;
  const double minus_ = f();
  x = saved;
  return (plus - minus_) / (2 * kStep);
}

// One input of a kernel check: the values, and the gradient the backward kernel added.
struct Input {
  const char* name;
  Vec* x;
  Vec added;
};

// Checks every element of every input; prints and returns the largest error.
template <class F>
double check_kernel(const char* kernel, const F& f, std::vector<Input> inputs) {
  double worst = 0;
  for (Input& in : inputs) {
    double input_worst = 0;
    for (std::size_t i = 0; i < in.x->size(); ++i)
      input_worst = std::max(input_worst, rel_error(in.added[i], numeric_grad((*in.x)[i], f), kKernelFloor));
    std::printf("  %-10s d%-8s %4zu elements  max rel error %.2e\n", kernel, in.name, in.x->size(), input_worst);
    worst = std::max(worst, input_worst);
  }
  return worst;
}

// ---------------------------------------------------------------------------------------------
// (a) Every kernel against central differences of sum(out * R), R random (so dout = R). The
// backward kernels add into gradients prefilled with random values: "added" is after - before.

TEST(GradCheck, EncoderKernel) {
  const int B = 2, Tn = 3, C = 37, V = 5;              // C spans a partial channel block
  const std::vector<int> tokens = {1, 3, 1, 4, 1, 0};  // token 1 three times
  Vec wte = randn(V * C, 1), wpe = randn(Tn * C, 2), r = randn(B * Tn * C, 3), out(B * Tn * C);
  auto f = [&] {
    kn::encoder_forward(out.data(), tokens.data(), wte.data(), wpe.data(), B, Tn, C);
    return dot(out, r);
  };
  const Vec dwte0 = randn(wte.size(), 4), dwpe0 = randn(wpe.size(), 5);
  Vec dwte = dwte0, dwpe = dwpe0;
  kn::encoder_backward(dwte.data(), dwpe.data(), r.data(), tokens.data(), B, Tn, C);
  const double err = check_kernel("encoder", f, {{"wte", &wte, minus(dwte, dwte0)}, {"wpe", &wpe, minus(dwpe, dwpe0)}});
  EXPECT_LT(err, kKernelBound);
}

TEST(GradCheck, LayerNormKernel) {
  const int N = 3, C = 37;
  Vec inp = randn(N * C, 10, 2.0), w = randn(C, 11), b = randn(C, 12), r = randn(N * C, 13);
  for (std::size_t i = 0; i < inp.size(); ++i) inp[i] += static_cast<double>(i % 5);  // nonzero means
  Vec out(N * C), mean(N), rstd(N);
  auto f = [&] {
    kn::layernorm_forward(out.data(), mean.data(), rstd.data(), inp.data(), w.data(), b.data(), N, C);
    return dot(out, r);
  };
  f();
  // The stored statistics: mean and 1 / sqrt(biased variance + 1e-5) of each row.
  for (int n = 0; n < N; ++n) {
    double m = 0, v = 0;
    for (int c = 0; c < C; ++c) m += inp[static_cast<std::size_t>(n * C + c)] / C;
    for (int c = 0; c < C; ++c) v += std::pow(inp[static_cast<std::size_t>(n * C + c)] - m, 2) / C;
    EXPECT_NEAR(mean[static_cast<std::size_t>(n)], m, 1e-12);
    EXPECT_NEAR(rstd[static_cast<std::size_t>(n)], 1 / std::sqrt(v + 1e-5), 1e-12);
  }
  const Vec dinp0 = randn(inp.size(), 14), dw0 = randn(C, 15), db0 = randn(C, 16);
  Vec dinp = dinp0, dw = dw0, db = db0;
  kn::layernorm_backward(dinp.data(), dw.data(), db.data(), r.data(), inp.data(), w.data(), mean.data(), rstd.data(), N,
                         C);
  const double err = check_kernel(
      "layernorm", f, {{"inp", &inp, minus(dinp, dinp0)}, {"w", &w, minus(dw, dw0)}, {"b", &b, minus(db, db0)}});
  EXPECT_LT(err, kKernelBound);
}

TEST(GradCheck, MatmulKernel) {
  // 37 rows and 37 output channels: several 16-row GEMM blocks, split over 3 threads.
  const int N = 37, C = 5, OC = 37;
  const int saved_threads = omp_get_max_threads();
  omp_set_num_threads(3);
  Vec inp = randn(N * C, 20), w = randn(OC * C, 21), bias = randn(OC, 22), r = randn(N * OC, 23), out(N * OC);
  auto f = [&] {
    kn::matmul_forward(out.data(), inp.data(), w.data(), bias.data(), N, C, OC);
    return dot(out, r);
  };
  f();
  EXPECT_NEAR(out[7], dot(Vec(inp.begin(), inp.begin() + C), Vec(w.begin() + 7 * C, w.begin() + 8 * C)) + bias[7],
              1e-12);
  const Vec dinp0 = randn(inp.size(), 24), dw0 = randn(w.size(), 25), db0 = randn(OC, 26);
  Vec dinp = dinp0, dw = dw0, db = db0;
  kn::matmul_backward(dinp.data(), dw.data(), db.data(), r.data(), inp.data(), w.data(), N, C, OC);
  const double err = check_kernel(
      "matmul", f, {{"inp", &inp, minus(dinp, dinp0)}, {"w", &w, minus(dw, dw0)}, {"bias", &bias, minus(db, db0)}});
  EXPECT_LT(err, kKernelBound);

  // Without a bias (the tied output head).
  f();  // out for the unperturbed inputs
  Vec no_bias(N * OC);
  kn::matmul_forward(no_bias.data(), inp.data(), w.data(), static_cast<const double*>(nullptr), N, C, OC);
  for (int n = 0; n < N; ++n)
    for (int o = 0; o < OC; ++o) {
      const std::size_t i = static_cast<std::size_t>(n * OC + o);
      EXPECT_NEAR(no_bias[i], out[i] - bias[static_cast<std::size_t>(o)], 1e-12);
    }
  omp_set_num_threads(saved_threads);
}

TEST(GradCheck, AttentionKernel) {
  const int B = 2, Tn = 5, C = 12, NH = 3;
  Vec qkv = randn(static_cast<std::size_t>(B * Tn * 3 * C), 30), r = randn(static_cast<std::size_t>(B * Tn * C), 31);
  // Outputs start as NaN: the kernels must write every element they promise.
  const double nan = std::numeric_limits<double>::quiet_NaN();
  Vec out(r.size(), nan), preatt(static_cast<std::size_t>(B * NH * Tn * Tn), nan), att(preatt.size(), nan);
  auto f = [&] {
    kn::attention_forward(out.data(), preatt.data(), att.data(), qkv.data(), B, Tn, C, NH);
    return dot(out, r);
  };
  f();
  // Causal softmax rows: sum 1 over t2 <= t; preatt = q . k / sqrt(hs).
  const int hs = C / NH;
  for (int b = 0; b < B; ++b)
    for (int h = 0; h < NH; ++h)
      for (int t = 0; t < Tn; ++t) {
        const std::size_t row = static_cast<std::size_t>(((b * NH + h) * Tn + t) * Tn);
        double sum = 0;
        for (int t2 = 0; t2 <= t; ++t2) sum += att[row + static_cast<std::size_t>(t2)];
        EXPECT_NEAR(sum, 1.0, 1e-12);
        for (int t2 = t + 1; t2 < Tn; ++t2) EXPECT_EQ(att[row + static_cast<std::size_t>(t2)], 0.0);
        double qk = 0;
        for (int i = 0; i < hs; ++i)
          qk += qkv[static_cast<std::size_t>((b * Tn + t) * 3 * C + h * hs + i)] *
                qkv[static_cast<std::size_t>((b * Tn + 0) * 3 * C + C + h * hs + i)];
        EXPECT_NEAR(preatt[row], qk / std::sqrt(static_cast<double>(hs)), 1e-12);
      }
  const Vec dqkv0 = randn(qkv.size(), 32);
  Vec dqkv = dqkv0, dpreatt(preatt.size(), nan), datt(att.size(), nan);
  kn::attention_backward(dqkv.data(), dpreatt.data(), datt.data(), r.data(), qkv.data(), att.data(), B, Tn, C, NH);
  const double err = check_kernel("attention", f, {{"qkv", &qkv, minus(dqkv, dqkv0)}});
  EXPECT_LT(err, kKernelBound);
  for (int t = 0; t < Tn; ++t)
    for (int t2 = t + 1; t2 < Tn; ++t2) EXPECT_EQ(dpreatt[static_cast<std::size_t>(t * Tn + t2)], 0.0);
}

TEST(GradCheck, GeluKernel) {
  const std::size_t n = 101;
  Vec inp(n), out(n);
  for (std::size_t i = 0; i < n; ++i) inp[i] = -6.0 + 0.12 * static_cast<double>(i) + 0.01;  // -6 .. 6
  const Vec r = randn(n, 40);
  auto f = [&] {
    kn::gelu_forward(out.data(), inp.data(), n);
    return dot(out, r);
  };
  f();
  EXPECT_NEAR(
      out[50],
      0.5 * inp[50] * (1 + std::tanh(std::sqrt(2 / std::numbers::pi) * (inp[50] + 0.044715 * std::pow(inp[50], 3)))),
      1e-15);
  const Vec dinp0 = randn(n, 41);
  Vec dinp = dinp0;
  kn::gelu_backward(dinp.data(), inp.data(), r.data(), n);
  const double err = check_kernel("gelu", f, {{"inp", &inp, minus(dinp, dinp0)}});
  EXPECT_LT(err, kKernelBound);
}

TEST(GradCheck, ResidualKernel) {
  const std::size_t n = 50;
  Vec a = randn(n, 50), b = randn(n, 51), r = randn(n, 52), out(n);
  auto f = [&] {
    kn::residual_forward(out.data(), a.data(), b.data(), n);
    return dot(out, r);
  };
  const Vec da0 = randn(n, 53), db0 = randn(n, 54);
  Vec da = da0, db = db0;
  kn::residual_backward(da.data(), db.data(), r.data(), n);
  const double err = check_kernel("residual", f, {{"a", &a, minus(da, da0)}, {"b", &b, minus(db, db0)}});
  EXPECT_LT(err, kKernelBound);
}

TEST(GradCheck, SoftmaxCrossEntropyKernel) {
  const int N = 4, V = 7, Vp = 9;  // two padded logits per row
  Vec logits = randn(static_cast<std::size_t>(N * Vp), 60, 2.0), probs(logits.size()), losses(N);
  const std::vector<int> targets = {0, 6, 3, 3};
  const double dloss = 0.37;
  auto f = [&] {
    kn::softmax_xent_forward(probs.data(), losses.data(), logits.data(), targets.data(), N, V, Vp);
    double s = 0;
    for (double l : losses) s += l;
    return dloss * s;
  };
  f();
  for (int n = 0; n < N; ++n) {
    const std::size_t row = static_cast<std::size_t>(n * Vp);
    double sum = 0;
    for (int i = 0; i < V; ++i) sum += probs[row + static_cast<std::size_t>(i)];
    EXPECT_NEAR(sum, 1.0, 1e-14);
    for (int i = V; i < Vp; ++i) EXPECT_EQ(probs[row + static_cast<std::size_t>(i)], 0.0);
    EXPECT_NEAR(losses[static_cast<std::size_t>(n)], -std::log(probs[row + static_cast<std::size_t>(targets[n])]),
                1e-12);
  }
  // Padded logits are masked: even a huge one changes nothing.
  const Vec losses_before = losses;
  logits[V] = 1e3;
  f();
  EXPECT_EQ(losses, losses_before);
  logits[V] = 0;

  Vec dlogits(logits.size(), 123.0);  // written, not added
  kn::softmax_xent_backward(dlogits.data(), probs.data(), targets.data(), dloss, N, V, Vp);
  const double err = check_kernel("softmax_xe", f, {{"logits", &logits, dlogits}});
  EXPECT_LT(err, kKernelBound);
  for (int n = 0; n < N; ++n)
    for (int i = V; i < Vp; ++i) EXPECT_EQ(dlogits[static_cast<std::size_t>(n * Vp + i)], 0.0);
}

// ---------------------------------------------------------------------------------------------
// Whole-model helpers.

using ct::gradcheck::kBatch;
using ct::gradcheck::kSeq;
using ct::gradcheck::random_tokens;
using ct::gradcheck::test_config;

constexpr ct::Tensor kAllTensors[ct::kTensorCount] = {
    ct::Tensor::wte,      ct::Tensor::wpe,      ct::Tensor::ln1w, ct::Tensor::ln1b, ct::Tensor::qkvw, ct::Tensor::qkvb,
    ct::Tensor::attprojw, ct::Tensor::attprojb, ct::Tensor::ln2w, ct::Tensor::ln2b, ct::Tensor::fcw,  ct::Tensor::fcb,
    ct::Tensor::fcprojw,  ct::Tensor::fcprojb,  ct::Tensor::lnfw, ct::Tensor::lnfb};

// GPT-2's initialisation plus N(0, 0.05) on every real parameter, so biases and layernorm
// parameters are not at their special values 0 and 1.
void init_perturbed(ct::Gpt2<double>& m, std::uint64_t seed) {
  m.init(seed);
  const ct::ParameterLayout& layout = m.layout();
  const Vec noise = randn(layout.total(), seed + 1, 0.05);
  const std::size_t padded_from = static_cast<std::size_t>(m.config().vocab * m.config().channels);
  const std::size_t padded_to = layout.size(ct::Tensor::wte);
  for (std::size_t i = 0; i < layout.total(); ++i)
    if (i < padded_from || i >= padded_to) m.params()[i] += noise[i];
}

// The elements of tensor t (of layer l) whose gradient can be nonzero: wte's real rows, wpe's
// first seq rows, everything else.
std::size_t active_elements(const ct::Gpt2<double>& m, ct::Tensor t) {
  const std::size_t C = static_cast<std::size_t>(m.config().channels);
  if (t == ct::Tensor::wte) return static_cast<std::size_t>(m.config().vocab) * C;
  if (t == ct::Tensor::wpe) return static_cast<std::size_t>(m.seq()) * C;
  return m.layout().size(t);
}

// ---------------------------------------------------------------------------------------------
// (b) The whole model against central differences of the mean loss: 13 parameters spread over
// each of the 16 tensors (alternating layers) plus every element of lnfb and of layer 1's ln2b.

TEST(GradCheck, WholeModelTiny) {
  const ct::ModelConfig config = test_config();
  ct::Gpt2<double> m(config, kBatch, kSeq);
  init_perturbed(m, 7);
  const std::vector<int> inputs = random_tokens(1, config.vocab), targets = random_tokens(2, config.vocab);
  m.zero_grads();
  const double loss = m.forward(inputs.data(), targets.data());
  m.backward();
  const Vec analytic(m.grads().begin(), m.grads().end());
  std::printf("  loss %.6f (ln V = %.6f)\n", loss, std::log(static_cast<double>(config.vocab)));

  const ct::ParameterLayout& layout = m.layout();
  auto f = [&] { return m.forward(inputs.data(), targets.data()); };
  auto check = [&](std::size_t offset, double& worst, double& largest) {
    const double numeric = numeric_grad(m.params()[offset], f);
    worst = std::max(worst, rel_error(analytic[offset], numeric, kModelFloor));
    largest = std::max(largest, std::abs(analytic[offset]));
  };
  constexpr int kSamples = 13;
  std::mt19937_64 rng(3);
  double overall = 0;
  int checked = 0;
  for (ct::Tensor t : kAllTensors) {
    const std::size_t active = active_elements(m, t);
    double worst = 0, largest = 0;
    for (int j = 0; j < kSamples; ++j) {
      const int l = ct::is_per_layer(t) ? j % config.layers : 0;
      const std::size_t spread = active * static_cast<std::size_t>(j) / kSamples;
      const std::size_t idx = (spread + rng() % std::max<std::size_t>(1, active / kSamples)) % active;
      check(layout.offset(t, l) + idx, worst, largest);
      ++checked;
    }
    if (t == ct::Tensor::lnfb || t == ct::Tensor::ln2b) {
      const int l = t == ct::Tensor::ln2b ? 1 : 0;
      for (std::size_t i = 0; i < layout.size(t); ++i) check(layout.offset(t, l) + i, worst, largest);
      checked += static_cast<int>(layout.size(t));
    }
    std::printf("  %-9s max rel error %.2e  (max |grad| %.2e)\n", std::string(ct::tensor_name(t)).c_str(), worst,
                largest);
    EXPECT_LT(worst, kModelBound) << ct::tensor_name(t);
    EXPECT_GT(largest, 1e-6) << ct::tensor_name(t) << ": the check saw only zero gradients";
    overall = std::max(overall, worst);
  }
  std::printf("  %d parameters checked, max rel error %.2e (bound %.0e)\n", checked, overall, kModelBound);
}

// ---------------------------------------------------------------------------------------------
// (c) Gpt2<float> against Gpt2<double> holding the same (float-representable) parameters.

TEST(Model, FloatMatchesDouble) {
  const ct::ModelConfig config = test_config();
  ct::Gpt2<double> md(config, kBatch, kSeq);
  ct::Gpt2<float> mf(config, kBatch, kSeq);
  init_perturbed(md, 11);
  for (std::size_t i = 0; i < md.params().size(); ++i) {
    mf.params()[i] = static_cast<float>(md.params()[i]);
    md.params()[i] = static_cast<double>(mf.params()[i]);
  }
  const std::vector<int> inputs = random_tokens(5, config.vocab), targets = random_tokens(6, config.vocab);
  md.zero_grads();
  mf.zero_grads();
  const double ld = md.forward(inputs.data(), targets.data());
  const float lf = mf.forward(inputs.data(), targets.data());
  md.backward();
  mf.backward();
  // float: 24-bit mantissa (unit roundoff 6e-8); the errors grow with the reductions' lengths
  // (up to Vp = 256 terms) and the depth. Observed: ~3e-8 (loss) and ~5e-7 (gradients).
  constexpr double kLossBound = 1e-6, kGradBound = 1e-5;
  const double loss_err = std::abs(static_cast<double>(lf) - ld) / std::abs(ld);
  std::printf("  loss double %.9f float %.9f  rel diff %.2e (bound %.0e)\n", ld, static_cast<double>(lf), loss_err,
              kLossBound);
  EXPECT_LT(loss_err, kLossBound);
  // Per tensor: ||g_float - g_double|| / ||g_double|| over all layers.
  const ct::ParameterLayout& layout = md.layout();
  double worst = 0;
  for (ct::Tensor t : kAllTensors) {
    double diff2 = 0, norm2 = 0;
    const int layers = ct::is_per_layer(t) ? config.layers : 1;
    for (int l = 0; l < layers; ++l)
      for (std::size_t i = 0; i < layout.size(t); ++i) {
        const std::size_t o = layout.offset(t, l) + i;
        diff2 += std::pow(static_cast<double>(mf.grads()[o]) - md.grads()[o], 2);
        norm2 += std::pow(md.grads()[o], 2);
      }
    const double err = std::sqrt(diff2 / norm2);
    std::printf("  %-9s grad rel L2 diff %.2e\n", std::string(ct::tensor_name(t)).c_str(), err);
    EXPECT_LT(err, kGradBound) << ct::tensor_name(t);
    worst = std::max(worst, err);
  }
  std::printf("  max grad rel diff %.2e (bound %.0e)\n", worst, kGradBound);
}

// ---------------------------------------------------------------------------------------------
// (d) Hooks that hand out separate per-segment buffers, as ZeRO-3 does, give bit-identical
// results, in the header's call order.

template <class T>
void expect_same_bits(std::span<const T> a, std::span<const T> b, const std::string& what) {
  ASSERT_EQ(a.size(), b.size()) << what;
  EXPECT_EQ(std::memcmp(a.data(), b.data(), a.size() * sizeof(T)), 0) << what << " differs";
}

template <class T>
void hooks_are_bit_identical() {
  const ct::ModelConfig config = test_config();
  const int L = config.layers, S = L + 2;
  ct::Gpt2<double> init(config, kBatch, kSeq);
  init_perturbed(init, 21);
  ct::Gpt2<T> plain(config, kBatch, kSeq), hooked(config, kBatch, kSeq);
  for (std::size_t i = 0; i < init.params().size(); ++i) plain.params()[i] = static_cast<T>(init.params()[i]);
  const ct::ParameterLayout& layout = plain.layout();

  // The hooked model's own buffers are poison: it must read and write only through the hooks.
  const T nan = std::numeric_limits<T>::quiet_NaN();
  std::fill(hooked.params().begin(), hooked.params().end(), nan);
  std::fill(hooked.grads().begin(), hooked.grads().end(), nan);

  // Per segment: the resident copy, the "gathered" buffer acquire hands out (filled on acquire,
  // poisoned on release), the gradient buffer grad hands out, and a snapshot at grads_ready.
  // Buffers start one element into their allocation, off the allocator's alignment.
  std::vector<std::vector<T>> master(static_cast<std::size_t>(S)), gathered(master.size()), grad_buf(master.size()),
      ready(master.size());
  for (int s = 0; s < S; ++s) {
    const ct::Segment seg = layout.segment(s);
    const std::size_t si = static_cast<std::size_t>(s);
    master[si].assign(plain.params().begin() + static_cast<std::ptrdiff_t>(seg.offset),
                      plain.params().begin() + static_cast<std::ptrdiff_t>(seg.offset + seg.count));
    gathered[si].assign(seg.count + 1, nan);
    grad_buf[si].assign(seg.count + 1, T(0));
  }
  std::vector<std::pair<char, int>> calls;
  std::vector<bool> held(master.size(), false);
  typename ct::Gpt2<T>::Hooks hooks;
  hooks.acquire = [&](int s) -> const T* {
    calls.emplace_back('A', s);
    const std::size_t si = static_cast<std::size_t>(s);
    EXPECT_FALSE(held[si]) << "acquire(" << s << ") while held";
    held[si] = true;
    std::copy(master[si].begin(), master[si].end(), gathered[si].begin() + 1);
    return gathered[si].data() + 1;
  };
  hooks.release = [&](int s) {
    calls.emplace_back('R', s);
    const std::size_t si = static_cast<std::size_t>(s);
    EXPECT_TRUE(held[si]) << "release(" << s << ") without acquire";
    held[si] = false;
    std::fill(gathered[si].begin(), gathered[si].end(), nan);
  };
  hooks.grad = [&](int s) -> T* {
    calls.emplace_back('G', s);
    return grad_buf[static_cast<std::size_t>(s)].data() + 1;
  };
  hooks.grads_ready = [&](int s) {
    calls.emplace_back('Y', s);
    ready[static_cast<std::size_t>(s)] = grad_buf[static_cast<std::size_t>(s)];
  };
  hooked.set_hooks(hooks);

  const std::vector<int> inputs = random_tokens(8, config.vocab), targets = random_tokens(9, config.vocab);
  plain.zero_grads();
  const T lp = plain.forward(inputs.data(), targets.data());
  plain.backward();
  const T lh = hooked.forward(inputs.data(), targets.data());
  hooked.backward();

  EXPECT_EQ(std::memcmp(&lp, &lh, sizeof(T)), 0) << "loss " << lp << " vs " << lh;
  expect_same_bits<T>(plain.probs(), hooked.probs(), "probs");
  for (int s = 0; s < S; ++s) {
    const ct::Segment seg = layout.segment(s);
    const std::size_t si = static_cast<std::size_t>(s);
    const std::span<const T> want(plain.grads().data() + seg.offset, seg.count);
    expect_same_bits<T>(want, std::span<const T>(grad_buf[si].data() + 1, seg.count),
                        "gradients of segment " + std::to_string(s));
    // Nothing was added after grads_ready(s).
    expect_same_bits<T>(ready[si], grad_buf[si], "segment " + std::to_string(s) + " after grads_ready");
    EXPECT_FALSE(held[si]) << "segment " << s << " never released";
  }
  EXPECT_TRUE(std::all_of(hooked.grads().begin(), hooked.grads().end(), [](T g) { return std::isnan(g); }))
      << "the hooked model wrote into grads()";

  // The header's order.
  std::vector<std::pair<char, int>> want;
  auto add = [&](std::initializer_list<std::pair<char, int>> list) { want.insert(want.end(), list); };
  add({{'A', 0}, {'R', 0}});
  for (int l = 0; l < L; ++l) add({{'A', 1 + l}, {'R', 1 + l}});
  add({{'A', L + 1}, {'R', L + 1}, {'A', 0}, {'R', 0}});
  add({{'A', 0}, {'G', 0}, {'R', 0}, {'A', L + 1}, {'G', L + 1}, {'R', L + 1}, {'Y', L + 1}});
  for (int l = L - 1; l >= 0; --l) add({{'A', 1 + l}, {'G', 1 + l}, {'R', 1 + l}, {'Y', 1 + l}});
  add({{'G', 0}, {'Y', 0}});  // the encoder's backward acquires nothing (it reads no parameters)
  auto show = [](const std::vector<std::pair<char, int>>& v) {
    std::string s;
    for (const auto& [c, seg] : v) s += std::string(1, c) + std::to_string(seg) + " ";
    return s;
  };
  EXPECT_EQ(show(calls), show(want));
}

TEST(Model, HooksGiveBitIdenticalResultsInHeaderOrderDouble) {
  hooks_are_bit_identical<double>();
}

TEST(Model, HooksGiveBitIdenticalResultsInHeaderOrderFloat) {
  hooks_are_bit_identical<float>();
}

// ---------------------------------------------------------------------------------------------
// (e) Initialisation, padding, and the forward/backward contract.

TEST(Model, InitIsDeterministicWithGpt2Statistics) {
  const ct::ModelConfig config = test_config();
  ct::Gpt2<double> a(config, kBatch, kSeq), b(config, kBatch, kSeq);
  a.init(42);
  b.init(42);
  expect_same_bits<double>(a.params(), b.params(), "init(42) twice");
  b.init(43);
  EXPECT_NE(std::memcmp(a.params().data(), b.params().data(), a.params().size() * sizeof(double)), 0);
  // The float model draws the same values.
  ct::Gpt2<float> f(config, kBatch, kSeq);
  f.init(42);
  for (std::size_t i = 0; i < f.params().size(); ++i)
    ASSERT_EQ(f.params()[i], static_cast<float>(a.params()[i])) << "element " << i;

  const ct::ParameterLayout& layout = a.layout();
  auto stats = [&](ct::Tensor t, int l, std::size_t from, std::size_t to) {
    double sum = 0, sum2 = 0, mn = 1e300, mx = -1e300;
    for (std::size_t i = from; i < to; ++i) {
      const double x = a.params()[layout.offset(t, l) + i];
      sum += x;
      sum2 += x * x;
      mn = std::min(mn, x);
      mx = std::max(mx, x);
    }
    const double n = static_cast<double>(to - from);
    return std::array<double, 4>{sum / n, std::sqrt(sum2 / n - (sum / n) * (sum / n)), mn, mx};
  };
  const std::size_t C = static_cast<std::size_t>(config.channels);
  const std::size_t real = static_cast<std::size_t>(config.vocab) * C;
  const double residual_sd = 0.02 / std::sqrt(2.0 * config.layers);
  EXPECT_NEAR(stats(ct::Tensor::wte, 0, 0, real)[1], 0.02, 0.001);
  const auto pad = stats(ct::Tensor::wte, 0, real, layout.size(ct::Tensor::wte));
  EXPECT_EQ(pad[2], 0.0);
  EXPECT_EQ(pad[3], 0.0);
  EXPECT_NEAR(stats(ct::Tensor::wpe, 0, 0, layout.size(ct::Tensor::wpe))[1], 0.02, 0.002);
  for (int l = 0; l < config.layers; ++l) {
    EXPECT_NEAR(stats(ct::Tensor::qkvw, l, 0, layout.size(ct::Tensor::qkvw))[1], 0.02, 0.001);
    EXPECT_NEAR(stats(ct::Tensor::fcw, l, 0, layout.size(ct::Tensor::fcw))[1], 0.02, 0.001);
    EXPECT_NEAR(stats(ct::Tensor::attprojw, l, 0, layout.size(ct::Tensor::attprojw))[1], residual_sd, 0.001);
    EXPECT_NEAR(stats(ct::Tensor::fcprojw, l, 0, layout.size(ct::Tensor::fcprojw))[1], residual_sd, 0.0005);
    for (ct::Tensor t : {ct::Tensor::ln1w, ct::Tensor::ln2w}) {
      const auto s = stats(t, l, 0, C);
      EXPECT_EQ(s[2], 1.0);
      EXPECT_EQ(s[3], 1.0);
    }
    for (ct::Tensor t : {ct::Tensor::ln1b, ct::Tensor::qkvb, ct::Tensor::attprojb, ct::Tensor::ln2b, ct::Tensor::fcb,
                         ct::Tensor::fcprojb}) {
      const auto s = stats(t, l, 0, layout.size(t));
      EXPECT_EQ(s[2], 0.0) << ct::tensor_name(t);
      EXPECT_EQ(s[3], 0.0) << ct::tensor_name(t);
    }
  }
  EXPECT_EQ(stats(ct::Tensor::lnfw, 0, 0, C)[2], 1.0);
  EXPECT_EQ(stats(ct::Tensor::lnfb, 0, 0, C)[3], 0.0);
}

TEST(Model, PaddedVocabularyStaysZero) {
  const ct::ModelConfig config = test_config();
  ct::Gpt2<double> m(config, kBatch, kSeq);
  m.init(5);
  const std::vector<int> inputs = random_tokens(10, config.vocab), targets = random_tokens(11, config.vocab);
  m.zero_grads();
  const double loss = m.forward(inputs.data(), targets.data());
  // At init the logits are small: the loss is close to ln V (over the real vocabulary only).
  EXPECT_NEAR(loss, std::log(static_cast<double>(config.vocab)), 0.05);
  m.backward();
  m.forward(inputs.data(), targets.data());
  m.backward();
  const std::size_t C = static_cast<std::size_t>(config.channels);
  const std::size_t real = static_cast<std::size_t>(config.vocab) * C, rows = m.layout().size(ct::Tensor::wte);
  for (std::size_t i = real; i < rows; ++i) {
    ASSERT_EQ(m.params()[i], 0.0) << "padded wte element " << i;
    ASSERT_EQ(m.grads()[i], 0.0) << "padded wte gradient " << i;
  }
  double real_norm = 0;
  for (std::size_t i = 0; i < real; ++i) real_norm += std::abs(m.grads()[i]);
  EXPECT_GT(real_norm, 0.0);
  const std::span<const double> probs = m.probs();
  const std::size_t Vp = static_cast<std::size_t>(config.padded_vocab);
  for (std::size_t n = 0; n < static_cast<std::size_t>(kBatch * kSeq); ++n) {
    double sum = 0;
    for (std::size_t i = 0; i < Vp; ++i) {
      if (i >= static_cast<std::size_t>(config.vocab)) {
        ASSERT_EQ(probs[n * Vp + i], 0.0);
      }
      sum += probs[n * Vp + i];
    }
    EXPECT_NEAR(sum, 1.0, 1e-12);
  }
}

TEST(Model, BackwardAddsAndScalesAndNeedsTargets) {
  const ct::ModelConfig config = test_config();
  ct::Gpt2<double> m(config, kBatch, kSeq);
  m.init(6);
  const std::vector<int> inputs = random_tokens(12, config.vocab), targets = random_tokens(13, config.vocab);
  m.zero_grads();
  const double loss = m.forward(inputs.data(), targets.data());
  m.backward();
  const Vec once(m.grads().begin(), m.grads().end());
  m.backward(2.0);  // adds 2x the gradients again
  double worst = 0, norm = 0;
  for (std::size_t i = 0; i < once.size(); ++i) {
    worst = std::max(worst, std::abs(m.grads()[i] - 3 * once[i]));
    norm = std::max(norm, std::abs(once[i]));
  }
  EXPECT_GT(norm, 0.0);
  EXPECT_LE(worst, 1e-14 * norm);

  // Without targets: probs only, loss 0, the same probabilities, and no backward.
  const std::vector<double> probs(m.probs().begin(), m.probs().end());
  EXPECT_EQ(m.forward(inputs.data(), nullptr), 0.0);
  EXPECT_TRUE(std::equal(probs.begin(), probs.end(), m.probs().begin()));
  EXPECT_THROW(m.backward(), std::logic_error);
  EXPECT_EQ(m.forward(inputs.data(), targets.data()), loss);

  std::vector<int> bad = inputs;
  bad[3] = config.vocab;  // a padded id is not a token
  EXPECT_THROW(m.forward(bad.data(), targets.data()), std::out_of_range);
  EXPECT_THROW(ct::Gpt2<double>(config, 1, config.max_seq + 1), std::invalid_argument);
  EXPECT_GT(m.activation_bytes(), 0u);
}

}  // namespace
