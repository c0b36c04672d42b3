// LayerNorm on a CUDA GPU (forward, backward, and the forward fused with the residual add before
// it); see kernels_cuda.hpp for the contract. The math mirrors trainer/src/kernels.cpp (the
// reference), in float for every element type.
//
// Memory traffic decides the time, so each kernel reads and writes every element once:
//   - one warp per position (row); the row is kept in registers, so the two-pass statistics
//     (mean, then squared deviations) and the output need one read of the input;
//   - 128-bit loads and stores (a Pack: 4 float or 8 bf16), when C is a multiple of the pack width,
//     every pointer is 16-byte aligned and the row fits the registers (C <= 32 * kMaxPacks * width:
//     1024 float, 2048 bf16); otherwise a scalar kernel with the same results (up to float
//     rounding order) reads the row from memory once per pass;
//   - the backward adds the position sums of dw and db per block (a block owns a contiguous range
//     of rows; each lane sums its channels over its warp's rows in registers, the warps are added
//     in order in shared memory) into a float scratch [blocks, 2, C], which a second kernel sums
//     over the blocks in order and adds into dw and db once: no atomics, deterministic.
#include "kernels_cuda.hpp"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <initializer_list>

#include "cuda_check.hpp"
#include "device_common.cuh"

namespace commscope::trainer::cuda_kernels {

namespace {

using namespace detail;  // device_common.cuh: to_f, from_f, warp_sum, warp_max, StreamScratch

using std::size_t;

constexpr int kWarp = 32;
constexpr int kBlock = 256;                    // threads per block of the per-row kernels
constexpr int kRowsPerBlock = kBlock / kWarp;  // one warp per row
constexpr float kLayerNormEps = 1e-5f;

// The backward's grid: at most this many blocks (a fixed number, not the device's, so that the
// summation order and the result do not depend on the GPU), at least kRowsPerBlock rows each.
constexpr int kBackwardMaxBlocks = 256;
// The final reduction over the backward's blocks: a block sums kFinishColumns channels with
// kFinishLanes threads each.
constexpr int kFinishColumns = 32;
constexpr int kFinishLanes = 16;

constexpr int ceil_div(int a, int b) {
  return (a + b - 1) / b;
}



// ---------------------------------------------------------------------------------------------
// 128-bit packs: kWidth elements of T in one float4 (the bits, not float values), loaded and stored
// with one instruction; unpack widens them to float, pack rounds floats to T (nearest even, as
// from_f). Element k of the pack is element k in memory.

template <class T>
struct Pack;
template <>
struct Pack<float> {
  static constexpr int kWidth = 4;
  static __device__ __forceinline__ void unpack(float4 bits, float* f) {
    f[0] = bits.x;
    f[1] = bits.y;
    f[2] = bits.z;
    f[3] = bits.w;
  }
  static __device__ __forceinline__ float4 pack(const float* f) { return make_float4(f[0], f[1], f[2], f[3]); }
};
template <>
struct Pack<__nv_bfloat16> {
  static constexpr int kWidth = 8;
  static __device__ __forceinline__ void unpack(float4 bits, float* f) {
    __nv_bfloat162 h[4];
    memcpy(h, &bits, sizeof(h));
#pragma unroll
    for (int k = 0; k < 4; ++k) {
      const float2 t = __bfloat1622float2(h[k]);  // .x is the element at the lower address
      f[2 * k] = t.x;
      f[2 * k + 1] = t.y;
    }
  }
  static __device__ __forceinline__ float4 pack(const float* f) {
    __nv_bfloat162 h[4];
#pragma unroll
    for (int k = 0; k < 4; ++k) h[k] = __floats2bfloat162_rn(f[2 * k], f[2 * k + 1]);
    float4 bits;
    memcpy(&bits, h, sizeof(bits));
    return bits;
  }
};
static_assert(Pack<float>::kWidth * sizeof(float) == sizeof(float4), "a float pack is 16 bytes");
static_assert(Pack<__nv_bfloat16>::kWidth * sizeof(__nv_bfloat16) == sizeof(float4), "a bf16 pack is 16 bytes");

// p must be 16-byte aligned (the launchers check).
template <class T>
__device__ __forceinline__ float4 load_pack(const T* p) {
  return *reinterpret_cast<const float4*>(p);
}
template <class T>
__device__ __forceinline__ void store_pack(T* p, float4 bits) {
  *reinterpret_cast<float4*>(p) = bits;
}

// The register path holds up to kMaxPacks packs of a row per lane.
constexpr int kMaxPacks = 8;

bool aligned16(const void* p) {
  return reinterpret_cast<std::uintptr_t>(p) % 16 == 0;
}

// Packs per lane for the register path: the smallest instantiated count (1, 2, 3, 4, 6, 8) that
// holds a row of C elements, or 0 when the scalar kernels must run (C not a multiple of the pack
// width, C too large, or a pointer not 16-byte aligned; null pointers count as aligned).
template <class T>
int packs_per_lane(int C, std::initializer_list<const void*> pointers) {
  constexpr int kWidth = Pack<T>::kWidth;
  if (C % kWidth != 0) return 0;
  for (const void* p : pointers)
    if (!aligned16(p)) return 0;
  const int needed = ceil_div(C / kWidth, kWarp);
  for (const int packs : {1, 2, 3, 4, 6, kMaxPacks})
    if (needed <= packs) return packs;
  return 0;
}

// ---------------------------------------------------------------------------------------------
// Forward. With b null: x = a (layernorm_forward; residual_out unused). With b: x = a + b rounded
// to T, written to residual_out and normalised (residual_layernorm_forward). Every element is
// read, and residual_out written, by one thread: residual_out may be a or b.

// Register path: lane l holds packs l, l + 32, ... of the row (kPacks of them, the last ones
// possibly past the row's end: skipped).
template <class T, int kPacks>
__global__ void __launch_bounds__(kBlock)
    layernorm_forward_packed_kernel(T* residual_out, T* out, float* mean, float* rstd, const T* a, const T* b,
                                    const T* w, const T* bias, int N, int C) {
  constexpr int kWidth = Pack<T>::kWidth;
  const int n = blockIdx.x * kRowsPerBlock + threadIdx.x / kWarp, lane = threadIdx.x % kWarp;
  if (n >= N) return;  // the whole warp leaves together
  const int packs = C / kWidth;
  const size_t row = static_cast<size_t>(n) * C;
  float x[kPacks][kWidth];
  float sum = 0.0f;
#pragma unroll
  for (int i = 0; i < kPacks; ++i) {
    const int j = i * kWarp + lane;
    if (j >= packs) continue;
    const size_t at = row + static_cast<size_t>(j) * kWidth;
    float4 bits = load_pack(a + at);
    if (b != nullptr) {
      float y[kWidth];
      Pack<T>::unpack(bits, x[i]);
      Pack<T>::unpack(load_pack(b + at), y);
#pragma unroll
      for (int k = 0; k < kWidth; ++k) y[k] += x[i][k];
      bits = Pack<T>::pack(y);  // the residual rounded to T once; its stored value is normalised
      store_pack(residual_out + at, bits);
    }
    Pack<T>::unpack(bits, x[i]);
#pragma unroll
    for (int k = 0; k < kWidth; ++k) sum += x[i][k];
  }
  const float m = warp_sum(sum) / static_cast<float>(C);
  // Two passes (mean, then squared deviations) as the reference does: no cancellation.
  float var = 0.0f;
#pragma unroll
  for (int i = 0; i < kPacks; ++i) {
    if (i * kWarp + lane >= packs) continue;
#pragma unroll
    for (int k = 0; k < kWidth; ++k) {
      const float d = x[i][k] - m;
      var += d * d;
    }
  }
  const float s = 1.0f / sqrtf(warp_sum(var) / static_cast<float>(C) + kLayerNormEps);
#pragma unroll
  for (int i = 0; i < kPacks; ++i) {
    const int j = i * kWarp + lane;
    if (j >= packs) continue;
    const int c = j * kWidth;
    float wf[kWidth], bf[kWidth], o[kWidth];
    Pack<T>::unpack(load_pack(w + c), wf);
    Pack<T>::unpack(load_pack(bias + c), bf);
#pragma unroll
    for (int k = 0; k < kWidth; ++k) o[k] = (x[i][k] - m) * s * wf[k] + bf[k];
    store_pack(out + row + c, Pack<T>::pack(o));
  }
  if (lane == 0) {
    mean[n] = m;
    rstd[n] = s;
  }
}

// Scalar path, any C and alignment: three passes over the row in memory (the first writes the
// residual, which the same thread reads back in the later passes).
template <class T>
__global__ void __launch_bounds__(kBlock)
    layernorm_forward_scalar_kernel(T* residual_out, T* out, float* mean, float* rstd, const T* a, const T* b,
                                    const T* w, const T* bias, int N, int C) {
  const int n = blockIdx.x * kRowsPerBlock + threadIdx.x / kWarp, lane = threadIdx.x % kWarp;
  if (n >= N) return;  // the whole warp leaves together
  const size_t row = static_cast<size_t>(n) * C;
  const T* x = (b != nullptr ? residual_out : a) + row;
  float sum = 0.0f;
  for (int c = lane; c < C; c += kWarp) {
    if (b != nullptr) residual_out[row + c] = from_f<T>(to_f(a[row + c]) + to_f(b[row + c]));
    sum += to_f(x[c]);
  }
  const float m = warp_sum(sum) / static_cast<float>(C);
  float var = 0.0f;
  for (int c = lane; c < C; c += kWarp) {
    const float d = to_f(x[c]) - m;
    var += d * d;
  }
  const float s = 1.0f / sqrtf(warp_sum(var) / static_cast<float>(C) + kLayerNormEps);
  T* o = out + row;
  for (int c = lane; c < C; c += kWarp) o[c] = from_f<T>((to_f(x[c]) - m) * s * to_f(w[c]) + to_f(bias[c]));
  if (lane == 0) {
    mean[n] = m;
    rstd[n] = s;
  }
}

template <class T, int kPacks>
void launch_forward_packed(T* residual_out, T* out, float* mean, float* rstd, const T* a, const T* b, const T* w,
                           const T* bias, int N, int C, cudaStream_t stream) {
  layernorm_forward_packed_kernel<T, kPacks>
      <<<ceil_div(N, kRowsPerBlock), kBlock, 0, stream>>>(residual_out, out, mean, rstd, a, b, w, bias, N, C);
  COMMSCOPE_CUDA_LAUNCH_CHECK("layernorm_forward_packed_kernel");
}

// layernorm_forward (b null) and residual_layernorm_forward.
template <class T>
void forward(T* residual_out, T* out, float* mean, float* rstd, const T* a, const T* b, const T* w, const T* bias,
             int N, int C, cudaStream_t stream) {
  if (N <= 0 || C <= 0) return;
  switch (packs_per_lane<T>(C, {residual_out, out, a, b, w, bias})) {
    case 1:
      return launch_forward_packed<T, 1>(residual_out, out, mean, rstd, a, b, w, bias, N, C, stream);
    case 2:
      return launch_forward_packed<T, 2>(residual_out, out, mean, rstd, a, b, w, bias, N, C, stream);
    case 3:
      return launch_forward_packed<T, 3>(residual_out, out, mean, rstd, a, b, w, bias, N, C, stream);
    case 4:
      return launch_forward_packed<T, 4>(residual_out, out, mean, rstd, a, b, w, bias, N, C, stream);
    case 6:
      return launch_forward_packed<T, 6>(residual_out, out, mean, rstd, a, b, w, bias, N, C, stream);
    case kMaxPacks:
      return launch_forward_packed<T, kMaxPacks>(residual_out, out, mean, rstd, a, b, w, bias, N, C, stream);
    default:
      layernorm_forward_scalar_kernel<T>
          <<<ceil_div(N, kRowsPerBlock), kBlock, 0, stream>>>(residual_out, out, mean, rstd, a, b, w, bias, N, C);
      COMMSCOPE_CUDA_LAUNCH_CHECK("layernorm_forward_scalar_kernel");
  }
}

// ---------------------------------------------------------------------------------------------
// Backward: dinp += rstd * (dnorm - mean(dnorm) - norm * mean(dnorm * norm)), dnorm = dout * w,
// norm = (inp - mean) * rstd; dw += sum_n dout * norm, db += sum_n dout.
//
// Block k owns rows [k * rows_per_block, min(N, (k + 1) * rows_per_block)) (possibly none) and
// writes partial[k, 0, c] = sum of dout * norm and partial[k, 1, c] = sum of dout over its rows, for
// every c < C (zeros for no rows).

// Register path: warp w of the block takes the block's rows w, w + 8, ...; its lanes hold the
// row's packs as in the forward and their channels' dw/db sums over the warp's rows.
template <class T, int kPacks>
__global__ void __launch_bounds__(kBlock)
    layernorm_backward_packed_kernel(T* dinp, float* partial, const T* dout, const T* inp, const T* w,
                                     const float* mean, const float* rstd, int N, int C, int rows_per_block) {
  constexpr int kWidth = Pack<T>::kWidth;
  constexpr int kRowCapacity = kPacks * kWarp * kWidth;
  __shared__ float block_sums[2][kRowCapacity];  // [dw, db][c]
  const int warp = threadIdx.x / kWarp, lane = threadIdx.x % kWarp;
  const int packs = C / kWidth;
  const int first = blockIdx.x * rows_per_block, last = min(N, first + rows_per_block);
  float dw_sum[kPacks][kWidth], db_sum[kPacks][kWidth];
#pragma unroll
  for (int i = 0; i < kPacks; ++i)
#pragma unroll
    for (int k = 0; k < kWidth; ++k) dw_sum[i][k] = db_sum[i][k] = 0.0f;

  for (int n = first + warp; n < last; n += kRowsPerBlock) {  // warp-uniform: shuffles below are safe
    const size_t row = static_cast<size_t>(n) * C;
    const float m = mean[n], s = rstd[n];
    float4 x_bits[kPacks], dy_bits[kPacks], dx_bits[kPacks];
    float sum_dnorm = 0.0f, sum_dnorm_norm = 0.0f;
#pragma unroll
    for (int i = 0; i < kPacks; ++i) {
      const int j = i * kWarp + lane;
      if (j >= packs) continue;
      const size_t at = row + static_cast<size_t>(j) * kWidth;
      x_bits[i] = load_pack(inp + at);
      dy_bits[i] = load_pack(dout + at);
      dx_bits[i] = load_pack(dinp + at);  // early, so that its latency overlaps the reductions
      float x[kWidth], dy[kWidth], wf[kWidth];
      Pack<T>::unpack(x_bits[i], x);
      Pack<T>::unpack(dy_bits[i], dy);
      Pack<T>::unpack(load_pack(w + j * kWidth), wf);
#pragma unroll
      for (int k = 0; k < kWidth; ++k) {
        const float norm = (x[k] - m) * s;
        const float dnorm = dy[k] * wf[k];
        sum_dnorm += dnorm;
        sum_dnorm_norm += dnorm * norm;
        dw_sum[i][k] += dy[k] * norm;
        db_sum[i][k] += dy[k];
      }
    }
    const float mean_dnorm = warp_sum(sum_dnorm) / static_cast<float>(C);
    const float mean_dnorm_norm = warp_sum(sum_dnorm_norm) / static_cast<float>(C);
#pragma unroll
    for (int i = 0; i < kPacks; ++i) {
      const int j = i * kWarp + lane;
      if (j >= packs) continue;
      float x[kWidth], dy[kWidth], wf[kWidth], dx[kWidth];
      Pack<T>::unpack(x_bits[i], x);
      Pack<T>::unpack(dy_bits[i], dy);
      Pack<T>::unpack(dx_bits[i], dx);
      Pack<T>::unpack(load_pack(w + j * kWidth), wf);
#pragma unroll
      for (int k = 0; k < kWidth; ++k) dx[k] += s * (dy[k] * wf[k] - mean_dnorm - (x[k] - m) * s * mean_dnorm_norm);
      store_pack(dinp + row + static_cast<size_t>(j) * kWidth, Pack<T>::pack(dx));
    }
  }

  // The warps' sums into block_sums in order of warp (warp 0 stores, the others add), one warp at a
  // time; each lane touches only its own channels.
  for (int turn = 0; turn < kRowsPerBlock; ++turn) {
    if (warp == turn) {
#pragma unroll
      for (int i = 0; i < kPacks; ++i) {
        const int j = i * kWarp + lane;
        if (j >= packs) continue;
#pragma unroll
        for (int k = 0; k < kWidth; ++k) {
          const int c = j * kWidth + k;
          block_sums[0][c] = turn == 0 ? dw_sum[i][k] : block_sums[0][c] + dw_sum[i][k];
          block_sums[1][c] = turn == 0 ? db_sum[i][k] : block_sums[1][c] + db_sum[i][k];
        }
      }
    }
    __syncthreads();  // every thread of the block reaches it kRowsPerBlock times
  }
  float* p = partial + static_cast<size_t>(blockIdx.x) * 2 * C;
  for (int c = threadIdx.x; c < C; c += kBlock) {
    p[c] = block_sums[0][c];
    p[C + c] = block_sums[1][c];
  }
}

// Scalar path, any C and alignment: dinp as the register path but reading the row from memory in
// each pass; then each thread sums its channels over the block's rows in order (coalesced reads of
// rows the block has just read).
template <class T>
__global__ void __launch_bounds__(kBlock)
    layernorm_backward_scalar_kernel(T* dinp, float* partial, const T* dout, const T* inp, const T* w,
                                     const float* mean, const float* rstd, int N, int C, int rows_per_block) {
  const int warp = threadIdx.x / kWarp, lane = threadIdx.x % kWarp;
  const int first = blockIdx.x * rows_per_block, last = min(N, first + rows_per_block);
  for (int n = first + warp; n < last; n += kRowsPerBlock) {  // warp-uniform
    const size_t row = static_cast<size_t>(n) * C;
    const T* x = inp + row;
    const T* dy = dout + row;
    const float m = mean[n], s = rstd[n];
    float sum_dnorm = 0.0f, sum_dnorm_norm = 0.0f;
    for (int c = lane; c < C; c += kWarp) {
      const float dnorm = to_f(dy[c]) * to_f(w[c]);
      sum_dnorm += dnorm;
      sum_dnorm_norm += dnorm * (to_f(x[c]) - m) * s;
    }
    const float mean_dnorm = warp_sum(sum_dnorm) / static_cast<float>(C);
    const float mean_dnorm_norm = warp_sum(sum_dnorm_norm) / static_cast<float>(C);
    T* dx = dinp + row;
    for (int c = lane; c < C; c += kWarp)
      dx[c] =
          from_f<T>(to_f(dx[c]) + s * (to_f(dy[c]) * to_f(w[c]) - mean_dnorm - (to_f(x[c]) - m) * s * mean_dnorm_norm));
  }
  float* p = partial + static_cast<size_t>(blockIdx.x) * 2 * C;
  for (int c = threadIdx.x; c < C; c += kBlock) {
    float dw = 0.0f, db = 0.0f;
    for (int n = first; n < last; ++n) {
      const size_t i = static_cast<size_t>(n) * C + c;
      const float g = to_f(dout[i]);
      dw += g * (to_f(inp[i]) - mean[n]) * rstd[n];
      db += g;
    }
    p[c] = dw;
    p[C + c] = db;
  }
}

// dw[c] += sum_k partial[k, 0, c], db[c] += sum_k partial[k, 1, c] over the blocks k < parts: lane y
// of column x sums the parts y, y + 16, ... in order, then lane 0 adds the 16 lane sums in order.
template <class T>
__global__ void __launch_bounds__(kFinishColumns* kFinishLanes)
    layernorm_param_finish_kernel(T* dw, T* db, const float* partial, int parts, int C) {
  __shared__ float lane_sums[2][kFinishLanes][kFinishColumns];
  const int c = blockIdx.x * kFinishColumns + threadIdx.x;
  float sw = 0.0f, sb = 0.0f;
  if (c < C) {
    // Unrolled so that several loads are in flight together: the sum is latency-bound.
#pragma unroll 4
    for (int k = threadIdx.y; k < parts; k += kFinishLanes) {
      const float* p = partial + static_cast<size_t>(k) * 2 * C;
      sw += p[c];
      sb += p[C + c];
    }
  }
  lane_sums[0][threadIdx.y][threadIdx.x] = sw;
  lane_sums[1][threadIdx.y][threadIdx.x] = sb;
  __syncthreads();
  if (threadIdx.y != 0 || c >= C) return;
  for (int l = 1; l < kFinishLanes; ++l) {
    sw += lane_sums[0][l][threadIdx.x];
    sb += lane_sums[1][l][threadIdx.x];
  }
  dw[c] = from_f<T>(to_f(dw[c]) + sw);
  db[c] = from_f<T>(to_f(db[c]) + sb);
}


template <class T, int kPacks>
void launch_backward_packed(int blocks, T* dinp, float* partial, const T* dout, const T* inp, const T* w,
                            const float* mean, const float* rstd, int N, int C, int rows_per_block,
                            cudaStream_t stream) {
  layernorm_backward_packed_kernel<T, kPacks>
      <<<blocks, kBlock, 0, stream>>>(dinp, partial, dout, inp, w, mean, rstd, N, C, rows_per_block);
  COMMSCOPE_CUDA_LAUNCH_CHECK("layernorm_backward_packed_kernel");
}

}  // namespace

template <class T>
void layernorm_forward(T* out, float* mean, float* rstd, const T* inp, const T* w, const T* b, int N, int C,
                       cudaStream_t stream) {
  forward<T>(nullptr, out, mean, rstd, inp, nullptr, w, b, N, C, stream);
}

template <class T>
void residual_layernorm_forward(T* residual_out, T* out, float* mean, float* rstd, const T* a, const T* b, const T* w,
                                const T* bias, int N, int C, cudaStream_t stream) {
  forward<T>(residual_out, out, mean, rstd, a, b, w, bias, N, C, stream);
}

template <class T>
void layernorm_backward(T* dinp, T* dw, T* db, const T* dout, const T* inp, const T* w, const float* mean,
                        const float* rstd, int N, int C, cudaStream_t stream) {
  if (N <= 0 || C <= 0) return;
  const int blocks = std::min(kBackwardMaxBlocks, ceil_div(N, kRowsPerBlock));
  const int rows_per_block = ceil_div(N, blocks);
  StreamScratch partial(sizeof(float) * 2 * static_cast<size_t>(blocks) * static_cast<size_t>(C), stream);
  float* part = partial.as<float>();
  switch (packs_per_lane<T>(C, {dinp, dout, inp, w})) {
    case 1:
      launch_backward_packed<T, 1>(blocks, dinp, part, dout, inp, w, mean, rstd, N, C, rows_per_block, stream);
      break;
    case 2:
      launch_backward_packed<T, 2>(blocks, dinp, part, dout, inp, w, mean, rstd, N, C, rows_per_block, stream);
      break;
    case 3:
      launch_backward_packed<T, 3>(blocks, dinp, part, dout, inp, w, mean, rstd, N, C, rows_per_block, stream);
      break;
    case 4:
      launch_backward_packed<T, 4>(blocks, dinp, part, dout, inp, w, mean, rstd, N, C, rows_per_block, stream);
      break;
    case 6:
      launch_backward_packed<T, 6>(blocks, dinp, part, dout, inp, w, mean, rstd, N, C, rows_per_block, stream);
      break;
    case kMaxPacks:
      launch_backward_packed<T, kMaxPacks>(blocks, dinp, part, dout, inp, w, mean, rstd, N, C, rows_per_block, stream);
      break;
    default:
      layernorm_backward_scalar_kernel<T>
          <<<blocks, kBlock, 0, stream>>>(dinp, part, dout, inp, w, mean, rstd, N, C, rows_per_block);
      COMMSCOPE_CUDA_LAUNCH_CHECK("layernorm_backward_scalar_kernel");
  }
  layernorm_param_finish_kernel<T>
      <<<ceil_div(C, kFinishColumns), dim3(kFinishColumns, kFinishLanes), 0, stream>>>(dw, db, part, blocks, C);
  COMMSCOPE_CUDA_LAUNCH_CHECK("layernorm_param_finish_kernel");
}

#define COMMSCOPE_LAYERNORM_INSTANTIATE(T)                                                                            \
  template void layernorm_forward<T>(T*, float*, float*, const T*, const T*, const T*, int, int, cudaStream_t);       \
  template void residual_layernorm_forward<T>(T*, T*, float*, float*, const T*, const T*, const T*, const T*, int,    \
                                              int, cudaStream_t);                                                     \
  template void layernorm_backward<T>(T*, T*, T*, const T*, const T*, const T*, const float*, const float*, int, int, \
                                      cudaStream_t);

COMMSCOPE_LAYERNORM_INSTANTIATE(float)
COMMSCOPE_LAYERNORM_INSTANTIATE(__nv_bfloat16)

#undef COMMSCOPE_LAYERNORM_INSTANTIATE

}  // namespace commscope::trainer::cuda_kernels
