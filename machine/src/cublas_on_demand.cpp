// cuBLAS and cuBLASLt opened at their first call (dlopen of libcublas.so.N and libcublasLt.so.N,
// N the major version of the headers built against): the functions the trainer and the doctor
// call, defined here under cuBLAS's own declarations (cublas_v2.h, cublasLt.h: a signature that
// differs from the header's does not compile), each forwarding to the library's. Programs link
// this library instead of CUDA::cublas and CUDA::cublasLt, so that one that never multiplies on a
// GPU (every CPU run of a CUDA build's commscope-train, the doctor without GPUs) does not load
// them: loading libcublasLt.so.13 took 0.40-0.50 s of every process's start on the 2-core VM (an
// empty program linked with it alone; with libcudnn, libnccl, libcudart or libcupti alone
// 0.01-0.02 s), and commscope-train --help 0.56 s. Where a library or a function cannot be
// found, each call returns CUBLAS_STATUS_NOT_INITIALIZED and cublasGetStatusString says why.
#include <dlfcn.h>

#include <cublasLt.h>
#include <cublas_v2.h>

#include <string>

#include "commscope/machine/cublas_on_demand.hpp"

namespace commscope::machine {
namespace {

#define COMMSCOPE_STR2(x) #x
#define COMMSCOPE_STR(x) COMMSCOPE_STR2(x)
constexpr const char* kCublas = "libcublas.so." COMMSCOPE_STR(CUBLAS_VER_MAJOR);
constexpr const char* kCublasLt = "libcublasLt.so." COMMSCOPE_STR(CUBLAS_VER_MAJOR);

// The two libraries, opened once (thread-safe), and why one could not be.
struct Libraries {
  void* blas = nullptr;
  void* lt = nullptr;
  std::string error;
  Libraries() {
    lt = dlopen(kCublasLt, RTLD_NOW | RTLD_LOCAL);
    if (!lt) error = dlerror();
    blas = dlopen(kCublas, RTLD_NOW | RTLD_LOCAL);
    if (!blas && error.empty()) error = dlerror();
  }
};

const Libraries& libraries() {
  static const Libraries libs;
  return libs;
}

// `name` in cuBLAS (lt false) or cuBLASLt; nullptr where it is not there.
void* symbol(bool lt, const char* name) {
  void* lib = lt ? libraries().lt : libraries().blas;
  return lib ? dlsym(lib, name) : nullptr;
}

}  // namespace

std::string cublas_load_error() {
  const Libraries& libs = libraries();
  if (!libs.error.empty()) return "cuBLAS could not be loaded: " + libs.error;
  return "";
}

std::vector<std::string> cublas_missing_functions() {
  std::vector<std::string> missing;
  for (const char* name : kCublasFunctions)
    if (!symbol(false, name)) missing.emplace_back(name);
  for (const char* name : kCublasLtFunctions)
    if (!symbol(true, name)) missing.emplace_back(name);
  return missing;
}

}  // namespace commscope::machine

using commscope::machine::symbol;

// One function: its definition with the header's parameters (an extern "C" function of another
// signature than the header's would not compile), forwarding them to the library's. The pointer's
// type is spelled from the same parameters: C++ overloads some names (cublasGemmEx).
#define COMMSCOPE_ON_DEMAND(lt, name, params, args)                 \
  extern "C" cublasStatus_t CUBLASWINAPI name params {              \
    using Fn = cublasStatus_t(CUBLASWINAPI*) params;                \
    static const auto fn = reinterpret_cast<Fn>(symbol(lt, #name)); \
    return fn ? fn args : CUBLAS_STATUS_NOT_INITIALIZED;            \
  }

COMMSCOPE_ON_DEMAND(false, cublasCreate_v2, (cublasHandle_t * handle), (handle))
COMMSCOPE_ON_DEMAND(false, cublasDestroy_v2, (cublasHandle_t handle), (handle))
COMMSCOPE_ON_DEMAND(false, cublasSetStream_v2, (cublasHandle_t handle, cudaStream_t stream), (handle, stream))
COMMSCOPE_ON_DEMAND(false, cublasGetStream_v2, (cublasHandle_t handle, cudaStream_t* stream), (handle, stream))
COMMSCOPE_ON_DEMAND(false, cublasSetWorkspace_v2, (cublasHandle_t handle, void* workspace, size_t bytes),
                    (handle, workspace, bytes))
COMMSCOPE_ON_DEMAND(false, cublasSetMathMode, (cublasHandle_t handle, cublasMath_t mode), (handle, mode))
COMMSCOPE_ON_DEMAND(false, cublasGemmEx,
                    (cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb, int m, int n, int k,
                     const void* alpha, const void* A, cudaDataType Atype, int lda, const void* B, cudaDataType Btype,
                     int ldb, const void* beta, void* C, cudaDataType Ctype, int ldc, cublasComputeType_t computeType,
                     cublasGemmAlgo_t algo),
                    (handle, transa, transb, m, n, k, alpha, A, Atype, lda, B, Btype, ldb, beta, C, Ctype, ldc,
                     computeType, algo))
COMMSCOPE_ON_DEMAND(false, cublasGemmStridedBatchedEx,
                    (cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb, int m, int n, int k,
                     const void* alpha, const void* A, cudaDataType Atype, int lda, long long int strideA,
                     const void* B, cudaDataType Btype, int ldb, long long int strideB, const void* beta, void* C,
                     cudaDataType Ctype, int ldc, long long int strideC, int batchCount,
                     cublasComputeType_t computeType, cublasGemmAlgo_t algo),
                    (handle, transa, transb, m, n, k, alpha, A, Atype, lda, strideA, B, Btype, ldb, strideB, beta, C,
                     Ctype, ldc, strideC, batchCount, computeType, algo))
COMMSCOPE_ON_DEMAND(true, cublasLtCreate, (cublasLtHandle_t * handle), (handle))
COMMSCOPE_ON_DEMAND(true, cublasLtMatmul,
                    (cublasLtHandle_t handle, cublasLtMatmulDesc_t desc, const void* alpha, const void* A,
                     cublasLtMatrixLayout_t Adesc, const void* B, cublasLtMatrixLayout_t Bdesc, const void* beta,
                     const void* C, cublasLtMatrixLayout_t Cdesc, void* D, cublasLtMatrixLayout_t Ddesc,
                     const cublasLtMatmulAlgo_t* algo, void* workspace, size_t workspaceSizeInBytes,
                     cudaStream_t stream),
                    (handle, desc, alpha, A, Adesc, B, Bdesc, beta, C, Cdesc, D, Ddesc, algo, workspace,
                     workspaceSizeInBytes, stream))
COMMSCOPE_ON_DEMAND(true, cublasLtMatmulAlgoGetHeuristic,
                    (cublasLtHandle_t handle, cublasLtMatmulDesc_t desc, cublasLtMatrixLayout_t Adesc,
                     cublasLtMatrixLayout_t Bdesc, cublasLtMatrixLayout_t Cdesc, cublasLtMatrixLayout_t Ddesc,
                     cublasLtMatmulPreference_t preference, int requested, cublasLtMatmulHeuristicResult_t results[],
                     int* returned),
                    (handle, desc, Adesc, Bdesc, Cdesc, Ddesc, preference, requested, results, returned))
COMMSCOPE_ON_DEMAND(true, cublasLtMatmulDescCreate,
                    (cublasLtMatmulDesc_t * desc, cublasComputeType_t computeType, cudaDataType_t scaleType),
                    (desc, computeType, scaleType))
COMMSCOPE_ON_DEMAND(true, cublasLtMatmulDescDestroy, (cublasLtMatmulDesc_t desc), (desc))
COMMSCOPE_ON_DEMAND(true, cublasLtMatmulDescSetAttribute,
                    (cublasLtMatmulDesc_t desc, cublasLtMatmulDescAttributes_t attr, const void* buf, size_t bytes),
                    (desc, attr, buf, bytes))
COMMSCOPE_ON_DEMAND(true, cublasLtMatmulPreferenceCreate, (cublasLtMatmulPreference_t * pref), (pref))
COMMSCOPE_ON_DEMAND(true, cublasLtMatmulPreferenceDestroy, (cublasLtMatmulPreference_t pref), (pref))
COMMSCOPE_ON_DEMAND(true, cublasLtMatmulPreferenceSetAttribute,
                    (cublasLtMatmulPreference_t pref, cublasLtMatmulPreferenceAttributes_t attr, const void* buf,
                     size_t bytes),
                    (pref, attr, buf, bytes))
COMMSCOPE_ON_DEMAND(true, cublasLtMatrixLayoutCreate,
                    (cublasLtMatrixLayout_t * layout, cudaDataType type, uint64_t rows, uint64_t cols, int64_t ld),
                    (layout, type, rows, cols, ld))
COMMSCOPE_ON_DEMAND(true, cublasLtMatrixLayoutDestroy, (cublasLtMatrixLayout_t layout), (layout))

// The status's name from cuBLAS where it loaded; otherwise why it did not.
extern "C" const char* CUBLASWINAPI cublasGetStatusString(cublasStatus_t status) {
  static const auto fn = reinterpret_cast<decltype(&cublasGetStatusString)>(symbol(false, "cublasGetStatusString"));
  if (fn) return fn(status);
  static const std::string why = [] {
    const std::string e = commscope::machine::cublas_load_error();
    return e.empty() ? std::string("cuBLAS lacks cublasGetStatusString") : e;
  }();
  return why.c_str();
}
