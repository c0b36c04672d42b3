// A kernel of known duration for the CUPTI check: one thread spins on the GPU's global timer
// (ns) for the requested time and writes the timer values it started and ended at.
#include <cuda_runtime_api.h>

#include <cstdint>

#include "spin_kernel.hpp"

namespace {

__device__ std::uint64_t global_timer() {
  std::uint64_t t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

__global__ void spin_kernel(std::uint64_t ns, std::uint64_t* stamps) {
  const std::uint64_t start = global_timer();
  std::uint64_t now = start;
  while (now - start < ns) now = global_timer();
  stamps[0] = start;
  stamps[1] = now;
}

}  // namespace

cudaError_t launch_spin(std::uint64_t ns, std::uint64_t* stamps, cudaStream_t stream) {
  spin_kernel<<<1, 1, 0, stream>>>(ns, stamps);
  return cudaGetLastError();
}
