#include "osu/osu_device.hpp"

#include <mpi.h>

#include "commscope/collectives/error.hpp"

#ifdef COMMSCOPE_WITH_CUDA
#include <cuda_runtime.h>
#if __has_include(<mpi-ext.h>)
#include <mpi-ext.h>  // Open MPI's MPIX_CUDA_AWARE_SUPPORT and MPIX_Query_cuda_support
#endif
#endif

namespace commscope::bench {

#ifdef COMMSCOPE_WITH_CUDA

namespace {

void check(cudaError_t e, const char* what) {
  if (e != cudaSuccess) throw TransportError(std::string(what) + ": " + cudaGetErrorString(e));
}

}  // namespace

std::string osu_device_setup(int local_rank, bool device_buffers) {
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess || count == 0) return "no CUDA device is visible";
  check(cudaSetDevice(local_rank % count), "cudaSetDevice");
  if (!device_buffers) return "";
#if defined(MPIX_CUDA_AWARE_SUPPORT) && MPIX_CUDA_AWARE_SUPPORT
  if (MPIX_Query_cuda_support() == 0) return "this MPI was built CUDA-aware but says it cannot take device memory now";
#elif defined(MPIX_CUDA_AWARE_SUPPORT)
  return "this MPI is not CUDA-aware (MPIX_CUDA_AWARE_SUPPORT 0): device buffers need one, as OSU's do";
#endif
  return "";
}

void* osu_device_alloc(std::size_t bytes) {
  void* p = nullptr;
  check(cudaMalloc(&p, bytes ? bytes : 1), "cudaMalloc");
  return p;
}

void osu_device_free(void* p) noexcept {
  if (p) cudaFree(p);
}

void osu_device_fill(void* p, int value, std::size_t bytes) {
  check(cudaMemset(p, value, bytes), "cudaMemset");
  check(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
}

#else

std::string osu_device_setup(int, bool) {
  return "this build has no CUDA";
}

void* osu_device_alloc(std::size_t) {
  throw InvalidArgument("-d cuda: this build has no CUDA");
}

void osu_device_free(void*) noexcept {}

void osu_device_fill(void*, int, std::size_t) {
  throw InvalidArgument("-d cuda: this build has no CUDA");
}

#endif

}  // namespace commscope::bench
