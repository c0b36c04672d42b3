#include "model_cuda.hpp"

#include <cuda_bf16.h>
#include <nvtx3/nvToolsExt.h>

#include <algorithm>
#include <climits>
#include <cstdint>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "attention_choice.hpp"
#include "commscope/profiler/recorder.hpp"
#include "commscope/trainer/operators.hpp"
#include "commscope/trainer/segment_views.hpp"
#include "cudnn_attention.hpp"
#include "device_array.hpp"
#include "device_op.hpp"
#include "flash_attention.hpp"
#include "gemm_lt.hpp"
#include "kernels_cuda.hpp"
#include "group_upload.hpp"

namespace commscope::trainer::cuda {

namespace {

namespace k = cuda_kernels;
using std::size_t;

// Sub-buffers start on 256-byte boundaries.
constexpr size_t kAlignBytes = 256;
// cuBLAS's workspace, given to its handle so that the plan counts it: 32 MiB, what cuBLAS itself
// takes on Hopper.
constexpr size_t kCublasWorkspaceBytes = size_t{32} << 20;

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

}  // namespace

template <class T>
struct CudaGpt2<T>::Impl : SegmentViews<typename CudaGpt2<T>::Impl, T> {
  using Views = SegmentViews<Impl, T>;  // a segment's parameters and gradients, through the hooks
  using Views::acquire, Views::grad, Views::release, Views::grads_ready, Views::at, Views::layer;

  // One layer's activations. Shapes: B = batch, T = sequence, C = channels, Cl = C / tp and
  // NHl = NH / tp (this rank's share of the attention; 4 Cl hidden units of the MLP). The
  // pre-softmax scores are not kept per layer: they and the attention's gradients use
  // att_scratch0/1, (B, NHl, T, T) each, shared by all layers. Flash attention (ours or cuDNN's)
  // keeps only each row's logsumexp: no T x T square at all.
  struct LayerActs {
    T* ln1;           // (B, T, C)
    T* qkv;           // (B, T, 3Cl): q, then k, then v
    T* atty;          // (B, T, Cl)
    T* att;           // (B, NHl, T, T): softmax (Attention::naive only)
    float* lse;       // (B, NHl, T): the softmax's logsumexp (flash and cudnn only)
    T* attproj;       // (B, T, C)
    T* residual2;     // (B, T, C)
    T* ln2;           // (B, T, C)
    T* fch;           // (B, T, 4Cl)
    T* fch_gelu;      // (B, T, 4Cl)
    T* fcproj;        // (B, T, C)
    T* residual3;     // (B, T, C)
    float* ln1_mean;  // (B, T), fp32 in bf16 runs too
    float* ln1_rstd;  // (B, T)
    float* ln2_mean;  // (B, T)
    float* ln2_rstd;  // (B, T)
  };
  // One micro-batch's activations (a slot): its tokens, the stage's input, its layers and, on
  // the last stage, the head's.
  struct SlotActs {
    int *inputs = nullptr, *targets = nullptr;
    int* groups = nullptr;         // the first stage: the inputs grouped by token (the encoder's backward)
    std::vector<int> host_inputs;  // the first stage: the inputs, grouped in backward (then cleared)
    std::unique_ptr<GroupUpload> upload;  // the first stage: the groups' pinned buffer, one per slot
    bool have_targets = false;
    T* encoded = nullptr;  // the embeddings, or the previous stage's output
    std::vector<LayerActs> layers;
    T *lnf = nullptr, *logits = nullptr;  // logits: also their gradient (and the probabilities, tp > 1)
    float *lnf_mean = nullptr, *lnf_rstd = nullptr, *losses = nullptr;
    float* lse = nullptr;  // tp == 1: each position's logsumexp of the logits (the fused classifier)
  };
  // One layer's activation gradients, shared by all layers (the residual stream's is dres).
  struct LayerGrads {
    T *fch_gelu, *fch, *ln2, *atty, *qkv, *ln1;
  };

  ModelConfig config;
  ParameterLayout layout;
  int B, Tn;
  int tp, Cl, NHl;
  Stage stage;
  cudaStream_t stream;
  cublasHandle_t cublas = nullptr;
  Attention attention;
  std::optional<CudnnAttention> cudnn;  // attention == Attention::cudnn
  std::string attention_timing;         // --attention auto's times of the two it chose between
  ModelOperators ops;
  Hooks hooks;
  TensorParallel tp_ops;
  DeviceArray<T> params, grads;
  DeviceArray<char> cublas_workspace;
  size_t library_bytes = 0;  // the workspaces above and the libraries' (cuBLASLt's, cuDNN's)

  Arena<T> acts_t, grads_t;
  Arena<float> acts_f;
  Arena<int> tokens;
  std::vector<float> losses_host;  // the selected slot's losses, copied back by loss()

  std::vector<SlotActs> slot_acts;
  SlotActs* acts = nullptr;                            // the selected slot
  T *att_scratch0 = nullptr, *att_scratch1 = nullptr;  // preatt / dpreatt, and datt
  float* row_stats = nullptr;  // tp > 1, the last stage: the cross-entropy's row max, sum, target logit [3][N]

  T *dlnf = nullptr, *dres = nullptr;  // dres: the residual stream's gradient, layer after layer
  T* input_grad = nullptr;             // after backward: the gradient of the stage's input (dres)
  LayerGrads d{};

  Impl(const ModelConfig& c, int batch, int seq, cudaStream_t s, int tp_ranks, Stage st, int slots, Attention attn)
      : config(c),
        layout(c, tp_ranks, st),
        B(batch),
        Tn(seq),
        tp(tp_ranks),
        Cl(c.channels / tp_ranks),
        NHl(c.heads / tp_ranks),
        stage(layout.stage()),
        stream(s),
        attention(attn),
        ops(c.layers) {
    if (const std::string problem = c.problem(); !problem.empty()) throw std::invalid_argument(problem);
    if (batch < 1 || seq < 1 || seq > c.max_seq)
      throw std::invalid_argument("CudaGpt2: need batch >= 1 and 1 <= seq <= max_seq (" + std::to_string(c.max_seq) +
                                  "), got batch " + std::to_string(batch) + ", seq " + std::to_string(seq));
    if (slots < 1) throw std::invalid_argument("CudaGpt2: need at least one activation slot");
    if (attention == Attention::automatic) attention = choose_attention(batch, seq);
    check_attention(attention, batch, seq);
    slot_acts.resize(static_cast<size_t>(slots));
    if (cublasCreate(&cublas) != CUBLAS_STATUS_SUCCESS) throw std::runtime_error("cuBLAS: cublasCreate failed");
    try {
      allocate();
      // The libraries' workspaces, made now so that the memory plan holds them: cuBLAS's (ours, on
      // its handle), cuBLASLt's (one per device) and cuDNN's attention's (forward and backward).
      // (cublasSetStream hands a handle back to cuBLAS's own workspace: the stream first, and the
      // kernels set it again only for another stream.)
      cublas_workspace.resize(kCublasWorkspaceBytes);
      if (cublasSetStream(cublas, stream) != CUBLAS_STATUS_SUCCESS ||
          cublasSetWorkspace(cublas, cublas_workspace.data(), cublas_workspace.bytes()) != CUBLAS_STATUS_SUCCESS)
        throw std::runtime_error("cuBLAS: cublasSetStream or cublasSetWorkspace failed");
      library_bytes = cublas_workspace.bytes() + k::detail::lt_workspace();
      if (cudnn) library_bytes += cudnn->reserve(B, Tn, Cl, NHl);
    } catch (...) {
      cublasDestroy(cublas);
      throw;
    }
    acts = &slot_acts[0];
  }
  ~Impl() { cublasDestroy(cublas); }

  // Calls f(arena, slot, elements) for every piece, in a fixed order (the same for the count and
  // the carving passes). The head's activations only where the stage has the head (this rank's
  // Vp/tp vocabulary columns).
  template <class F>
  void pieces(F&& f) {
    const size_t N = static_cast<size_t>(B) * Tn, C = static_cast<size_t>(config.channels);
    const size_t NC = N * C, NCl = N * static_cast<size_t>(Cl), att = static_cast<size_t>(B) * NHl * Tn * Tn;
    const bool naive = attention == Attention::naive, fused_head = tp == 1;
    const size_t Vl = stage.last() ? static_cast<size_t>(config.padded_vocab / tp) : 0, NH = stage.last() ? N : 0;
    for (SlotActs& a : slot_acts) {
      a.layers.resize(static_cast<size_t>(layout.layers()));
      f(tokens, a.inputs, N);
      f(tokens, a.targets, N);
      f(tokens, a.groups, stage.first() ? token_groups_ints(N) : 0);
      f(acts_t, a.encoded, NC);
      for (LayerActs& l : a.layers) {
        f(acts_t, l.ln1, NC);
        f(acts_t, l.qkv, 3 * NCl);
        f(acts_t, l.atty, NCl);
        f(acts_t, l.att, naive ? att : 0);
        f(acts_f, l.lse, naive ? 0 : static_cast<size_t>(B) * NHl * Tn);
        f(acts_t, l.attproj, NC);
        f(acts_t, l.residual2, NC);
        f(acts_t, l.ln2, NC);
        f(acts_t, l.fch, 4 * NCl);
        f(acts_t, l.fch_gelu, 4 * NCl);
        f(acts_t, l.fcproj, NC);
        f(acts_t, l.residual3, NC);
        f(acts_f, l.ln1_mean, N);
        f(acts_f, l.ln1_rstd, N);
        f(acts_f, l.ln2_mean, N);
        f(acts_f, l.ln2_rstd, N);
      }
      f(acts_t, a.lnf, NH * C);
      f(acts_t, a.logits, NH * Vl);
      f(acts_f, a.lnf_mean, NH);
      f(acts_f, a.lnf_rstd, NH);
      f(acts_f, a.losses, NH);
      f(acts_f, a.lse, fused_head ? NH : 0);
    }
    f(acts_t, att_scratch0, naive ? att : 0);
    f(acts_t, att_scratch1, naive ? att : 0);
    f(acts_f, row_stats, tp > 1 ? 3 * NH : 0);
    f(grads_t, dlnf, NH * C);
    f(grads_t, dres, NC);
    f(grads_t, d.fch_gelu, 4 * NCl);
    f(grads_t, d.fch, 4 * NCl);
    f(grads_t, d.ln2, NC);
    f(grads_t, d.atty, NCl);
    f(grads_t, d.qkv, 3 * NCl);
    f(grads_t, d.ln1, NC);
  }

  void allocate() {
    pieces([](auto& arena, auto*&, size_t n) { arena.reserve(n); });
    acts_t.allocate();
    acts_f.allocate();
    grads_t.allocate();
    tokens.allocate();
    pieces([](auto& arena, auto*& slot, size_t n) { slot = arena.take(n); });
    if (stage.first())
      for (SlotActs& a : slot_acts) a.upload = std::make_unique<GroupUpload>(B * Tn);
    input_grad = dres;  // where every backward ends (never null, as on the CPU)
    losses_host.assign(static_cast<size_t>(B) * Tn, 0.0f);
  }

  void select_slot(int k) {
    if (k < 0 || k >= static_cast<int>(slot_acts.size()))
      throw std::out_of_range("CudaGpt2::select_slot: slot " + std::to_string(k) + " of " +
                              std::to_string(slot_acts.size()));
    acts = &slot_acts[static_cast<size_t>(k)];
  }

  T* own_params() {
    if (params.empty()) params.resize(layout.total());
    return params.data();
  }
  T* own_grads() {
    if (grads.empty()) grads.resize(layout.total());
    return grads.data();
  }
  void zero(T* p, size_t n) { COMMSCOPE_CUDA_CHECK(cudaMemsetAsync(p, 0, n * sizeof(T), stream)); }
  void copy(T* dst, const T* src, size_t n) {
    COMMSCOPE_CUDA_CHECK(cudaMemcpyAsync(dst, src, n * sizeof(T), cudaMemcpyDeviceToDevice, stream));
  }

  // Tensor parallelism: this rank's first vocabulary row and its columns below V.
  int vocab_first() const { return tp_ops.rank * (config.padded_vocab / tp); }
  int vocab_valid() const { return std::clamp(config.vocab - vocab_first(), 0, config.padded_vocab / tp); }

  // A row-parallel layer's partial output [N, C] summed over the TP ranks, then its bias (whole
  // on every rank) added once. tp == 1 adds the bias inside the matmul.
  void row_parallel_sum(T* out, const T* bias, int N, int C) {
    tp_ops.sum(out, static_cast<size_t>(N) * C);
    k::add_bias(out, bias, N, C, stream);
  }

  void forward(const int* in, const int* tg, const T* stage_input) {
    if (in == nullptr) throw std::invalid_argument("CudaGpt2::forward: inputs is null");
    if (!stage.first() && stage_input == nullptr)
      throw std::invalid_argument("CudaGpt2::forward: a later pipeline stage needs its stage input");
    if (tp > 1 && (!tp_ops.sum || !tp_ops.sum_f32 || !tp_ops.max_f32))
      throw std::logic_error("CudaGpt2::forward: tensor parallelism needs set_tensor_parallel first");
    SlotActs& x = *acts;
    const size_t count = static_cast<size_t>(B) * Tn;
    config.check_tokens(in, count, "CudaGpt2::forward", "input");
    if (tg != nullptr) config.check_tokens(tg, count, "CudaGpt2::forward", "target");
    // Pageable sources: the copies return once the host data is staged, so the caller may reuse it.
    COMMSCOPE_CUDA_CHECK(cudaMemcpyAsync(x.inputs, in, count * sizeof(int), cudaMemcpyHostToDevice, stream));
    if (stage.first()) x.host_inputs.assign(in, in + count);  // grouped by token in backward, off the GPU's path
    x.have_targets = tg != nullptr;
    if (x.have_targets)
      COMMSCOPE_CUDA_CHECK(cudaMemcpyAsync(x.targets, tg, count * sizeof(int), cudaMemcpyHostToDevice, stream));

    const int N = B * Tn, C = config.channels, L = layout.layers(), L0 = stage.first_layer;
    const int V = config.vocab, Vp = config.padded_vocab;
    const size_t NC = static_cast<size_t>(N) * C;
    if (!stage.first()) {
      copy(x.encoded, stage_input, NC);  // the previous stage's output
    } else {
      DeviceOp op(ops.embed_fwd);
      const T* p = acquire(0);
      if (tp == 1) {
        k::encoder_forward(x.encoded, x.inputs, at(p, 0, Tensor::wte), at(p, 0, Tensor::wpe), B, Tn, C, stream);
      } else {  // this rank's vocabulary rows, summed over the TP ranks, then the positions
        k::embedding_lookup(x.encoded, x.inputs, at(p, 0, Tensor::wte), vocab_first(), Vp / tp, B, Tn, C, stream);
        tp_ops.sum(x.encoded, NC);
        k::add_positions(x.encoded, at(p, 0, Tensor::wpe), B, Tn, C, stream);
      }
      release(0);
    }
    for (int l = 0; l < L; ++l) {
      const size_t li = static_cast<size_t>(l);
      LayerActs& a = x.layers[li];
      const T* residual = l == 0 ? x.encoded : x.layers[li - 1].residual3;
      LayerTensors<const T> w{};
      {
        DeviceOp op(ops.attn_fwd[static_cast<size_t>(L0) + li]);
        w = layer(acquire(1 + l), l);
        k::layernorm_forward(a.ln1, a.ln1_mean, a.ln1_rstd, residual, w.ln1w, w.ln1b, N, C, stream);
        k::matmul_forward(a.qkv, a.ln1, w.qkvw, w.qkvb, N, C, 3 * Cl, cublas, stream);
        attention_forward(a);
        k::matmul_forward(a.attproj, a.atty, w.attprojw, tp > 1 ? nullptr : w.attprojb, N, Cl, C, cublas, stream);
        if (tp > 1) row_parallel_sum(a.attproj, w.attprojb, N, C);
      }
      {
        DeviceOp op(ops.mlp_fwd[static_cast<size_t>(L0) + li]);
        // residual2 = residual + attproj and its LayerNorm in one pass
        k::residual_layernorm_forward(a.residual2, a.ln2, a.ln2_mean, a.ln2_rstd, residual, a.attproj, w.ln2w, w.ln2b,
                                      N, C, stream);
        k::matmul_forward_gelu(a.fch_gelu, a.fch, a.ln2, w.fcw, w.fcb, N, C, 4 * Cl, cublas, stream);
        k::matmul_forward(a.fcproj, a.fch_gelu, w.fcprojw, tp > 1 ? nullptr : w.fcprojb, N, 4 * Cl, C, cublas, stream);
        if (tp > 1) row_parallel_sum(a.fcproj, w.fcprojb, N, C);
        k::residual_forward(a.residual3, a.residual2, a.fcproj, NC, stream);
        release(1 + l);
      }
    }
    if (!stage.last()) return;  // the output is the last layer's residual3 (stage_output)
    DeviceOp op(ops.head_fwd);
    {
      const T* p = acquire(L + 1);
      k::layernorm_forward(x.lnf, x.lnf_mean, x.lnf_rstd, x.layers.back().residual3, at(p, L + 1, Tensor::lnfw),
                           at(p, L + 1, Tensor::lnfb), N, C, stream);
      release(L + 1);
    }
    {
      const T* p = acquire(0);
      k::matmul_forward(x.logits, x.lnf, at(p, 0, Tensor::wte), static_cast<const T*>(nullptr), N, C, Vp / tp, cublas,
                        stream);
      release(0);
    }
    const int* targets = x.have_targets ? x.targets : nullptr;
    if (tp == 1) {  // one read of the logits: each row's logsumexp and loss; backward makes dlogits from them
      k::xent_forward(x.losses, x.lse, x.logits, targets, N, V, Vp, stream);
      return;
    }
    // The vocabulary-parallel cross-entropy: the TP maximum, sum of exponentials and target logit
    // of every row instead of the gathered logits (the sums and targets are contiguous: one sum).
    const int Vl = Vp / tp, valid = vocab_valid();
    float *row_max = row_stats, *row_sum = row_stats + N, *row_target = row_stats + 2 * static_cast<size_t>(N);
    k::xent_row_max(row_max, x.logits, N, valid, Vl, stream);
    tp_ops.max_f32(row_max, static_cast<size_t>(N));
    k::xent_sums(row_sum, row_target, x.logits, row_max, targets, vocab_first(), N, valid, Vl, stream);
    tp_ops.sum_f32(row_sum, static_cast<size_t>(targets != nullptr ? 2 : 1) * static_cast<size_t>(N));
    k::xent_normalize(x.logits, targets != nullptr ? x.losses : nullptr, x.logits, row_sum, row_max, row_target, N,
                      valid, Vl, stream);
  }

  // The attention implementation when none was asked for: our flash attention for bf16 and head
  // size 64 (measured in a whole training step on an H100; cuDNN's has passed its kernel checks
  // but not yet been timed in a step, so it is asked for by name), today's T x T kernels for fp32
  // (the equivalence tests' precision) and other head sizes.
  // --attention auto: naive where no fused attention runs (fp32, a head size other than 64); ours
  // where cuDNN cannot (a build without it, a shape it has no plan for); else the faster of the
  // two on this GPU and shape, timed (attention_choice.hpp).
  Attention choose_attention(int batch, int seq) {
    if constexpr (!std::is_same_v<T, __nv_bfloat16>) {
      return Attention::naive;
    } else {
      if (!k::flash_attention_supported(Cl / NHl)) return Attention::naive;
      if (!CudnnAttention::built()) return Attention::flash;
      try {
        cudnn.emplace();
        if (cudnn->supports(batch, seq, Cl, NHl)) {
          const Attention fastest = fastest_fused_attention(*cudnn, B, Tn, Cl, NHl, stream, attention_timing);
          if (fastest == Attention::flash) cudnn.reset();  // its handle and workspace let go
          return fastest;
        }
      } catch (const std::runtime_error&) {  // no cuDNN at run time: ours
      }
      cudnn.reset();
      return Attention::flash;
    }
  }
  void check_attention(Attention a, int batch, int seq) {
    if (a == Attention::naive) return;
    const std::string name = attention_name(a);
    if (!std::is_same_v<T, __nv_bfloat16>)
      throw std::invalid_argument("--attention " + name + " needs --precision bf16");
    if (!k::flash_attention_supported(Cl / NHl))
      throw std::invalid_argument("--attention " + name + " needs a head size of 64 (the model's is " +
                                  std::to_string(Cl / NHl) + ")");
    if (a != Attention::cudnn) return;
    if (!CudnnAttention::built()) throw std::invalid_argument("--attention cudnn: this build has no cuDNN");
    if (!cudnn) cudnn.emplace();
    if (!cudnn->supports(batch, seq, Cl, NHl))
      throw std::invalid_argument("--attention cudnn: cuDNN " + CudnnAttention::version() +
                                  " has no plan for this shape (batch " + std::to_string(batch) + ", sequence " +
                                  std::to_string(seq) + ", " + std::to_string(NHl) + " heads)");
  }

  // One layer's attention by the chosen implementation: atty (and lse or att) from qkv.
  void attention_forward(LayerActs& a) {
    if (attention == Attention::naive) {
      k::attention_forward(a.atty, att_scratch0, a.att, a.qkv, B, Tn, Cl, NHl, cublas, stream);
      return;
    }
    if constexpr (std::is_same_v<T, __nv_bfloat16>) {
      if (attention == Attention::cudnn)
        cudnn->forward(a.atty, a.lse, a.qkv, B, Tn, Cl, NHl, stream);
      else
        k::flash_attention_forward(a.atty, a.lse, a.qkv, B, Tn, Cl, NHl, stream);
    }
  }
  // d.qkv from datty: added into by today's kernels (d.qkv zeroed first), written by the flash ones.
  void attention_backward(const LayerActs& a, const T* datty) {
    if (attention == Attention::naive) {
      k::attention_backward(d.qkv, att_scratch0, att_scratch1, datty, a.qkv, a.att, B, Tn, Cl, NHl, cublas, stream);
      return;
    }
    if constexpr (std::is_same_v<T, __nv_bfloat16>) {
      if (attention == Attention::cudnn)
        cudnn->backward(d.qkv, datty, a.qkv, a.atty, a.lse, B, Tn, Cl, NHl, stream);
      else
        k::flash_attention_backward(d.qkv, datty, a.qkv, a.atty, a.lse, B, Tn, Cl, NHl, stream);
    }
  }

  float loss() {
    if (!stage.last()) return 0.0f;
    if (!acts->have_targets) throw std::logic_error("CudaGpt2::loss: the last forward had no targets");
    COMMSCOPE_CUDA_CHECK(cudaMemcpyAsync(losses_host.data(), acts->losses, losses_host.size() * sizeof(float),
                                         cudaMemcpyDeviceToHost, stream));
    COMMSCOPE_CUDA_CHECK(cudaStreamSynchronize(stream));
    double sum = 0;
    for (float v : losses_host) sum += v;
    return static_cast<float>(sum / static_cast<double>(losses_host.size()));
  }

  void backward(float loss_scale, const T* output_grad) {
    SlotActs& x = *acts;  // (its token groups are made here)
    if (stage.last() && !x.have_targets) throw std::logic_error("CudaGpt2::backward: the last forward had no targets");
    if (!stage.last() && output_grad == nullptr)
      throw std::invalid_argument("CudaGpt2::backward: an earlier pipeline stage needs the gradient of its output");
    const int N = B * Tn, C = config.channels, L = layout.layers(), L0 = stage.first_layer;
    const int V = config.vocab, Vp = config.padded_vocab;
    const size_t NC = static_cast<size_t>(N) * C, NCl = static_cast<size_t>(N) * Cl;
    {
      DeviceOp op(stage.last() ? ops.head_bwd : ops.mlp_bwd[static_cast<size_t>(L0 + L - 1)]);
      if (!stage.last()) {
        copy(dres, output_grad, NC);  // from the next stage
      } else {
        zero(dres, NC);
        // In place: the logits (tp > 1: the probabilities) become their gradient.
        const float dloss = loss_scale / static_cast<float>(N);
        if (tp == 1)
          k::xent_backward(x.logits, x.logits, x.lse, x.targets, dloss, N, V, Vp, stream);
        else
          k::softmax_xent_backward(x.logits, x.logits, x.targets, dloss, vocab_first(), N, vocab_valid(), Vp / tp,
                                   stream);
        {
          const T* p = acquire(0);
          T* g = grad(0);
          k::matmul_backward(dlnf, at(g, 0, Tensor::wte), static_cast<T*>(nullptr), x.logits, x.lnf,
                             at(p, 0, Tensor::wte), N, C, Vp / tp, cublas, stream, false);
          if (tp > 1) tp_ops.sum(dlnf, NC);  // the vocabulary shares of the head's input gradient
          release(0);
        }
        {
          const T* p = acquire(L + 1);
          T* g = grad(L + 1);
          k::layernorm_backward(dres, at(g, L + 1, Tensor::lnfw), at(g, L + 1, Tensor::lnfb), dlnf,
                                x.layers.back().residual3, at(p, L + 1, Tensor::lnfw), x.lnf_mean, x.lnf_rstd, N, C,
                                stream);
          release(L + 1);
        }
      }
      grads_ready(L + 1);  // (no elements on a stage without the head)
    }
    // The residual stream's gradient stays in dres through every layer, llm.c style: each
    // branch reads it and its LayerNorm backward adds the branch's gradient back into it (the
    // residual add's backward is the identity on both inputs: no copies).
    T* dx = dres;
    for (int l = L - 1; l >= 0; --l) {
      const size_t li = static_cast<size_t>(l);
      const LayerActs& a = x.layers[li];
      const T* residual = l == 0 ? x.encoded : x.layers[li - 1].residual3;
      LayerTensors<const T> w{};
      LayerTensors<T> dw{};
      {
        DeviceOp op(ops.mlp_bwd[static_cast<size_t>(L0) + li]);
        // Today's attention adds into d.qkv; every other kernel here writes its output.
        if (attention == Attention::naive) zero(d.qkv, 3 * NCl);
        w = layer(acquire(1 + l), l);
        dw = layer(grad(1 + l), l);
        // fcproj's backward through the GELU: d.fch directly (d.fch_gelu: the plain path's scratch)
        k::matmul_backward_dgelu(d.fch, d.fch_gelu, dw.fcprojw, dw.fcprojb, dx, a.fch_gelu, w.fcprojw, a.fch, N, 4 * Cl,
                                 C, cublas, stream);
        k::matmul_backward(d.ln2, dw.fcw, dw.fcb, d.fch, a.ln2, w.fcw, N, C, 4 * Cl, cublas, stream, false);
        if (tp > 1) tp_ops.sum(d.ln2, NC);  // "f": the hidden units' shares of dln2 summed
        k::layernorm_backward(dx, dw.ln2w, dw.ln2b, d.ln2, a.residual2, w.ln2w, a.ln2_mean, a.ln2_rstd, N, C, stream);
      }
      {
        DeviceOp op(ops.attn_bwd[static_cast<size_t>(L0) + li]);
        k::matmul_backward(d.atty, dw.attprojw, dw.attprojb, dx, a.atty, w.attprojw, N, Cl, C, cublas, stream, false);
        attention_backward(a, d.atty);
        k::matmul_backward(d.ln1, dw.qkvw, dw.qkvb, d.qkv, a.ln1, w.qkvw, N, C, 3 * Cl, cublas, stream, false);
        if (tp > 1) tp_ops.sum(d.ln1, NC);  // "f": the heads' shares of dln1 summed
        k::layernorm_backward(dx, dw.ln1w, dw.ln1b, d.ln1, residual, w.ln1w, a.ln1_mean, a.ln1_rstd, N, C, stream);
        release(1 + l);
        grads_ready(1 + l);
      }
    }
    input_grad = dres;  // the gradient of the stage's input
    if (!stage.first()) {
      grads_ready(0);  // the last stage's head gradient of wte (no elements on a middle stage)
      return;
    }
    DeviceOp op(ops.embed_bwd);
    T* g = grad(0);  // (the encoder's backward needs no parameters: nothing acquired)
    // This rank's vocabulary rows (all of them without TP); wpe whole.
    const int v0 = tp == 1 ? 0 : vocab_first(), rows = tp == 1 ? INT_MAX : Vp / tp;
    if (x.host_inputs.size() != static_cast<size_t>(B) * Tn)
      throw std::logic_error("CudaGpt2::backward: the slot's forward did not run");
    const int groups = x.upload->upload(x.host_inputs.data(), v0, rows, x.groups, stream);
    x.host_inputs.clear();  // used: a second backward without a forward is refused above
    k::encoder_backward(at(g, 0, Tensor::wte), at(g, 0, Tensor::wpe), dres, x.groups, groups, v0, B, Tn, C, stream);
    grads_ready(0);
  }
};

template <class T>
CudaGpt2<T>::CudaGpt2(const ModelConfig& config, int batch, int seq, cudaStream_t stream, int tp, Stage stage,
                      int slots, Attention attention)
    : impl_(std::make_unique<Impl>(config, batch, seq, stream, tp, stage, slots, attention)) {}
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
int CudaGpt2<T>::tp() const noexcept {
  return impl_->tp;
}
template <class T>
const Stage& CudaGpt2<T>::stage() const noexcept {
  return impl_->stage;
}
template <class T>
Attention CudaGpt2<T>::attention() const noexcept {
  return impl_->attention;
}
template <class T>
const std::string& CudaGpt2<T>::attention_timing() const noexcept {
  return impl_->attention_timing;
}
template <class T>
int CudaGpt2<T>::slots() const noexcept {
  return static_cast<int>(impl_->slot_acts.size());
}
template <class T>
void CudaGpt2<T>::select_slot(int slot) {
  impl_->select_slot(slot);
}
template <class T>
void CudaGpt2<T>::set_tensor_parallel(TensorParallel tp) {
  if (tp.rank < 0 || tp.rank >= impl_->tp)
    throw std::invalid_argument("CudaGpt2::set_tensor_parallel: rank " + std::to_string(tp.rank) + " of " +
                                std::to_string(impl_->tp));
  impl_->tp_ops = std::move(tp);
}
template <class T>
const T* CudaGpt2<T>::stage_output() const noexcept {
  return impl_->acts->layers.back().residual3;
}
template <class T>
const T* CudaGpt2<T>::stage_input_grad() const noexcept {
  return impl_->input_grad;
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
void CudaGpt2<T>::forward(const int* inputs, const int* targets, const T* stage_input) {
  impl_->forward(inputs, targets, stage_input);
}
template <class T>
float CudaGpt2<T>::loss() {
  return impl_->loss();
}
template <class T>
void CudaGpt2<T>::backward(float loss_scale, const T* output_grad) {
  impl_->backward(loss_scale, output_grad);
}
template <class T>
std::size_t CudaGpt2<T>::activation_bytes() const noexcept {
  return impl_->acts_t.bytes() + impl_->acts_f.bytes() + impl_->grads_t.bytes() + impl_->tokens.bytes();
}

template <class T>
std::size_t CudaGpt2<T>::library_bytes() const noexcept {
  return impl_->library_bytes;
}

template class CudaGpt2<float>;
template class CudaGpt2<__nv_bfloat16>;

}  // namespace commscope::trainer::cuda
