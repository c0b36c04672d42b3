#pragma once
#include <cuda_runtime_api.h>

#include <cstdint>

// Enqueues a kernel (named spin_kernel) that runs for at least `ns` nanoseconds of the GPU's
// global timer and writes its start and end timer values to stamps[0] and stamps[1] (device
// memory).
cudaError_t launch_spin(std::uint64_t ns, std::uint64_t* stamps, cudaStream_t stream);
