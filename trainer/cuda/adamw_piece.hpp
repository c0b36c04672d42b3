#pragma once
// One piece of a GPU AdamW launch: the elements [begin, end) of the launch's range, sharing one
// weight decay. Free of CUDA and of C++20, for kernels.cu (C++17) and the CPU build's tests alike.
#include <cstddef>

namespace commscope::trainer::cuda_kernels::detail {

struct AdamWPiece {
  std::size_t begin, end;
  float weight_decay;
};

}  // namespace commscope::trainer::cuda_kernels::detail
