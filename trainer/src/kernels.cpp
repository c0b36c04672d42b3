#include "kernels.hpp"

#include <cblas.h>
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <limits>

namespace commscope::trainer::kernels {

namespace {

using std::size_t;

// Inside an OpenMP parallel region: this thread's share [begin, end) of n items, cut at
// multiples of `grain` (GEMM row panels, SIMD-width channel groups).
struct Range {
  int begin, end;
};
Range my_share(int n, int grain) {
  const int threads = omp_get_num_threads(), me = omp_get_thread_num();
  const int chunks = (n + grain - 1) / grain;
  return {std::min(n, chunks * me / threads * grain), std::min(n, chunks * (me + 1) / threads * grain)};
}
constexpr int kRowGrain = 16;      // GEMM rows per unit of work
constexpr int kChannelGrain = 16;  // channels per unit of work in reductions over positions

template <class T>
T dot(const T* a, const T* b, int n) {
  T s = 0;
#pragma omp simd reduction(+ : s)
  for (int i = 0; i < n; ++i) s += a[i] * b[i];
  return s;
}

// y[i] += alpha * x[i]
template <class T>
void axpy(T* y, T alpha, const T* x, int n) {
#pragma omp simd
  for (int i = 0; i < n; ++i) y[i] += alpha * x[i];
}

// Row-major GEMM on the calling thread: C[M,N] = alpha op(A)[M,K] op(B)[K,N] + beta C.
void gemm(CBLAS_TRANSPOSE ta, CBLAS_TRANSPOSE tb, int M, int N, int K, float alpha, const float* A, int lda,
          const float* B, int ldb, float beta, float* Cm, int ldc) {
  if (M > 0 && N > 0) cblas_sgemm(CblasRowMajor, ta, tb, M, N, K, alpha, A, lda, B, ldb, beta, Cm, ldc);
}
void gemm(CBLAS_TRANSPOSE ta, CBLAS_TRANSPOSE tb, int M, int N, int K, double alpha, const double* A, int lda,
          const double* B, int ldb, double beta, double* Cm, int ldc) {
  if (M > 0 && N > 0) cblas_dgemm(CblasRowMajor, ta, tb, M, N, K, alpha, A, lda, B, ldb, beta, Cm, ldc);
}

// The GEMMs run inside our OpenMP team, each thread on its own block of rows with
// single-threaded BLAS, so OpenMP and BLAS never compete for the cores. With the pthreads build
// of OpenBLAS that takes openblas_set_num_threads(1): its workers otherwise spin after each call
// (OPENBLAS_THREAD_TIMEOUT) while our OpenMP loops run, and idle OpenMP threads spin while BLAS
// runs (on 2 cores, the "small" preset's step took 1.5 s with both runtimes threaded, 0.87 s
// with OMP_WAIT_POLICY=passive OPENBLAS_THREAD_TIMEOUT=4, 0.64 s this way). An OpenMP build of OpenBLAS runs
// single-threaded inside a parallel region by itself; a sequential build needs nothing.
void use_single_threaded_blas() {
  if (openblas_get_parallel() == 1 && openblas_get_num_threads() != 1) openblas_set_num_threads(1);
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// Encoder: token + position embeddings.

template <class T>
void encoder_forward(T* out, const int* inp, const T* wte, const T* wpe, int B, int Tn, int C) {
#pragma omp parallel for collapse(2) schedule(static)
  for (int b = 0; b < B; ++b) {
    for (int t = 0; t < Tn; ++t) {
      const size_t n = static_cast<size_t>(b) * Tn + t;
      T* o = out + n * C;
      const T* e = wte + static_cast<size_t>(inp[n]) * C;
      const T* p = wpe + static_cast<size_t>(t) * C;
#pragma omp simd
      for (int c = 0; c < C; ++c) o[c] = e[c] + p[c];
    }
  }
}

template <class T>
void encoder_backward(T* dwte, T* dwpe, const T* dout, const int* inp, int B, int Tn, int C) {
  const size_t N = static_cast<size_t>(B) * Tn;
  // dwte: a token may repeat, so split the channels (not the positions) across threads.
#pragma omp parallel
  {
    const Range c = my_share(C, kChannelGrain);
    for (size_t n = 0; n < N && c.begin < c.end; ++n) {
      T* dst = dwte + static_cast<size_t>(inp[n]) * C;
      const T* src = dout + n * C;
#pragma omp simd
      for (int i = c.begin; i < c.end; ++i) dst[i] += src[i];
    }
  }
  // dwpe: each position t owns its row.
#pragma omp parallel for schedule(static)
  for (int t = 0; t < Tn; ++t) {
    T* dst = dwpe + static_cast<size_t>(t) * C;
    for (int b = 0; b < B; ++b) axpy(dst, T(1), dout + (static_cast<size_t>(b) * Tn + t) * C, C);
  }
}

// ---------------------------------------------------------------------------------------------
// LayerNorm over the channels of each position.

template <class T>
void layernorm_forward(T* out, T* mean, T* rstd, const T* inp, const T* w, const T* b, int N, int C) {
#pragma omp parallel for schedule(static)
  for (int n = 0; n < N; ++n) {
    const T* x = inp + static_cast<size_t>(n) * C;
    T* o = out + static_cast<size_t>(n) * C;
    T sum = 0;
#pragma omp simd reduction(+ : sum)
    for (int c = 0; c < C; ++c) sum += x[c];
    const T m = sum / T(C);
    T var = 0;
#pragma omp simd reduction(+ : var)
    for (int c = 0; c < C; ++c) var += (x[c] - m) * (x[c] - m);
    const T s = T(1) / std::sqrt(var / T(C) + T(kLayerNormEps));
#pragma omp simd
    for (int c = 0; c < C; ++c) o[c] = (x[c] - m) * s * w[c] + b[c];
    mean[n] = m;
    rstd[n] = s;
  }
}

template <class T>
void layernorm_backward(T* dinp, T* dw, T* db, const T* dout, const T* inp, const T* w, const T* mean, const T* rstd,
                        int N, int C) {
  // dinp = rstd * (dnorm - mean(dnorm) - norm * mean(dnorm * norm)), dnorm = dout * w,
  // norm = (inp - mean) * rstd.
#pragma omp parallel for schedule(static)
  for (int n = 0; n < N; ++n) {
    const size_t row = static_cast<size_t>(n) * C;
    const T* x = inp + row;
    const T* dy = dout + row;
    T* dx = dinp + row;
    const T m = mean[n], s = rstd[n];
    T sum_dnorm = 0, sum_dnorm_norm = 0;
#pragma omp simd reduction(+ : sum_dnorm, sum_dnorm_norm)
    for (int c = 0; c < C; ++c) {
      const T dnorm = dy[c] * w[c];
      sum_dnorm += dnorm;
      sum_dnorm_norm += dnorm * (x[c] - m) * s;
    }
    const T mean_dnorm = sum_dnorm / T(C), mean_dnorm_norm = sum_dnorm_norm / T(C);
#pragma omp simd
    for (int c = 0; c < C; ++c) dx[c] += s * (dy[c] * w[c] - mean_dnorm - (x[c] - m) * s * mean_dnorm_norm);
  }
  // dw = sum_n dout * norm, db = sum_n dout: each thread owns a range of channels.
#pragma omp parallel
  {
    const Range c = my_share(C, kChannelGrain);
    for (int n = 0; n < N && c.begin < c.end; ++n) {
      const size_t row = static_cast<size_t>(n) * C;
      const T* x = inp + row;
      const T* dy = dout + row;
      const T m = mean[n], s = rstd[n];
#pragma omp simd
      for (int i = c.begin; i < c.end; ++i) {
        dw[i] += dy[i] * (x[i] - m) * s;
        db[i] += dy[i];
      }
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Fully connected layer through BLAS.

template <class T>
void matmul_forward(T* out, const T* inp, const T* w, const T* bias, int N, int C, int OC) {
  use_single_threaded_blas();
#pragma omp parallel
  {
    // out[n0:n1, :] = inp[n0:n1, :] (w[OC,C])^T + bias
    const Range n = my_share(N, kRowGrain);
    const size_t first = static_cast<size_t>(n.begin);
    gemm(CblasNoTrans, CblasTrans, n.end - n.begin, OC, C, T(1), inp + first * C, C, w, C, T(0), out + first * OC, OC);
    for (int r = n.begin; r < n.end && bias != nullptr; ++r) axpy(out + static_cast<size_t>(r) * OC, T(1), bias, OC);
  }
}

template <class T>
void matmul_backward(T* dinp, T* dw, T* dbias, const T* dout, const T* inp, const T* w, int N, int C, int OC) {
  use_single_threaded_blas();
#pragma omp parallel
  {
    // dinp[n0:n1, :] += dout[n0:n1, :] w[OC,C]
    const Range n = my_share(N, kRowGrain);
    const size_t first = static_cast<size_t>(n.begin);
    gemm(CblasNoTrans, CblasNoTrans, n.end - n.begin, C, OC, T(1), dout + first * OC, OC, w, C, T(1), dinp + first * C,
         C);
    // dw[o0:o1, :] += (dout[:, o0:o1])^T inp[N,C]; dbias[o0:o1] += sum_n dout[n, o0:o1]
    const Range o = my_share(OC, kRowGrain);
    const size_t o0 = static_cast<size_t>(o.begin);
    gemm(CblasTrans, CblasNoTrans, o.end - o.begin, C, N, T(1), dout + o0, OC, inp, C, T(1), dw + o0 * C, C);
    for (int r = 0; r < N && dbias != nullptr && o.begin < o.end; ++r) {
      const T* dy = dout + static_cast<size_t>(r) * OC;
#pragma omp simd
      for (int i = o.begin; i < o.end; ++i) dbias[i] += dy[i];
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Causal multi-head attention, one (batch, head) at a time per thread: its q, k, v are [T,hs]
// matrices with row stride 3C inside qkv, so the T^2 hs products are GEMMs on them (computed
// over the full T x T square, masked afterwards: twice the causal work, at BLAS speed).

template <class T>
void attention_forward(T* out, T* preatt, T* att, const T* qkv, int B, int Tn, int C, int NH) {
  use_single_threaded_blas();
  const int hs = C / NH, ld = 3 * C;
  const T scale = T(1) / std::sqrt(T(hs));
  const size_t square = static_cast<size_t>(Tn) * Tn;
#pragma omp parallel for collapse(2) schedule(static)
  for (int b = 0; b < B; ++b) {
    for (int h = 0; h < NH; ++h) {
      const T* q = qkv + static_cast<size_t>(b) * Tn * ld + static_cast<size_t>(h) * hs;
      const T* k = q + C;
      const T* v = q + 2 * static_cast<size_t>(C);
      T* pre = preatt + (static_cast<size_t>(b) * NH + h) * square;
      T* a = att + (static_cast<size_t>(b) * NH + h) * square;
      // preatt[T,T] = q k^T / sqrt(hs)
      gemm(CblasNoTrans, CblasTrans, Tn, Tn, hs, scale, q, ld, k, ld, T(0), pre, Tn);
      // att = softmax over t2 <= t, 0 beyond
      for (int t = 0; t < Tn; ++t) {
        const T* p = pre + static_cast<size_t>(t) * Tn;
        T* row = a + static_cast<size_t>(t) * Tn;
        T maxv = -std::numeric_limits<T>::infinity();
#pragma omp simd reduction(max : maxv)
        for (int t2 = 0; t2 <= t; ++t2) maxv = std::max(maxv, p[t2]);
        T sum = 0;
        for (int t2 = 0; t2 <= t; ++t2) {
          row[t2] = std::exp(p[t2] - maxv);
          sum += row[t2];
        }
        const T inv = T(1) / sum;
#pragma omp simd
        for (int t2 = 0; t2 <= t; ++t2) row[t2] *= inv;
        std::fill(row + t + 1, row + Tn, T(0));
      }
      // out[b, :, h] = att v   [T,hs], row stride C
      gemm(CblasNoTrans, CblasNoTrans, Tn, hs, Tn, T(1), a, Tn, v, ld, T(0),
           out + static_cast<size_t>(b) * Tn * C + static_cast<size_t>(h) * hs, C);
    }
  }
}

template <class T>
void attention_backward(T* dqkv, T* dpreatt, T* datt, const T* dout, const T* qkv, const T* att, int B, int Tn, int C,
                        int NH) {
  use_single_threaded_blas();
  const int hs = C / NH, ld = 3 * C;
  const T scale = T(1) / std::sqrt(T(hs));
  const size_t square = static_cast<size_t>(Tn) * Tn;
#pragma omp parallel for collapse(2) schedule(static)
  for (int b = 0; b < B; ++b) {
    for (int h = 0; h < NH; ++h) {
      const size_t head = static_cast<size_t>(b) * Tn * ld + static_cast<size_t>(h) * hs;
      const T* q = qkv + head;
      const T* k = q + C;
      const T* v = q + 2 * static_cast<size_t>(C);
      T* dq = dqkv + head;
      T* dk = dq + C;
      T* dv = dq + 2 * static_cast<size_t>(C);
      const T* dy = dout + static_cast<size_t>(b) * Tn * C + static_cast<size_t>(h) * hs;  // [T,hs], stride C
      const T* a = att + (static_cast<size_t>(b) * NH + h) * square;
      T* da = datt + (static_cast<size_t>(b) * NH + h) * square;
      T* dpre = dpreatt + (static_cast<size_t>(b) * NH + h) * square;
      // out = att v: dv += att^T dout; datt = dout v^T
      gemm(CblasTrans, CblasNoTrans, Tn, hs, Tn, T(1), a, Tn, dy, C, T(1), dv, ld);
      gemm(CblasNoTrans, CblasTrans, Tn, Tn, hs, T(1), dy, C, v, ld, T(0), da, Tn);
      // softmax: dpreatt[t2] = att[t2] (datt[t2] - sum_t3 att[t3] datt[t3]) for t2 <= t, 0 beyond
      for (int t = 0; t < Tn; ++t) {
        const T* arow = a + static_cast<size_t>(t) * Tn;
        const T* darow = da + static_cast<size_t>(t) * Tn;
        T* drow = dpre + static_cast<size_t>(t) * Tn;
        const T s = dot(arow, darow, t + 1);
#pragma omp simd
        for (int t2 = 0; t2 <= t; ++t2) drow[t2] = arow[t2] * (darow[t2] - s);
        std::fill(drow + t + 1, drow + Tn, T(0));
      }
      // preatt = scale q k^T: dq += scale dpreatt k; dk += scale dpreatt^T q
      gemm(CblasNoTrans, CblasNoTrans, Tn, hs, Tn, scale, dpre, Tn, k, ld, T(1), dq, ld);
      gemm(CblasTrans, CblasNoTrans, Tn, hs, Tn, scale, dpre, Tn, q, ld, T(1), dk, ld);
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Elementwise: GELU and residual.

// Computed through the identity (1 + tanh(u)) / 2 = sigmoid(2u): gelu(x) = x / (1 + exp(-2u)),
// u = sqrt(2/pi) (x + 0.044715 x^3); one exp instead of one tanh (glibc's tanhf: ~4x slower).
namespace {
template <class T>
constexpr T kGeluScale = T(0.7978845608028654);  // sqrt(2 / pi)
template <class T>
constexpr T kGeluCubic = T(0.044715);
}  // namespace

template <class T>
void gelu_forward(T* out, const T* inp, std::size_t n) {
#pragma omp parallel for simd schedule(static)
  for (size_t i = 0; i < n; ++i) {
    const T x = inp[i];
    const T u = kGeluScale<T> * (x + kGeluCubic<T> * x * x * x);
    out[i] = x / (T(1) + std::exp(T(-2) * u));
  }
}

template <class T>
void gelu_backward(T* dinp, const T* inp, const T* dout, std::size_t n) {
  // d/dx [x sigmoid(2u)] = sigmoid(2u) + 2 x sigmoid(2u) (1 - sigmoid(2u)) du/dx
#pragma omp parallel for simd schedule(static)
  for (size_t i = 0; i < n; ++i) {
    const T x = inp[i];
    const T u = kGeluScale<T> * (x + kGeluCubic<T> * x * x * x);
    const T du = kGeluScale<T> * (T(1) + T(3) * kGeluCubic<T> * x * x);
    const T sig = T(1) / (T(1) + std::exp(T(-2) * u));
    dinp[i] += dout[i] * (sig + T(2) * x * sig * (T(1) - sig) * du);
  }
}

template <class T>
void residual_forward(T* out, const T* a, const T* b, std::size_t n) {
#pragma omp parallel for simd schedule(static)
  for (size_t i = 0; i < n; ++i) out[i] = a[i] + b[i];
}

template <class T>
void residual_backward(T* da, T* db, const T* dout, std::size_t n) {
#pragma omp parallel for simd schedule(static)
  for (size_t i = 0; i < n; ++i) {
    da[i] += dout[i];
    db[i] += dout[i];
  }
}

// ---------------------------------------------------------------------------------------------
// Softmax + cross-entropy over the (unpadded) vocabulary.

template <class T>
void softmax_xent_forward(T* probs, T* losses, const T* logits, const int* targets, int N, int V, int Vp) {
#pragma omp parallel for schedule(static)
  for (int n = 0; n < N; ++n) {
    const T* z = logits + static_cast<size_t>(n) * Vp;
    T* p = probs + static_cast<size_t>(n) * Vp;
    T maxv = -std::numeric_limits<T>::infinity();
#pragma omp simd reduction(max : maxv)
    for (int i = 0; i < V; ++i) maxv = std::max(maxv, z[i]);
    T sum = 0;
    for (int i = 0; i < V; ++i) {
      p[i] = std::exp(z[i] - maxv);
      sum += p[i];
    }
    const T inv = T(1) / sum;
#pragma omp simd
    for (int i = 0; i < V; ++i) p[i] *= inv;
    std::fill(p + V, p + Vp, T(0));
    if (targets != nullptr) losses[n] = std::log(sum) + maxv - z[targets[n]];
  }
}

template <class T>
void softmax_xent_backward(T* dlogits, const T* probs, const int* targets, T dloss, int N, int V, int Vp) {
#pragma omp parallel for schedule(static)
  for (int n = 0; n < N; ++n) {
    const T* p = probs + static_cast<size_t>(n) * Vp;
    T* dz = dlogits + static_cast<size_t>(n) * Vp;
#pragma omp simd
    for (int i = 0; i < V; ++i) dz[i] = p[i] * dloss;
    dz[targets[n]] -= dloss;
    std::fill(dz + V, dz + Vp, T(0));
  }
}

// ---------------------------------------------------------------------------------------------

#define COMMSCOPE_KERNELS_INSTANTIATE(T)                                                                       \
  template void encoder_forward<T>(T*, const int*, const T*, const T*, int, int, int);                         \
  template void encoder_backward<T>(T*, T*, const T*, const int*, int, int, int);                              \
  template void layernorm_forward<T>(T*, T*, T*, const T*, const T*, const T*, int, int);                      \
  template void layernorm_backward<T>(T*, T*, T*, const T*, const T*, const T*, const T*, const T*, int, int); \
  template void matmul_forward<T>(T*, const T*, const T*, const T*, int, int, int);                            \
  template void matmul_backward<T>(T*, T*, T*, const T*, const T*, const T*, int, int, int);                   \
  template void attention_forward<T>(T*, T*, T*, const T*, int, int, int, int);                                \
  template void attention_backward<T>(T*, T*, T*, const T*, const T*, const T*, int, int, int, int);           \
  template void gelu_forward<T>(T*, const T*, std::size_t);                                                    \
  template void gelu_backward<T>(T*, const T*, const T*, std::size_t);                                         \
  template void residual_forward<T>(T*, const T*, const T*, std::size_t);                                      \
  template void residual_backward<T>(T*, T*, const T*, std::size_t);                                           \
  template void softmax_xent_forward<T>(T*, T*, const T*, const int*, int, int, int);                          \
  template void softmax_xent_backward<T>(T*, const T*, const int*, T, int, int, int);

COMMSCOPE_KERNELS_INSTANTIATE(float)
COMMSCOPE_KERNELS_INSTANTIATE(double)

#undef COMMSCOPE_KERNELS_INSTANTIATE

}  // namespace commscope::trainer::kernels
