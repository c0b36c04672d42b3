#include "model_cuda.hpp"

#include <cuda_bf16.h>
#include <nvtx3/nvToolsExt.h>

#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "commscope/profiler/recorder.hpp"
#include "commscope/trainer/operators.hpp"
#include "device_array.hpp"
#include "device_op.hpp"
#include "kernels_cuda.hpp"

namespace commscope::trainer::cuda {

namespace {

namespace k = cuda_kernels;
using std::size_t;

// Sub-buffers start on 256-byte boundaries.
constexpr size_t kAlignBytes = 256;

// Carves typed pieces out of one allocation: first count() the pieces, then allocate and take().
template <class U>
class Arena {
 public:
  void reserve(size_t n) { total_ += round(n); }
  void allocate() { buf_.resize(total_); }
  U* take(size_t n) {
    U* p = buf_.data() + next_;
    next_ += round(n);
    if (next_ > buf_.size()) throw std::logic_error("CudaGpt2: arena overrun");
    return p;
  }
  U* data() const { return buf_.data(); }
  size_t size() const { return buf_.size(); }
  size_t bytes() const { return buf_.bytes(); }

 private:
  static size_t round(size_t n) {
    constexpr size_t per = kAlignBytes / sizeof(U);
    return (n + per - 1) / per * per;
  }
  size_t total_ = 0, next_ = 0;
  DeviceArray<U> buf_;
};

template <class P>
struct LayerTensors {
  P *ln1w, *ln1b, *qkvw, *qkvb, *attprojw, *attprojb, *ln2w, *ln2b, *fcw, *fcb, *fcprojw, *fcprojb;
};

}  // namespace

template <class T>
struct CudaGpt2<T>::Impl {
  // One layer's activations. Shapes: B = batch, T = sequence, C = channels, NH = heads (the whole
  // model: no tensor parallelism on the GPU). The pre-softmax scores are not kept per layer: they
  // and the attention's gradients use att_scratch0/1, (B, NH, T, T) each, shared by all layers.
  struct LayerActs {
    T* ln1;           // (B, T, C)
    T* qkv;           // (B, T, 3C): q, then k, then v
    T* atty;          // (B, T, C)
    T* att;           // (B, NH, T, T): softmax
    T* attproj;       // (B, T, C)
    T* residual2;     // (B, T, C)
    T* ln2;           // (B, T, C)
    T* fch;           // (B, T, 4C)
    T* fch_gelu;      // (B, T, 4C)
    T* fcproj;        // (B, T, C)
    T* residual3;     // (B, T, C)
    float* ln1_mean;  // (B, T), fp32 in bf16 runs too
    float* ln1_rstd;  // (B, T)
    float* ln2_mean;  // (B, T)
    float* ln2_rstd;  // (B, T)
  };
  // One layer's activation gradients: contiguous, zeroed with one memset per layer.
  struct LayerGrads {
    T *residual2, *fcproj, *fch_gelu, *fch, *ln2, *attproj, *atty, *qkv, *ln1;
  };

  ModelConfig config;
  ParameterLayout layout;
  int B, Tn;
  cudaStream_t stream;
  cublasHandle_t cublas = nullptr;
  ModelOperators ops;
  Hooks hooks;
  DeviceArray<T> params, grads;

  Arena<T> acts_t, grads_t;
  Arena<float> acts_f;
  DeviceArray<int> inputs, targets;
  std::vector<float> losses_host;  // the last forward's losses, copied back by loss()
  bool have_targets = false;

  T* encoded = nullptr;
  std::vector<LayerActs> layers;
  T *lnf = nullptr, *logits = nullptr;  // logits: also the probabilities and their gradient
  float *lnf_mean = nullptr, *lnf_rstd = nullptr, *losses = nullptr;
  T *att_scratch0 = nullptr, *att_scratch1 = nullptr;  // preatt / dpreatt, and datt

  T *dlnf = nullptr, *dres[2] = {nullptr, nullptr};
  LayerGrads d{};
  T* d_first = nullptr;  // d's block, for the memset
  size_t d_count = 0;

  Impl(const ModelConfig& c, int batch, int seq, cudaStream_t s)
      : config(c), layout(c), B(batch), Tn(seq), stream(s), ops(c.layers) {
    if (const std::string problem = c.problem(); !problem.empty()) throw std::invalid_argument(problem);
    if (batch < 1 || seq < 1 || seq > c.max_seq)
      throw std::invalid_argument("CudaGpt2: need batch >= 1 and 1 <= seq <= max_seq (" + std::to_string(c.max_seq) +
                                  "), got batch " + std::to_string(batch) + ", seq " + std::to_string(seq));
    if (cublasCreate(&cublas) != CUBLAS_STATUS_SUCCESS) throw std::runtime_error("cuBLAS: cublasCreate failed");
    try {
      allocate();
    } catch (...) {
      cublasDestroy(cublas);
      throw;
    }
  }
  ~Impl() { cublasDestroy(cublas); }

  // Calls f(arena, slot, elements) for every piece, in a fixed order (the same for the count and
  // the carving passes).
  template <class F>
  void pieces(F&& f) {
    const size_t N = static_cast<size_t>(B) * Tn, C = static_cast<size_t>(config.channels);
    const size_t NC = N * C, att = static_cast<size_t>(B) * config.heads * Tn * Tn;
    const size_t Vp = static_cast<size_t>(config.padded_vocab);
    layers.resize(static_cast<size_t>(config.layers));
    f(acts_t, encoded, NC);
    for (LayerActs& l : layers) {
      f(acts_t, l.ln1, NC);
      f(acts_t, l.qkv, 3 * NC);
      f(acts_t, l.atty, NC);
      f(acts_t, l.att, att);
      f(acts_t, l.attproj, NC);
      f(acts_t, l.residual2, NC);
      f(acts_t, l.ln2, NC);
      f(acts_t, l.fch, 4 * NC);
      f(acts_t, l.fch_gelu, 4 * NC);
      f(acts_t, l.fcproj, NC);
      f(acts_t, l.residual3, NC);
      f(acts_f, l.ln1_mean, N);
      f(acts_f, l.ln1_rstd, N);
      f(acts_f, l.ln2_mean, N);
      f(acts_f, l.ln2_rstd, N);
    }
    f(acts_t, lnf, NC);
    f(acts_t, logits, N * Vp);
    f(acts_t, att_scratch0, att);
    f(acts_t, att_scratch1, att);
    f(acts_f, lnf_mean, N);
    f(acts_f, lnf_rstd, N);
    f(acts_f, losses, N);
    f(grads_t, dlnf, NC);
    f(grads_t, dres[0], NC);
    f(grads_t, dres[1], NC);
    f(grads_t, d.residual2, NC);
    f(grads_t, d.fcproj, NC);
    f(grads_t, d.fch_gelu, 4 * NC);
    f(grads_t, d.fch, 4 * NC);
    f(grads_t, d.ln2, NC);
    f(grads_t, d.attproj, NC);
    f(grads_t, d.atty, NC);
    f(grads_t, d.qkv, 3 * NC);
    f(grads_t, d.ln1, NC);
  }

  void allocate() {
    pieces([](auto& arena, auto*&, size_t n) { arena.reserve(n); });
    acts_t.allocate();
    acts_f.allocate();
    grads_t.allocate();
    pieces([](auto& arena, auto*& slot, size_t n) { slot = arena.take(n); });
    d_first = d.residual2;
    d_count = static_cast<size_t>((d.ln1 - d.residual2)) + static_cast<size_t>(B) * Tn * config.channels;
    const size_t n = static_cast<size_t>(B) * Tn;
    inputs.resize(n);
    targets.resize(n);
    losses_host.assign(n, 0.0f);
  }

  T* own_params() {
    if (params.empty()) params.resize(layout.total());
    return params.data();
  }
  T* own_grads() {
    if (grads.empty()) grads.resize(layout.total());
    return grads.data();
  }
  const T* acquire(int s) { return hooks.acquire ? hooks.acquire(s) : own_params() + layout.segment(s).offset; }
  T* grad(int s) { return hooks.grad ? hooks.grad(s) : own_grads() + layout.segment(s).offset; }
  void release(int s) {
    if (hooks.release) hooks.release(s);
  }
  void grads_ready(int s) {
    if (hooks.grads_ready) hooks.grads_ready(s);
  }
  template <class P>
  P* at(P* base, int s, Tensor t, int l = 0) const {
    return base + (layout.offset(t, l) - layout.segment(s).offset);
  }
  template <class P>
  LayerTensors<P> layer(P* base, int l) const {
    const int s = 1 + l;
    return {at(base, s, Tensor::ln1w, l), at(base, s, Tensor::ln1b, l),     at(base, s, Tensor::qkvw, l),
            at(base, s, Tensor::qkvb, l), at(base, s, Tensor::attprojw, l), at(base, s, Tensor::attprojb, l),
            at(base, s, Tensor::ln2w, l), at(base, s, Tensor::ln2b, l),     at(base, s, Tensor::fcw, l),
            at(base, s, Tensor::fcb, l),  at(base, s, Tensor::fcprojw, l),  at(base, s, Tensor::fcprojb, l)};
  }
  void zero(T* p, size_t n) { COMMSCOPE_CUDA_CHECK(cudaMemsetAsync(p, 0, n * sizeof(T), stream)); }

  void forward(const int* in, const int* tg) {
    if (in == nullptr) throw std::invalid_argument("CudaGpt2::forward: inputs is null");
    const size_t count = static_cast<size_t>(B) * Tn;
    config.check_tokens(in, count, "CudaGpt2::forward", "input");
    if (tg != nullptr) config.check_tokens(tg, count, "CudaGpt2::forward", "target");
    // Pageable sources: the copies return once the host data is staged, so the caller may reuse it.
    COMMSCOPE_CUDA_CHECK(cudaMemcpyAsync(inputs.data(), in, count * sizeof(int), cudaMemcpyHostToDevice, stream));
    have_targets = tg != nullptr;
    if (have_targets)
      COMMSCOPE_CUDA_CHECK(cudaMemcpyAsync(targets.data(), tg, count * sizeof(int), cudaMemcpyHostToDevice, stream));

    const int N = B * Tn, C = config.channels, NH = config.heads, L = config.layers;
    const int V = config.vocab, Vp = config.padded_vocab;
    const size_t NC = static_cast<size_t>(N) * C;
    {
      DeviceOp op(ops.embed_fwd);
      const T* p = acquire(0);
      k::encoder_forward(encoded, inputs.data(), at(p, 0, Tensor::wte), at(p, 0, Tensor::wpe), B, Tn, C, stream);
      release(0);
    }
    for (int l = 0; l < L; ++l) {
      const size_t li = static_cast<size_t>(l);
      LayerActs& a = layers[li];
      const T* residual = l == 0 ? encoded : layers[li - 1].residual3;
      LayerTensors<const T> w{};
      {
        DeviceOp op(ops.attn_fwd[li]);
        w = layer(acquire(1 + l), l);
        k::layernorm_forward(a.ln1, a.ln1_mean, a.ln1_rstd, residual, w.ln1w, w.ln1b, N, C, stream);
        k::matmul_forward(a.qkv, a.ln1, w.qkvw, w.qkvb, N, C, 3 * C, cublas, stream);
        k::attention_forward(a.atty, att_scratch0, a.att, a.qkv, B, Tn, C, NH, cublas, stream);
        k::matmul_forward(a.attproj, a.atty, w.attprojw, w.attprojb, N, C, C, cublas, stream);
        k::residual_forward(a.residual2, residual, a.attproj, NC, stream);
      }
      {
        DeviceOp op(ops.mlp_fwd[li]);
        k::layernorm_forward(a.ln2, a.ln2_mean, a.ln2_rstd, a.residual2, w.ln2w, w.ln2b, N, C, stream);
        k::matmul_forward(a.fch, a.ln2, w.fcw, w.fcb, N, C, 4 * C, cublas, stream);
        k::gelu_forward(a.fch_gelu, a.fch, 4 * NC, stream);
        k::matmul_forward(a.fcproj, a.fch_gelu, w.fcprojw, w.fcprojb, N, 4 * C, C, cublas, stream);
        k::residual_forward(a.residual3, a.residual2, a.fcproj, NC, stream);
        release(1 + l);
      }
    }
    DeviceOp op(ops.head_fwd);
    {
      const T* p = acquire(L + 1);
      k::layernorm_forward(lnf, lnf_mean, lnf_rstd, layers.back().residual3, at(p, L + 1, Tensor::lnfw),
                           at(p, L + 1, Tensor::lnfb), N, C, stream);
      release(L + 1);
    }
    {
      const T* p = acquire(0);
      k::matmul_forward(logits, lnf, at(p, 0, Tensor::wte), static_cast<const T*>(nullptr), N, C, Vp, cublas, stream);
      release(0);
    }
    k::softmax_xent_forward(logits, losses, logits, have_targets ? targets.data() : nullptr, N, V, Vp, stream);
  }

  float loss() {
    if (!have_targets) throw std::logic_error("CudaGpt2::loss: the last forward had no targets");
    COMMSCOPE_CUDA_CHECK(cudaMemcpyAsync(losses_host.data(), losses, losses_host.size() * sizeof(float),
                                         cudaMemcpyDeviceToHost, stream));
    COMMSCOPE_CUDA_CHECK(cudaStreamSynchronize(stream));
    double sum = 0;
    for (float x : losses_host) sum += x;
    return static_cast<float>(sum / static_cast<double>(losses_host.size()));
  }

  void backward(float loss_scale) {
    if (!have_targets) throw std::logic_error("CudaGpt2::backward: the last forward had no targets");
    const int N = B * Tn, C = config.channels, NH = config.heads, L = config.layers;
    const int V = config.vocab, Vp = config.padded_vocab;
    const size_t NC = static_cast<size_t>(N) * C;
    int cur = 0;  // dres[cur]: the gradient of the current layer's output residual stream
    {
      DeviceOp op(ops.head_bwd);
      zero(dlnf, NC);
      zero(dres[cur], NC);
      // In place: the probabilities become their gradient.
      k::softmax_xent_backward(logits, logits, targets.data(), loss_scale / static_cast<float>(N), N, V, Vp, stream);
      {
        const T* p = acquire(0);
        T* g = grad(0);
        k::matmul_backward(dlnf, at(g, 0, Tensor::wte), static_cast<T*>(nullptr), logits, lnf, at(p, 0, Tensor::wte), N,
                           C, Vp, cublas, stream);
        release(0);
      }
      {
        const T* p = acquire(L + 1);
        T* g = grad(L + 1);
        k::layernorm_backward(dres[cur], at(g, L + 1, Tensor::lnfw), at(g, L + 1, Tensor::lnfb), dlnf,
                              layers.back().residual3, at(p, L + 1, Tensor::lnfw), lnf_mean, lnf_rstd, N, C, stream);
        release(L + 1);
      }
      grads_ready(L + 1);
    }
    for (int l = L - 1; l >= 0; --l) {
      const size_t li = static_cast<size_t>(l);
      const LayerActs& a = layers[li];
      const T* residual = l == 0 ? encoded : layers[li - 1].residual3;
      T* dout = dres[cur];
      T* dresidual = dres[cur ^ 1];
      LayerTensors<const T> w{};
      LayerTensors<T> dw{};
      {
        DeviceOp op(ops.mlp_bwd[li]);
        zero(d_first, d_count);
        zero(dresidual, NC);
        w = layer(acquire(1 + l), l);
        dw = layer(grad(1 + l), l);
        k::residual_backward(d.residual2, d.fcproj, dout, NC, stream);
        k::matmul_backward(d.fch_gelu, dw.fcprojw, dw.fcprojb, d.fcproj, a.fch_gelu, w.fcprojw, N, 4 * C, C, cublas,
                           stream);
        k::gelu_backward(d.fch, a.fch, d.fch_gelu, 4 * NC, stream);
        k::matmul_backward(d.ln2, dw.fcw, dw.fcb, d.fch, a.ln2, w.fcw, N, C, 4 * C, cublas, stream);
        k::layernorm_backward(d.residual2, dw.ln2w, dw.ln2b, d.ln2, a.residual2, w.ln2w, a.ln2_mean, a.ln2_rstd, N, C,
                              stream);
      }
      {
        DeviceOp op(ops.attn_bwd[li]);
        k::residual_backward(dresidual, d.attproj, d.residual2, NC, stream);
        k::matmul_backward(d.atty, dw.attprojw, dw.attprojb, d.attproj, a.atty, w.attprojw, N, C, C, cublas, stream);
        k::attention_backward(d.qkv, att_scratch0, att_scratch1, d.atty, a.qkv, a.att, B, Tn, C, NH, cublas, stream);
        k::matmul_backward(d.ln1, dw.qkvw, dw.qkvb, d.qkv, a.ln1, w.qkvw, N, C, 3 * C, cublas, stream);
        k::layernorm_backward(dresidual, dw.ln1w, dw.ln1b, d.ln1, residual, w.ln1w, a.ln1_mean, a.ln1_rstd, N, C,
                              stream);
        release(1 + l);
        grads_ready(1 + l);
      }
      cur ^= 1;
    }
    DeviceOp op(ops.embed_bwd);
    T* g = grad(0);  // (the encoder's backward needs no parameters: nothing acquired)
    k::encoder_backward(at(g, 0, Tensor::wte), at(g, 0, Tensor::wpe), dres[cur], inputs.data(), B, Tn, C, stream);
    grads_ready(0);
  }
};

template <class T>
CudaGpt2<T>::CudaGpt2(const ModelConfig& config, int batch, int seq, cudaStream_t stream)
    : impl_(std::make_unique<Impl>(config, batch, seq, stream)) {}
template <class T>
CudaGpt2<T>::~CudaGpt2() = default;
template <class T>
const ModelConfig& CudaGpt2<T>::config() const noexcept {
  return impl_->config;
}
template <class T>
const ParameterLayout& CudaGpt2<T>::layout() const noexcept {
  return impl_->layout;
}
template <class T>
int CudaGpt2<T>::batch() const noexcept {
  return impl_->B;
}
template <class T>
int CudaGpt2<T>::seq() const noexcept {
  return impl_->Tn;
}
template <class T>
cudaStream_t CudaGpt2<T>::stream() const noexcept {
  return impl_->stream;
}
template <class T>
T* CudaGpt2<T>::params() {
  return impl_->own_params();
}
template <class T>
T* CudaGpt2<T>::grads() {
  return impl_->own_grads();
}
template <class T>
void CudaGpt2<T>::zero_grads() {
  impl_->zero(impl_->own_grads(), impl_->layout.total());
}
template <class T>
void CudaGpt2<T>::set_hooks(Hooks hooks) {
  impl_->hooks = std::move(hooks);
}
template <class T>
void CudaGpt2<T>::forward(const int* inputs, const int* targets) {
  impl_->forward(inputs, targets);
}
template <class T>
float CudaGpt2<T>::loss() {
  return impl_->loss();
}
template <class T>
void CudaGpt2<T>::backward(float loss_scale) {
  impl_->backward(loss_scale);
}
template <class T>
std::size_t CudaGpt2<T>::activation_bytes() const noexcept {
  return impl_->acts_t.bytes() + impl_->acts_f.bytes() + impl_->grads_t.bytes();
}

template class CudaGpt2<float>;
template class CudaGpt2<__nv_bfloat16>;

}  // namespace commscope::trainer::cuda
