// A build without cuDNN: CudnnAttention reports itself unavailable.
#include "cudnn_attention.hpp"

#include <stdexcept>

namespace commscope::trainer::cuda {

namespace {
[[noreturn]] void unavailable() {
  throw std::runtime_error("this build has no cuDNN");
}
}  // namespace

bool CudnnAttention::built() {
  return false;
}
std::string CudnnAttention::version() {
  return {};
}
CudnnAttention::CudnnAttention() {
  unavailable();
}
CudnnAttention::~CudnnAttention() = default;
bool CudnnAttention::supports(int, int, int, int) {
  return false;
}
void CudnnAttention::forward(__nv_bfloat16*, float*, const __nv_bfloat16*, int, int, int, int, cudaStream_t) {
  unavailable();
}
void CudnnAttention::backward(__nv_bfloat16*, const __nv_bfloat16*, const __nv_bfloat16*, const __nv_bfloat16*,
                              const float*, int, int, int, int, cudaStream_t) {
  unavailable();
}

}  // namespace commscope::trainer::cuda
