// The suite's one way to check a CUDA or NCCL call: on failure a TransportError naming the call,
// its file:line and the library's error string. Used by the device transports, the bench's
// CUDA backend and the CUDA trainer.
//   COMMSCOPE_CUDA_CHECK(cudaMemcpyAsync(...));
//   my_kernel<<<...>>>(...); COMMSCOPE_CUDA_LAUNCH_CHECK("my_kernel");
#pragma once

#include <cuda_runtime_api.h>
#include <nccl.h>

namespace commscope {

// Throw TransportError naming the call, file:line and the library's error string.
void check_cuda(cudaError_t rc, const char* call, const char* file, int line);
// ncclInProgress (a non-blocking communicator still working) is not an error.
void check_nccl(ncclResult_t rc, const char* call, const char* file, int line);

}  // namespace commscope

#define COMMSCOPE_CUDA_CHECK(call) ::commscope::check_cuda((call), #call, __FILE__, __LINE__)
#define COMMSCOPE_NCCL_CHECK(call) ::commscope::check_nccl((call), #call, __FILE__, __LINE__)
// After a kernel launch: configuration errors show up here (execution errors surface at the
// next synchronising call).
#define COMMSCOPE_CUDA_LAUNCH_CHECK(kernel) \
  ::commscope::check_cuda(cudaGetLastError(), "launch of " kernel, __FILE__, __LINE__)
