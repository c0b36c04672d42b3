#pragma once
// The forward GEMM of a layer with a bias through cuBLASLt, the bias (and GELU) applied in the
// GEMM's epilogue instead of in passes of their own over the output.
#include <cuda_runtime_api.h>

#include <cstddef>

namespace commscope::trainer::cuda_kernels::detail {

// The bytes of cuBLASLt's workspace, one per device for the process; made here on this device
// if it was not yet (so that a model counts it where it plans its memory).
std::size_t lt_workspace();

// out[N,OC] = inp[N,C] w[OC,C]^T + bias[OC]; with pre_gelu: pre_gelu = that, out = gelu(that)
// (the tanh approximation, as gelu_forward). Both WRITTEN. Returns false, having done nothing,
// where cuBLASLt cannot (no bias, pointers not 16-byte aligned, OC not a multiple of 8 for
// GELU's aux output, or no algorithm for the shape): the caller then takes the plain path.
// T: float or __nv_bfloat16; float accumulation (no TF32).
template <class T>
bool lt_matmul_forward(T* out, T* pre_gelu, const T* inp, const T* w, const T* bias, int N, int C, int OC,
                       cudaStream_t stream);

// The MLP's backward through its GELU: dpre[N,C] = (dout[N,OC] w[OC,C]) * gelu'(pre_gelu[N,C]),
// WRITTEN, in one GEMM with cuBLASLt's DGELU epilogue. false (nothing done) where it cannot (C not
// a multiple of 8, pointers not 16-byte aligned, no algorithm).
template <class T>
bool lt_matmul_dgelu(T* dpre, const T* dout, const T* w, const T* pre_gelu, int N, int C, int OC, cudaStream_t stream);

}  // namespace commscope::trainer::cuda_kernels::detail
