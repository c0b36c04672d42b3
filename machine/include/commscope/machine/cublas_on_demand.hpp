// cuBLAS and cuBLASLt opened at their first call, not when a program starts (CUDA builds:
// machine/src/cublas_on_demand.cpp, the library commscope_cublas, which programs link instead of
// CUDA::cublas and CUDA::cublasLt). These say whether they can be: needs no CUDA header.
#pragma once

#include <array>
#include <string>
#include <vector>

namespace commscope::machine {

// The functions defined there, each forwarding to the library's (the trainer's and the doctor's).
inline constexpr std::array<const char*, 9> kCublasFunctions{
    "cublasCreate_v2",    "cublasDestroy_v2",           "cublasSetStream_v2",
    "cublasGetStream_v2", "cublasSetWorkspace_v2",      "cublasSetMathMode",
    "cublasGemmEx",       "cublasGemmStridedBatchedEx", "cublasGetStatusString"};
inline constexpr std::array<const char*, 11> kCublasLtFunctions{"cublasLtCreate",
                                                                "cublasLtMatmul",
                                                                "cublasLtMatmulAlgoGetHeuristic",
                                                                "cublasLtMatmulDescCreate",
                                                                "cublasLtMatmulDescDestroy",
                                                                "cublasLtMatmulDescSetAttribute",
                                                                "cublasLtMatmulPreferenceCreate",
                                                                "cublasLtMatmulPreferenceDestroy",
                                                                "cublasLtMatmulPreferenceSetAttribute",
                                                                "cublasLtMatrixLayoutCreate",
                                                                "cublasLtMatrixLayoutDestroy"};

// Opens the libraries (once): "" where both opened, else "cuBLAS could not be loaded: WHY".
std::string cublas_load_error();
// Of the functions above, those the opened libraries lack (every one where they did not open).
std::vector<std::string> cublas_missing_functions();

}  // namespace commscope::machine
