// --attention's names and auto's timed choice (attention_choice.hpp).
#include "attention_choice.hpp"

#include <cuda_bf16.h>

#include <cstdio>
#include <optional>

#include "commscope/common/timing.hpp"
#include "device_array.hpp"
#include "flash_attention.hpp"

namespace commscope::trainer::cuda {

Attention fastest_fused_attention(CudnnAttention& cudnn, int B, int Tn, int C, int NH, cudaStream_t stream,
                                  std::string& timing) {
  namespace k = cuda_kernels;
  using T = __nv_bfloat16;
  const std::size_t N = static_cast<std::size_t>(B) * Tn, Cs = static_cast<std::size_t>(C);
  DeviceArray<T> qkv(N * 3 * Cs), out(N * Cs), dout(N * Cs), dqkv(N * 3 * Cs);
  DeviceArray<float> lse(static_cast<std::size_t>(B) * NH * Tn);
  EventTimer timer;
  // One layer's forward and backward, the best of 3 after one (ms).
  auto time = [&](Attention a) {
    return 1e3 * timing::best_seconds(4, [&] {
             return timer.seconds(stream, [&] {
               if (a == Attention::cudnn) {
                 cudnn.forward(out.data(), lse.data(), qkv.data(), B, Tn, C, NH, stream);
                 cudnn.backward(dqkv.data(), dout.data(), qkv.data(), out.data(), lse.data(), B, Tn, C, NH, stream);
               } else {
                 k::flash_attention_forward(out.data(), lse.data(), qkv.data(), B, Tn, C, NH, stream);
                 k::flash_attention_backward(dqkv.data(), dout.data(), qkv.data(), out.data(), lse.data(), B, Tn, C,
                                             NH, stream);
               }
             });
           });
  };
  const double ours = time(Attention::flash), theirs = time(Attention::cudnn);
  char text[160];
  std::snprintf(text, sizeof text, "auto, timed here: one layer's forward and backward %.3f ms ours, %.3f ms cuDNN's",
                ours, theirs);
  timing = text;
  return theirs < ours ? Attention::cudnn : Attention::flash;
}

std::string attention_name(Attention a) {
  switch (a) {
    case Attention::automatic:
      return "auto";
    case Attention::naive:
      return "naive";
    case Attention::flash:
      return "flash";
    case Attention::cudnn:
      return "cudnn";
  }
  return "?";
}

std::string attention_description(Attention a) {
  switch (a) {
    case Attention::naive:
      return "naive (T x T scores through cuBLAS and a causal softmax)";
    case Attention::flash:
      return "flash (commscope's flash-attention kernels)";
    case Attention::cudnn:
      return "cudnn (cuDNN " + CudnnAttention::version() + " fused flash attention)";
    case Attention::automatic:
      break;
  }
  return "auto";
}

std::optional<Attention> parse_attention(const std::string& name) {
  for (Attention a : {Attention::automatic, Attention::naive, Attention::flash, Attention::cudnn})
    if (attention_name(a) == name) return a;
  return std::nullopt;
}

}  // namespace commscope::trainer::cuda
