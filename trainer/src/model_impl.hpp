#pragma once
// The CPU GPT-2's implementation (Gpt2<T>::Impl), private to model.cpp (construction, forward
// and the public members) and model_backward.cpp (backward).
#include "commscope/trainer/model.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "commscope/profiler/recorder.hpp"
#include "commscope/trainer/operators.hpp"
#include "commscope/trainer/segment_views.hpp"
#include "kernels.hpp"
// Threads: every kernel runs on an OpenMP team of omp_get_max_threads() threads, GEMMs included
// (each thread calls single-threaded BLAS on its rows; with the pthreads build of OpenBLAS the
// matmul kernels set openblas_set_num_threads(1), since OpenBLAS's spinning workers and OpenMP's
// would otherwise fight over the cores: see kernels.cpp). So omp_set_num_threads (or
// OMP_NUM_THREADS) alone sets the model's threads; a later openblas_set_num_threads(threads) by
// the caller is undone at the next matmul.
//
// Profiler: every layer step is one OperatorScope ("embed.fwd", "block3.attn.fwd", ...,
// "head.bwd"), every kernel inside it one KernelScope ("matmul.qkv", "attention", ...), all names
// interned at construction. The hook calls run inside the step that needs the segment (block l:
// acquire in attn.fwd and release in mlp.fwd; acquire/grad in mlp.bwd and release/grads_ready in
// attn.bwd; segments 0 and L+1 in embed.* and head.*), so the communication the hooks record is
// attributed to that step.

namespace commscope::trainer {

namespace k = kernels;
using profiler::KernelScope;
using profiler::NameId;
using profiler::OperatorScope;
using std::size_t;

namespace model_detail {

// Activation buffers start on 64-byte multiples (relative to the buffer's start).
constexpr size_t kAlignElements = 16;

inline size_t round_up(size_t n) {
  return (n + kAlignElements - 1) / kAlignElements * kAlignElements;
}

}  // namespace model_detail

using model_detail::round_up;

template <class T>
struct Gpt2<T>::Impl : SegmentViews<typename Gpt2<T>::Impl, T> {
  using Views = SegmentViews<Impl, T>;  // a segment's parameters and gradients, through the hooks
  using Views::acquire, Views::grad, Views::release, Views::grads_ready, Views::at, Views::layer;

  // One layer's activations (or their gradients: then mean/rstd are null, preatt/att hold
  // dpreatt/datt). Shapes: B = batch, T = sequence, C = channels, NH = heads, tp = tensor-parallel
  // ranks (1 without): a rank holds NH/tp heads (C/tp of the attention's channels) and 4C/tp of
  // the MLP's hidden units; attproj and fcproj are whole once summed over the TP group.
  struct LayerActs {
    T* ln1 = nullptr;        // (B, T, C)
    T* ln1_mean = nullptr;   // (B, T)
    T* ln1_rstd = nullptr;   // (B, T)
    T* qkv = nullptr;        // (B, T, 3C/tp): this rank's q, then k, then v
    T* atty = nullptr;       // (B, T, C/tp)
    T* preatt = nullptr;     // (B, NH/tp, T, T)
    T* att = nullptr;        // (B, NH/tp, T, T)
    T* attproj = nullptr;    // (B, T, C)
    T* residual2 = nullptr;  // (B, T, C)
    T* ln2 = nullptr;        // (B, T, C)
    T* ln2_mean = nullptr;   // (B, T)
    T* ln2_rstd = nullptr;   // (B, T)
    T* fch = nullptr;        // (B, T, 4C/tp)
    T* fch_gelu = nullptr;   // (B, T, 4C/tp)
    T* fcproj = nullptr;     // (B, T, C)
    T* residual3 = nullptr;  // (B, T, C)
  };
  struct Acts {
    T* encoded = nullptr;
    std::vector<LayerActs> layers;
    T *lnf = nullptr, *lnf_mean = nullptr, *lnf_rstd = nullptr, *logits = nullptr, *probs = nullptr, *losses = nullptr;
  };

  struct Names {
    NameId encoder, layernorm, qkv, attention, attproj, residual, fc, gelu, fcproj, logits, softmax_xent, zero, bias;
  };

  ModelConfig config;
  ParameterLayout layout;
  Stage stage;  // the pipeline stage (whole(): the whole model)
  int tp;       // tensor-parallel ranks (1: the whole model)
  int Cl, NHl;  // this rank's channels of the attention (C / tp) and heads (NH / tp)
  std::function<void(T*, size_t)> tp_allreduce, tp_max;                       // the TP sum and maximum
  std::function<void(const T*, T*, size_t)> tp_reduce_scatter, tp_allgather;  // sequence parallelism's
  int tp_rank = 0;
  // Sequence parallelism: this rank's rows of the residual stream (N / tp; N without), a [N, C] and
  // a [rows, C] scratch for the reduce-scatters and allgathers, and a layernorm's weight and bias
  // gradients over this rank's rows [2C] before their TP sum.
  bool sp = false;
  int rows = 0;
  std::vector<T> sp_full, sp_rows, sp_ln;
  std::vector<T> row_max, row_sum, row_target;  // the vocabulary-parallel cross-entropy's [N] values
  int B, Tn;
  std::vector<T> params, grads;
  Hooks hooks;

  // The activations of one micro-batch in flight (pipeline parallelism keeps several: slots).
  // The selected slot's live in the members below; the others wait in `parked`, swapped in by
  // select_slot (vectors swap without moving their elements, so the pointers stay valid).
  struct SlotState {
    std::vector<T> act_buf;
    Acts acts;
    std::vector<int> inputs, targets;
    bool have_targets = false;
  };
  std::vector<T> act_buf, grad_buf;
  Acts acts, dacts;
  size_t grad_zeroed = 0;            // backward zeroes grad_buf[0, grad_zeroed); the rest it overwrites
  std::vector<int> inputs, targets;  // the last forward's
  bool have_targets = false;
  std::vector<SlotState> parked;  // [slot]: the slots not selected (the selected one's entry is empty)
  int selected = 0;
  Names names;
  ModelOperators ops;

  Impl(const ModelConfig& c, int batch, int seq, int tp_ranks, Stage st, int slots, bool sequence_parallel)
      : config(c),
        layout(c, tp_ranks, st),
        stage(layout.stage()),
        tp(tp_ranks),
        sp(sequence_parallel),
        B(batch),
        Tn(seq),
        ops(c.layers) {
    if (const std::string problem = c.problem(); !problem.empty()) throw std::invalid_argument(problem);
    Cl = c.channels / tp;
    NHl = c.heads / tp;
    if (batch < 1 || seq < 1 || seq > c.max_seq)
      throw std::invalid_argument("Gpt2: need batch >= 1 and 1 <= seq <= max_seq (" + std::to_string(c.max_seq) +
                                  "), got batch " + std::to_string(batch) + ", seq " + std::to_string(seq));
    if (sp && (tp < 2 || batch * seq % tp != 0))
      throw std::invalid_argument("sequence parallelism needs tensor parallelism over 2 or more ranks dividing the " +
                                  std::to_string(batch * seq) + " positions of a micro-batch (tp " +
                                  std::to_string(tp) + ")");
    rows = sp ? batch * seq / tp : batch * seq;
    if (sp) {
      sp_full.assign(static_cast<size_t>(batch) * seq * c.channels, T(0));
      sp_rows.assign(static_cast<size_t>(rows) * c.channels, T(0));
      sp_ln.assign(2 * static_cast<size_t>(c.channels), T(0));
    }
    if (slots < 1) throw std::invalid_argument("Gpt2: need at least one activation slot");
    parked.resize(static_cast<size_t>(slots));
    for (int k = slots - 1; k >= 0; --k) {  // ends with slot 0 selected
      inputs.assign(static_cast<size_t>(B) * Tn, 0);
      targets.assign(static_cast<size_t>(B) * Tn, 0);
      allocate(acts, act_buf, false);
      if (k > 0) park(k);
    }
    allocate(dacts, grad_buf, true);
    intern_names();
  }

  void park(int k) {
    SlotState& p = parked[static_cast<size_t>(k)];
    std::swap(p.act_buf, act_buf);
    std::swap(p.acts, acts);
    std::swap(p.inputs, inputs);
    std::swap(p.targets, targets);
    std::swap(p.have_targets, have_targets);
  }
  void select_slot(int k) {
    if (k < 0 || k >= static_cast<int>(parked.size()))
      throw std::out_of_range("Gpt2::select_slot: slot " + std::to_string(k) + " of " + std::to_string(parked.size()));
    if (k == selected) return;
    park(selected);  // the selected slot's state into its (empty) entry
    park(k);         // slot k's state out of its entry
    selected = k;
  }

  // Calls f(slot, elements) for every buffer of `a` in buffer order. For gradients, skips what
  // backward does not need (mean, rstd, probs, losses) and visits dpreatt, datt and dlogits, which
  // backward overwrites, last, after the slot grad_zeroed: zeroing the prefix before them is enough.
  template <class F>
  void visit(Acts& a, bool gradients, F&& f) {
    const size_t N = static_cast<size_t>(B) * Tn, C = static_cast<size_t>(config.channels);
    const size_t Cr = static_cast<size_t>(Cl);  // this rank's share of the attention and the MLP
    const size_t att = static_cast<size_t>(B) * NHl * Tn * Tn;
    // The head's activations only on the stage that has the head.
    // (this rank's Vp/tp vocabulary columns under tensor parallelism)
    const size_t Vp = stage.last() ? static_cast<size_t>(config.padded_vocab / tp) : 0, NH = stage.last() ? N : 0;
    // The residual stream, its layernorms' statistics and the row-parallel outputs: this rank's
    // rows (all N without sequence parallelism).
    const size_t R = static_cast<size_t>(rows), NR = stage.last() ? R : 0;
    a.layers.resize(static_cast<size_t>(layout.layers()));
    f(a.encoded, R * C);
    for (LayerActs& l : a.layers) {
      f(l.ln1, N * C);
      f(l.qkv, N * 3 * Cr);
      f(l.atty, N * Cr);
      f(l.attproj, R * C);
      f(l.residual2, R * C);
      f(l.ln2, N * C);
      f(l.fch, N * 4 * Cr);
      f(l.fch_gelu, N * 4 * Cr);
      f(l.fcproj, R * C);
      f(l.residual3, R * C);
      if (!gradients) {
        f(l.ln1_mean, R);
        f(l.ln1_rstd, R);
        f(l.ln2_mean, R);
        f(l.ln2_rstd, R);
        f(l.preatt, att);
        f(l.att, att);
      }
    }
    f(a.lnf, NH * C);
    if (!gradients) {
      f(a.lnf_mean, NR);
      f(a.lnf_rstd, NR);
      f(a.logits, NH * Vp);
      f(a.probs, NH * Vp);
      f(a.losses, NH);
      return;
    }
    f(grad_zeroed, 0);  // marks the end of the zeroed prefix
    for (LayerActs& l : a.layers) {
      f(l.preatt, att);
      f(l.att, att);
    }
    f(a.logits, NH * Vp);
  }

  void allocate(Acts& a, std::vector<T>& buf, bool gradients) {
    size_t total = 0;
    visit(a, gradients, [&](auto&, size_t n) { total += round_up(n); });
    buf.assign(total, T(0));
    size_t next = 0;
    visit(a, gradients, [&](auto& slot, size_t n) {
      if constexpr (std::is_same_v<std::remove_reference_t<decltype(slot)>, size_t>) {
        slot = next;
      } else {
        slot = buf.data() + next;
      }
      next += round_up(n);
    });
  }

  void intern_names() {
    auto id = [](const std::string& s) { return profiler::name_id(s); };
    names.encoder = id("encoder");
    names.layernorm = id("layernorm");
    names.qkv = id("matmul.qkv");
    names.attention = id("attention");
    names.attproj = id("matmul.attproj");
    names.residual = id("residual");
    names.fc = id("matmul.fc");
    names.gelu = id("gelu");
    names.fcproj = id("matmul.fcproj");
    names.logits = id("matmul.logits");
    names.softmax_xent = id("softmax_xent");
    names.zero = id("zero_act_grads");
    names.bias = id("bias");
  }

  // --- hooks (empty functions fall back to our buffers)
  // The whole-model buffers are allocated on first use: a model whose hooks supply every segment
  // (ZeRO-3) never holds them, one whose hooks supply the gradients (ZeRO-2) holds no gradients.
  std::vector<T>& own_params() {
    if (params.empty()) params.assign(layout.total(), T(0));
    return params;
  }
  std::vector<T>& own_grads() {
    if (grads.empty()) grads.assign(layout.total(), T(0));
    return grads;
  }

  // Tensor parallelism: the TP ranks' shares of a [N, C] array summed: in place (`out` is `full`),
  // or, sequence parallel, reduce-scattered into this rank's rows `out`.
  void tp_sum_rows(T* full, T* out) {
    if (sp)
      tp_reduce_scatter(full, out, static_cast<size_t>(rows) * config.channels);
    else
      tp_allreduce(full, static_cast<size_t>(B) * Tn * config.channels);
  }
  // Where the [N, C] array whose rows this rank keeps is written before tp_sum_rows: `mine`
  // itself, or (sequence parallel) the scratch it is reduce-scattered from.
  T* full_rows(T* mine) { return sp ? sp_full.data() : mine; }

  // A row-parallel layer's partial output (in full_rows(out)) summed into `out`, then its bias
  // (whole on every rank) added once. tp == 1 adds the bias inside the matmul.
  void row_parallel_out(T* out, const T* bias) {
    const int N = rows, C = config.channels;
    tp_sum_rows(full_rows(out), out);
    KernelScope ks(names.bias);
#pragma omp parallel for schedule(static)
    for (int n = 0; n < N; ++n) {
      T* row = out + static_cast<size_t>(n) * C;
      for (int c = 0; c < C; ++c) row[c] += bias[c];
    }
  }

  // --- sequence parallelism
  // Where a layernorm writes its output: this rank's rows, gathered into `full` by gather_rows
  // (without sequence parallelism: `full` itself).
  T* norm_out(T* full) {
    return sp ? sp_rows.data() : full;
  }
  void gather_rows(T* full) {
    if (sp) tp_allgather(sp_rows.data(), full, static_cast<size_t>(rows) * config.channels);
  }
  // The gradient of a row-parallel output ([rows, C]) as the matmul's backward needs it: all N rows.
  const T* all_rows(const T* mine) {
    if (!sp) return mine;
    tp_allgather(mine, sp_full.data(), static_cast<size_t>(rows) * config.channels);
    return sp_full.data();
  }
  // The "f" sum of a column-parallel layer's input gradient [N, C]: in place, or reduce-scattered
  // into this rank's rows (returned).
  const T* sum_input_grad(T* full) {
    T* out = sp ? sp_rows.data() : full;
    tp_sum_rows(full, out);
    return out;
  }
  // A layernorm's weight and bias gradients: into dw and db, or (sequence parallel: over this
  // rank's rows only) into sp_ln, summed over the TP ranks and added by ln_grads_done.
  T* ln_dw(T* dw) {
    if (!sp) return dw;
    std::fill(sp_ln.begin(), sp_ln.end(), T(0));
    return sp_ln.data();
  }
  T* ln_db(T* db) {
    return sp ? sp_ln.data() + config.channels : db;
  }
  void ln_grads_done(T* dw, T* db) {
    if (!sp) return;
    const size_t C = static_cast<size_t>(config.channels);
    tp_allreduce(sp_ln.data(), 2 * C);
    for (size_t c = 0; c < C; ++c) dw[c] += sp_ln[c], db[c] += sp_ln[C + c];
  }

  // --- vocabulary parallelism (tp > 1): this rank's rows [v0, v0 + Vl) of wte
  void vocab_parallel_encoder(const T* wte, const T* wpe);

  // Probabilities of this rank's Vl columns and every position's loss, from the TP maximum, sum
  // of exponentials and target logit ([N] each) instead of the gathered logits.
  void vocab_parallel_softmax_xent(int N, int V, int Vl);

  void vocab_parallel_softmax_xent_backward(T dloss, int N, int Vl);

  T forward(const int* in, const int* tg, const T* stage_input);

  // The last stage's head: the cross-entropy's, the tied logits' and the final layernorm's
  // backward, into dacts.layers.back().residual3.
  void head_backward(T loss_scale);

  // The first stage's encoder: the token and position embeddings' gradients (tp > 1: this
  // rank's vocabulary rows; wpe whole, under SP from every rank's rows, gathered).
  void encoder_backward();

  void backward(T loss_scale, const T* output_grad);

  void init(std::uint64_t seed) {
    if (tp > 1 || !stage.whole())
      throw std::logic_error("Gpt2::init: initialise the whole model and take a rank's shard (model_shard)");
    // Drawn in double whatever T, so Gpt2<float> and Gpt2<double> start from the same values.
    std::mt19937_64 rng(seed);
    std::normal_distribution<double> normal(0.0, 1.0);
    const double stddev = 0.02, residual_stddev = 0.02 / std::sqrt(2.0 * config.layers);
    auto fill_normal = [&](size_t offset, size_t n, double sd) {
      for (size_t i = 0; i < n; ++i) params[offset + i] = static_cast<T>(normal(rng) * sd);
    };
    auto fill = [&](Tensor t, int l, T value) {
      std::fill_n(params.begin() + layout.offset(t, l), layout.size(t), value);
    };
    own_params();
    std::fill(params.begin(), params.end(), T(0));
    const size_t C = static_cast<size_t>(config.channels);
    fill_normal(layout.offset(Tensor::wte), static_cast<size_t>(config.vocab) * C, stddev);  // padded rows stay 0
    fill_normal(layout.offset(Tensor::wpe), layout.size(Tensor::wpe), stddev);
    for (int l = 0; l < config.layers; ++l) {
      fill(Tensor::ln1w, l, T(1));
      fill_normal(layout.offset(Tensor::qkvw, l), layout.size(Tensor::qkvw), stddev);
      fill_normal(layout.offset(Tensor::attprojw, l), layout.size(Tensor::attprojw), residual_stddev);
      fill(Tensor::ln2w, l, T(1));
      fill_normal(layout.offset(Tensor::fcw, l), layout.size(Tensor::fcw), stddev);
      fill_normal(layout.offset(Tensor::fcprojw, l), layout.size(Tensor::fcprojw), residual_stddev);
    }
    fill(Tensor::lnfw, 0, T(1));
  }
};

}  // namespace commscope::trainer
