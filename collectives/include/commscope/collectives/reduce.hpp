// Local (on-host) reduction kernels used by the CPU transports. 16-bit float types are
// combined in f32 and rounded back once per call; integer types wrap like the C++ unsigned
// arithmetic they are computed in (signed types are computed as unsigned, so no UB).
#pragma once

#include <cstddef>

#include "commscope/collectives/types.hpp"

namespace commscope {

// dst[i] = a[i] op b[i] for i < count. dst may be a or b (exactly), not a partial overlap.
// ReduceOp::avg combines as sum; divide by the rank count once at the end (divide_by).
void reduce_host(void* dst, const void* a, const void* b, std::size_t count, DataType type, ReduceOp op);

// buf[i] /= divisor (integer types truncate toward zero, as C++ division does).
void divide_host(void* buf, std::size_t count, DataType type, int divisor);

}  // namespace commscope
