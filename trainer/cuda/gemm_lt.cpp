// The forward GEMMs through cuBLASLt with the bias (and GELU) in the epilogue: see gemm_lt.hpp.
#include "gemm_lt.hpp"

#include <cublasLt.h>
#include <cuda_bf16.h>

#include <cstdint>
#include <map>
#include <mutex>
#include <stdexcept>
#include <string>
#include <tuple>
#include <type_traits>

#include "cuda_check.hpp"

namespace commscope::trainer::cuda_kernels::detail {

namespace {

void lt_check(cublasStatus_t s, const char* what) {
  if (s != CUBLAS_STATUS_SUCCESS)
    throw std::runtime_error(std::string("cuBLASLt: ") + what + ": " + cublasGetStatusString(s));
}

// cuBLASLt's heuristics pick faster kernels with room to work in; 32 MiB is what cuBLAS itself
// takes on Hopper.
constexpr std::size_t kWorkspaceBytes = std::size_t{32} << 20;

// One handle and workspace per device, made on first use and kept for the process (cuBLASLt
// handles are thread safe; a workspace is used by one stream at a time: the model's).
struct DeviceLt {
  int device = 0;
  cublasLtHandle_t handle = nullptr;
  void* workspace = nullptr;
};
DeviceLt& device_lt() {
  static std::mutex mutex;
  static std::map<int, DeviceLt> per_device;
  int device = 0;
  COMMSCOPE_CUDA_CHECK(cudaGetDevice(&device));
  const std::lock_guard<std::mutex> lock(mutex);
  DeviceLt& d = per_device[device];
  if (d.handle == nullptr) {
    d.device = device;
    lt_check(cublasLtCreate(&d.handle), "cublasLtCreate");
    COMMSCOPE_CUDA_CHECK(cudaMalloc(&d.workspace, kWorkspaceBytes));
  }
  return d;
}

// RAII over the three descriptor kinds.
struct MatmulDesc {
  cublasLtMatmulDesc_t d = nullptr;
  MatmulDesc() { lt_check(cublasLtMatmulDescCreate(&d, CUBLAS_COMPUTE_32F, CUDA_R_32F), "cublasLtMatmulDescCreate"); }
  ~MatmulDesc() { cublasLtMatmulDescDestroy(d); }
  MatmulDesc(const MatmulDesc&) = delete;
  MatmulDesc& operator=(const MatmulDesc&) = delete;
  template <class V>
  void set(cublasLtMatmulDescAttributes_t a, const V& v) {
    lt_check(cublasLtMatmulDescSetAttribute(d, a, &v, sizeof(v)), "cublasLtMatmulDescSetAttribute");
  }
};
struct Layout {
  cublasLtMatrixLayout_t l = nullptr;
  Layout(cudaDataType_t type, std::uint64_t rows, std::uint64_t cols, std::int64_t ld) {
    lt_check(cublasLtMatrixLayoutCreate(&l, type, rows, cols, ld), "cublasLtMatrixLayoutCreate");
  }
  ~Layout() { cublasLtMatrixLayoutDestroy(l); }
  Layout(const Layout&) = delete;
  Layout& operator=(const Layout&) = delete;
};
struct Preference {
  cublasLtMatmulPreference_t p = nullptr;
  Preference() {
    lt_check(cublasLtMatmulPreferenceCreate(&p), "cublasLtMatmulPreferenceCreate");
    const std::size_t bytes = kWorkspaceBytes;
    lt_check(cublasLtMatmulPreferenceSetAttribute(p, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &bytes, sizeof(bytes)),
             "cublasLtMatmulPreferenceSetAttribute");
  }
  ~Preference() { cublasLtMatmulPreferenceDestroy(p); }
  Preference(const Preference&) = delete;
  Preference& operator=(const Preference&) = delete;
};

// The heuristic's choice per shape, asked once (a query costs tens of microseconds of host time,
// and the model asks for the same few shapes every step). found == false: no algorithm.
struct Choice {
  bool found = false;
  cublasLtMatmulAlgo_t algo{};
};
enum class Kind { bias, gelu, dgelu };
struct Shape {
  cudaDataType_t type;
  Kind kind;
  int N, C, OC;
};
Choice& cached_choice(int device, const Shape& s, bool& fresh) {
  static std::mutex mutex;
  static std::map<std::tuple<int, int, int, int, int, int>, Choice> choices;
  const std::lock_guard<std::mutex> lock(mutex);
  auto [it, inserted] =
      choices.try_emplace({device, static_cast<int>(s.type), static_cast<int>(s.kind), s.N, s.C, s.OC});
  fresh = inserted;
  return it->second;
}

bool aligned16(const void* p) {
  return reinterpret_cast<std::uintptr_t>(p) % 16 == 0;
}

// D = A B with desc's epilogue, by the algorithm the heuristic picked for this shape the first
// time it was asked (false: none, nothing done).
bool lt_run(const DeviceLt& lt, const MatmulDesc& desc, const Layout& a, const Layout& b, const Layout& d,
            const Shape& shape, const void* A, const void* B, void* D, cudaStream_t stream) {
  bool fresh = false;
  Choice& choice = cached_choice(lt.device, shape, fresh);
  if (fresh) {
    const Preference pref;
    cublasLtMatmulHeuristicResult_t result{};
    int found = 0;
    choice.found = cublasLtMatmulAlgoGetHeuristic(lt.handle, desc.d, a.l, b.l, d.l, d.l, pref.p, 1, &result, &found) ==
                       CUBLAS_STATUS_SUCCESS &&
                   found > 0;
    if (choice.found) choice.algo = result.algo;
  }
  if (!choice.found) return false;
  const float alpha = 1.0f, beta = 0.0f;
  lt_check(cublasLtMatmul(lt.handle, desc.d, &alpha, A, a.l, B, b.l, &beta, D, d.l, D, d.l, &choice.algo, lt.workspace,
                          kWorkspaceBytes, stream),
           shape.kind == Kind::dgelu ? "cublasLtMatmul (dgelu)" : "cublasLtMatmul");
  return true;
}

}  // namespace

std::size_t lt_workspace() {
  static_cast<void>(device_lt());
  return kWorkspaceBytes;
}

template <class T>
bool lt_matmul_forward(T* out, T* pre_gelu, const T* inp, const T* w, const T* bias, int N, int C, int OC,
                       cudaStream_t stream) {
  constexpr cudaDataType_t type = std::is_same_v<T, float> ? CUDA_R_32F : CUDA_R_16BF;
  // What the bias and GELU epilogues need: 16-byte aligned vectors and an aux leading dimension
  // that is a multiple of 8; elsewhere the caller takes the plain path.
  if (N <= 0 || OC <= 0 || C <= 0 || bias == nullptr || !aligned16(bias) || !aligned16(out) || !aligned16(inp) ||
      !aligned16(w))
    return false;
  if (pre_gelu != nullptr && (OC % 8 != 0 || !aligned16(pre_gelu))) return false;
  DeviceLt& lt = device_lt();
  MatmulDesc desc;
  // out^T [OC,N] = w [OC,C] inp^T [C,N] in cuBLAS's column-major view: A = w as [C,OC] (ld C)
  // transposed, B = inp as [C,N] (ld C), D = out as [OC,N] (ld OC); the bias is per row of D.
  desc.set(CUBLASLT_MATMUL_DESC_TRANSA, CUBLAS_OP_T);
  desc.set(CUBLASLT_MATMUL_DESC_TRANSB, CUBLAS_OP_N);
  desc.set(CUBLASLT_MATMUL_DESC_EPILOGUE,
           pre_gelu != nullptr ? CUBLASLT_EPILOGUE_GELU_AUX_BIAS : CUBLASLT_EPILOGUE_BIAS);
  desc.set(CUBLASLT_MATMUL_DESC_BIAS_POINTER, bias);
  if (pre_gelu != nullptr) {
    desc.set(CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_POINTER, pre_gelu);
    desc.set(CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_LD, static_cast<std::int64_t>(OC));
  }
  const Layout a(type, static_cast<std::uint64_t>(C), static_cast<std::uint64_t>(OC), C);
  const Layout b(type, static_cast<std::uint64_t>(C), static_cast<std::uint64_t>(N), C);
  const Layout d(type, static_cast<std::uint64_t>(OC), static_cast<std::uint64_t>(N), OC);
  return lt_run(lt, desc, a, b, d, {type, pre_gelu != nullptr ? Kind::gelu : Kind::bias, N, C, OC}, w, inp, out,
                stream);
}

template <class T>
bool lt_matmul_dgelu(T* dpre, const T* dout, const T* w, const T* pre_gelu, int N, int C, int OC, cudaStream_t stream) {
  constexpr cudaDataType_t type = std::is_same_v<T, float> ? CUDA_R_32F : CUDA_R_16BF;
  if (N <= 0 || OC <= 0 || C <= 0 || C % 8 != 0 || !aligned16(dpre) || !aligned16(dout) || !aligned16(w) ||
      !aligned16(pre_gelu))
    return false;
  DeviceLt& lt = device_lt();
  MatmulDesc desc;
  // dpre^T [C,N] = w^T [C,OC] dout^T [OC,N] in the column-major view: A = w as [C,OC] (ld C),
  // B = dout as [OC,N] (ld OC), D = dpre as [C,N] (ld C); the aux (pre_gelu) has D's shape.
  desc.set(CUBLASLT_MATMUL_DESC_TRANSA, CUBLAS_OP_N);
  desc.set(CUBLASLT_MATMUL_DESC_TRANSB, CUBLAS_OP_N);
  desc.set(CUBLASLT_MATMUL_DESC_EPILOGUE, CUBLASLT_EPILOGUE_DGELU);
  desc.set(CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_POINTER, pre_gelu);
  desc.set(CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_LD, static_cast<std::int64_t>(C));
  const Layout a(type, static_cast<std::uint64_t>(C), static_cast<std::uint64_t>(OC), C);
  const Layout b(type, static_cast<std::uint64_t>(OC), static_cast<std::uint64_t>(N), OC);
  const Layout d(type, static_cast<std::uint64_t>(C), static_cast<std::uint64_t>(N), C);
  return lt_run(lt, desc, a, b, d, {type, Kind::dgelu, N, C, OC}, w, dout, dpre, stream);
}

template bool lt_matmul_dgelu<float>(float*, const float*, const float*, const float*, int, int, int, cudaStream_t);
template bool lt_matmul_dgelu<__nv_bfloat16>(__nv_bfloat16*, const __nv_bfloat16*, const __nv_bfloat16*,
                                             const __nv_bfloat16*, int, int, int, cudaStream_t);
template bool lt_matmul_forward<float>(float*, float*, const float*, const float*, const float*, int, int, int,
                                       cudaStream_t);
template bool lt_matmul_forward<__nv_bfloat16>(__nv_bfloat16*, __nv_bfloat16*, const __nv_bfloat16*,
                                               const __nv_bfloat16*, const __nv_bfloat16*, int, int, int, cudaStream_t);

}  // namespace commscope::trainer::cuda_kernels::detail
