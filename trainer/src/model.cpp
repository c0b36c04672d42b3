#include "commscope/trainer/model.hpp"

#include "model_impl.hpp"

namespace commscope::trainer {

template <class T>
void Gpt2<T>::Impl::vocab_parallel_encoder(const T* wte, const T* wpe) {
  const int N = B * Tn, C = config.channels;
  const size_t Vl = static_cast<size_t>(config.padded_vocab / tp), v0 = static_cast<size_t>(tp_rank) * Vl;
  T* lookup = full_rows(acts.encoded);  // [N, C]
  {
    KernelScope ks(names.encoder);
#pragma omp parallel for schedule(static)
    for (int n = 0; n < N; ++n) {
      T* out = lookup + static_cast<size_t>(n) * C;
      const size_t tok = static_cast<size_t>(inputs[static_cast<size_t>(n)]);
      if (tok >= v0 && tok < v0 + Vl)
        std::copy_n(wte + (tok - v0) * C, C, out);
      else
        std::fill_n(out, C, T(0));
    }
  }
  tp_sum_rows(lookup, acts.encoded);          // every token's row, from the rank holding it
  const int first = sp ? tp_rank * rows : 0;  // the position of this rank's first row
  KernelScope ks(names.encoder);
#pragma omp parallel for schedule(static)
  for (int n = 0; n < rows; ++n) {
    T* out = acts.encoded + static_cast<size_t>(n) * C;
    const T* pos = wpe + static_cast<size_t>((first + n) % Tn) * C;
    for (int c = 0; c < C; ++c) out[c] += pos[c];
  }
}

template <class T>
void Gpt2<T>::Impl::vocab_parallel_softmax_xent(int N, int V, int Vl) {
  const int v0 = tp_rank * Vl, valid = std::clamp(V - v0, 0, Vl);  // columns below V (the rest is padding)
  row_max.assign(static_cast<size_t>(N), -std::numeric_limits<T>::infinity());
  row_sum.assign(static_cast<size_t>(N), T(0));
  row_target.assign(static_cast<size_t>(N), T(0));
  {
    KernelScope ks(names.softmax_xent);
#pragma omp parallel for schedule(static)
    for (int n = 0; n < N; ++n) {
      const T* z = acts.logits + static_cast<size_t>(n) * Vl;
      T m = -std::numeric_limits<T>::infinity();
      for (int i = 0; i < valid; ++i) m = std::max(m, z[i]);
      row_max[static_cast<size_t>(n)] = m;
    }
  }
  tp_max(row_max.data(), row_max.size());
  {
    KernelScope ks(names.softmax_xent);
#pragma omp parallel for schedule(static)
    for (int n = 0; n < N; ++n) {
      const T* z = acts.logits + static_cast<size_t>(n) * Vl;
      T* p = acts.probs + static_cast<size_t>(n) * Vl;
      const T m = row_max[static_cast<size_t>(n)];
      T sum = 0;
      for (int i = 0; i < valid; ++i) sum += (p[i] = std::exp(z[i] - m));
      std::fill(p + valid, p + Vl, T(0));
      row_sum[static_cast<size_t>(n)] = sum;
      if (have_targets) {
        const int t = targets[static_cast<size_t>(n)] - v0;
        if (t >= 0 && t < valid) row_target[static_cast<size_t>(n)] = z[t];
      }
    }
  }
  tp_allreduce(row_sum.data(), row_sum.size());
  if (have_targets) tp_allreduce(row_target.data(), row_target.size());  // from the rank holding the target
  KernelScope ks(names.softmax_xent);
#pragma omp parallel for schedule(static)
  for (int n = 0; n < N; ++n) {
    T* p = acts.probs + static_cast<size_t>(n) * Vl;
    const T inv = T(1) / row_sum[static_cast<size_t>(n)];
    for (int i = 0; i < valid; ++i) p[i] *= inv;
    if (have_targets)
      acts.losses[n] = std::log(row_sum[static_cast<size_t>(n)]) + row_max[static_cast<size_t>(n)] -
                       row_target[static_cast<size_t>(n)];
  }
}

template <class T>
T Gpt2<T>::Impl::forward(const int* in, const int* tg, const T* stage_input) {
  if (in == nullptr) throw std::invalid_argument("Gpt2::forward: inputs is null");
  if (!stage.first() && stage_input == nullptr)
    throw std::invalid_argument("Gpt2::forward: a later pipeline stage needs its stage input");
  if (tp > 1 && (!tp_allreduce || !tp_max || (sp && (!tp_reduce_scatter || !tp_allgather))))
    throw std::logic_error("Gpt2::forward: tensor parallelism needs set_tensor_parallel first");
  const size_t count = static_cast<size_t>(B) * Tn;
  config.check_tokens(in, count, "Gpt2::forward", "input");
  if (tg != nullptr) config.check_tokens(tg, count, "Gpt2::forward", "target");
  std::copy_n(in, count, inputs.data());
  have_targets = tg != nullptr;
  if (have_targets) std::copy_n(tg, count, targets.data());

  const int N = B * Tn, C = config.channels, L = layout.layers(), L0 = stage.first_layer;
  const int V = config.vocab, Vp = config.padded_vocab;
  const size_t NCl = static_cast<size_t>(N) * Cl;
  const size_t RC = static_cast<size_t>(rows) * C;  // the residual stream (this rank's rows under SP)
  if (!stage.first()) {
    std::copy_n(stage_input, RC, acts.encoded);  // the previous stage's output
  } else {
    OperatorScope op(ops.embed_fwd.id);
    const T* p = acquire(0);
    if (tp == 1) {
      KernelScope ks(names.encoder);
      k::encoder_forward(acts.encoded, inputs.data(), at(p, 0, Tensor::wte), at(p, 0, Tensor::wpe), B, Tn, C);
    } else {
      vocab_parallel_encoder(at(p, 0, Tensor::wte), at(p, 0, Tensor::wpe));
    }
    release(0);
  }
  for (int l = 0; l < L; ++l) {
    LayerActs& a = acts.layers[static_cast<size_t>(l)];
    const T* residual = l == 0 ? acts.encoded : acts.layers[static_cast<size_t>(l) - 1].residual3;
    LayerTensors<const T> w{};
    {
      OperatorScope op(ops.attn_fwd[static_cast<size_t>(L0 + l)].id);
      w = layer(acquire(1 + l), l);
      {
        KernelScope ks(names.layernorm);
        k::layernorm_forward(norm_out(a.ln1), a.ln1_mean, a.ln1_rstd, residual, w.ln1w, w.ln1b, rows, C);
      }
      gather_rows(a.ln1);
      {
        KernelScope ks(names.qkv);
        k::matmul_forward(a.qkv, a.ln1, w.qkvw, w.qkvb, N, C, 3 * Cl);
      }
      {
        KernelScope ks(names.attention);
        k::attention_forward(a.atty, a.preatt, a.att, a.qkv, B, Tn, Cl, NHl);
      }
      {
        KernelScope ks(names.attproj);
        k::matmul_forward(full_rows(a.attproj), a.atty, w.attprojw, tp > 1 ? nullptr : w.attprojb, N, Cl, C);
      }
      if (tp > 1) row_parallel_out(a.attproj, w.attprojb);
      {
        KernelScope ks(names.residual);
        k::residual_forward(a.residual2, residual, a.attproj, RC);
      }
    }
    {
      OperatorScope op(ops.mlp_fwd[static_cast<size_t>(L0 + l)].id);
      {
        KernelScope ks(names.layernorm);
        k::layernorm_forward(norm_out(a.ln2), a.ln2_mean, a.ln2_rstd, a.residual2, w.ln2w, w.ln2b, rows, C);
      }
      gather_rows(a.ln2);
      {
        KernelScope ks(names.fc);
        k::matmul_forward(a.fch, a.ln2, w.fcw, w.fcb, N, C, 4 * Cl);
      }
      {
        KernelScope ks(names.gelu);
        k::gelu_forward(a.fch_gelu, a.fch, 4 * NCl);
      }
      {
        KernelScope ks(names.fcproj);
        k::matmul_forward(full_rows(a.fcproj), a.fch_gelu, w.fcprojw, tp > 1 ? nullptr : w.fcprojb, N, 4 * Cl, C);
      }
      if (tp > 1) row_parallel_out(a.fcproj, w.fcprojb);
      {
        KernelScope ks(names.residual);
        k::residual_forward(a.residual3, a.residual2, a.fcproj, RC);
      }
      release(1 + l);
    }
  }
  if (!stage.last()) return T(0);  // the output is the last layer's residual3 (stage_output)
  OperatorScope op(ops.head_fwd.id);
  {
    const T* p = acquire(L + 1);
    KernelScope ks(names.layernorm);
    k::layernorm_forward(norm_out(acts.lnf), acts.lnf_mean, acts.lnf_rstd, acts.layers.back().residual3,
                         at(p, L + 1, Tensor::lnfw), at(p, L + 1, Tensor::lnfb), rows, C);
  }
  gather_rows(acts.lnf);
  release(L + 1);
  {
    const T* p = acquire(0);
    KernelScope ks(names.logits);
    k::matmul_forward(acts.logits, acts.lnf, at(p, 0, Tensor::wte), static_cast<const T*>(nullptr), N, C, Vp / tp);
  }
  release(0);
  if (tp == 1) {
    KernelScope ks(names.softmax_xent);
    k::softmax_xent_forward(acts.probs, acts.losses, acts.logits, have_targets ? targets.data() : nullptr, N, V, Vp);
  } else {
    vocab_parallel_softmax_xent(N, V, Vp / tp);
  }
  if (!have_targets) return T(0);
  T sum = 0;
  for (int n = 0; n < N; ++n) sum += acts.losses[n];
  return sum / T(N);
}

template <class T>
Gpt2<T>::Gpt2(const ModelConfig& config, int batch, int seq, int tp, Stage stage, int slots, bool sequence_parallel)
    : impl_(std::make_unique<Impl>(config, batch, seq, tp, stage, slots, sequence_parallel)) {}
template <class T>
Gpt2<T>::~Gpt2() = default;

template <class T>
const ModelConfig& Gpt2<T>::config() const noexcept {
  return impl_->config;
}
template <class T>
const ParameterLayout& Gpt2<T>::layout() const noexcept {
  return impl_->layout;
}
template <class T>
int Gpt2<T>::tp() const noexcept {
  return impl_->tp;
}
template <class T>
bool Gpt2<T>::sequence_parallel() const noexcept {
  return impl_->sp;
}
template <class T>
int Gpt2<T>::batch() const noexcept {
  return impl_->B;
}
template <class T>
int Gpt2<T>::seq() const noexcept {
  return impl_->Tn;
}
template <class T>
void Gpt2<T>::init(std::uint64_t seed) {
  impl_->init(seed);
}
template <class T>
std::span<T> Gpt2<T>::params() {
  return impl_->own_params();
}
template <class T>
std::span<T> Gpt2<T>::grads() {
  return impl_->own_grads();
}
template <class T>
void Gpt2<T>::zero_grads() {
  auto& g = impl_->own_grads();
  std::fill(g.begin(), g.end(), T(0));
}
template <class T>
void Gpt2<T>::set_hooks(Hooks hooks) {
  impl_->hooks = std::move(hooks);
}
template <class T>
void Gpt2<T>::set_tensor_parallel(TensorParallel tp) {
  if (tp.rank < 0 || tp.rank >= impl_->tp)
    throw std::invalid_argument("Gpt2::set_tensor_parallel: rank " + std::to_string(tp.rank) + " of " +
                                std::to_string(impl_->tp));
  impl_->tp_rank = tp.rank;
  impl_->tp_allreduce = std::move(tp.sum);
  impl_->tp_max = std::move(tp.max);
  impl_->tp_reduce_scatter = std::move(tp.reduce_scatter);
  impl_->tp_allgather = std::move(tp.allgather);
}
template <class T>
T Gpt2<T>::forward(const int* inputs, const int* targets, const T* stage_input) {
  return impl_->forward(inputs, targets, stage_input);
}
template <class T>
void Gpt2<T>::backward(T loss_scale, const T* output_grad) {
  impl_->backward(loss_scale, output_grad);
}
template <class T>
const Stage& Gpt2<T>::stage() const noexcept {
  return impl_->stage;
}
template <class T>
int Gpt2<T>::slots() const noexcept {
  return static_cast<int>(impl_->parked.size());
}
template <class T>
void Gpt2<T>::select_slot(int slot) {
  impl_->select_slot(slot);
}
template <class T>
std::span<const T> Gpt2<T>::stage_output() const noexcept {
  const auto& i = *impl_;
  return {i.acts.layers.back().residual3, static_cast<size_t>(i.rows) * static_cast<size_t>(i.config.channels)};
}
template <class T>
std::span<const T> Gpt2<T>::stage_input_grad() const noexcept {
  const auto& i = *impl_;
  return {i.dacts.encoded, static_cast<size_t>(i.rows) * static_cast<size_t>(i.config.channels)};
}
template <class T>
std::span<const T> Gpt2<T>::probs() const noexcept {
  return {impl_->acts.probs,
          static_cast<size_t>(impl_->B) * impl_->Tn * static_cast<size_t>(impl_->config.padded_vocab / impl_->tp)};
}
template <class T>
std::size_t Gpt2<T>::activation_bytes() const noexcept {
  std::size_t elements = impl_->act_buf.size() + impl_->grad_buf.size();
  for (const auto& p : impl_->parked) elements += p.act_buf.size();
  return elements * sizeof(T);
}

template class Gpt2<float>;
template class Gpt2<double>;  // with Impl's members defined above (backward: model_backward.cpp)

}  // namespace commscope::trainer
