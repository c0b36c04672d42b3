// Internal: the CUDA part of capture_environment. Built from environment_cuda.cpp when the
// build defines COMMSCOPE_WITH_CUDA (bench/environment.cmake); otherwise a no-op.
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace commscope::bench::detail {

#ifdef COMMSCOPE_WITH_CUDA
// Appends cuda_runtime, cuda_driver, nccl_version and gpus. Never throws for a missing GPU or
// driver: those are reported in the values ("none", "none (<reason>)").
void add_cuda_fields(std::vector<std::pair<std::string, std::string>>& fields);
#else
inline void add_cuda_fields(std::vector<std::pair<std::string, std::string>>& /*fields*/) {}
#endif

}  // namespace commscope::bench::detail
