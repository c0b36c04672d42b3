#pragma once
// Causal multi-head self-attention on a CUDA GPU without the T x T score matrix in memory
// (FlashAttention-2 style): bf16 inputs and outputs, bf16 tensor-core MMAs (mma.sync m16n8k16)
// with float accumulators, float softmax statistics kept online (running max and sum).
//
// Same layout as attention_forward in kernels_cuda.hpp: qkv [B,T,3C] holds q, then k, then v,
// head h at channels h*hs .. h*hs+hs-1 of each; scale 1/sqrt(hs).
//
// Preconditions (checked; std::invalid_argument otherwise):
//   - head size hs = C / NH == 64 (flash_attention_supported(hs)).
//   - qkv, dout, out, dqkv 16-byte aligned (cudaMalloc's 256 is; a pointer offset by a multiple
//     of 8 elements keeps it). With C a multiple of 64, every head's 64 channels of a row then
//     start 16-byte aligned, which the 16-byte vector loads need.
// Any B, NH, T >= 1. Work per (b, h) is split into tiles of 64 positions; key tiles above the
// diagonal are skipped (causal). Launch errors throw std::runtime_error. Every launcher enqueues on
// `stream` and returns without waiting. Deterministic: no atomics.

#include <cuda_bf16.h>
#include <cuda_runtime_api.h>

namespace commscope::trainer::cuda_kernels {

// True when these kernels handle head size head_size (64 only).
bool flash_attention_supported(int head_size);

// WRITES out [B,T,C] (head h at channels h*hs..) and lse [B,NH,T] (float): the natural-log
// logsumexp of the scaled scores of row t over t2 <= t.
void flash_attention_forward(__nv_bfloat16* out, float* lse, const __nv_bfloat16* qkv, int B, int Tn, int C, int NH,
                             cudaStream_t stream);

// WRITES dqkv [B,T,3C] (dq, dk, dv in q's, k's, v's places) from dout [B,T,C] and the forward's
// qkv, out and lse. Three kernels: D = rowsum(dout * out) into a float scratch [B,NH,T] (from
// cudaMallocAsync, freed on the stream), dk/dv (one block per key tile, looping over the query
// tiles at and below the diagonal), dq (one block per query tile, looping over the key tiles).
void flash_attention_backward(__nv_bfloat16* dqkv, const __nv_bfloat16* dout, const __nv_bfloat16* qkv,
                              const __nv_bfloat16* out, const float* lse, int B, int Tn, int C, int NH,
                              cudaStream_t stream);

}  // namespace commscope::trainer::cuda_kernels
