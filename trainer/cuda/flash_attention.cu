// FlashAttention-2 style causal attention for head size 64; see flash_attention.hpp for the
// contract.
//
// Tiles: a block of 4 warps owns 64 rows (queries in the forward and dq kernels, keys in the dk/dv
// kernel); each warp owns 16 of them and keeps their fragments in registers. The other operand
// streams through shared memory in tiles of 64 positions x 64 channels, double-buffered with
// cp.async (the next tile loads while this one is used). Shared rows are padded to 72 elements
// (144 bytes): the 8 row addresses of an ldmatrix then fall in 8 different 16-byte bank groups.
//
// mma.sync.m16n8k16 (bf16 in, f32 accumulate) fragments, lane = 4 g + t (g = lane / 4, t = lane % 4):
//   A (16x16, row-major): a0 = A[g][2t, 2t+1], a1 = A[g+8][2t, 2t+1], a2 = A[g][2t+8, 2t+9],
//                         a3 = A[g+8][2t+8, 2t+9]
//   B (16x8):             b0 = B[2t, 2t+1][g], b1 = B[2t+8, 2t+9][g]
//   C/D (16x8, f32):      c0, c1 = C[g][2t, 2t+1], c2, c3 = C[g+8][2t, 2t+1]
// (the lower-indexed element of a pair in the low 16 bits). An accumulator of 16 rows x 16
// columns (two n-tiles j = 2kk, 2kk+1) therefore is, packed to bf16 pairs, the A fragment of
// columns 16kk..16kk+15: a0 = c[2kk][0,1], a1 = c[2kk][2,3], a2 = c[2kk+1][0,1], a3 = c[2kk+1][2,3].
// That is how P (and dS) go from one MMA's output to the next one's input without shared memory.
#include "flash_attention.hpp"

#include <climits>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>

#include "cuda_check.hpp"

namespace commscope::trainer::cuda_kernels {

namespace {

using bf16 = __nv_bfloat16;
using std::size_t;

constexpr int kHs = 64;    // head size, the only one supported
constexpr int kTile = 64;  // positions per tile (rows of a block, rows of a streamed tile)
constexpr int kWarps = 4;  // 16 rows each
constexpr int kThreads = kWarps * 32;
constexpr int kLd = kHs + 8;  // shared row stride in elements (144 bytes, a multiple of 16)
constexpr float kLog2e = 1.4426950408889634f;
constexpr float kLn2 = 0.6931471805599453f;

static_assert(kTile == kWarps * 16, "a warp owns 16 rows of a tile");
static_assert(kTile * kHs / 8 % kThreads == 0, "a tile is a whole number of 16-byte chunks per thread");
static_assert(kLd * sizeof(bf16) % 16 == 0, "ldmatrix and cp.async need 16-byte aligned shared rows");

using Tile = bf16[kTile][kLd];  // [64 positions][64 channels + 8 padding]

// --- PTX wrappers ---------------------------------------------------------------------------

__device__ __forceinline__ unsigned smem_addr(const void* p) {
  return static_cast<unsigned>(__cvta_generic_to_shared(p));
}

// 16 bytes global -> shared, asynchronously; valid false writes 16 zero bytes and reads nothing
// (src must still be a valid address).
__device__ __forceinline__ void cp_async16(void* dst, const void* src, bool valid) {
  const int bytes = valid ? 16 : 0;
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(smem_addr(dst)), "l"(src), "r"(bytes)
               : "memory");
}
// 4 bytes global -> shared; valid false writes 0.
__device__ __forceinline__ void cp_async4(void* dst, const void* src, bool valid) {
  const int bytes = valid ? 4 : 0;
  asm volatile("cp.async.ca.shared.global [%0], [%1], 4, %2;\n" ::"r"(smem_addr(dst)), "l"(src), "r"(bytes) : "memory");
}
__device__ __forceinline__ void cp_async_commit() {
  asm volatile("cp.async.commit_group;\n" ::: "memory");
}
// Wait until at most n of this thread's committed groups are still in flight.
template <int n>
__device__ __forceinline__ void cp_async_wait() {
  asm volatile("cp.async.wait_group %0;\n" ::"n"(n) : "memory");
}

__device__ __forceinline__ void ldmatrix_x4(unsigned r[4], const bf16* p) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(smem_addr(p))
               : "memory");
}
__device__ __forceinline__ void ldmatrix_x4_trans(unsigned r[4], const bf16* p) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0, %1, %2, %3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(smem_addr(p))
               : "memory");
}

// c += A b (16x8x16).
__device__ __forceinline__ void mma(float c[4], const unsigned a[4], unsigned b0, unsigned b1) {
  asm("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
      "{%0, %1, %2, %3};\n"
      : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}

__device__ __forceinline__ unsigned pack_bf16(float lo, float hi) {
  const __nv_bfloat162 v = __floats2bfloat162_rn(lo, hi);  // .x (lo) at the lower address
  return *reinterpret_cast<const unsigned*>(&v);
}

// --- fragments from a shared tile ----------------------------------------------------------------

// A fragment of rows r0..r0+15, columns k0..k0+15 of a row-major tile.
// ldmatrix matrix m = lane / 8 (its row addresses come from lanes 8m..8m+7): m = 0: rows r0..,
// cols k0..; 1: rows r0+8.., cols k0..; 2: rows r0.., cols k0+8..; 3: rows r0+8.., cols k0+8..
__device__ __forceinline__ void load_a(unsigned a[4], const Tile& s, int r0, int k0, int lane) {
  const int m = lane >> 3;
  ldmatrix_x4(a, &s[r0 + (m & 1) * 8 + (lane & 7)][k0 + (m >> 1) * 8]);
}

// B fragments of two n-tiles (n0..n0+7 and n0+8..n0+15), k0..k0+15, where the tile is stored
// [n][k] (B = tile^T: the keys of S = Q K^T). Out: b[0], b[1] for n-tile n0, b[2], b[3] for n0+8.
// Matrix m: rows n0 + (m >> 1) * 8.., cols k0 + (m & 1) * 8..; lane gets M[g][2t, 2t+1] =
// B[k0 + (m & 1) * 8 + 2t, +1][n0 + (m >> 1) * 8 + g].
__device__ __forceinline__ void load_b_nk(unsigned b[4], const Tile& s, int n0, int k0, int lane) {
  const int m = lane >> 3;
  ldmatrix_x4(b, &s[n0 + (m >> 1) * 8 + (lane & 7)][k0 + (m & 1) * 8]);
}

// The same two n-tiles where the tile is stored [k][n] (B = tile: V in O = P V). Transposed
// ldmatrix: matrix m: rows (k) k0 + (m & 1) * 8.., cols (n) n0 + (m >> 1) * 8..; lane gets
// M[2t, 2t+1][g] = B[k0 + (m & 1) * 8 + 2t, +1][n0 + (m >> 1) * 8 + g].
__device__ __forceinline__ void load_b_kn(unsigned b[4], const Tile& s, int k0, int n0, int lane) {
  const int m = lane >> 3;
  ldmatrix_x4_trans(b, &s[k0 + (m & 1) * 8 + (lane & 7)][n0 + (m >> 1) * 8]);
}

// acc[8][4] (16 rows x 64 columns) += A (16 x 64, a[4][4] over k) times the 64 x 64 B held in s,
// with B stored [n][k] (nk true) or [k][n].
template <bool nk>
__device__ __forceinline__ void mma_16x64x64(float acc[8][4], const unsigned a[4][4], const Tile& s, int lane) {
#pragma unroll
  for (int kk = 0; kk < 4; ++kk)
#pragma unroll
    for (int np = 0; np < 4; ++np) {
      unsigned b[4];
      if (nk)
        load_b_nk(b, s, np * 16, kk * 16, lane);
      else
        load_b_kn(b, s, kk * 16, np * 16, lane);
      mma(acc[2 * np], a[kk], b[0], b[1]);
      mma(acc[2 * np + 1], a[kk], b[2], b[3]);
    }
}

// The A fragments (over k = 16 kk ..) of a 16 x 64 float accumulator, rounded to bf16.
__device__ __forceinline__ void acc_to_a(unsigned a[4][4], const float c[8][4]) {
#pragma unroll
  for (int kk = 0; kk < 4; ++kk) {
    a[kk][0] = pack_bf16(c[2 * kk][0], c[2 * kk][1]);
    a[kk][1] = pack_bf16(c[2 * kk][2], c[2 * kk][3]);
    a[kk][2] = pack_bf16(c[2 * kk + 1][0], c[2 * kk + 1][1]);
    a[kk][3] = pack_bf16(c[2 * kk + 1][2], c[2 * kk + 1][3]);
  }
}

__device__ __forceinline__ void zero(float c[8][4]) {
#pragma unroll
  for (int j = 0; j < 8; ++j)
#pragma unroll
    for (int e = 0; e < 4; ++e) c[j][e] = 0.0f;
}

// --- global <-> shared -------------------------------------------------------------------------------

// Starts loading positions p0..p0+63 of one head's 64 channels into s: src points at position 0,
// channel 0 of the head, rows `stride` elements apart. Positions >= Tn are zero-filled (a 0 * NaN
// from stale shared memory would poison the MMAs). src + stride * p must be 16-byte aligned.
__device__ __forceinline__ void load_tile(Tile& s, const bf16* src, size_t stride, int p0, int Tn, int tid) {
#pragma unroll
  for (int i = 0; i < kTile * kHs / 8 / kThreads; ++i) {
    const int chunk = tid + i * kThreads;
    const int r = chunk >> 3, col = (chunk & 7) * 8;
    const bool valid = p0 + r < Tn;
    cp_async16(&s[r][col], src + static_cast<size_t>(valid ? p0 + r : p0) * stride + col, valid);
  }
}

// Starts loading v[p0..p0+63] (floats, v[Tn - 1] the last) into s; zeros past Tn.
__device__ __forceinline__ void load_row_stats(float* s, const float* v, int p0, int Tn, int tid) {
  if (tid < kTile) {
    const bool valid = p0 + tid < Tn;
    cp_async4(&s[tid], v + (valid ? p0 + tid : p0), valid);
  }
}

// Sum over the 4 lanes of a quad (the lanes holding one accumulator row).
__device__ __forceinline__ float quad_sum(float x) {
  x += __shfl_xor_sync(0xffffffffu, x, 1);
  return x + __shfl_xor_sync(0xffffffffu, x, 2);
}
__device__ __forceinline__ float quad_max(float x) {
  x = fmaxf(x, __shfl_xor_sync(0xffffffffu, x, 1));
  return fmaxf(x, __shfl_xor_sync(0xffffffffu, x, 2));
}

// Stores a warp's 16 x 64 accumulator, times mul, as bf16 to rows row0.., row0+15 (rows >= Tn
// skipped) of dst (position 0, channel 0 of the head; rows `stride` apart).
__device__ __forceinline__ void store_rows(bf16* dst, size_t stride, const float c[8][4], float mul, int row0, int Tn,
                                           int lane) {
  const int g = lane >> 2, t = lane & 3;
#pragma unroll
  for (int half = 0; half < 2; ++half) {
    const int row = row0 + g + 8 * half;
    if (row >= Tn) continue;
    bf16* p = dst + static_cast<size_t>(row) * stride + 2 * t;
#pragma unroll
    for (int j = 0; j < 8; ++j)
      *reinterpret_cast<__nv_bfloat162*>(p + 8 * j) =
          __floats2bfloat162_rn(c[j][2 * half] * mul, c[j][2 * half + 1] * mul);
  }
}

// --- forward ---------------------------------------------------------------------------------------

// Grid (B*NH, query tiles), the last (longest) query tiles first. Block: 64 queries; warp w the
// 16 queries q0 + 16w ..; key tiles 0 .. the diagonal. scale_log2 = log2(e) / sqrt(hs): scores
// are kept in base 2 (exp2).
__global__ void __launch_bounds__(kThreads)
    flash_forward_kernel(bf16* out, float* lse, const bf16* qkv, int Tn, int C, int NH, float scale_log2) {
  __shared__ __align__(16) Tile sq;
  __shared__ __align__(16) Tile sk[2];
  __shared__ __align__(16) Tile sv[2];
  const int bh = blockIdx.x, b = bh / NH, h = bh % NH;
  const int qt = static_cast<int>(gridDim.y) - 1 - static_cast<int>(blockIdx.y);
  const int q0 = qt * kTile;
  const int tid = threadIdx.x, warp = tid >> 5, lane = tid & 31, g = lane >> 2, t = lane & 3;
  const size_t stride = 3 * static_cast<size_t>(C);
  const bf16* q_src = qkv + static_cast<size_t>(b) * Tn * stride + static_cast<size_t>(h) * kHs;
  const bf16* k_src = q_src + C;
  const bf16* v_src = q_src + 2 * static_cast<size_t>(C);

  load_tile(sq, q_src, stride, q0, Tn, tid);
  load_tile(sk[0], k_src, stride, 0, Tn, tid);
  load_tile(sv[0], v_src, stride, 0, Tn, tid);
  cp_async_commit();

  const int row_lo = q0 + warp * 16 + g;  // this lane's rows: row_lo (c[][0,1]) and row_lo + 8 (c[][2,3])
  unsigned qf[4][4];
  float o[8][4];
  zero(o);
  float row_max[2] = {-INFINITY, -INFINITY};
  float row_sum[2] = {0.0f, 0.0f};  // this lane's part; the quad's sum at the end

  const int n_kt = qt + 1;
  for (int kt = 0; kt < n_kt; ++kt) {
    const int buf = kt & 1;
    if (kt + 1 < n_kt) {
      // buf ^ 1 was last read in iteration kt - 1, which ended with __syncthreads.
      load_tile(sk[buf ^ 1], k_src, stride, (kt + 1) * kTile, Tn, tid);
      load_tile(sv[buf ^ 1], v_src, stride, (kt + 1) * kTile, Tn, tid);
      cp_async_commit();
      cp_async_wait<1>();
    } else {
      cp_async_wait<0>();
    }
    __syncthreads();
    if (kt == 0)
#pragma unroll
      for (int kk = 0; kk < 4; ++kk) load_a(qf[kk], sq, warp * 16, kk * 16, lane);

    // S = Q K^T, 16 x 64 per warp.
    float s[8][4];
    zero(s);
    mma_16x64x64<true>(s, qf, sk[buf], lane);

    // Base-2 scaled scores; on the diagonal tile mask t2 > t (and t2 >= Tn). Tiles below the
    // diagonal hold only keys < q0 <= every row and < Tn.
    const bool diagonal = kt == qt;
    float tile_max[2] = {-INFINITY, -INFINITY};
#pragma unroll
    for (int j = 0; j < 8; ++j)
#pragma unroll
      for (int e = 0; e < 4; ++e) {
        const int key = kt * kTile + j * 8 + 2 * t + (e & 1);
        const int row = row_lo + (e >> 1) * 8;
        float x = s[j][e] * scale_log2;
        if (diagonal && (key > row || key >= Tn)) x = -INFINITY;
        s[j][e] = x;
        tile_max[e >> 1] = fmaxf(tile_max[e >> 1], x);
      }
    float ref[2], alpha[2];
#pragma unroll
    for (int r = 0; r < 2; ++r) {
      const float m_new = fmaxf(row_max[r], quad_max(tile_max[r]));
      // Key 0 is in every row's first tile, so m_new is finite; the guard keeps a fully masked
      // row at 0 instead of NaN (exp2(-inf - -inf)) all the same.
      ref[r] = m_new == -INFINITY ? 0.0f : m_new;
      alpha[r] = exp2f(row_max[r] - ref[r]);  // 0 on the first tile (row_max -inf)
      row_max[r] = m_new;
      row_sum[r] *= alpha[r];
    }
#pragma unroll
    for (int j = 0; j < 8; ++j)
#pragma unroll
      for (int e = 0; e < 4; ++e) {
        const float p = exp2f(s[j][e] - ref[e >> 1]);
        s[j][e] = p;
        row_sum[e >> 1] += p;
        o[j][e] *= alpha[e >> 1];
      }

    // O += P V.
    unsigned pf[4][4];
    acc_to_a(pf, s);
    mma_16x64x64<false>(o, pf, sv[buf], lane);
    __syncthreads();  // everyone is done with sk[buf], sv[buf] before they are refilled
  }

  float inv[2];
#pragma unroll
  for (int r = 0; r < 2; ++r) {
    row_sum[r] = quad_sum(row_sum[r]);
    inv[r] = 1.0f / row_sum[r];
  }
  const int row0 = q0 + warp * 16;
#pragma unroll
  for (int j = 0; j < 8; ++j)
#pragma unroll
    for (int e = 0; e < 4; ++e) o[j][e] *= inv[e >> 1];
  store_rows(out + static_cast<size_t>(b) * Tn * C + static_cast<size_t>(h) * kHs, static_cast<size_t>(C), o, 1.0f,
             row0, Tn, lane);
  if (t == 0) {
    float* l = lse + static_cast<size_t>(bh) * Tn;
#pragma unroll
    for (int r = 0; r < 2; ++r) {
      const int row = row_lo + 8 * r;
      if (row < Tn) l[row] = (row_max[r] + log2f(row_sum[r])) * kLn2;
    }
  }
}

// --- backward --------------------------------------------------------------------------------------

// d[bh*Tn + t] = sum_i dout[b,t,h*64+i] out[b,t,h*64+i], one warp per (b, h, t).
__global__ void flash_backward_dot_kernel(float* d, const bf16* dout, const bf16* out, int Tn, int C, int NH,
                                          size_t rows) {
  const size_t row = static_cast<size_t>(blockIdx.x) * (blockDim.x / 32) + threadIdx.x / 32;
  if (row >= rows) return;
  const int lane = threadIdx.x & 31;
  const size_t bh = row / static_cast<size_t>(Tn);
  const int tpos = static_cast<int>(row % static_cast<size_t>(Tn));
  const size_t b = bh / static_cast<size_t>(NH), h = bh % static_cast<size_t>(NH);
  const size_t at = (b * Tn + tpos) * static_cast<size_t>(C) + h * kHs + 2 * lane;
  const float2 x = __bfloat1622float2(*reinterpret_cast<const __nv_bfloat162*>(dout + at));
  const float2 y = __bfloat1622float2(*reinterpret_cast<const __nv_bfloat162*>(out + at));
  float s = x.x * y.x + x.y * y.y;
#pragma unroll
  for (int off = 16; off > 0; off >>= 1) s += __shfl_xor_sync(0xffffffffu, s, off);
  if (lane == 0) d[row] = s;
}

// dk, dv. Grid (B*NH, key tiles), key tile 0 (the most query tiles) first. Block: 64 keys; warp w
// the keys k0 + 16w ..; query tiles from the diagonal to the last. Works on the transposes:
//   S^T = K Q^T, P^T = exp(S^T - lse[q]), dV += P^T dO, dP^T = V dO^T, dS^T = P^T (dP^T - D[q]),
//   dK += scale dS^T Q.
__global__ void __launch_bounds__(kThreads)
    flash_backward_dkdv_kernel(bf16* dqkv, const bf16* qkv, const bf16* dout, const float* lse, const float* dvec,
                               int Tn, int C, int NH, float scale, float scale_log2) {
  __shared__ __align__(16) Tile sq[2];
  __shared__ __align__(16) Tile sdo[2];
  __shared__ __align__(16) float slse[2][kTile];
  __shared__ __align__(16) float sd[2][kTile];
  const int bh = blockIdx.x, b = bh / NH, h = bh % NH;
  const int kt = blockIdx.y, k0 = kt * kTile;
  const int tid = threadIdx.x, warp = tid >> 5, lane = tid & 31, g = lane >> 2, t = lane & 3;
  const size_t stride = 3 * static_cast<size_t>(C);
  const size_t head = static_cast<size_t>(b) * Tn * stride + static_cast<size_t>(h) * kHs;
  const bf16* q_src = qkv + head;
  const bf16* k_src = q_src + C;
  const bf16* v_src = q_src + 2 * static_cast<size_t>(C);
  const bf16* do_src = dout + static_cast<size_t>(b) * Tn * C + static_cast<size_t>(h) * kHs;
  const float* lse_bh = lse + static_cast<size_t>(bh) * Tn;
  const float* d_bh = dvec + static_cast<size_t>(bh) * Tn;
  const int n_qt = (Tn + kTile - 1) / kTile;

  // This block's K and V go through buffers 1 into registers before the loop refills them.
  load_tile(sq[1], k_src, stride, k0, Tn, tid);
  load_tile(sdo[1], v_src, stride, k0, Tn, tid);
  load_tile(sq[0], q_src, stride, k0, Tn, tid);  // the diagonal query tile (qt == kt)
  load_tile(sdo[0], do_src, static_cast<size_t>(C), k0, Tn, tid);
  load_row_stats(slse[0], lse_bh, k0, Tn, tid);
  load_row_stats(sd[0], d_bh, k0, Tn, tid);
  cp_async_commit();
  cp_async_wait<0>();
  __syncthreads();
  unsigned kf[4][4], vf[4][4];
#pragma unroll
  for (int kk = 0; kk < 4; ++kk) {
    load_a(kf[kk], sq[1], warp * 16, kk * 16, lane);
    load_a(vf[kk], sdo[1], warp * 16, kk * 16, lane);
  }
  __syncthreads();  // buffers 1 are free

  const int key_lo = k0 + warp * 16 + g;  // this lane's keys: key_lo (c[][0,1]) and key_lo + 8
  float dk[8][4], dv[8][4];
  zero(dk);
  zero(dv);
  for (int qt = kt; qt < n_qt; ++qt) {
    const int buf = (qt - kt) & 1, q0 = qt * kTile;
    if (qt + 1 < n_qt) {
      const int next = q0 + kTile;
      load_tile(sq[buf ^ 1], q_src, stride, next, Tn, tid);
      load_tile(sdo[buf ^ 1], do_src, static_cast<size_t>(C), next, Tn, tid);
      load_row_stats(slse[buf ^ 1], lse_bh, next, Tn, tid);
      load_row_stats(sd[buf ^ 1], d_bh, next, Tn, tid);
      cp_async_commit();
      cp_async_wait<1>();
    } else {
      cp_async_wait<0>();
    }
    __syncthreads();

    // S^T = K Q^T (16 keys x 64 queries per warp), then P^T; 0 where q < key (diagonal tile
    // only) or q >= Tn.
    float p[8][4];
    zero(p);
    mma_16x64x64<true>(p, kf, sq[buf], lane);
    const bool diagonal = qt == kt;
#pragma unroll
    for (int j = 0; j < 8; ++j)
#pragma unroll
      for (int e = 0; e < 4; ++e) {
        const int col = j * 8 + 2 * t + (e & 1);
        const int q = q0 + col, key = key_lo + (e >> 1) * 8;
        const bool masked = q >= Tn || (diagonal && q < key);
        p[j][e] = masked ? 0.0f : exp2f(p[j][e] * scale_log2 - slse[buf][col] * kLog2e);
      }
    unsigned pf[4][4];
    acc_to_a(pf, p);
    // dV += P^T dO.
    mma_16x64x64<false>(dv, pf, sdo[buf], lane);
    // dP^T = V dO^T; dS^T = P^T (dP^T - D[q]).
    float ds[8][4];
    zero(ds);
    mma_16x64x64<true>(ds, vf, sdo[buf], lane);
#pragma unroll
    for (int j = 0; j < 8; ++j)
#pragma unroll
      for (int e = 0; e < 4; ++e) ds[j][e] = p[j][e] * (ds[j][e] - sd[buf][j * 8 + 2 * t + (e & 1)]);
    unsigned dsf[4][4];
    acc_to_a(dsf, ds);
    // dK += dS^T Q (times scale at the end).
    mma_16x64x64<false>(dk, dsf, sq[buf], lane);
    __syncthreads();
  }

  bf16* dk_dst = dqkv + head + C;
  bf16* dv_dst = dqkv + head + 2 * static_cast<size_t>(C);
  store_rows(dk_dst, stride, dk, scale, k0 + warp * 16, Tn, lane);
  store_rows(dv_dst, stride, dv, 1.0f, k0 + warp * 16, Tn, lane);
}

// dq. Grid (B*NH, query tiles), the last query tiles first. Block: 64 queries; warp w the 16
// queries q0 + 16w ..; key tiles 0 .. the diagonal:
//   S = Q K^T, P = exp(S - lse), dP = dO V^T, dS = P (dP - D), dQ += scale dS K.
__global__ void __launch_bounds__(kThreads)
    flash_backward_dq_kernel(bf16* dqkv, const bf16* qkv, const bf16* dout, const float* lse, const float* dvec, int Tn,
                             int C, int NH, float scale, float scale_log2) {
  __shared__ __align__(16) Tile sk[2];
  __shared__ __align__(16) Tile sv[2];
  const int bh = blockIdx.x, b = bh / NH, h = bh % NH;
  const int qt = static_cast<int>(gridDim.y) - 1 - static_cast<int>(blockIdx.y);
  const int q0 = qt * kTile;
  const int tid = threadIdx.x, warp = tid >> 5, lane = tid & 31, g = lane >> 2, t = lane & 3;
  const size_t stride = 3 * static_cast<size_t>(C);
  const size_t head = static_cast<size_t>(b) * Tn * stride + static_cast<size_t>(h) * kHs;
  const bf16* q_src = qkv + head;
  const bf16* k_src = q_src + C;
  const bf16* v_src = q_src + 2 * static_cast<size_t>(C);
  const bf16* do_src = dout + static_cast<size_t>(b) * Tn * C + static_cast<size_t>(h) * kHs;

  // This block's Q and dO go through buffers 1 into registers before the loop refills them.
  load_tile(sk[1], q_src, stride, q0, Tn, tid);
  load_tile(sv[1], do_src, static_cast<size_t>(C), q0, Tn, tid);
  load_tile(sk[0], k_src, stride, 0, Tn, tid);
  load_tile(sv[0], v_src, stride, 0, Tn, tid);
  cp_async_commit();
  cp_async_wait<0>();
  __syncthreads();
  unsigned qf[4][4], dof[4][4];
#pragma unroll
  for (int kk = 0; kk < 4; ++kk) {
    load_a(qf[kk], sk[1], warp * 16, kk * 16, lane);
    load_a(dof[kk], sv[1], warp * 16, kk * 16, lane);
  }
  __syncthreads();  // buffers 1 are free

  const int row_lo = q0 + warp * 16 + g;  // this lane's queries: row_lo and row_lo + 8
  float lse2[2], drow[2];
#pragma unroll
  for (int r = 0; r < 2; ++r) {
    const int row = row_lo + 8 * r;
    const bool valid = row < Tn;
    lse2[r] = valid ? lse[static_cast<size_t>(bh) * Tn + row] * kLog2e : 0.0f;
    drow[r] = valid ? dvec[static_cast<size_t>(bh) * Tn + row] : 0.0f;
  }
  float dq[8][4];
  zero(dq);
  const int n_kt = qt + 1;
  for (int kt = 0; kt < n_kt; ++kt) {
    const int buf = kt & 1;
    if (kt + 1 < n_kt) {
      load_tile(sk[buf ^ 1], k_src, stride, (kt + 1) * kTile, Tn, tid);
      load_tile(sv[buf ^ 1], v_src, stride, (kt + 1) * kTile, Tn, tid);
      cp_async_commit();
      cp_async_wait<1>();
    } else {
      cp_async_wait<0>();
    }
    __syncthreads();

    // S = Q K^T, P = exp(S - lse); 0 where key > q or key >= Tn (diagonal tile only).
    float p[8][4];
    zero(p);
    mma_16x64x64<true>(p, qf, sk[buf], lane);
    const bool diagonal = kt == qt;
#pragma unroll
    for (int j = 0; j < 8; ++j)
#pragma unroll
      for (int e = 0; e < 4; ++e) {
        const int key = kt * kTile + j * 8 + 2 * t + (e & 1);
        const int row = row_lo + (e >> 1) * 8;
        const bool masked = diagonal && (key > row || key >= Tn);
        p[j][e] = masked ? 0.0f : exp2f(p[j][e] * scale_log2 - lse2[e >> 1]);
      }
    // dP = dO V^T; dS = P (dP - D).
    float ds[8][4];
    zero(ds);
    mma_16x64x64<true>(ds, dof, sv[buf], lane);
#pragma unroll
    for (int j = 0; j < 8; ++j)
#pragma unroll
      for (int e = 0; e < 4; ++e) ds[j][e] = p[j][e] * (ds[j][e] - drow[e >> 1]);
    unsigned dsf[4][4];
    acc_to_a(dsf, ds);
    // dQ += dS K (times scale at the end).
    mma_16x64x64<false>(dq, dsf, sk[buf], lane);
    __syncthreads();
  }
  store_rows(dqkv + head, stride, dq, scale, q0 + warp * 16, Tn, lane);
}

// --- host checks ----------------------------------------------------------------------------------

void check_shape(const char* who, int B, int Tn, int C, int NH) {
  if (B < 0 || Tn < 0 || C <= 0 || NH <= 0 || C % NH != 0 || !flash_attention_supported(C / NH))
    throw std::invalid_argument(std::string(who) + ": needs head size C / NH == 64, got C=" + std::to_string(C) +
                                " NH=" + std::to_string(NH));
  if (static_cast<long long>(B) * NH > INT_MAX || (Tn + kTile - 1) / kTile > 65535)
    throw std::invalid_argument(std::string(who) + ": B*NH or T too large for the grid");
}

void check_aligned(const char* who, const void* p, const char* name) {
  if (reinterpret_cast<std::uintptr_t>(p) % 16 != 0)
    throw std::invalid_argument(std::string(who) + ": " + name + " must be 16-byte aligned");
}

}  // namespace

bool flash_attention_supported(int head_size) {
  return head_size == kHs;
}

void flash_attention_forward(bf16* out, float* lse, const bf16* qkv, int B, int Tn, int C, int NH,
                             cudaStream_t stream) {
  check_shape("flash_attention_forward", B, Tn, C, NH);
  if (B == 0 || Tn == 0) return;
  check_aligned("flash_attention_forward", qkv, "qkv");
  check_aligned("flash_attention_forward", out, "out");
  const float scale_log2 = kLog2e / std::sqrt(static_cast<float>(kHs));
  const dim3 grid(static_cast<unsigned>(B * NH), static_cast<unsigned>((Tn + kTile - 1) / kTile));
  flash_forward_kernel<<<grid, kThreads, 0, stream>>>(out, lse, qkv, Tn, C, NH, scale_log2);
  COMMSCOPE_CUDA_LAUNCH_CHECK("flash_forward_kernel");
}

void flash_attention_backward(bf16* dqkv, const bf16* dout, const bf16* qkv, const bf16* out, const float* lse, int B,
                              int Tn, int C, int NH, cudaStream_t stream) {
  check_shape("flash_attention_backward", B, Tn, C, NH);
  if (B == 0 || Tn == 0) return;
  check_aligned("flash_attention_backward", dqkv, "dqkv");
  check_aligned("flash_attention_backward", dout, "dout");
  check_aligned("flash_attention_backward", qkv, "qkv");
  check_aligned("flash_attention_backward", out, "out");
  const float scale = 1.0f / std::sqrt(static_cast<float>(kHs));
  const float scale_log2 = scale * kLog2e;
  const size_t rows = static_cast<size_t>(B) * NH * Tn;

  float* d = nullptr;
  COMMSCOPE_CUDA_CHECK(cudaMallocAsync(reinterpret_cast<void**>(&d), rows * sizeof(float), stream));
  struct Free {  // frees d on the stream also when a launch check throws
    float* p;
    cudaStream_t s;
    ~Free() { static_cast<void>(cudaFreeAsync(p, s)); }
  } free_d{d, stream};

  constexpr int kDotWarps = 8;
  flash_backward_dot_kernel<<<static_cast<unsigned>((rows + kDotWarps - 1) / kDotWarps), kDotWarps * 32, 0, stream>>>(
      d, dout, out, Tn, C, NH, rows);
  COMMSCOPE_CUDA_LAUNCH_CHECK("flash_backward_dot_kernel");
  const dim3 grid(static_cast<unsigned>(B * NH), static_cast<unsigned>((Tn + kTile - 1) / kTile));
  flash_backward_dkdv_kernel<<<grid, kThreads, 0, stream>>>(dqkv, qkv, dout, lse, d, Tn, C, NH, scale, scale_log2);
  COMMSCOPE_CUDA_LAUNCH_CHECK("flash_backward_dkdv_kernel");
  flash_backward_dq_kernel<<<grid, kThreads, 0, stream>>>(dqkv, qkv, dout, lse, d, Tn, C, NH, scale, scale_log2);
  COMMSCOPE_CUDA_LAUNCH_CHECK("flash_backward_dq_kernel");
}

}  // namespace commscope::trainer::cuda_kernels
