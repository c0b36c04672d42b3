// --attention's choice (model_cuda.hpp's Attention): the names, and auto's timing of the two
// fused attentions on the run's shape.
#pragma once

#include <cuda_runtime_api.h>

#include <string>

#include "cudnn_attention.hpp"
#include "model_cuda.hpp"

namespace commscope::trainer::cuda {

// Ours (flash_attention.hpp) and cuDNN's, each timed on this shape with CUDA events on `stream`:
// one layer's forward and backward on scratch buffers (qkv [B,T,3C] and the rest, zeroed; freed
// before it returns), the best of 3 after one untimed. Returns the faster (flash or cudnn) and
// says both times in `timing` ("auto, timed here: one layer's forward and backward X ms ours, Y
// ms cuDNN's"). Both must run on the shape (bf16, head size C / NH = 64, cudnn.supports).
Attention fastest_fused_attention(CudnnAttention& cudnn, int B, int Tn, int C, int NH, cudaStream_t stream,
                                  std::string& timing);

}  // namespace commscope::trainer::cuda
