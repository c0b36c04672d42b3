// The CUDA layer kernels (trainer/cuda) against the CPU reference kernels (trainer/src/kernels.hpp,
// in double) and the CPU AdamW: each kernel on the same random inputs (fixed seeds), in fp32 and
// in bf16. One line per output tensor:
//   kernel.tensor  precision  max_rel_err  bound  PASS|FAIL
// where max_rel_err = max |gpu - ref| / max |ref| over the tensor. The inputs are rounded to the
// precision under test before the reference sees them, so the error measured is the kernel's own
// (intermediate and output rounding), not the inputs'. Backward kernels start from nonzero
// gradients, which checks that they add; WRITES outputs start from garbage, which checks that
// they overwrite. Exit 0: all pass; 1: a failure; 77: no usable GPU (ctest: skipped).
#include <cublas_v2.h>
#include <cuda_bf16.h>
#include <cuda_runtime_api.h>

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <exception>
#include <limits>
#include <random>
#include <span>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "commscope/trainer/config.hpp"
#include "commscope/trainer/layout.hpp"
#include "commscope/trainer/optimizer.hpp"
#include "cudnn_attention.hpp"
#include "flash_attention.hpp"
#include "kernels.hpp"
#include "kernels_cuda.hpp"
#include "token_groups.hpp"

namespace {

namespace ct = commscope::trainer;
namespace cpu = commscope::trainer::kernels;
namespace gpu = commscope::trainer::cuda_kernels;
using bf16 = __nv_bfloat16;
using Vec = std::vector<double>;

// Small, but no dimension a multiple of the warp size (B*T = 51 positions, hs = 12).
constexpr int kB = 3, kT = 17, kC = 48, kNH = 4, kV = 101, kVp = 128, kOC = 3 * kC;
constexpr int kN = kB * kT;

// Bounds on max_rel_err. fp32: float arithmetic against a double reference on float inputs.
// bf16: the outputs (and, in attention, the intermediate preatt/att/datt/dpreatt tensors the
// contract stores in T) are rounded to 8 significant bits, 2^-9 = 2e-3 relative each.
constexpr double kBoundFp32 = 1e-4;
constexpr double kBoundBf16 = 2e-2;

void check_cuda(cudaError_t e, const char* what) {
  if (e != cudaSuccess) throw std::runtime_error(std::string(what) + ": " + cudaGetErrorString(e));
}

// --- element types -----------------------------------------------------------------------------

template <class T>
struct Precision;
template <>
struct Precision<float> {
  static constexpr const char* name = "fp32";
  static constexpr double bound = kBoundFp32;
  static float narrow(double x) { return static_cast<float>(x); }
  static double widen(float x) { return x; }
};
template <>
struct Precision<bf16> {
  static constexpr const char* name = "bf16";
  static constexpr double bound = kBoundBf16;
  static bf16 narrow(double x) { return __float2bfloat16(static_cast<float>(x)); }
  static double widen(bf16 x) { return static_cast<double>(__bfloat162float(x)); }
};

// The values x takes once stored as T (what the device kernels and the reference both read).
template <class T>
Vec quantize(Vec x) {
  for (double& e : x) e = Precision<T>::widen(Precision<T>::narrow(e));
  return x;
}

Vec random_vec(std::size_t n, double lo, double hi, std::mt19937& rng) {
  std::uniform_real_distribution<double> u(lo, hi);
  Vec v(n);
  for (double& e : v) e = u(rng);
  return v;
}

std::vector<int> random_tokens(std::size_t n, int limit, std::mt19937& rng) {
  std::uniform_int_distribution<int> u(0, limit - 1);
  std::vector<int> v(n);
  for (int& e : v) e = u(rng);
  return v;
}

// --- device buffers ------------------------------------------------------------------------------

template <class T>
class DeviceBuffer {
 public:
  explicit DeviceBuffer(std::size_t n) : n_(n) {
    void* p = nullptr;
    check_cuda(cudaMalloc(&p, std::max<std::size_t>(n, 1) * sizeof(T)), "cudaMalloc");
    p_ = static_cast<T*>(p);
  }
  DeviceBuffer(DeviceBuffer&& o) noexcept : p_(std::exchange(o.p_, nullptr)), n_(o.n_) {}
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(DeviceBuffer&&) = delete;
  ~DeviceBuffer() {
    if (p_ != nullptr) static_cast<void>(cudaFree(p_));
  }
  T* get() const { return p_; }
  void upload(const std::vector<T>& h) {
    if (h.size() != n_) throw std::logic_error("upload: size mismatch");
    check_cuda(cudaMemcpy(p_, h.data(), n_ * sizeof(T), cudaMemcpyHostToDevice), "cudaMemcpy to device");
  }
  std::vector<T> download() const {
    std::vector<T> h(n_);
    check_cuda(cudaMemcpy(h.data(), p_, n_ * sizeof(T), cudaMemcpyDeviceToHost), "cudaMemcpy to host");
    return h;
  }

 private:
  T* p_ = nullptr;
  std::size_t n_;
};

template <class T>
DeviceBuffer<T> to_device(const Vec& h) {
  std::vector<T> t(h.size());
  std::transform(h.begin(), h.end(), t.begin(), [](double x) { return Precision<T>::narrow(x); });
  DeviceBuffer<T> d(h.size());
  d.upload(t);
  return d;
}
DeviceBuffer<int> to_device(const std::vector<int>& h) {
  DeviceBuffer<int> d(h.size());
  d.upload(h);
  return d;
}
// The tokens' groups for encoder_backward (those in [v0, v0 + rows)), on the device; count: how many.
DeviceBuffer<int> token_groups(const std::vector<int>& tokens, int v0, int rows, int& count) {
  std::vector<int> packed(commscope::trainer::cuda::token_groups_ints(tokens.size()));
  std::vector<std::uint64_t> keys;
  count = commscope::trainer::cuda::group_tokens(tokens.data(), static_cast<int>(tokens.size()), v0, rows,
                                                  packed.data(), keys);
  return to_device(packed);
}
template <class T>
Vec to_host(const DeviceBuffer<T>& d) {
  const std::vector<T> t = d.download();
  Vec h(t.size());
  std::transform(t.begin(), t.end(), h.begin(), [](T x) { return Precision<T>::widen(x); });
  return h;
}

// --- the comparison --------------------------------------------------------------------------------

class Report {
 public:
  // max |got - ref| / max |ref| (NaN anywhere: infinite).
  void compare(const std::string& what, const char* precision, const Vec& got, const Vec& ref, double bound) {
    double diff = 0.0, scale = 0.0;
    if (got.size() != ref.size()) diff = std::numeric_limits<double>::infinity();
    for (std::size_t i = 0; i < std::min(got.size(), ref.size()); ++i) {
      const double d = std::abs(got[i] - ref[i]);
      diff = std::isnan(d) ? std::numeric_limits<double>::infinity() : std::max(diff, d);
      scale = std::max(scale, std::abs(ref[i]));
    }
    line(what, precision, diff / std::max(scale, 1e-30), bound);
  }
  // Entries the contract sets to exactly 0 (masked attention, padded vocabulary): the error is the
  // largest magnitude found there, bound 0. is_zero_entry(row, col) -> bool.
  template <class IsZeroEntry>
  void exact_zero(const std::string& what, const char* precision, const Vec& got, int rows, int cols,
                  IsZeroEntry is_zero_entry) {
    double worst = 0.0;
    for (int r = 0; r < rows; ++r)
      for (int c = 0; c < cols; ++c)
        if (is_zero_entry(r, c)) {
          const double x = std::abs(got[static_cast<std::size_t>(r) * cols + c]);
          worst = std::isnan(x) ? std::numeric_limits<double>::infinity() : std::max(worst, x);
        }
    line(what + " (exact 0)", precision, worst, 0.0);
  }
  // The reference left the values alone: they must be exactly the same.
  void unchanged(const std::string& what, const char* precision, const Vec& got, const Vec& before) {
    line(what + " (unchanged)", precision, max_difference(got, before), 0.0);
  }
  // Values the kernel only moves (a maximum, a looked-up logit; -inf included): exactly want.
  void exact(const std::string& what, const char* precision, const Vec& got, const Vec& want) {
    line(what + " (exact)", precision, max_difference(got, want), 0.0);
  }
  // A check that could not run (why: the error), counted as a failure.
  void failed(const std::string& what, const char* precision, const std::string& why) {
    line(what, precision, std::numeric_limits<double>::infinity(), 0.0);
    std::printf("  %s\n", why.c_str());
  }
  int failures() const { return failures_; }
  int checks() const { return checks_; }

 private:
  // max |got - want|, equal entries (infinities too) 0, NaN or a size mismatch infinite.
  static double max_difference(const Vec& got, const Vec& want) {
    if (got.size() != want.size()) return std::numeric_limits<double>::infinity();
    double worst = 0.0;
    for (std::size_t i = 0; i < got.size(); ++i) {
      const double d = got[i] == want[i] ? 0.0 : std::abs(got[i] - want[i]);
      worst = std::isnan(d) ? std::numeric_limits<double>::infinity() : std::max(worst, d);
    }
    return worst;
  }
  void line(const std::string& what, const char* precision, double err, double bound) {
    const bool pass = err <= bound;
    ++checks_;
    if (!pass) ++failures_;
    std::printf("%-44s %-5s %11.3e %8.1e %s\n", what.c_str(), precision, err, bound, pass ? "PASS" : "FAIL");
  }
  int failures_ = 0, checks_ = 0;
};

struct Gpu {
  cudaStream_t stream = nullptr;
  cublasHandle_t blas = nullptr;
  // Waits for the stream and reports any error of the work queued on it.
  void sync() const { check_cuda(cudaStreamSynchronize(stream), "kernel execution"); }
};

// --- one test per kernel pair --------------------------------------------------------------------------------

template <class T>
void test_encoder(Report& r, const Gpu& g) {
  const char* p = Precision<T>::name;
  const double bound = Precision<T>::bound;
  std::mt19937 rng(11);
  std::vector<int> tokens = random_tokens(kN, kV, rng);
  // Make sure some tokens repeat, across batch rows too: dwte sums their positions.
  tokens[7] = tokens[0];
  tokens[kT + 3] = tokens[0];
  tokens[kN - 1] = tokens[5];
  const Vec wte = quantize<T>(random_vec(static_cast<std::size_t>(kVp) * kC, -1, 1, rng));
  const Vec wpe = quantize<T>(random_vec(static_cast<std::size_t>(kT) * kC, -1, 1, rng));
  const std::size_t nc = static_cast<std::size_t>(kN) * kC;

  Vec out(nc);
  cpu::encoder_forward<double>(out.data(), tokens.data(), wte.data(), wpe.data(), kB, kT, kC);
  auto d_tokens = to_device(tokens);
  auto d_wte = to_device<T>(wte);
  auto d_wpe = to_device<T>(wpe);
  auto d_out = to_device<T>(random_vec(nc, -9, 9, rng));
  gpu::encoder_forward<T>(d_out.get(), d_tokens.get(), d_wte.get(), d_wpe.get(), kB, kT, kC, g.stream);
  g.sync();
  r.compare("encoder_forward.out", p, to_host(d_out), out, bound);

  const Vec dout = quantize<T>(random_vec(nc, -1, 1, rng));
  Vec dwte = quantize<T>(random_vec(wte.size(), -1, 1, rng));
  Vec dwpe = quantize<T>(random_vec(wpe.size(), -1, 1, rng));
  auto d_dout = to_device<T>(dout);
  auto d_dwte = to_device<T>(dwte);
  auto d_dwpe = to_device<T>(dwpe);
  cpu::encoder_backward<double>(dwte.data(), dwpe.data(), dout.data(), tokens.data(), kB, kT, kC);
  int groups = 0;
  auto d_groups = token_groups(tokens, 0, INT_MAX, groups);
  gpu::encoder_backward<T>(d_dwte.get(), d_dwpe.get(), d_dout.get(), d_groups.get(), groups, 0, kB, kT, kC, g.stream);
  g.sync();
  r.compare("encoder_backward.dwte", p, to_host(d_dwte), dwte, bound);
  r.compare("encoder_backward.dwpe", p, to_host(d_dwpe), dwpe, bound);
}

// LayerNorm shapes: the default one, and ones that take each path of the kernels (layernorm.cu):
// 128-bit packs with every lane busy (C = 768) and a partial last pack row (fp32 C = 100), the
// scalar kernels (bf16 C = 100: not a multiple of 8; C = 2304: too wide for the registers; an
// offset of 1 element: pointers not 16-byte aligned), and N > 256 * 8 (the backward's blocks take
// several rows per warp and the last blocks none).
struct LayerNormShape {
  int N, C;
  int offset;  // elements before every tensor in its device buffer
  std::string label() const {
    if (N == kN && C == kC && offset == 0) return "";
    char s[64];
    std::snprintf(s, sizeof(s), offset != 0 ? "[%dx%d+%d]" : "[%dx%d]", N, C, offset);
    return s;
  }
};
constexpr LayerNormShape kLayerNormShapes[] = {{kN, kC, 0},    {37, 768, 0}, {37, 100, 0}, {2100, 768, 0},
                                               {2100, 100, 0}, {5, 2304, 0}, {37, 768, 1}};

// v after `offset` zeros (uploaded, then passed as the buffer's pointer + offset), and back.
Vec shifted(const Vec& v, int offset) {
  Vec s(static_cast<std::size_t>(offset), 0.0);
  s.insert(s.end(), v.begin(), v.end());
  return s;
}
Vec unshifted(Vec v, int offset) {
  v.erase(v.begin(), v.begin() + offset);
  return v;
}

template <class T>
void test_layernorm(Report& r, const Gpu& g, const LayerNormShape& shape) {
  const char* p = Precision<T>::name;
  const double bound = Precision<T>::bound;
  const int N = shape.N, C = shape.C, off = shape.offset;
  const std::size_t n = static_cast<std::size_t>(N), c = static_cast<std::size_t>(C);
  const std::string at = shape.label();
  std::mt19937 rng(12);
  const std::size_t nc = n * c, padded = nc + static_cast<std::size_t>(off);
  // An offset, so that the mean matters.
  const Vec inp = quantize<T>(random_vec(nc, -1.5, 2.5, rng));
  const Vec w = quantize<T>(random_vec(c, 0.5, 1.5, rng));
  const Vec b = quantize<T>(random_vec(c, -0.5, 0.5, rng));

  Vec out(nc), mean(n), rstd(n);
  cpu::layernorm_forward<double>(out.data(), mean.data(), rstd.data(), inp.data(), w.data(), b.data(), N, C);
  auto d_inp = to_device<T>(shifted(inp, off));
  auto d_w = to_device<T>(shifted(w, off));
  auto d_b = to_device<T>(shifted(b, off));
  auto d_out = to_device<T>(random_vec(padded, -9, 9, rng));
  auto d_mean = to_device<float>(random_vec(n, -9, 9, rng));
  auto d_rstd = to_device<float>(random_vec(n, -9, 9, rng));
  gpu::layernorm_forward<T>(d_out.get() + off, d_mean.get(), d_rstd.get(), d_inp.get() + off, d_w.get() + off,
                            d_b.get() + off, N, C, g.stream);
  g.sync();
  r.compare("layernorm_forward" + at + ".out", p, unshifted(to_host(d_out), off), out, bound);
  // mean and rstd are float for every T: float accuracy.
  r.compare("layernorm_forward" + at + ".mean", p, to_host(d_mean), mean, kBoundFp32);
  r.compare("layernorm_forward" + at + ".rstd", p, to_host(d_rstd), rstd, kBoundFp32);

  // The backward gets the statistics as float, the reference the same values.
  const Vec mean_f = quantize<float>(mean), rstd_f = quantize<float>(rstd);
  const Vec dout = quantize<T>(random_vec(nc, -1, 1, rng));
  const Vec dinp0 = quantize<T>(random_vec(nc, -1, 1, rng));
  const Vec dw0 = quantize<T>(random_vec(c, -1, 1, rng));
  const Vec db0 = quantize<T>(random_vec(c, -1, 1, rng));
  Vec dinp = dinp0, dw = dw0, db = db0;
  auto d_dout = to_device<T>(shifted(dout, off));
  auto d_mean_in = to_device<float>(mean_f);
  auto d_rstd_in = to_device<float>(rstd_f);
  cpu::layernorm_backward<double>(dinp.data(), dw.data(), db.data(), dout.data(), inp.data(), w.data(), mean_f.data(),
                                  rstd_f.data(), N, C);
  // Twice from the same gradients: the results must be the same to the bit (no atomics).
  Vec got[2][3];
  for (auto& run : got) {
    auto d_dinp = to_device<T>(shifted(dinp0, off));
    auto d_dw = to_device<T>(shifted(dw0, off));
    auto d_db = to_device<T>(shifted(db0, off));
    gpu::layernorm_backward<T>(d_dinp.get() + off, d_dw.get() + off, d_db.get() + off, d_dout.get() + off,
                               d_inp.get() + off, d_w.get() + off, d_mean_in.get(), d_rstd_in.get(), N, C, g.stream);
    g.sync();
    run[0] = unshifted(to_host(d_dinp), off);
    run[1] = unshifted(to_host(d_dw), off);
    run[2] = unshifted(to_host(d_db), off);
  }
  r.compare("layernorm_backward" + at + ".dinp", p, got[0][0], dinp, bound);
  r.compare("layernorm_backward" + at + ".dw", p, got[0][1], dw, bound);
  r.compare("layernorm_backward" + at + ".db", p, got[0][2], db, bound);
  r.exact("layernorm_backward" + at + ".dw rerun", p, got[1][1], got[0][1]);
  r.exact("layernorm_backward" + at + ".db rerun", p, got[1][2], got[0][2]);
}

// residual_layernorm_forward against the reference's residual_forward then layernorm_forward of
// the residual rounded to T (what the separate kernels would store and read back); then again in
// place (residual_out = a).
template <class T>
void test_residual_layernorm(Report& r, const Gpu& g, const LayerNormShape& shape) {
  const char* p = Precision<T>::name;
  const double bound = Precision<T>::bound;
  const int N = shape.N, C = shape.C, off = shape.offset;
  const std::size_t n = static_cast<std::size_t>(N), c = static_cast<std::size_t>(C);
  const std::string name = "residual_layernorm_forward" + shape.label();
  std::mt19937 rng(19);
  const std::size_t nc = n * c, padded = nc + static_cast<std::size_t>(off);
  const Vec a = quantize<T>(random_vec(nc, -1.5, 2.5, rng));
  const Vec b = quantize<T>(random_vec(nc, -1, 1, rng));
  const Vec w = quantize<T>(random_vec(c, 0.5, 1.5, rng));
  const Vec bias = quantize<T>(random_vec(c, -0.5, 0.5, rng));

  Vec residual(nc), out(nc), mean(n), rstd(n);
  cpu::residual_forward<double>(residual.data(), a.data(), b.data(), nc);
  const Vec stored = quantize<T>(residual);
  cpu::layernorm_forward<double>(out.data(), mean.data(), rstd.data(), stored.data(), w.data(), bias.data(), N, C);

  auto d_b = to_device<T>(shifted(b, off));
  auto d_w = to_device<T>(shifted(w, off));
  auto d_bias = to_device<T>(shifted(bias, off));
  for (const bool in_place : {false, true}) {
    const std::string what = name + (in_place ? " in place" : "");
    auto d_a = to_device<T>(shifted(a, off));
    auto d_residual = to_device<T>(random_vec(padded, -9, 9, rng));
    auto d_out = to_device<T>(random_vec(padded, -9, 9, rng));
    auto d_mean = to_device<float>(random_vec(n, -9, 9, rng));
    auto d_rstd = to_device<float>(random_vec(n, -9, 9, rng));
    const DeviceBuffer<T>& res = in_place ? d_a : d_residual;
    gpu::residual_layernorm_forward<T>(res.get() + off, d_out.get() + off, d_mean.get(), d_rstd.get(), d_a.get() + off,
                                       d_b.get() + off, d_w.get() + off, d_bias.get() + off, N, C, g.stream);
    g.sync();
    r.compare(what + ".residual", p, unshifted(to_host(res), off), residual, bound);
    r.compare(what + ".out", p, unshifted(to_host(d_out), off), out, bound);
    r.compare(what + ".mean", p, to_host(d_mean), mean, kBoundFp32);
    r.compare(what + ".rstd", p, to_host(d_rstd), rstd, kBoundFp32);
  }
}

template <class T>
void test_matmul(Report& r, const Gpu& g) {
  const char* p = Precision<T>::name;
  const double bound = Precision<T>::bound;
  std::mt19937 rng(13);
  const std::size_t nc = static_cast<std::size_t>(kN) * kC, noc = static_cast<std::size_t>(kN) * kOC;
  const Vec inp = quantize<T>(random_vec(nc, -1, 1, rng));
  const Vec w = quantize<T>(random_vec(static_cast<std::size_t>(kOC) * kC, -0.5, 0.5, rng));
  const Vec bias = quantize<T>(random_vec(kOC, -1, 1, rng));
  auto d_inp = to_device<T>(inp);
  auto d_w = to_device<T>(w);
  auto d_bias = to_device<T>(bias);

  for (const bool with_bias : {true, false}) {
    Vec out(noc);
    cpu::matmul_forward<double>(out.data(), inp.data(), w.data(), with_bias ? bias.data() : nullptr, kN, kC, kOC);
    auto d_out = to_device<T>(random_vec(noc, -9, 9, rng));
    gpu::matmul_forward<T>(d_out.get(), d_inp.get(), d_w.get(), with_bias ? d_bias.get() : nullptr, kN, kC, kOC, g.blas,
                           g.stream);
    g.sync();
    r.compare(with_bias ? "matmul_forward.out" : "matmul_forward(no bias).out", p, to_host(d_out), out, bound);
  }

  const Vec dout = quantize<T>(random_vec(noc, -1, 1, rng));
  auto d_dout = to_device<T>(dout);
  for (const bool with_bias : {true, false}) {
    Vec dinp = quantize<T>(random_vec(nc, -1, 1, rng));
    Vec dw = quantize<T>(random_vec(w.size(), -1, 1, rng));
    Vec dbias = quantize<T>(random_vec(kOC, -1, 1, rng));
    auto d_dinp = to_device<T>(dinp);
    auto d_dw = to_device<T>(dw);
    auto d_dbias = to_device<T>(dbias);
    cpu::matmul_backward<double>(dinp.data(), dw.data(), with_bias ? dbias.data() : nullptr, dout.data(), inp.data(),
                                 w.data(), kN, kC, kOC);
    gpu::matmul_backward<T>(d_dinp.get(), d_dw.get(), with_bias ? d_dbias.get() : nullptr, d_dout.get(), d_inp.get(),
                            d_w.get(), kN, kC, kOC, g.blas, g.stream);
    g.sync();
    const std::string name = with_bias ? "matmul_backward." : "matmul_backward(no bias).";
    r.compare(name + "dinp", p, to_host(d_dinp), dinp, bound);
    r.compare(name + "dw", p, to_host(d_dw), dw, bound);
    if (with_bias) r.compare(name + "dbias", p, to_host(d_dbias), dbias, bound);
  }
  {  // add_dinp false: dinp WRITTEN (poisoned first), dw and dbias still added into
    Vec dinp(nc, 0.0);
    Vec dw = quantize<T>(random_vec(w.size(), -1, 1, rng));
    Vec dbias = quantize<T>(random_vec(kOC, -1, 1, rng));
    auto d_dinp = to_device<T>(random_vec(nc, -9, 9, rng));
    auto d_dw = to_device<T>(dw);
    auto d_dbias = to_device<T>(dbias);
    cpu::matmul_backward<double>(dinp.data(), dw.data(), dbias.data(), dout.data(), inp.data(), w.data(), kN, kC, kOC);
    gpu::matmul_backward<T>(d_dinp.get(), d_dw.get(), d_dbias.get(), d_dout.get(), d_inp.get(), d_w.get(), kN, kC, kOC,
                            g.blas, g.stream, false);
    g.sync();
    r.compare("matmul_backward(write dinp).dinp", p, to_host(d_dinp), dinp, bound);
    r.compare("matmul_backward(write dinp).dw", p, to_host(d_dw), dw, bound);
    r.compare("matmul_backward(write dinp).dbias", p, to_host(d_dbias), dbias, bound);
  }
  // The bias and GELU in the GEMM's epilogue (bf16, OC a multiple of 8), and the plain path
  // (fp32; OC = 100); both outputs poisoned first.
  for (const int oc : {kOC, 100}) {
    const std::size_t n_out = static_cast<std::size_t>(kN) * oc;
    const Vec w2 = quantize<T>(random_vec(static_cast<std::size_t>(oc) * kC, -0.5, 0.5, rng));
    const Vec b2 = quantize<T>(random_vec(oc, -1, 1, rng));
    auto d_w2 = to_device<T>(w2);
    auto d_b2 = to_device<T>(b2);
    Vec pre(n_out), out(n_out);
    cpu::matmul_forward<double>(pre.data(), inp.data(), w2.data(), b2.data(), kN, kC, oc);
    // The reference GELU reads the pre-activation as stored (rounded to T), as the kernels do.
    const Vec pre_t = quantize<T>(pre);
    cpu::gelu_forward<double>(out.data(), pre_t.data(), n_out);
    auto d_out = to_device<T>(random_vec(n_out, -9, 9, rng));
    auto d_pre = to_device<T>(random_vec(n_out, -9, 9, rng));
    gpu::matmul_forward_gelu<T>(d_out.get(), d_pre.get(), d_inp.get(), d_w2.get(), d_b2.get(), kN, kC, oc, g.blas,
                                g.stream);
    g.sync();
    const std::string name = "matmul_forward_gelu(OC " + std::to_string(oc) + ").";
    r.compare(name + "pre_gelu", p, to_host(d_pre), pre, bound);
    r.compare(name + "out", p, to_host(d_out), out, bound);
  }
  {  // the projection's backward through the GELU: dpre WRITTEN (poisoned), dw and dbias added into
    const Vec pre = quantize<T>(random_vec(nc, -3, 3, rng));  // the GELU's input, [kN, kC]
    Vec tmp(nc, 0.0), dpre(nc, 0.0);
    Vec dw = quantize<T>(random_vec(w.size(), -1, 1, rng));
    Vec dbias = quantize<T>(random_vec(kOC, -1, 1, rng));
    auto d_pre = to_device<T>(pre);
    auto d_dpre = to_device<T>(random_vec(nc, -9, 9, rng));
    auto d_scratch = to_device<T>(random_vec(nc, -9, 9, rng));
    auto d_dw = to_device<T>(dw);
    auto d_dbias = to_device<T>(dbias);
    cpu::matmul_backward<double>(tmp.data(), dw.data(), dbias.data(), dout.data(), inp.data(), w.data(), kN, kC, kOC);
    // The kernels round the GEMM's result to T before the GELU's derivative only on the plain path.
    cpu::gelu_backward<double>(dpre.data(), pre.data(), tmp.data(), nc);
    gpu::matmul_backward_dgelu<T>(d_dpre.get(), d_scratch.get(), d_dw.get(), d_dbias.get(), d_dout.get(), d_inp.get(),
                                  d_w.get(), d_pre.get(), kN, kC, kOC, g.blas, g.stream);
    g.sync();
    r.compare("matmul_backward_dgelu.dpre", p, to_host(d_dpre), dpre, bound);
    r.compare("matmul_backward_dgelu.dw", p, to_host(d_dw), dw, bound);
    r.compare("matmul_backward_dgelu.dbias", p, to_host(d_dbias), dbias, bound);
  }
}

bool above_diagonal(int row, int col) {
  return col > row % kT;  // rows of [B,NH,T,T] squares: t = row % T
}

template <class T>
void test_attention(Report& r, const Gpu& g) {
  const char* p = Precision<T>::name;
  const double bound = Precision<T>::bound;
  std::mt19937 rng(14);
  const std::size_t nc = static_cast<std::size_t>(kN) * kC, n3c = 3 * nc;
  const std::size_t squares = static_cast<std::size_t>(kB) * kNH * kT * kT;
  const int rows = kB * kNH * kT;
  const Vec qkv = quantize<T>(random_vec(n3c, -1.5, 1.5, rng));

  Vec out(nc), preatt(squares), att(squares);
  cpu::attention_forward<double>(out.data(), preatt.data(), att.data(), qkv.data(), kB, kT, kC, kNH);
  auto d_qkv = to_device<T>(qkv);
  auto d_out = to_device<T>(random_vec(nc, -9, 9, rng));
  auto d_preatt = to_device<T>(random_vec(squares, -9, 9, rng));
  auto d_att = to_device<T>(random_vec(squares, -9, 9, rng));
  gpu::attention_forward<T>(d_out.get(), d_preatt.get(), d_att.get(), d_qkv.get(), kB, kT, kC, kNH, g.blas, g.stream);
  g.sync();
  r.compare("attention_forward.out", p, to_host(d_out), out, bound);
  r.compare("attention_forward.preatt", p, to_host(d_preatt), preatt, bound);
  r.compare("attention_forward.att", p, to_host(d_att), att, bound);
  r.exact_zero("attention_forward.att", p, to_host(d_att), rows, kT, above_diagonal);

  // The backward reads att as stored in T; the reference gets the same values.
  const Vec att_in = quantize<T>(att);
  const Vec dout = quantize<T>(random_vec(nc, -1, 1, rng));
  Vec dqkv = quantize<T>(random_vec(n3c, -1, 1, rng));
  Vec dpreatt(squares), datt(squares);
  auto d_att_in = to_device<T>(att_in);
  auto d_dout = to_device<T>(dout);
  auto d_dqkv = to_device<T>(dqkv);
  auto d_dpreatt = to_device<T>(random_vec(squares, -9, 9, rng));  // scratch the kernel writes
  auto d_datt = to_device<T>(random_vec(squares, -9, 9, rng));
  cpu::attention_backward<double>(dqkv.data(), dpreatt.data(), datt.data(), dout.data(), qkv.data(), att_in.data(), kB,
                                  kT, kC, kNH);
  gpu::attention_backward<T>(d_dqkv.get(), d_dpreatt.get(), d_datt.get(), d_dout.get(), d_qkv.get(), d_att_in.get(), kB,
                             kT, kC, kNH, g.blas, g.stream);
  g.sync();
  r.compare("attention_backward.dqkv", p, to_host(d_dqkv), dqkv, bound);
  r.compare("attention_backward.datt", p, to_host(d_datt), datt, bound);
  r.compare("attention_backward.dpreatt", p, to_host(d_dpreatt), dpreatt, bound);
  r.exact_zero("attention_backward.dpreatt", p, to_host(d_dpreatt), rows, kT, above_diagonal);
}

// Flash attention (bf16, head size 64) against the reference attention in double: out, the
// logsumexp of each row's scaled scores (from the reference's preatt, t2 <= t) and dq, dk, dv
// (the reference's dqkv from zero, since the flash backward WRITES). T is not a multiple of the
// 64-position tiles; T = 130 needs three key tiles, so the online softmax rescales.
void test_flash_attention(Report& r, const Gpu& g) {
  const char* p = Precision<bf16>::name;
  const double bound = kBoundBf16;
  struct Shape {
    int B, T, NH;
  };
  std::mt19937 rng(21);
  for (const Shape s : {Shape{2, 67, 3}, Shape{1, 130, 2}}) {
    const int C = 64 * s.NH;
    const std::size_t nc = static_cast<std::size_t>(s.B) * s.T * C, n3c = 3 * nc;
    const std::size_t rows = static_cast<std::size_t>(s.B) * s.NH * s.T, squares = rows * s.T;
    const std::string tag = "(B=" + std::to_string(s.B) + ",T=" + std::to_string(s.T) + ")";
    // Scores of standard deviation ~1.3: the softmax is far from uniform.
    const Vec qkv = quantize<bf16>(random_vec(n3c, -2, 2, rng));
    Vec out(nc), preatt(squares), att(squares);
    cpu::attention_forward<double>(out.data(), preatt.data(), att.data(), qkv.data(), s.B, s.T, C, s.NH);
    Vec lse(rows);
    for (std::size_t row = 0; row < rows; ++row) {
      const int t = static_cast<int>(row % s.T);
      const double* pre = preatt.data() + row * s.T;
      const double m = *std::max_element(pre, pre + t + 1);
      double sum = 0.0;
      for (int t2 = 0; t2 <= t; ++t2) sum += std::exp(pre[t2] - m);
      lse[row] = m + std::log(sum);
    }
    auto d_qkv = to_device<bf16>(qkv);
    auto d_out = to_device<bf16>(random_vec(nc, -9, 9, rng));
    auto d_lse = to_device<float>(random_vec(rows, -9, 9, rng));
    gpu::flash_attention_forward(d_out.get(), d_lse.get(), d_qkv.get(), s.B, s.T, C, s.NH, g.stream);
    g.sync();
    r.compare("flash_attention_forward" + tag + ".out", p, to_host(d_out), out, bound);
    r.compare("flash_attention_forward" + tag + ".lse", p, to_host(d_lse), lse, bound);

    const Vec dout = quantize<bf16>(random_vec(nc, -1, 1, rng));
    Vec dqkv(n3c, 0.0), dpreatt(squares), datt(squares);
    cpu::attention_backward<double>(dqkv.data(), dpreatt.data(), datt.data(), dout.data(), qkv.data(), att.data(), s.B,
                                    s.T, C, s.NH);
    auto d_dout = to_device<bf16>(dout);
    auto d_dqkv = to_device<bf16>(random_vec(n3c, -9, 9, rng));
    gpu::flash_attention_backward(d_dqkv.get(), d_dout.get(), d_qkv.get(), d_out.get(), d_lse.get(), s.B, s.T, C, s.NH,
                                  g.stream);
    g.sync();
    // dq, dk, dv apart: each against its own scale.
    const Vec got = to_host(d_dqkv);
    const char* names[3] = {".dq", ".dk", ".dv"};
    for (int part = 0; part < 3; ++part) {
      Vec got_part, want_part;
      for (std::size_t n = 0; n < nc / C; ++n)
        for (int c = 0; c < C; ++c) {
          const std::size_t at = n * 3 * C + static_cast<std::size_t>(part) * C + c;
          got_part.push_back(got[at]);
          want_part.push_back(dqkv[at]);
        }
      r.compare("flash_attention_backward" + tag + names[part], p, got_part, want_part, bound);
    }
  }
  // Head size 32: not handled, refused before any launch.
  bool threw = false;
  try {
    gpu::flash_attention_forward(nullptr, nullptr, nullptr, 1, 8, 96, 3, g.stream);
  } catch (const std::invalid_argument&) {
    threw = true;
  }
  r.exact("flash_attention_forward(hs=32) throws invalid_argument", p, Vec{threw ? 1.0 : 0.0}, Vec{1.0});
}

template <class T>
void test_elementwise(Report& r, const Gpu& g) {
  const char* p = Precision<T>::name;
  const double bound = Precision<T>::bound;
  std::mt19937 rng(15);
  const std::size_t n = static_cast<std::size_t>(kN) * 4 * kC;  // the MLP's hidden activations
  const Vec x = quantize<T>(random_vec(n, -4, 4, rng));
  const Vec y = quantize<T>(random_vec(n, -1, 1, rng));
  const Vec dout = quantize<T>(random_vec(n, -1, 1, rng));
  auto d_x = to_device<T>(x);
  auto d_y = to_device<T>(y);
  auto d_dout = to_device<T>(dout);

  Vec out(n);
  cpu::gelu_forward<double>(out.data(), x.data(), n);
  auto d_out = to_device<T>(random_vec(n, -9, 9, rng));
  gpu::gelu_forward<T>(d_out.get(), d_x.get(), n, g.stream);
  g.sync();
  r.compare("gelu_forward.out", p, to_host(d_out), out, bound);

  Vec dinp = quantize<T>(random_vec(n, -1, 1, rng));
  auto d_dinp = to_device<T>(dinp);
  cpu::gelu_backward<double>(dinp.data(), x.data(), dout.data(), n);
  gpu::gelu_backward<T>(d_dinp.get(), d_x.get(), d_dout.get(), n, g.stream);
  g.sync();
  r.compare("gelu_backward.dinp", p, to_host(d_dinp), dinp, bound);

  cpu::residual_forward<double>(out.data(), x.data(), y.data(), n);
  gpu::residual_forward<T>(d_out.get(), d_x.get(), d_y.get(), n, g.stream);
  g.sync();
  r.compare("residual_forward.out", p, to_host(d_out), out, bound);

  Vec da = quantize<T>(random_vec(n, -1, 1, rng));
  Vec db = quantize<T>(random_vec(n, -1, 1, rng));
  auto d_da = to_device<T>(da);
  auto d_db = to_device<T>(db);
  cpu::residual_backward<double>(da.data(), db.data(), dout.data(), n);
  gpu::residual_backward<T>(d_da.get(), d_db.get(), d_dout.get(), n, g.stream);
  g.sync();
  r.compare("residual_backward.da", p, to_host(d_da), da, bound);
  r.compare("residual_backward.db", p, to_host(d_db), db, bound);
}

// sum_squares (the gradient norm's), read in T as the update reads the gradients, against the sum
// in double: on the MLP's activations and on a count past one grid (1024 blocks of 256: each thread
// strides), not a multiple of a block; and 0 for no elements.
template <class T>
void test_sum_squares(Report& r, const Gpu& g) {
  const char* p = Precision<T>::name;
  std::mt19937 rng(19);
  for (const std::size_t n : {static_cast<std::size_t>(kN) * 4 * kC, std::size_t{300001}}) {
    const Vec x = quantize<T>(random_vec(n, -2, 2, rng));
    double want = 0;
    for (const double e : x) want += e * e;
    auto d_x = to_device<T>(x);
    auto d_sum = to_device<float>(Vec{-1.0});
    gpu::sum_squares<T>(d_sum.get(), d_x.get(), n, g.stream);
    g.sync();
    r.compare("sum_squares(n=" + std::to_string(n) + ")", p, to_host(d_sum), Vec{want}, kBoundFp32);
  }
  auto d_sum = to_device<float>(Vec{-1.0});
  gpu::sum_squares<T>(d_sum.get(), static_cast<const T*>(nullptr), 0, g.stream);
  g.sync();
  r.exact("sum_squares(n=0)", p, to_host(d_sum), Vec{0.0});
}

bool padded_column(int /*row*/, int col) {
  return col >= kV;
}

template <class T>
void test_softmax_xent(Report& r, const Gpu& g) {
  const char* p = Precision<T>::name;
  const double bound = Precision<T>::bound;
  std::mt19937 rng(16);
  const std::size_t nv = static_cast<std::size_t>(kN) * kVp;
  Vec logits = random_vec(nv, -4, 4, rng);
  // Large padding logits: they must be ignored, not merely small.
  for (int n = 0; n < kN; ++n)
    for (int i = kV; i < kVp; ++i) logits[static_cast<std::size_t>(n) * kVp + i] = 30.0;
  logits = quantize<T>(logits);
  const std::vector<int> targets = random_tokens(kN, kV, rng);

  Vec probs(nv), losses(kN);
  cpu::softmax_xent_forward<double>(probs.data(), losses.data(), logits.data(), targets.data(), kN, kV, kVp);
  auto d_logits = to_device<T>(logits);
  auto d_targets = to_device(targets);
  auto d_probs = to_device<T>(random_vec(nv, -9, 9, rng));
  DeviceBuffer<float> d_losses(kN);
  gpu::softmax_xent_forward<T>(d_probs.get(), d_losses.get(), d_logits.get(), d_targets.get(), kN, kV, kVp, g.stream);
  g.sync();
  r.compare("softmax_xent_forward.probs", p, to_host(d_probs), probs, bound);
  r.exact_zero("softmax_xent_forward.probs", p, to_host(d_probs), kN, kVp, padded_column);
  r.compare("softmax_xent_forward.losses", p, to_host(d_losses), losses, kBoundFp32);  // float for every T

  // No targets: probabilities only, the losses left alone.
  const Vec sentinel(kN, 123.0);
  auto d_kept = to_device<float>(sentinel);
  auto d_probs2 = to_device<T>(random_vec(nv, -9, 9, rng));
  gpu::softmax_xent_forward<T>(d_probs2.get(), d_kept.get(), d_logits.get(), nullptr, kN, kV, kVp, g.stream);
  g.sync();
  r.compare("softmax_xent_forward(no targets).probs", p, to_host(d_probs2), probs, bound);
  r.unchanged("softmax_xent_forward(no targets).losses", p, to_host(d_kept), sentinel);

  const Vec probs_in = quantize<T>(probs);
  const float dloss = 1.0f / static_cast<float>(kN);
  Vec dlogits(nv);
  cpu::softmax_xent_backward<double>(dlogits.data(), probs_in.data(), targets.data(), static_cast<double>(dloss), kN,
                                     kV, kVp);
  auto d_probs_in = to_device<T>(probs_in);
  auto d_dlogits = to_device<T>(random_vec(nv, -9, 9, rng));  // written, not added into
  gpu::softmax_xent_backward<T>(d_dlogits.get(), d_probs_in.get(), d_targets.get(), dloss, kN, kV, kVp, g.stream);
  g.sync();
  r.compare("softmax_xent_backward.dlogits", p, to_host(d_dlogits), dlogits, bound);
  r.exact_zero("softmax_xent_backward.dlogits", p, to_host(d_dlogits), kN, kVp, padded_column);
}

// xent_forward / xent_backward (no stored probabilities) on logits [N,Vp], the first V real: lse
// against a double logsumexp, losses and dlogits against the CPU softmax_xent_* (its exact
// probabilities: the fused backward never rounds them). Every output starts as garbage; the
// backward runs out of place and in place (dlogits = logits).
template <class T>
void test_xent_fused_shape(Report& r, const Gpu& g, int N, int V, int Vp, unsigned seed) {
  const char* p = Precision<T>::name;
  const double bound = Precision<T>::bound;
  const std::string shape = "(V=" + std::to_string(V) + ",Vp=" + std::to_string(Vp) + ")";
  std::mt19937 rng(seed);
  const std::size_t nv = static_cast<std::size_t>(N) * Vp;
  Vec logits = random_vec(nv, -4, 4, rng);
  // Padding logits large enough that reading one would overflow exp: they must not be read.
  for (int n = 0; n < N; ++n)
    for (int i = V; i < Vp; ++i) logits[static_cast<std::size_t>(n) * Vp + i] = 1000.0;
  logits = quantize<T>(logits);
  std::vector<int> targets = random_tokens(static_cast<std::size_t>(N), V, rng);
  targets[0] = V - 1;  // the last real column (in the element-at-a-time tail where there is one)
  targets[1] = 0;

  Vec lse(N);
  for (int n = 0; n < N; ++n) {
    const double* z = logits.data() + static_cast<std::size_t>(n) * Vp;
    const double maxv = *std::max_element(z, z + V);
    double sum = 0.0;
    for (int i = 0; i < V; ++i) sum += std::exp(z[i] - maxv);
    lse[n] = maxv + std::log(sum);
  }
  Vec probs(nv), losses(N);
  cpu::softmax_xent_forward<double>(probs.data(), losses.data(), logits.data(), targets.data(), N, V, Vp);

  auto d_logits = to_device<T>(logits);
  auto d_targets = to_device(targets);
  auto d_lse = to_device<float>(random_vec(N, -9, 9, rng));
  auto d_losses = to_device<float>(random_vec(N, -9, 9, rng));
  gpu::xent_forward<T>(d_losses.get(), d_lse.get(), d_logits.get(), d_targets.get(), N, V, Vp, g.stream);
  g.sync();
  // float statistics for every T, from inputs that T holds exactly
  r.compare("xent_forward" + shape + ".lse", p, to_host(d_lse), lse, kBoundFp32);
  r.compare("xent_forward" + shape + ".losses", p, to_host(d_losses), losses, kBoundFp32);
  r.unchanged("xent_forward" + shape + ".logits", p, to_host(d_logits), logits);

  // No targets: lse only, the losses left alone.
  const Vec sentinel(N, 123.0);
  auto d_kept = to_device<float>(sentinel);
  auto d_lse2 = to_device<float>(random_vec(N, -9, 9, rng));
  gpu::xent_forward<T>(d_kept.get(), d_lse2.get(), d_logits.get(), nullptr, N, V, Vp, g.stream);
  g.sync();
  r.compare("xent_forward" + shape + "(no targets).lse", p, to_host(d_lse2), lse, kBoundFp32);
  r.unchanged("xent_forward" + shape + "(no targets).losses", p, to_host(d_kept), sentinel);

  const float dloss = 1.0f / static_cast<float>(N);
  Vec dlogits(nv);
  cpu::softmax_xent_backward<double>(dlogits.data(), probs.data(), targets.data(), static_cast<double>(dloss), N, V,
                                     Vp);
  const auto padding = [V](int /*row*/, int col) { return col >= V; };
  auto d_lse_in = to_device<float>(lse);
  auto d_dlogits = to_device<T>(random_vec(nv, -9, 9, rng));  // written, not added into
  gpu::xent_backward<T>(d_dlogits.get(), d_logits.get(), d_lse_in.get(), d_targets.get(), dloss, N, V, Vp, g.stream);
  g.sync();
  r.compare("xent_backward" + shape + ".dlogits", p, to_host(d_dlogits), dlogits, bound);
  r.exact_zero("xent_backward" + shape + ".dlogits", p, to_host(d_dlogits), N, Vp, padding);

  auto d_inplace = to_device<T>(logits);
  gpu::xent_backward<T>(d_inplace.get(), d_inplace.get(), d_lse_in.get(), d_targets.get(), dloss, N, V, Vp, g.stream);
  g.sync();
  r.compare("xent_backward" + shape + "(in place).dlogits", p, to_host(d_inplace), dlogits, bound);
  r.exact_zero("xent_backward" + shape + "(in place).dlogits", p, to_host(d_inplace), N, Vp, padding);
}

template <class T>
void test_xent_fused(Report& r, const Gpu& g) {
  // Rows in 128-bit packs with an element-at-a-time tail (V not a multiple of the pack) and
  // padding-only packs.
  test_xent_fused_shape<T>(r, g, kN, kV, kVp, 20);
  // Vp not a multiple of 8 or 4: element at a time.
  test_xent_fused_shape<T>(r, g, kN, 1000, 1003, 21);
  // GPT-2's vocabulary: more packs per row than one pass of the block (threads x unroll) covers.
  test_xent_fused_shape<T>(r, g, 5, 50257, 50304, 22);
}

// --- tensor parallelism: each rank's share run on its own, the shares laid side by side and
// compared with a double reference of the whole.

template <class T>
void test_tensor_parallel_encoder(Report& r, const Gpu& g) {
  const char* p = Precision<T>::name;
  const double bound = Precision<T>::bound;
  constexpr int tp = 2, Vl = kVp / tp;  // rank 1's rows [64, 128) hold the tokens 64..100 and the padding
  std::mt19937 rng(18);
  std::vector<int> tokens = random_tokens(kN, kV, rng);
  tokens[0] = 5;  // one token of each rank, each repeated, across batch rows too
  tokens[1] = kV - 1;
  tokens[9] = tokens[kN - 1] = tokens[0];
  tokens[kT + 2] = tokens[1];
  const Vec wte = quantize<T>(random_vec(static_cast<std::size_t>(kVp) * kC, -1, 1, rng));
  const Vec wpe = quantize<T>(random_vec(static_cast<std::size_t>(kT) * kC, -1, 1, rng));
  const std::size_t nc = static_cast<std::size_t>(kN) * kC, shard = static_cast<std::size_t>(Vl) * kC;
  const auto owns = [](int rank, int token) { return token >= rank * Vl && token < (rank + 1) * Vl; };
  auto d_tokens = to_device(tokens);
  auto d_wpe = to_device<T>(wpe);

  // embedding_lookup: [tp, N, C], a rank's rows and 0 for the other rank's tokens.
  Vec got, want, tp_sum(nc, 0.0);
  for (int rank = 0; rank < tp; ++rank) {
    auto d_wte = to_device<T>(Vec(wte.begin() + rank * shard, wte.begin() + (rank + 1) * shard));
    auto d_out = to_device<T>(random_vec(nc, -9, 9, rng));
    gpu::embedding_lookup<T>(d_out.get(), d_tokens.get(), d_wte.get(), rank * Vl, Vl, kB, kT, kC, g.stream);
    g.sync();
    const Vec out = to_host(d_out);
    got.insert(got.end(), out.begin(), out.end());
    for (int n = 0; n < kN; ++n)
      for (int c = 0; c < kC; ++c) {
        const std::size_t i = static_cast<std::size_t>(n) * kC + c;
        want.push_back(owns(rank, tokens[n]) ? wte[static_cast<std::size_t>(tokens[n]) * kC + c] : 0.0);
        tp_sum[i] += out[i];
      }
  }
  r.compare("embedding_lookup.out", p, got, want, bound);
  r.exact_zero("embedding_lookup.out", p, got, tp * kN, kC,
               [&](int row, int) { return !owns(row / kN, tokens[row % kN]); });

  // add_positions into the ranks' sum (the whole lookup: nonzero, so it adds).
  Vec out = tp_sum;
  for (std::size_t i = 0; i < nc; ++i) out[i] += wpe[(i / kC) % kT * kC + i % kC];
  auto d_out = to_device<T>(tp_sum);
  gpu::add_positions<T>(d_out.get(), d_wpe.get(), kB, kT, kC, g.stream);
  g.sync();
  r.compare("add_positions.out", p, to_host(d_out), out, bound);

  // encoder_backward on each rank's rows: dwte [tp * Vl, C] is the whole table, dwpe [tp, T, C]
  // every rank's (whole) copy.
  const Vec dout = quantize<T>(random_vec(nc, -1, 1, rng));
  auto d_dout = to_device<T>(dout);
  Vec got_dwte, want_dwte, got_dwpe, want_dwpe;
  for (int rank = 0; rank < tp; ++rank) {
    Vec dwte = quantize<T>(random_vec(shard, -1, 1, rng));
    Vec dwpe = quantize<T>(random_vec(wpe.size(), -1, 1, rng));
    auto d_dwte = to_device<T>(dwte);
    auto d_dwpe = to_device<T>(dwpe);
    int groups = 0;
    auto d_groups = token_groups(tokens, rank * Vl, Vl, groups);
    gpu::encoder_backward<T>(d_dwte.get(), d_dwpe.get(), d_dout.get(), d_groups.get(), groups, rank * Vl, kB, kT, kC,
                             g.stream);
    g.sync();
    for (std::size_t i = 0; i < nc; ++i) {
      const int n = static_cast<int>(i / kC), c = static_cast<int>(i % kC);
      dwpe[static_cast<std::size_t>(n % kT) * kC + c] += dout[i];
      if (owns(rank, tokens[n])) dwte[static_cast<std::size_t>(tokens[n] - rank * Vl) * kC + c] += dout[i];
    }
    const Vec gdwte = to_host(d_dwte), gdwpe = to_host(d_dwpe);
    got_dwte.insert(got_dwte.end(), gdwte.begin(), gdwte.end());
    got_dwpe.insert(got_dwpe.end(), gdwpe.begin(), gdwpe.end());
    want_dwte.insert(want_dwte.end(), dwte.begin(), dwte.end());
    want_dwpe.insert(want_dwpe.end(), dwpe.begin(), dwpe.end());
  }
  r.compare("encoder_backward(rank rows).dwte", p, got_dwte, want_dwte, bound);
  r.compare("encoder_backward(rank rows).dwpe", p, got_dwpe, want_dwpe, bound);

  // add_bias: a row-parallel layer's bias, into nonzero outputs.
  const std::size_t noc = static_cast<std::size_t>(kN) * kOC;
  const Vec bias = quantize<T>(random_vec(kOC, -1, 1, rng));
  Vec biased = quantize<T>(random_vec(noc, -1, 1, rng));
  auto d_biased = to_device<T>(biased);
  auto d_bias = to_device<T>(bias);
  gpu::add_bias<T>(d_biased.get(), d_bias.get(), kN, kOC, g.stream);
  g.sync();
  for (std::size_t i = 0; i < noc; ++i) biased[i] += bias[i % kOC];
  r.compare("add_bias.out", p, to_host(d_biased), biased, bound);
}

// The vocabulary-parallel cross-entropy on tp = 4 ranks of Vl = 384 columns, of which 384, 384,
// 332 and 0 are real (V = 1100 of Vp = 1536): a rank with padding, one with nothing, and rows
// longer than a block.
constexpr int kXentV = 1100, kXentVp = 1536, kXentTp = 4, kXentVl = kXentVp / kXentTp;

int xent_valid(int rank) {
  return std::clamp(kXentV - rank * kXentVl, 0, kXentVl);
}
// Rank `rank`'s columns of x [N, Vp], as [N, Vl]; and back.
Vec rank_columns(const Vec& x, int rank) {
  Vec part(static_cast<std::size_t>(kN) * kXentVl);
  for (int n = 0; n < kN; ++n)
    std::copy_n(x.begin() + static_cast<std::ptrdiff_t>(n) * kXentVp + rank * kXentVl, kXentVl,
                part.begin() + static_cast<std::ptrdiff_t>(n) * kXentVl);
  return part;
}
void set_rank_columns(Vec& x, const Vec& part, int rank) {
  for (int n = 0; n < kN; ++n)
    std::copy_n(part.begin() + static_cast<std::ptrdiff_t>(n) * kXentVl, kXentVl,
                x.begin() + static_cast<std::ptrdiff_t>(n) * kXentVp + rank * kXentVl);
}

template <class T>
void test_vocab_parallel_xent(Report& r, const Gpu& g) {
  const char* p = Precision<T>::name;
  const double bound = Precision<T>::bound;
  std::mt19937 rng(19);
  const std::size_t nv = static_cast<std::size_t>(kN) * kXentVp, nl = static_cast<std::size_t>(kN) * kXentVl;
  const double inf = std::numeric_limits<double>::infinity();
  Vec logits = random_vec(nv, -4, 4, rng);
  for (std::size_t i = 0; i < nv; ++i)
    if (static_cast<int>(i % kXentVp) >= kXentV) logits[i] = 30.0;  // padding: ignored, not merely small
  logits = quantize<T>(logits);
  std::vector<int> targets = random_tokens(kN, kXentV, rng);
  targets[0] = 0;  // rank 0's first column, rank 1's first, the last real one (rank 2's)
  targets[1] = kXentVl;
  targets[2] = kXentV - 1;
  auto d_targets = to_device(targets);
  const auto z = [&](int n, int c) { return logits[static_cast<std::size_t>(n) * kXentVp + c]; };
  const auto padding = [](int, int c) { return c >= kXentV; };

  // 1. Each rank's row maximum (rank 3: -inf), then the TP maximum.
  std::vector<DeviceBuffer<T>> d_logits;
  Vec got_max, want_max, tp_max(kN, -inf);
  for (int rank = 0; rank < kXentTp; ++rank) {
    d_logits.push_back(to_device<T>(rank_columns(logits, rank)));
    auto d_max = to_device<float>(random_vec(kN, -9, 9, rng));
    gpu::xent_row_max<T>(d_max.get(), d_logits.back().get(), kN, xent_valid(rank), kXentVl, g.stream);
    g.sync();
    const Vec m = to_host(d_max);
    got_max.insert(got_max.end(), m.begin(), m.end());
    for (int n = 0; n < kN; ++n) {
      double w = -inf;
      for (int c = rank * kXentVl; c < rank * kXentVl + xent_valid(rank); ++c) w = std::max(w, z(n, c));
      want_max.push_back(w);
      tp_max[n] = std::max(tp_max[n], m[n]);
    }
  }
  r.exact("xent_row_max.row_max", p, got_max, want_max);

  // 2. The sums of the exponentials and the target logits, with the TP maximum; then their TP sums.
  // The logits are only read.
  auto d_tp_max = to_device<float>(tp_max);
  Vec got_sum, want_sum, got_target, want_target, tp_sum(kN, 0.0), tp_target(kN, 0.0);
  for (int rank = 0; rank < kXentTp; ++rank) {
    auto d_sum = to_device<float>(random_vec(kN, -9, 9, rng));
    auto d_target = to_device<float>(random_vec(kN, -9, 9, rng));
    gpu::xent_sums<T>(d_sum.get(), d_target.get(), d_logits[rank].get(), d_tp_max.get(), d_targets.get(),
                      rank * kXentVl, kN, xent_valid(rank), kXentVl, g.stream);
    g.sync();
    r.unchanged("xent_sums.logits", p, to_host(d_logits[rank]), quantize<T>(rank_columns(logits, rank)));
    const Vec s = to_host(d_sum), t = to_host(d_target);
    got_sum.insert(got_sum.end(), s.begin(), s.end());
    got_target.insert(got_target.end(), t.begin(), t.end());
    const int first = rank * kXentVl, end = first + xent_valid(rank);
    for (int n = 0; n < kN; ++n) {
      double sum = 0.0;
      for (int c = first; c < end; ++c) sum += std::exp(z(n, c) - tp_max[n]);
      want_sum.push_back(sum);
      want_target.push_back(targets[n] >= first && targets[n] < end ? z(n, targets[n]) : 0.0);
      tp_sum[n] += s[n];
      tp_target[n] += t[n];
    }
  }
  r.compare("xent_sums.row_sum", p, got_sum, want_sum, kBoundFp32);  // float for every T
  r.exact("xent_sums.row_target", p, got_target, want_target);

  // No targets: row_target left alone.
  const Vec sentinel(kN, 123.0);
  auto d_kept = to_device<float>(sentinel);
  DeviceBuffer<float> d_scratch_sum(kN);
  gpu::xent_sums<T>(d_scratch_sum.get(), d_kept.get(), d_logits[2].get(), d_tp_max.get(), nullptr, 2 * kXentVl, kN,
                    xent_valid(2), kXentVl, g.stream);
  g.sync();
  r.unchanged("xent_sums(no targets).row_target", p, to_host(d_kept), sentinel);

  // 3. The probabilities and the losses with the TP sums (rank 3 asks for no losses: null). Odd
  // ranks work in place (probs = their logits), even ones write over garbage.
  const Vec sum_in = quantize<float>(tp_sum), target_in = quantize<float>(tp_target);
  auto d_sum_in = to_device<float>(sum_in);
  auto d_target_in = to_device<float>(target_in);
  Vec got_probs(nv), want_probs(nv), got_losses, want_losses;
  for (int rank = 0; rank < kXentTp; ++rank) {
    const bool losses = rank < kXentTp - 1, in_place = rank % 2 == 1;
    auto d_probs = to_device<T>(random_vec(nl, -9, 9, rng));
    T* out = in_place ? d_logits[rank].get() : d_probs.get();
    auto d_losses = to_device<float>(random_vec(kN, -9, 9, rng));
    gpu::xent_normalize<T>(out, losses ? d_losses.get() : nullptr, d_logits[rank].get(), d_sum_in.get(),
                           d_tp_max.get(), d_target_in.get(), kN, xent_valid(rank), kXentVl, g.stream);
    g.sync();
    set_rank_columns(got_probs, in_place ? to_host(d_logits[rank]) : to_host(d_probs), rank);
    if (!losses) continue;
    const Vec l = to_host(d_losses);
    got_losses.insert(got_losses.end(), l.begin(), l.end());
    for (int n = 0; n < kN; ++n) want_losses.push_back(std::log(sum_in[n]) + tp_max[n] - target_in[n]);
  }
  for (int n = 0; n < kN; ++n)
    for (int c = 0; c < kXentVp; ++c)
      want_probs[static_cast<std::size_t>(n) * kXentVp + c] =
          c < kXentV ? std::exp(z(n, c) - tp_max[n]) / sum_in[static_cast<std::size_t>(n)] : 0.0;
  r.compare("xent_normalize.probs", p, got_probs, want_probs, bound);
  r.exact_zero("xent_normalize.probs", p, got_probs, kN, kXentVp, padding);
  r.compare("xent_normalize.losses", p, got_losses, want_losses, kBoundFp32);

  // The ranks together are the whole-vocabulary softmax + cross-entropy.
  Vec probs(nv), losses(kN);
  cpu::softmax_xent_forward<double>(probs.data(), losses.data(), logits.data(), targets.data(), kN, kXentV, kXentVp);
  Vec every_rank_losses;
  for (int rank = 0; rank < kXentTp - 1; ++rank)
    every_rank_losses.insert(every_rank_losses.end(), losses.begin(), losses.end());
  r.compare("xent_*(all ranks).probs", p, got_probs, probs, bound);
  r.compare("xent_*(all ranks).losses", p, got_losses, every_rank_losses, kBoundFp32);

  // softmax_xent_backward on each rank's columns, from probabilities with garbage in the padding
  // (which must not leak into dlogits: it WRITES 0 there).
  Vec probs_in = quantize<T>(probs);
  for (std::size_t i = 0; i < nv; ++i)
    if (static_cast<int>(i % kXentVp) >= kXentV) probs_in[i] = 0.5;
  const float dloss = 1.0f / static_cast<float>(kN);
  Vec got_dlogits(nv), want_dlogits(nv);
  for (int rank = 0; rank < kXentTp; ++rank) {
    auto d_probs_in = to_device<T>(rank_columns(probs_in, rank));
    auto d_dlogits = to_device<T>(random_vec(nl, -9, 9, rng));
    gpu::softmax_xent_backward<T>(d_dlogits.get(), d_probs_in.get(), d_targets.get(), dloss, rank * kXentVl, kN,
                                  xent_valid(rank), kXentVl, g.stream);
    g.sync();
    set_rank_columns(got_dlogits, to_host(d_dlogits), rank);
  }
  for (int n = 0; n < kN; ++n)
    for (int c = 0; c < kXentV; ++c) {
      const std::size_t i = static_cast<std::size_t>(n) * kXentVp + c;
      want_dlogits[i] = (probs_in[i] - (c == targets[n] ? 1.0 : 0.0)) * static_cast<double>(dloss);
    }
  r.compare("softmax_xent_backward(rank columns).dlogits", p, got_dlogits, want_dlogits, bound);
  r.exact_zero("softmax_xent_backward(rank columns).dlogits", p, got_dlogits, kN, kXentVp, padding);
}

// AdamW against the CPU update (float on both sides), on a shard that cuts tensors in the middle
// and on one tensor with the single-range overload; then with bf16 gradients read as they are
// (against the CPU update of the same gradients widened) writing the model's bf16 copy of the
// updated parameters in the same pass (against those parameters rounded to bf16: exact).
void test_adamw(Report& r, const Gpu& g) {
  ct::ModelConfig config;
  config.max_seq = 8;
  config.vocab = 10;
  config.padded_vocab = 16;
  config.layers = 2;
  config.heads = 2;
  config.channels = 8;
  const ct::ParameterLayout layout(config);
  ct::AdamWOptions o;
  o.weight_decay = 0.1f;
  const float lr = 1e-2f, grad_scale = 0.7f;
  const std::int64_t step = 3;

  std::mt19937 rng(17);
  auto floats = [&rng](std::size_t n, double lo, double hi, bool narrow = false) {
    const Vec v = narrow ? quantize<bf16>(random_vec(n, lo, hi, rng)) : quantize<float>(random_vec(n, lo, hi, rng));
    return std::vector<float>(v.begin(), v.end());
  };
  const auto widen = [](const std::vector<float>& v) { return Vec(v.begin(), v.end()); };

  struct Case {
    const char* name;
    std::size_t begin, count;
    bool single_range;  // through the overload without a layout (wte only: decayed)
    bool half;          // bf16 gradients, and the bf16 copy written
  };
  const std::size_t wte = layout.size(ct::Tensor::wte);
  const Case cases[] = {{"adamw_update(shard)", 37, layout.total() - 37 - 11, false, false},
                        {"adamw_update(one range)", 0, wte, true, false},
                        {"adamw_update(bf16 grads, bf16 copy)", 5, layout.total() - 5, false, true}};
  for (const Case& c : cases) {
    const char* p = c.half ? "bf16" : "fp32";
    const std::vector<float> params0 = floats(c.count, -1, 1), grads = floats(c.count, -1, 1, c.half);
    const std::vector<float> m0 = floats(c.count, -0.1, 0.1), v0 = floats(c.count, 0, 0.01);
    std::vector<float> params = params0, m = m0, v = v0;
    ct::adamw_update(layout, c.begin, params, grads, m, v, lr, grad_scale, o, step);

    auto d_params = to_device<float>(widen(params0));
    auto d_m = to_device<float>(widen(m0));
    auto d_v = to_device<float>(widen(v0));
    auto d_grads = to_device<float>(widen(grads));
    auto d_grads16 = to_device<bf16>(widen(grads));
    auto d_copy = to_device<bf16>(random_vec(c.count, -9, 9, rng));
    if (c.single_range)
      gpu::adamw_update(d_params.get(), d_grads.get(), d_m.get(), d_v.get(), c.count, lr, grad_scale, o.weight_decay, o,
                        step, g.stream);
    else if (c.half)
      gpu::adamw_update<bf16>(layout, c.begin, d_params.get(), d_grads16.get(), d_m.get(), d_v.get(), d_copy.get(),
                              c.count, lr, grad_scale, o, step, g.stream);
    else
      gpu::adamw_update<float>(layout, c.begin, d_params.get(), d_grads.get(), d_m.get(), d_v.get(), nullptr, c.count,
                               lr, grad_scale, o, step, g.stream);
    g.sync();
    // The update itself (params - params0), not the parameters, so the bound means something.
    const Vec updated = to_host(d_params);
    Vec got = updated, want = widen(params);
    for (std::size_t i = 0; i < c.count; ++i) {
      got[i] -= params0[i];
      want[i] -= params0[i];
    }
    const std::string name = c.name;
    r.compare(name + ".params_delta", p, got, want, kBoundFp32);
    r.compare(name + ".m", p, to_host(d_m), widen(m), kBoundFp32);
    r.compare(name + ".v", p, to_host(d_v), widen(v), kBoundFp32);
    if (c.half) r.exact(name + ".copy", p, to_host(d_copy), quantize<bf16>(updated));
  }
}

// Channels [j*C, (j+1)*C) of each row of a [N, 3C] tensor: q (j = 0), k (1) or v (2).
Vec qkv_part(const Vec& x, int n, int C, int j) {
  Vec part(static_cast<std::size_t>(n) * C);
  for (int i = 0; i < n; ++i)
    std::copy_n(x.begin() + (static_cast<std::ptrdiff_t>(i) * 3 + j) * C, C,
                part.begin() + static_cast<std::ptrdiff_t>(i) * C);
  return part;
}

// cuDNN's fused flash attention (bf16, head size 64) against the CPU reference in double: out and
// dq/dk/dv from cpu::attention_forward/backward, lse from the reference's preatt (logsumexp over
// t2 <= t). T is not a multiple of cuDNN's 64- or 128-row tiles. Every output starts as garbage.
void test_cudnn_attention(Report& r, const Gpu& g) {
  namespace cc = commscope::trainer::cuda;
  if (!cc::CudnnAttention::built()) {
    std::printf("cudnn_attention: skipped (built without cuDNN)\n");
    return;
  }
  std::printf("cudnn_attention: %s\n", cc::CudnnAttention::version().c_str());
  cc::CudnnAttention attention;
  std::mt19937 rng(21);
  struct Case {
    int B, T, NH;
  };
  for (const Case c : {Case{2, 67, 3}, Case{1, 130, 2}}) {
    constexpr int hs = 64;
    const int C = c.NH * hs, n = c.B * c.T, rows = c.B * c.NH * c.T;
    const std::string name =
        "cudnn_attention[B=" + std::to_string(c.B) + ",T=" + std::to_string(c.T) + ",NH=" + std::to_string(c.NH) + "].";
    const std::size_t nc = static_cast<std::size_t>(n) * C, n3c = 3 * nc;
    const std::size_t squares = static_cast<std::size_t>(rows) * c.T;
    const Vec qkv = quantize<bf16>(random_vec(n3c, -1.5, 1.5, rng));
    Vec out(nc), preatt(squares), att(squares);
    cpu::attention_forward<double>(out.data(), preatt.data(), att.data(), qkv.data(), c.B, c.T, C, c.NH);
    Vec lse(static_cast<std::size_t>(rows));  // [B,NH,T]
    for (int row = 0; row < rows; ++row) {
      const int t = row % c.T;
      const double* p = preatt.data() + static_cast<std::size_t>(row) * c.T;
      const double m = *std::max_element(p, p + t + 1);
      double z = 0.0;
      for (int t2 = 0; t2 <= t; ++t2) z += std::exp(p[t2] - m);
      lse[static_cast<std::size_t>(row)] = m + std::log(z);
    }
    auto d_qkv = to_device<bf16>(qkv);
    auto d_out = to_device<bf16>(random_vec(nc, -9, 9, rng));
    auto d_lse = to_device<float>(random_vec(static_cast<std::size_t>(rows), -9, 9, rng));
    try {  // the first use of the shape builds its plans; a failure says why
      attention.forward(d_out.get(), d_lse.get(), d_qkv.get(), c.B, c.T, C, c.NH, g.stream);
      g.sync();
    } catch (const std::exception& e) {
      r.failed(name + "forward", "bf16", e.what());
      continue;
    }
    r.compare(name + "out", "bf16", to_host(d_out), out, kBoundBf16);
    r.compare(name + "lse", "bf16", to_host(d_lse), lse, kBoundBf16);

    // The backward reads the device's own out and lse, as the trainer will.
    const Vec dout = quantize<bf16>(random_vec(nc, -1, 1, rng));
    Vec dqkv(n3c, 0.0), dpreatt(squares), datt(squares);  // from zero: the device WRITES dqkv
    cpu::attention_backward<double>(dqkv.data(), dpreatt.data(), datt.data(), dout.data(), qkv.data(), att.data(), c.B,
                                    c.T, C, c.NH);
    auto d_dout = to_device<bf16>(dout);
    auto d_dqkv = to_device<bf16>(random_vec(n3c, -9, 9, rng));
    try {
      attention.backward(d_dqkv.get(), d_dout.get(), d_qkv.get(), d_out.get(), d_lse.get(), c.B, c.T, C, c.NH,
                         g.stream);
      g.sync();
    } catch (const std::exception& e) {
      r.failed(name + "backward", "bf16", e.what());
      continue;
    }
    if (!attention.supports(c.B, c.T, C, c.NH)) r.failed(name + "supports", "bf16", "false after both ran");
    const Vec got = to_host(d_dqkv);
    const char* part_names[3] = {"dq", "dk", "dv"};
    for (int j = 0; j < 3; ++j)
      r.compare(name + part_names[j], "bf16", qkv_part(got, n, C, j), qkv_part(dqkv, n, C, j), kBoundBf16);
  }
}

template <class T>
void test_precision(Report& r, const Gpu& g) {
  test_encoder<T>(r, g);
  for (const LayerNormShape& shape : kLayerNormShapes) test_layernorm<T>(r, g, shape);
  for (const LayerNormShape& shape : kLayerNormShapes) test_residual_layernorm<T>(r, g, shape);
  test_matmul<T>(r, g);
  test_attention<T>(r, g);
  test_elementwise<T>(r, g);
  test_sum_squares<T>(r, g);
  test_softmax_xent<T>(r, g);
  test_xent_fused<T>(r, g);
  test_tensor_parallel_encoder<T>(r, g);
  test_vocab_parallel_xent<T>(r, g);
}

// "" when device 0 can run the kernels, else why not.
std::string unusable_gpu() {
  int count = 0;
  if (const cudaError_t e = cudaGetDeviceCount(&count); e != cudaSuccess) return cudaGetErrorString(e);
  if (count == 0) return "no CUDA device found";
  cudaDeviceProp prop{};
  if (const cudaError_t e = cudaGetDeviceProperties(&prop, 0); e != cudaSuccess) return cudaGetErrorString(e);
  if (prop.major < 8)
    return "device 0 (" + std::string(prop.name) + ") is sm_" + std::to_string(prop.major) +
           std::to_string(prop.minor) + "; the kernels are built for sm_80 and newer";
  if (const cudaError_t e = cudaFree(nullptr); e != cudaSuccess) return cudaGetErrorString(e);  // context creation
  return "";
}

}  // namespace

int main() {
  if (const std::string why = unusable_gpu(); !why.empty()) {
    std::printf("skipped: no usable CUDA GPU (%s)\n", why.c_str());
    return 77;
  }
  try {
    Gpu g;
    check_cuda(cudaStreamCreate(&g.stream), "cudaStreamCreate");
    if (cublasCreate(&g.blas) != CUBLAS_STATUS_SUCCESS) throw std::runtime_error("cublasCreate failed");
    Report r;
    std::printf("%-44s %-5s %11s %8s %s\n", "kernel.tensor", "prec", "max_rel_err", "bound", "result");
    test_precision<float>(r, g);
    test_precision<bf16>(r, g);
    test_flash_attention(r, g);
    test_adamw(r, g);
    test_cudnn_attention(r, g);
    cublasDestroy(g.blas);
    cudaStreamDestroy(g.stream);
    std::printf("%d of %d checks failed\n", r.failures(), r.checks());
    return r.failures() == 0 ? 0 : 1;
  } catch (const std::exception& e) {
    std::printf("error: %s\n", e.what());
    return 1;
  }
}
