// Device memory for the OSU tests' `-d cuda D D` buffers, moved by MPI itself (a CUDA-aware MPI,
// as OSU's CUDA tests need). Without CUDA in the build every call throws InvalidArgument.
#pragma once

#include <cstddef>
#include <string>

namespace commscope::bench {

// Pick this rank's GPU (local rank modulo the GPUs seen); "" when that worked and, where
// `device_buffers`, MPI can take device pointers; else why not (no GPU, an MPI built without
// CUDA, or one that says it cannot).
std::string osu_device_setup(int local_rank, bool device_buffers);
// `bytes` (at least 1) of device memory, and its release.
void* osu_device_alloc(std::size_t bytes);
void osu_device_free(void* p) noexcept;
// memset on the device (OSU's 'a' and 'b' fills), waited for.
void osu_device_fill(void* p, int value, std::size_t bytes);

}  // namespace commscope::bench
