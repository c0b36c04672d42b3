// The GPT-2 layer kernels on a CUDA GPU; see kernels_cuda.hpp for the contract. The math mirrors
// trainer/src/kernels.cpp (the reference), with float arithmetic for every element type.
#include "kernels_cuda.hpp"

#include <algorithm>
#include <climits>
#include <cmath>
#include <stdexcept>
#include <string>
#include <type_traits>

#include "cuda_check.hpp"
#include "device_common.cuh"
#include "gemm_lt.hpp"

namespace commscope::trainer::cuda_kernels {

namespace {

using namespace detail;  // device_common.cuh: to_f, from_f, warp_sum, warp_max, StreamScratch

using std::size_t;

// ---------------------------------------------------------------------------------------------
// Errors, launch shapes, element conversion.

void cublas_check(cublasStatus_t s, const char* what) {
  if (s != CUBLAS_STATUS_SUCCESS)
    throw std::runtime_error(std::string("cuBLAS: ") + what + ": " + cublasGetStatusString(s));
}

constexpr int kWarp = 32;
constexpr int kBlock = 256;  // threads per block of the elementwise and per-row kernels
// Grid-stride kernels stop growing the grid here: enough blocks to fill any current GPU.
constexpr size_t kMaxBlocks = size_t{1} << 16;

constexpr int ceil_div(int a, int b) {
  return (a + b - 1) / b;
}
unsigned elementwise_blocks(size_t n) {
  return static_cast<unsigned>(std::min((n + kBlock - 1) / kBlock, kMaxBlocks));
}

// dst += x, in float, rounded once.
template <class T>
__device__ __forceinline__ void add_to(T& dst, float x) {
  dst = from_f<T>(to_f(dst) + x);
}

__device__ __forceinline__ size_t global_thread() {
  return static_cast<size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
}
__device__ __forceinline__ size_t grid_threads() {
  return static_cast<size_t>(gridDim.x) * blockDim.x;
}


// The block-wide sum or max of v, returned to every thread. Every thread of the block must call it.
template <bool kMax>
__device__ float block_reduce(float v) {
  __shared__ float per_warp[kWarp];
  const int lane = threadIdx.x % kWarp, warp = threadIdx.x / kWarp, warps = blockDim.x / kWarp;
  const float identity = kMax ? -INFINITY : 0.0f;
  v = kMax ? warp_max(v) : warp_sum(v);
  if (lane == 0) per_warp[warp] = v;
  __syncthreads();
  if (warp == 0) {
    v = lane < warps ? per_warp[lane] : identity;
    v = kMax ? warp_max(v) : warp_sum(v);
    if (lane == 0) per_warp[0] = v;
  }
  __syncthreads();
  v = per_warp[0];
  __syncthreads();  // per_warp is reused by the block's next call
  return v;
}

template <class T>
constexpr cudaDataType_t kCudaType = CUDA_R_32F;
template <>
constexpr cudaDataType_t kCudaType<__nv_bfloat16> = CUDA_R_16BF;

// ---------------------------------------------------------------------------------------------
// GEMMs in cuBLAS's column-major terms. A row-major [R, K] matrix with row stride ld is the
// column-major [K, R] matrix with leading dimension ld, so each row-major product below is
// written as its transpose: (X Y)^T = Y^T X^T.

template <class T>
void gemm(cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb, int m, int n, int k, float alpha, const T* A,
          int lda, const T* B, int ldb, float beta, T* Cm, int ldc) {
  if (m <= 0 || n <= 0) return;
  cublas_check(cublasGemmEx(h, ta, tb, m, n, k, &alpha, A, kCudaType<T>, lda, B, kCudaType<T>, ldb, &beta, Cm,
                            kCudaType<T>, ldc, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT),
               "cublasGemmEx");
}

template <class T>
void gemm_batched(cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb, int m, int n, int k, float alpha,
                  const T* A, int lda, long long stride_a, const T* B, int ldb, long long stride_b, float beta, T* Cm,
                  int ldc, long long stride_c, int batch) {
  if (m <= 0 || n <= 0 || batch <= 0) return;
  cublas_check(cublasGemmStridedBatchedEx(h, ta, tb, m, n, k, &alpha, A, kCudaType<T>, lda, stride_a, B, kCudaType<T>,
                                          ldb, stride_b, &beta, Cm, kCudaType<T>, ldc, stride_c, batch,
                                          CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT),
               "cublasGemmStridedBatchedEx");
}

// The handle on `stream`, set only where it is on another: cublasSetStream also hands the handle
// back to cuBLAS's own workspace, and the model gives its handle one of its own (counted in its
// memory plan) after setting the stream once.
void bind(cublasHandle_t handle, cudaStream_t stream) {
  cudaStream_t now = nullptr;
  if (cublasGetStream(handle, &now) == CUBLAS_STATUS_SUCCESS && now == stream) return;
  cublas_check(cublasSetStream(handle, stream), "cublasSetStream");
}

// ---------------------------------------------------------------------------------------------
// Column sums: dst0[c] += sum_n f(n, c).x, dst1[c] += sum_n f(n, c).y over N rows, in two
// deterministic stages. Stage 1: block (x, y) sums rows [y * rows_per_part, ...) of 32 columns
// (8 row lanes per column, then in order across the lanes) into partial[y, c]; stage 2 sums the
// parts of each column in order and adds once into dst.

constexpr int kColWidth = 32;        // columns per stage-1 block (one warp wide: coalesced rows)
constexpr int kColLanes = 8;         // threads per column in a stage-1 block
constexpr int kMaxParts = 128;       // row parts (stage-1 grid height)
constexpr int kMinRowsPerPart = 32;  // below this a part is not worth a block

template <class F>
__global__ void column_partial_kernel(float2* partial, int N, int C, int rows_per_part, F f) {
  __shared__ float2 lanes[kColLanes][kColWidth];
  const int c = blockIdx.x * kColWidth + threadIdx.x;
  const int first = blockIdx.y * rows_per_part, last = min(N, first + rows_per_part);
  float2 acc = make_float2(0.0f, 0.0f);
  if (c < C) {
    for (int n = first + static_cast<int>(threadIdx.y); n < last; n += kColLanes) {
      const float2 v = f(n, c);
      acc.x += v.x;
      acc.y += v.y;
    }
  }
  lanes[threadIdx.y][threadIdx.x] = acc;
  __syncthreads();
  if (threadIdx.y == 0 && c < C) {
    for (int l = 1; l < kColLanes; ++l) {
      acc.x += lanes[l][threadIdx.x].x;
      acc.y += lanes[l][threadIdx.x].y;
    }
    partial[static_cast<size_t>(blockIdx.y) * C + c] = acc;
  }
}

template <class T>
__global__ void column_finish_kernel(T* dst0, T* dst1, const float2* partial, int parts, int C) {
  const int c = static_cast<int>(global_thread());
  if (c >= C) return;
  float2 s = make_float2(0.0f, 0.0f);
  for (int p = 0; p < parts; ++p) {
    const float2 v = partial[static_cast<size_t>(p) * C + c];
    s.x += v.x;
    s.y += v.y;
  }
  add_to(dst0[c], s.x);
  if (dst1 != nullptr) add_to(dst1[c], s.y);
}


template <class T, class F>
void column_sums_add(T* dst0, T* dst1, int N, int C, F f, cudaStream_t stream) {
  if (N <= 0 || C <= 0) return;
  const int parts = std::min(kMaxParts, ceil_div(N, kMinRowsPerPart));
  const int rows_per_part = ceil_div(N, parts);
  StreamScratch partial(sizeof(float2) * static_cast<size_t>(parts) * static_cast<size_t>(C), stream);
  column_partial_kernel<<<dim3(ceil_div(C, kColWidth), parts), dim3(kColWidth, kColLanes), 0, stream>>>(
      partial.as<float2>(), N, C, rows_per_part, f);
  COMMSCOPE_CUDA_LAUNCH_CHECK("column_partial_kernel");
  column_finish_kernel<<<ceil_div(C, kBlock), kBlock, 0, stream>>>(dst0, dst1, partial.as<float2>(), parts, C);
  COMMSCOPE_CUDA_LAUNCH_CHECK("column_finish_kernel");
}

// The summands of the column sums (functors: nvcc needs --extended-lambda for device lambdas).
template <class T>
struct ColumnValue {  // x[n, c]
  const T* x;
  int C;
  __device__ float2 operator()(int n, int c) const {
    return make_float2(to_f(x[static_cast<size_t>(n) * C + c]), 0.0f);
  }
};
// ---------------------------------------------------------------------------------------------
// Encoder.

// The rows [v0, v0 + rows) of wte, plus the positions unless wpe is null; a token outside the
// rows contributes 0.
template <class T>
__global__ void encoder_forward_kernel(T* out, const int* inp, const T* wte, const T* wpe, int v0, int rows, int Tn,
                                       int C, size_t total) {
  for (size_t i = global_thread(); i < total; i += grid_threads()) {
    const size_t n = i / C, c = i % C, t = n % Tn;
    const int row = inp[n] - v0;
    float x = row >= 0 && row < rows ? to_f(wte[static_cast<size_t>(row) * C + c]) : 0.0f;
    if (wpe != nullptr) x += to_f(wpe[t * C + c]);
    out[i] = from_f<T>(x);
  }
}

// encoder_forward (every row, wpe) and embedding_lookup (a rank's rows, no wpe).
template <class T>
void encoder_lookup(T* out, const int* inp, const T* wte, const T* wpe, int v0, int rows, int B, int Tn, int C,
                    cudaStream_t stream) {
  const size_t total = static_cast<size_t>(B) * Tn * C;
  if (total == 0) return;
  encoder_forward_kernel<<<elementwise_blocks(total), kBlock, 0, stream>>>(out, inp, wte, wpe, v0, rows, Tn, C, total);
  COMMSCOPE_CUDA_LAUNCH_CHECK("encoder_forward_kernel");
}

// Block (g, channel block), g < groups: sums dout over token group g's positions (token_groups.hpp:
// ascending) for the block's channels and adds the sum into dwte's row token - v0 once. Block
// (groups + t, channel block): dwpe[t, c] += sum_b dout[b, t, c], in order of b. One launch, N C
// reads of dout for dwte and as many for dwpe; no atomics.
constexpr int kEncoderBlock = 128;

template <class T>
__global__ void __launch_bounds__(kEncoderBlock)
    encoder_backward_kernel(T* dwte, T* dwpe, const T* dout, const int* packed, int groups, int v0, int B, int Tn,
                            int C) {
  const int c = blockIdx.y * kEncoderBlock + threadIdx.x;
  if (c >= C) return;
  const int g = blockIdx.x;
  const int N = B * Tn;
  float acc = 0.0f;
  if (g < groups) {
    const int* positions = packed;
    const int* start = packed + N;
    const int token = packed[2 * static_cast<size_t>(N) + 1 + g];
    for (int j = start[g]; j < start[g + 1]; ++j) acc += to_f(dout[static_cast<size_t>(positions[j]) * C + c]);
    add_to(dwte[static_cast<size_t>(token - v0) * C + c], acc);
  } else {
    const size_t t = static_cast<size_t>(g - groups);
    for (int b = 0; b < B; ++b) acc += to_f(dout[(static_cast<size_t>(b) * Tn + t) * C + c]);
    add_to(dwpe[t * C + c], acc);
  }
}

// ---------------------------------------------------------------------------------------------
// bias [OC] over every row of out [N, OC]: out[n, o] = bias[o] (the matmul's bias, before the
// GEMM adds into it) or, with add, out[n, o] += bias[o] (a row-parallel layer's bias after the TP
// sum; the positions, wpe [T, C] over out [B, T*C]).

template <class T>
__global__ void broadcast_rows_kernel(T* out, const T* bias, int OC, size_t total, bool add) {
  for (size_t i = global_thread(); i < total; i += grid_threads())
    out[i] = add ? from_f<T>(to_f(out[i]) + to_f(bias[i % OC])) : bias[i % OC];
}

template <class T>
void broadcast_rows(T* out, const T* bias, int N, int OC, bool add, cudaStream_t stream) {
  const size_t total = static_cast<size_t>(N) * OC;
  if (N <= 0 || OC <= 0) return;
  broadcast_rows_kernel<<<elementwise_blocks(total), kBlock, 0, stream>>>(out, bias, OC, total, add);
  COMMSCOPE_CUDA_LAUNCH_CHECK("broadcast_rows_kernel");
}

// ---------------------------------------------------------------------------------------------
// Attention softmax (forward) and its backward: one warp per row (b, h, t) of the T x T squares.

constexpr int kRowsPerBlock = kBlock / kWarp;

template <class T>
__global__ void causal_softmax_kernel(T* att, const T* preatt, int Tn, size_t rows) {
  const size_t r = static_cast<size_t>(blockIdx.x) * kRowsPerBlock + threadIdx.x / kWarp;
  const int lane = threadIdx.x % kWarp;
  if (r >= rows) return;
  const int t = static_cast<int>(r % Tn);
  const T* p = preatt + r * Tn;
  T* a = att + r * Tn;
  float maxv = -INFINITY;
  for (int t2 = lane; t2 <= t; t2 += kWarp) maxv = fmaxf(maxv, to_f(p[t2]));
  maxv = warp_max(maxv);
  float sum = 0.0f;
  for (int t2 = lane; t2 <= t; t2 += kWarp) sum += expf(to_f(p[t2]) - maxv);
  const float inv = 1.0f / warp_sum(sum);
  for (int t2 = lane; t2 < Tn; t2 += kWarp) a[t2] = from_f<T>(t2 <= t ? expf(to_f(p[t2]) - maxv) * inv : 0.0f);
}

// dpreatt[t2] = att[t2] (datt[t2] - sum_t3 att[t3] datt[t3]) for t2 <= t, 0 beyond (written).
template <class T>
__global__ void causal_softmax_backward_kernel(T* dpreatt, const T* att, const T* datt, int Tn, size_t rows) {
  const size_t r = static_cast<size_t>(blockIdx.x) * kRowsPerBlock + threadIdx.x / kWarp;
  const int lane = threadIdx.x % kWarp;
  if (r >= rows) return;
  const int t = static_cast<int>(r % Tn);
  const T* a = att + r * Tn;
  const T* da = datt + r * Tn;
  T* dp = dpreatt + r * Tn;
  float s = 0.0f;
  for (int t2 = lane; t2 <= t; t2 += kWarp) s += to_f(a[t2]) * to_f(da[t2]);
  s = warp_sum(s);
  for (int t2 = lane; t2 < Tn; t2 += kWarp) dp[t2] = from_f<T>(t2 <= t ? to_f(a[t2]) * (to_f(da[t2]) - s) : 0.0f);
}

// ---------------------------------------------------------------------------------------------
// GELU through (1 + tanh(u)) / 2 = sigmoid(2u), as the reference computes it.

constexpr float kGeluScale = 0.7978845608028654f;  // sqrt(2 / pi)
constexpr float kGeluCubic = 0.044715f;

template <class T>
__global__ void gelu_forward_kernel(T* out, const T* inp, size_t n) {
  for (size_t i = global_thread(); i < n; i += grid_threads()) {
    const float x = to_f(inp[i]);
    const float u = kGeluScale * (x + kGeluCubic * x * x * x);
    out[i] = from_f<T>(x / (1.0f + expf(-2.0f * u)));
  }
}

template <class T>
__global__ void gelu_backward_kernel(T* dinp, const T* inp, const T* dout, size_t n) {
  for (size_t i = global_thread(); i < n; i += grid_threads()) {
    const float x = to_f(inp[i]);
    const float u = kGeluScale * (x + kGeluCubic * x * x * x);
    const float du = kGeluScale * (1.0f + 3.0f * kGeluCubic * x * x);
    const float sig = 1.0f / (1.0f + expf(-2.0f * u));
    add_to(dinp[i], to_f(dout[i]) * (sig + 2.0f * x * sig * (1.0f - sig) * du));
  }
}

template <class T>
__global__ void residual_forward_kernel(T* out, const T* a, const T* b, size_t n) {
  for (size_t i = global_thread(); i < n; i += grid_threads()) out[i] = from_f<T>(to_f(a[i]) + to_f(b[i]));
}

template <class T>
__global__ void residual_backward_kernel(T* da, T* db, const T* dout, size_t n) {
  for (size_t i = global_thread(); i < n; i += grid_threads()) {
    const float g = to_f(dout[i]);
    add_to(da[i], g);
    add_to(db[i], g);
  }
}

// ---------------------------------------------------------------------------------------------
// The vocabulary-parallel softmax + cross-entropy steps, one block per position on a rank's
// columns, the TP maximum and sums taken between them. The whole-vocabulary softmax_xent_* and
// the fused xent_forward/xent_backward are in classifier.cu.

// The maximum of z[0, valid) (-inf when valid is 0), returned to every thread of the block.
template <class T>
__device__ float block_row_max(const T* z, int valid) {
  float maxv = -INFINITY;
  for (int i = threadIdx.x; i < valid; i += blockDim.x) maxv = fmaxf(maxv, to_f(z[i]));
  return block_reduce<true>(maxv);
}

// 1. row_max[n] = the maximum of this rank's valid logits.
template <class T>
__global__ void xent_row_max_kernel(float* row_max, const T* logits, int valid, int Vl) {
  const size_t n = blockIdx.x;
  const float maxv = block_row_max(logits + n * Vl, valid);
  if (threadIdx.x == 0) row_max[n] = maxv;
}

// 2. The float sum of exp(z - row_max) and the target's logit (the logits are left as they are).
template <class T>
__global__ void xent_sums_kernel(float* row_sum, float* row_target, const T* logits, const float* row_max,
                                 const int* targets, int v0, int valid, int Vl) {
  const size_t n = blockIdx.x;
  const T* z = logits + n * Vl;
  if (targets != nullptr && threadIdx.x == 0) {
    const int t = targets[n] - v0;  // this rank's column of the target, if it holds it
    row_target[n] = t >= 0 && t < valid ? to_f(z[t]) : 0.0f;
  }
  const float maxv = row_max[n];
  float sum = 0.0f;
  for (int i = threadIdx.x; i < valid; i += blockDim.x) sum += expf(to_f(z[i]) - maxv);
  sum = block_reduce<false>(sum);
  if (threadIdx.x == 0) row_sum[n] = sum;
}

// 3. The probabilities exp(z - row_max) / row_sum, rounded once (0 in the padding), and the loss,
// from the TP maximum and sums. Each element is read and written by one thread: probs may be logits.
template <class T>
__global__ void xent_normalize_kernel(T* probs, float* losses, const T* logits, const float* row_sum,
                                      const float* row_max, const float* row_target, int valid, int Vl) {
  const size_t n = blockIdx.x;
  const T* z = logits + n * Vl;
  T* p = probs + n * Vl;
  const float maxv = row_max[n], inv = 1.0f / row_sum[n];
  for (int i = threadIdx.x; i < Vl; i += blockDim.x) p[i] = from_f<T>(i < valid ? expf(to_f(z[i]) - maxv) * inv : 0.0f);
  if (losses != nullptr && threadIdx.x == 0) losses[n] = logf(row_sum[n]) + maxv - row_target[n];
}

// ---------------------------------------------------------------------------------------------
// AdamW. A launch covers up to kMaxPieces pieces of the range, each with its own weight decay,
// passed by value; a thread's elements increase, so its piece cursor only moves forward. The
// arithmetic uses the _rn intrinsics, which nvcc never fuses into FMAs, so each operation rounds
// as the CPU reference's does.

constexpr int kMaxPieces = 32;

struct AdamWPieces {
  int count = 0;
  size_t begin[kMaxPieces] = {};  // relative to the launch's first element; ascending, disjoint
  size_t end[kMaxPieces] = {};
  float weight_decay[kMaxPieces] = {};
};

// G: the gradients' type (bf16 widened exactly as convert() widens); out, unless null, receives
// the updated parameter in G as well (bf16: rounded to nearest even, as convert() rounds), so
// that the model's copy of the parameters needs no pass of its own.
template <class G>
__global__ void adamw_kernel(float* params, const G* grads, float* m, float* v, G* out, AdamWPieces pieces,
                             detail::AdamWStep s) {
  const size_t n = pieces.end[pieces.count - 1];
  int p = 0;
  for (size_t i = global_thread(); i < n; i += grid_threads()) {
    while (i >= pieces.end[p]) ++p;
    if (i < pieces.begin[p]) continue;  // between two pieces: not part of the update
    const float g = __fmul_rn(to_f(grads[i]), s.grad_scale);
    const float mi = __fadd_rn(__fmul_rn(s.beta1, m[i]), __fmul_rn(s.one_minus_beta1, g));
    const float vi = __fadd_rn(__fmul_rn(s.beta2, v[i]), __fmul_rn(__fmul_rn(s.one_minus_beta2, g), g));
    m[i] = mi;
    v[i] = vi;
    const float m_hat = __fdiv_rn(mi, s.correction1), v_hat = __fdiv_rn(vi, s.correction2);
    const float step =
        __fadd_rn(__fdiv_rn(m_hat, __fadd_rn(__fsqrt_rn(v_hat), s.eps)), __fmul_rn(pieces.weight_decay[p], params[i]));
    const float updated = __fsub_rn(params[i], __fmul_rn(s.lr, step));
    params[i] = updated;
    if (out != nullptr) out[i] = from_f<G>(updated);
  }
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// Launchers.

template <class T>
void encoder_forward(T* out, const int* inp, const T* wte, const T* wpe, int B, int Tn, int C, cudaStream_t stream) {
  encoder_lookup(out, inp, wte, wpe, 0, INT_MAX, B, Tn, C, stream);
}

template <class T>
void embedding_lookup(T* out, const int* inp, const T* wte, int v0, int rows, int B, int Tn, int C,
                      cudaStream_t stream) {
  encoder_lookup(out, inp, wte, static_cast<const T*>(nullptr), v0, rows, B, Tn, C, stream);
}

template <class T>
void add_positions(T* out, const T* wpe, int B, int Tn, int C, cudaStream_t stream) {
  broadcast_rows(out, wpe, B, Tn * C, true, stream);  // out [B, T*C] += wpe [T*C]
}

template <class T>
void encoder_backward(T* dwte, T* dwpe, const T* dout, const int* groups, int group_count, int v0, int B, int Tn, int C,
                      cudaStream_t stream) {
  if (B <= 0 || Tn <= 0 || C <= 0) return;
  encoder_backward_kernel<<<dim3(static_cast<unsigned>(group_count + Tn), ceil_div(C, kEncoderBlock)), kEncoderBlock, 0,
                            stream>>>(dwte, dwpe, dout, groups, group_count, v0, B, Tn, C);
  COMMSCOPE_CUDA_LAUNCH_CHECK("encoder_backward_kernel");
}

template <class T>
void add_bias(T* out, const T* bias, int N, int OC, cudaStream_t stream) {
  broadcast_rows(out, bias, N, OC, true, stream);
}

template <class T>
void matmul_forward(T* out, const T* inp, const T* w, const T* bias, int N, int C, int OC, cublasHandle_t handle,
                    cudaStream_t stream) {
  if (N <= 0 || OC <= 0) return;
  // The bias in cuBLASLt's epilogue: no pass of its own over out.
  if (bias != nullptr && C > 0 && detail::lt_matmul_forward<T>(out, nullptr, inp, w, bias, N, C, OC, stream)) return;
  bind(handle, stream);
  float beta = 0.0f;
  if (bias != nullptr) {
    broadcast_rows(out, bias, N, OC, false, stream);
    beta = 1.0f;
  }
  // out^T [OC,N] = w [OC,C] inp^T [C,N]: w is column-major [C,OC] (ld C), inp column-major [C,N].
  gemm(handle, CUBLAS_OP_T, CUBLAS_OP_N, OC, N, C, 1.0f, w, C, inp, C, beta, out, OC);
}

template <class T>
void matmul_forward_gelu(T* out, T* pre_gelu, const T* inp, const T* w, const T* bias, int N, int C, int OC,
                         cublasHandle_t handle, cudaStream_t stream) {
  if (N <= 0 || OC <= 0) return;
  // bf16 only: the GELU epilogue's arithmetic is cuBLASLt's, within bf16's rounding of ours but
  // not within fp32's (the fp32 path is the reference the equivalence tests hold to 1e-4).
  if (std::is_same_v<T, __nv_bfloat16> && C > 0 &&
      detail::lt_matmul_forward<T>(out, pre_gelu, inp, w, bias, N, C, OC, stream))
    return;
  matmul_forward(pre_gelu, inp, w, bias, N, C, OC, handle, stream);
  gelu_forward(out, pre_gelu, static_cast<size_t>(N) * OC, stream);
}

template <class T>
void matmul_backward_dgelu(T* dpre, T* scratch, T* dw, T* dbias, const T* dout, const T* inp, const T* w,
                           const T* pre_gelu, int N, int C, int OC, cublasHandle_t handle, cudaStream_t stream) {
  if (N <= 0 || OC <= 0 || C <= 0) return;
  if (std::is_same_v<T, __nv_bfloat16> && detail::lt_matmul_dgelu<T>(dpre, dout, w, pre_gelu, N, C, OC, stream)) {
    matmul_backward(static_cast<T*>(nullptr), dw, dbias, dout, inp, w, N, C, OC, handle, stream);  // dw, dbias only
    return;
  }
  matmul_backward(scratch, dw, dbias, dout, inp, w, N, C, OC, handle, stream, false);
  COMMSCOPE_CUDA_CHECK(cudaMemsetAsync(dpre, 0, static_cast<size_t>(N) * C * sizeof(T), stream));
  gelu_backward(dpre, pre_gelu, scratch, static_cast<size_t>(N) * C, stream);
}

template <class T>
void matmul_backward(T* dinp, T* dw, T* dbias, const T* dout, const T* inp, const T* w, int N, int C, int OC,
                     cublasHandle_t handle, cudaStream_t stream, bool add_dinp) {
  if (N <= 0 || OC <= 0 || C <= 0) return;
  bind(handle, stream);
  // dinp^T [C,N] (+)= w^T [C,OC] dout^T [OC,N] (dinp null: not wanted)
  if (dinp != nullptr)
    gemm(handle, CUBLAS_OP_N, CUBLAS_OP_N, C, N, OC, 1.0f, w, C, dout, OC, add_dinp ? 1.0f : 0.0f, dinp, C);
  // dw^T [C,OC] += inp^T [C,N] dout [N,OC]
  gemm(handle, CUBLAS_OP_N, CUBLAS_OP_T, C, OC, N, 1.0f, inp, C, dout, OC, 1.0f, dw, C);
  if (dbias != nullptr) column_sums_add(dbias, static_cast<T*>(nullptr), N, OC, ColumnValue<T>{dout, OC}, stream);
}

template <class T>
void attention_forward(T* out, T* preatt, T* att, const T* qkv, int B, int Tn, int C, int NH, cublasHandle_t handle,
                       cudaStream_t stream) {
  if (B <= 0 || Tn <= 0 || NH <= 0) return;
  bind(handle, stream);
  const int hs = C / NH, ld = 3 * C;
  const float scale = 1.0f / std::sqrt(static_cast<float>(hs));
  const long long square = static_cast<long long>(Tn) * Tn;
  // Per batch row b, the NH heads are one strided batch: head h's q, k, v start h*hs further.
  for (int b = 0; b < B; ++b) {
    const T* q = qkv + static_cast<size_t>(b) * Tn * ld;
    const T* k = q + C;
    T* pre = preatt + static_cast<size_t>(b) * NH * square;
    // preatt^T [T(t2), T(t)] = scale k [t2, hs] q^T [hs, t]
    gemm_batched(handle, CUBLAS_OP_T, CUBLAS_OP_N, Tn, Tn, hs, scale, k, ld, hs, q, ld, hs, 0.0f, pre, Tn, square, NH);
  }
  const size_t rows = static_cast<size_t>(B) * NH * Tn;
  causal_softmax_kernel<<<static_cast<unsigned>((rows + kRowsPerBlock - 1) / kRowsPerBlock), kBlock, 0, stream>>>(
      att, preatt, Tn, rows);
  COMMSCOPE_CUDA_LAUNCH_CHECK("causal_softmax_kernel");
  for (int b = 0; b < B; ++b) {
    const T* v = qkv + static_cast<size_t>(b) * Tn * ld + 2 * static_cast<size_t>(C);
    const T* a = att + static_cast<size_t>(b) * NH * square;
    T* o = out + static_cast<size_t>(b) * Tn * C;
    // out^T [hs, T(t)] = v^T [hs, t2] att^T [t2, t]
    gemm_batched(handle, CUBLAS_OP_N, CUBLAS_OP_N, hs, Tn, Tn, 1.0f, v, ld, hs, a, Tn, square, 0.0f, o, C, hs, NH);
  }
}

template <class T>
void attention_backward(T* dqkv, T* dpreatt, T* datt, const T* dout, const T* qkv, const T* att, int B, int Tn, int C,
                        int NH, cublasHandle_t handle, cudaStream_t stream) {
  if (B <= 0 || Tn <= 0 || NH <= 0) return;
  bind(handle, stream);
  const int hs = C / NH, ld = 3 * C;
  const float scale = 1.0f / std::sqrt(static_cast<float>(hs));
  const long long square = static_cast<long long>(Tn) * Tn;
  for (int b = 0; b < B; ++b) {
    const size_t row0 = static_cast<size_t>(b) * Tn * ld;
    const T* v = qkv + row0 + 2 * static_cast<size_t>(C);
    T* dv = dqkv + row0 + 2 * static_cast<size_t>(C);
    const T* dy = dout + static_cast<size_t>(b) * Tn * C;
    const T* a = att + static_cast<size_t>(b) * NH * square;
    T* da = datt + static_cast<size_t>(b) * NH * square;
    // out = att v. dv^T [hs, t2] += dout^T [hs, t] att [t, t2]
    gemm_batched(handle, CUBLAS_OP_N, CUBLAS_OP_T, hs, Tn, Tn, 1.0f, dy, C, hs, a, Tn, square, 1.0f, dv, ld, hs, NH);
    // datt^T [t2, t] = v [t2, hs] dout^T [hs, t]
    gemm_batched(handle, CUBLAS_OP_T, CUBLAS_OP_N, Tn, Tn, hs, 1.0f, v, ld, hs, dy, C, hs, 0.0f, da, Tn, square, NH);
  }
  const size_t rows = static_cast<size_t>(B) * NH * Tn;
  causal_softmax_backward_kernel<<<static_cast<unsigned>((rows + kRowsPerBlock - 1) / kRowsPerBlock), kBlock, 0,
                                   stream>>>(dpreatt, att, datt, Tn, rows);
  COMMSCOPE_CUDA_LAUNCH_CHECK("causal_softmax_backward_kernel");
  for (int b = 0; b < B; ++b) {
    const size_t row0 = static_cast<size_t>(b) * Tn * ld;
    const T* q = qkv + row0;
    const T* k = q + C;
    T* dq = dqkv + row0;
    T* dk = dq + C;
    const T* dp = dpreatt + static_cast<size_t>(b) * NH * square;
    // preatt = scale q k^T. dq^T [hs, t] += scale k^T [hs, t2] dpreatt^T [t2, t]
    gemm_batched(handle, CUBLAS_OP_N, CUBLAS_OP_N, hs, Tn, Tn, scale, k, ld, hs, dp, Tn, square, 1.0f, dq, ld, hs, NH);
    // dk^T [hs, t2] += scale q^T [hs, t] dpreatt [t, t2]
    gemm_batched(handle, CUBLAS_OP_N, CUBLAS_OP_T, hs, Tn, Tn, scale, q, ld, hs, dp, Tn, square, 1.0f, dk, ld, hs, NH);
  }
}

template <class T>
void gelu_forward(T* out, const T* inp, std::size_t n, cudaStream_t stream) {
  if (n == 0) return;
  gelu_forward_kernel<<<elementwise_blocks(n), kBlock, 0, stream>>>(out, inp, n);
  COMMSCOPE_CUDA_LAUNCH_CHECK("gelu_forward_kernel");
}

template <class T>
void gelu_backward(T* dinp, const T* inp, const T* dout, std::size_t n, cudaStream_t stream) {
  if (n == 0) return;
  gelu_backward_kernel<<<elementwise_blocks(n), kBlock, 0, stream>>>(dinp, inp, dout, n);
  COMMSCOPE_CUDA_LAUNCH_CHECK("gelu_backward_kernel");
}

template <class T>
void residual_forward(T* out, const T* a, const T* b, std::size_t n, cudaStream_t stream) {
  if (n == 0) return;
  residual_forward_kernel<<<elementwise_blocks(n), kBlock, 0, stream>>>(out, a, b, n);
  COMMSCOPE_CUDA_LAUNCH_CHECK("residual_forward_kernel");
}

template <class T>
void residual_backward(T* da, T* db, const T* dout, std::size_t n, cudaStream_t stream) {
  if (n == 0) return;
  residual_backward_kernel<<<elementwise_blocks(n), kBlock, 0, stream>>>(da, db, dout, n);
  COMMSCOPE_CUDA_LAUNCH_CHECK("residual_backward_kernel");
}

template <class T>
void xent_row_max(float* row_max, const T* logits, int N, int valid, int Vl, cudaStream_t stream) {
  if (N <= 0) return;
  xent_row_max_kernel<<<N, kBlock, 0, stream>>>(row_max, logits, valid, Vl);
  COMMSCOPE_CUDA_LAUNCH_CHECK("xent_row_max_kernel");
}

template <class T>
void xent_sums(float* row_sum, float* row_target, const T* logits, const float* row_max,
                  const int* targets, int v0, int N, int valid, int Vl, cudaStream_t stream) {
  if (N <= 0) return;
  xent_sums_kernel<<<N, kBlock, 0, stream>>>(row_sum, row_target, logits, row_max, targets, v0, valid, Vl);
  COMMSCOPE_CUDA_LAUNCH_CHECK("xent_sums_kernel");
}

template <class T>
void xent_normalize(T* probs, float* losses, const T* logits, const float* row_sum, const float* row_max,
                    const float* row_target, int N,
                    int valid, int Vl, cudaStream_t stream) {
  if (N <= 0) return;
  xent_normalize_kernel<<<N, kBlock, 0, stream>>>(probs, losses, logits, row_sum, row_max, row_target, valid, Vl);
  COMMSCOPE_CUDA_LAUNCH_CHECK("xent_normalize_kernel");
}

namespace {

template <class To, class From>
__global__ void convert_kernel(To* dst, const From* src, size_t n) {
  for (size_t i = global_thread(); i < n; i += grid_threads()) dst[i] = from_f<To>(to_f(src[i]));
}

constexpr int kSumBlocks = 1024;  // partial sums of sum_squares' first stage

template <class T>
__global__ void sum_squares_partial_kernel(float* partial, const T* src, size_t n) {
  float s = 0.0f;
  for (size_t i = global_thread(); i < n; i += grid_threads()) {
    const float x = to_f(src[i]);
    s += x * x;
  }
  s = block_reduce<false>(s);
  if (threadIdx.x == 0) partial[blockIdx.x] = s;
}

__global__ void sum_partials_kernel(float* out, const float* partial, int count) {
  float s = 0.0f;
  for (int i = threadIdx.x; i < count; i += blockDim.x) s += partial[i];
  s = block_reduce<false>(s);
  if (threadIdx.x == 0) *out = s;
}

}  // namespace

void convert(float* dst, const __nv_bfloat16* src, std::size_t n, cudaStream_t stream) {
  if (n == 0) return;
  convert_kernel<<<elementwise_blocks(n), kBlock, 0, stream>>>(dst, src, n);
  COMMSCOPE_CUDA_LAUNCH_CHECK("convert_kernel");
}

void convert(__nv_bfloat16* dst, const float* src, std::size_t n, cudaStream_t stream) {
  if (n == 0) return;
  convert_kernel<<<elementwise_blocks(n), kBlock, 0, stream>>>(dst, src, n);
  COMMSCOPE_CUDA_LAUNCH_CHECK("convert_kernel");
}

template <class T>
void sum_squares(float* out, const T* src, std::size_t n, cudaStream_t stream) {
  if (n == 0) {
    COMMSCOPE_CUDA_CHECK(cudaMemsetAsync(out, 0, sizeof(float), stream));
    return;
  }
  const int blocks = static_cast<int>(std::min<size_t>(elementwise_blocks(n), kSumBlocks));
  StreamScratch partial(sizeof(float) * static_cast<size_t>(blocks), stream);
  sum_squares_partial_kernel<<<blocks, kBlock, 0, stream>>>(partial.as<float>(), src, n);
  COMMSCOPE_CUDA_LAUNCH_CHECK("sum_squares_partial_kernel");
  sum_partials_kernel<<<1, kBlock, 0, stream>>>(out, partial.as<float>(), blocks);
  COMMSCOPE_CUDA_LAUNCH_CHECK("sum_partials_kernel");
}

template <class G>
void detail::launch_adamw(float* params, const G* grads, float* m, float* v, G* out, const AdamWPiece* pieces,
                          std::size_t piece_count, const AdamWStep& step, cudaStream_t stream) {
  for (size_t first = 0; first < piece_count; first += kMaxPieces) {
    const size_t last = std::min(piece_count, first + kMaxPieces);
    const size_t base = pieces[first].begin;
    AdamWPieces batch;
    batch.count = static_cast<int>(last - first);
    for (size_t i = first; i < last; ++i) {
      batch.begin[i - first] = pieces[i].begin - base;
      batch.end[i - first] = pieces[i].end - base;
      batch.weight_decay[i - first] = pieces[i].weight_decay;
    }
    const size_t n = pieces[last - 1].end - base;
    if (n == 0) continue;
    adamw_kernel<<<elementwise_blocks(n), kBlock, 0, stream>>>(params + base, grads + base, m + base, v + base,
                                                               out == nullptr ? nullptr : out + base, batch, step);
    COMMSCOPE_CUDA_LAUNCH_CHECK("adamw_kernel");
  }
}

// ---------------------------------------------------------------------------------------------

#define COMMSCOPE_CUDA_KERNELS_INSTANTIATE(T)                                                                         \
  template void encoder_forward<T>(T*, const int*, const T*, const T*, int, int, int, cudaStream_t);                  \
  template void matmul_forward<T>(T*, const T*, const T*, const T*, int, int, int, cublasHandle_t, cudaStream_t);     \
  template void matmul_forward_gelu<T>(T*, T*, const T*, const T*, const T*, int, int, int, cublasHandle_t,           \
                                       cudaStream_t);                                                                 \
  template void matmul_backward_dgelu<T>(T*, T*, T*, T*, const T*, const T*, const T*, const T*, int, int, int,       \
                                         cublasHandle_t, cudaStream_t);                                               \
  template void matmul_backward<T>(T*, T*, T*, const T*, const T*, const T*, int, int, int, cublasHandle_t,           \
                                   cudaStream_t, bool);                                                               \
  template void attention_forward<T>(T*, T*, T*, const T*, int, int, int, int, cublasHandle_t, cudaStream_t);         \
  template void attention_backward<T>(T*, T*, T*, const T*, const T*, const T*, int, int, int, int, cublasHandle_t,   \
                                      cudaStream_t);                                                                  \
  template void gelu_forward<T>(T*, const T*, std::size_t, cudaStream_t);                                             \
  template void gelu_backward<T>(T*, const T*, const T*, std::size_t, cudaStream_t);                                  \
  template void residual_forward<T>(T*, const T*, const T*, std::size_t, cudaStream_t);                               \
  template void residual_backward<T>(T*, T*, const T*, std::size_t, cudaStream_t);                                    \
  template void embedding_lookup<T>(T*, const int*, const T*, int, int, int, int, int, cudaStream_t);                 \
  template void add_positions<T>(T*, const T*, int, int, int, cudaStream_t);                                          \
  template void encoder_backward<T>(T*, T*, const T*, const int*, int, int, int, int, int, cudaStream_t);             \
  template void add_bias<T>(T*, const T*, int, int, cudaStream_t);                                                    \
  template void xent_row_max<T>(float*, const T*, int, int, int, cudaStream_t);                                       \
  template void xent_sums<T>(float*, float*, const T*, const float*, const int*, int, int, int, int, cudaStream_t);  \
  template void xent_normalize<T>(T*, float*, const T*, const float*, const float*, const float*, int, int, int,     \
                                  cudaStream_t);                                                                      \
  template void sum_squares<T>(float*, const T*, std::size_t, cudaStream_t);                                          \
  template void detail::launch_adamw<T>(float*, const T*, float*, float*, T*, const detail::AdamWPiece*, std::size_t, \
                                        const detail::AdamWStep&, cudaStream_t);

COMMSCOPE_CUDA_KERNELS_INSTANTIATE(float)
COMMSCOPE_CUDA_KERNELS_INSTANTIATE(__nv_bfloat16)

#undef COMMSCOPE_CUDA_KERNELS_INSTANTIATE

}  // namespace commscope::trainer::cuda_kernels
