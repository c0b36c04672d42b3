#include "model_impl.hpp"

// Gpt2<T>::Impl's backward: the head, the blocks in reverse and the encoder.

namespace commscope::trainer {

template <class T>
void Gpt2<T>::Impl::vocab_parallel_softmax_xent_backward(T dloss, int N, int Vl) {
  const int v0 = tp_rank * Vl;
#pragma omp parallel for schedule(static)
  for (int n = 0; n < N; ++n) {
    const T* p = acts.probs + static_cast<size_t>(n) * Vl;
    T* dz = dacts.logits + static_cast<size_t>(n) * Vl;
    for (int i = 0; i < Vl; ++i) dz[i] = p[i] * dloss;  // padding columns: p = 0
    const int t = targets[static_cast<size_t>(n)] - v0;
    if (t >= 0 && t < Vl) dz[t] -= dloss;
  }
}

template <class T>
void Gpt2<T>::Impl::head_backward(T loss_scale) {
  const int N = B * Tn, C = config.channels, L = layout.layers();
  const int V = config.vocab, Vp = config.padded_vocab;
  {
    KernelScope ks(names.softmax_xent);
    if (tp == 1) {
      k::softmax_xent_backward(dacts.logits, acts.probs, targets.data(), loss_scale / T(N), N, V, Vp);
    } else {
      vocab_parallel_softmax_xent_backward(loss_scale / T(N), N, Vp / tp);
    }
  }
  const T* p = acquire(0);
  T* g = grad(0);
  {
    KernelScope ks(names.logits);
    k::matmul_backward(dacts.lnf, at(g, 0, Tensor::wte), static_cast<T*>(nullptr), dacts.logits, acts.lnf,
                       at(p, 0, Tensor::wte), N, C, Vp / tp);
  }
  // The vocabulary shares of the head's input gradient summed (SP: into this rank's rows).
  const T* dlnf = tp > 1 ? sum_input_grad(dacts.lnf) : dacts.lnf;
  release(0);
  {
    const T* pf = acquire(L + 1);
    T* gf = grad(L + 1);
    T *dw = at(gf, L + 1, Tensor::lnfw), *db = at(gf, L + 1, Tensor::lnfb);
    {
      KernelScope ks(names.layernorm);
      k::layernorm_backward(dacts.layers.back().residual3, ln_dw(dw), ln_db(db), dlnf, acts.layers.back().residual3,
                            at(pf, L + 1, Tensor::lnfw), acts.lnf_mean, acts.lnf_rstd, rows, C);
    }
    ln_grads_done(dw, db);
  }
  release(L + 1);
}

template <class T>
void Gpt2<T>::Impl::encoder_backward() {
  const int C = config.channels;
  OperatorScope op(ops.embed_bwd.id);
  {
    T* g = grad(0);  // (the encoder's backward needs no parameters: nothing acquired)
    KernelScope ks(names.encoder);
    if (tp == 1) {
      k::encoder_backward(at(g, 0, Tensor::wte), at(g, 0, Tensor::wpe), dacts.encoded, inputs.data(), B, Tn, C);
    } else {  // this rank's vocabulary rows; wpe whole (SP: from every rank's rows, gathered)
      const size_t Vl = static_cast<size_t>(config.padded_vocab / tp), v0 = static_cast<size_t>(tp_rank) * Vl;
      T* dwte = at(g, 0, Tensor::wte);
      T* dwpe = at(g, 0, Tensor::wpe);
      const T* dencoded = all_rows(dacts.encoded);
      for (int n = 0; n < B * Tn; ++n) {
        const T* d = dencoded + static_cast<size_t>(n) * C;
        T* pos = dwpe + static_cast<size_t>(n % Tn) * C;
        for (int c = 0; c < C; ++c) pos[c] += d[c];
        const size_t tok = static_cast<size_t>(inputs[static_cast<size_t>(n)]);
        if (tok < v0 || tok >= v0 + Vl) continue;
        T* row = dwte + (tok - v0) * C;
        for (int c = 0; c < C; ++c) row[c] += d[c];
      }
    }
  }
}

template <class T>
void Gpt2<T>::Impl::backward(T loss_scale, const T* output_grad) {
  if (stage.last() && !have_targets) throw std::logic_error("Gpt2::backward: the last forward had no targets");
  if (!stage.last() && output_grad == nullptr)
    throw std::invalid_argument("Gpt2::backward: an earlier pipeline stage needs the gradient of its output");
  const int N = B * Tn, C = config.channels, L = layout.layers(), L0 = stage.first_layer;
  const size_t NCl = static_cast<size_t>(N) * Cl;
  const size_t RC = static_cast<size_t>(rows) * C;  // the residual stream (this rank's rows under SP)
  {
    OperatorScope op(stage.last() ? ops.head_bwd.id : ops.mlp_bwd[static_cast<size_t>(L0 + L - 1)].id);
    {
      KernelScope ks(names.zero);
      constexpr size_t kChunk = size_t{1} << 14;  // elements per parallel memset
      T* g = grad_buf.data();
      const long chunks = static_cast<long>((grad_zeroed + kChunk - 1) / kChunk);
#pragma omp parallel for schedule(static)
      for (long i = 0; i < chunks; ++i) {
        const size_t first = static_cast<size_t>(i) * kChunk;
        std::fill(g + first, g + std::min(grad_zeroed, first + kChunk), T(0));
      }
    }
    if (!stage.last())
      std::copy_n(output_grad, RC, dacts.layers.back().residual3);  // from the next stage
    else
      head_backward(loss_scale);
    grads_ready(L + 1);  // (no elements on a stage without the head)
  }
  for (int l = L - 1; l >= 0; --l) {
    const size_t li = static_cast<size_t>(l);
    const LayerActs& a = acts.layers[li];
    const LayerActs& d = dacts.layers[li];
    const T* residual = l == 0 ? acts.encoded : acts.layers[li - 1].residual3;
    T* dresidual = l == 0 ? dacts.encoded : dacts.layers[li - 1].residual3;
    LayerTensors<const T> w{};
    LayerTensors<T> dw{};
    {
      OperatorScope op(ops.mlp_bwd[static_cast<size_t>(L0) + li].id);
      w = layer(acquire(1 + l), l);
      dw = layer(grad(1 + l), l);
      {
        KernelScope ks(names.residual);
        k::residual_backward(d.residual2, d.fcproj, d.residual3, RC);
      }
      {
        const T* dfcproj = all_rows(d.fcproj);
        KernelScope ks(names.fcproj);
        k::matmul_backward(d.fch_gelu, dw.fcprojw, dw.fcprojb, dfcproj, a.fch_gelu, w.fcprojw, N, 4 * Cl, C);
      }
      {
        KernelScope ks(names.gelu);
        k::gelu_backward(d.fch, a.fch, d.fch_gelu, 4 * NCl);
      }
      {
        KernelScope ks(names.fc);
        k::matmul_backward(d.ln2, dw.fcw, dw.fcb, d.fch, a.ln2, w.fcw, N, C, 4 * Cl);
      }
      const T* dln2 = tp > 1 ? sum_input_grad(d.ln2) : d.ln2;  // "f": the hidden units' shares summed
      {
        KernelScope ks(names.layernorm);
        k::layernorm_backward(d.residual2, ln_dw(dw.ln2w), ln_db(dw.ln2b), dln2, a.residual2, w.ln2w, a.ln2_mean,
                              a.ln2_rstd, rows, C);
      }
      ln_grads_done(dw.ln2w, dw.ln2b);
    }
    {
      OperatorScope op(ops.attn_bwd[static_cast<size_t>(L0) + li].id);
      {
        KernelScope ks(names.residual);
        k::residual_backward(dresidual, d.attproj, d.residual2, RC);
      }
      {
        const T* dattproj = all_rows(d.attproj);
        KernelScope ks(names.attproj);
        k::matmul_backward(d.atty, dw.attprojw, dw.attprojb, dattproj, a.atty, w.attprojw, N, Cl, C);
      }
      {
        KernelScope ks(names.attention);
        k::attention_backward(d.qkv, d.preatt, d.att, d.atty, a.qkv, a.att, B, Tn, Cl, NHl);
      }
      {
        KernelScope ks(names.qkv);
        k::matmul_backward(d.ln1, dw.qkvw, dw.qkvb, d.qkv, a.ln1, w.qkvw, N, C, 3 * Cl);
      }
      const T* dln1 = tp > 1 ? sum_input_grad(d.ln1) : d.ln1;  // "f": the heads' shares summed
      {
        KernelScope ks(names.layernorm);
        k::layernorm_backward(dresidual, ln_dw(dw.ln1w), ln_db(dw.ln1b), dln1, residual, w.ln1w, a.ln1_mean, a.ln1_rstd,
                              rows, C);
      }
      ln_grads_done(dw.ln1w, dw.ln1b);
      release(1 + l);
      grads_ready(1 + l);
    }
  }
  if (!stage.first()) {  // dacts.encoded is the gradient of the stage's input (stage_input_grad)
    grads_ready(0);      // the last stage's head gradient of wte (no elements on a middle stage)
    return;
  }
  encoder_backward();
  grads_ready(0);
}

template void Gpt2<float>::Impl::vocab_parallel_softmax_xent_backward(float, int, int);
template void Gpt2<double>::Impl::vocab_parallel_softmax_xent_backward(double, int, int);
template void Gpt2<float>::Impl::head_backward(float);
template void Gpt2<double>::Impl::head_backward(double);
template void Gpt2<float>::Impl::encoder_backward();
template void Gpt2<double>::Impl::encoder_backward();
template void Gpt2<float>::Impl::backward(float, const float*);
template void Gpt2<double>::Impl::backward(double, const double*);

}  // namespace commscope::trainer
