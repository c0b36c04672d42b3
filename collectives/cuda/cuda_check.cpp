#include "cuda_check.hpp"

#include <sstream>

#include "commscope/collectives/error.hpp"

namespace commscope {

void check_cuda(cudaError_t rc, const char* call, const char* file, int line) {
  if (rc == cudaSuccess) return;
  std::ostringstream os;
  os << "CUDA error at " << file << ":" << line << ": " << call << ": " << cudaGetErrorString(rc);
  throw TransportError(os.str());
}

void check_nccl(ncclResult_t rc, const char* call, const char* file, int line) {
  if (rc == ncclSuccess || rc == ncclInProgress) return;
  std::ostringstream os;
  os << "NCCL error at " << file << ":" << line << ": " << call << ": " << ncclGetErrorString(rc);
  throw TransportError(os.str());
}

}  // namespace commscope
