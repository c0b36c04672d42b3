// Device reduction kernels: one grid-stride loop per (type, op) over device_math.cuh's element
// functions, which a host test checks against reduce_host bit for bit.
#include <algorithm>
#include <string>

#include "commscope/collectives/error.hpp"
#include "device_math.cuh"
#include "device_transport.hpp"

namespace commscope {
namespace {

constexpr unsigned kThreads = 256;
// Enough blocks to fill any current GPU several times over; larger arrays loop (grid-stride).
constexpr std::size_t kMaxBlocks = 8192;

unsigned blocks_for(std::size_t count) {
  return static_cast<unsigned>(std::min(kMaxBlocks, (count + kThreads - 1) / kThreads));
}

// No __restrict__: dst may be a or b (the transports' in-place reductions).
template <typename Codec, typename Op>
__global__ void reduce_kernel(typename Codec::storage* dst, const typename Codec::storage* a,
                              const typename Codec::storage* b, std::size_t count) {
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  for (std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < count; i += stride) {
    dst[i] = devmath::combine<Codec, Op>(a[i], b[i]);
  }
}

template <typename Codec>
__global__ void divide_kernel(typename Codec::storage* buf, std::size_t count, int divisor) {
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  for (std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < count; i += stride) {
    buf[i] = devmath::divide_one<Codec>(buf[i], divisor);
  }
}

struct ReduceLaunch {
  void* dst;
  const void* a;
  const void* b;
  std::size_t count;
  cudaStream_t stream;
  template <typename Codec, typename Op>
  void run() const {
    using S = typename Codec::storage;
    reduce_kernel<Codec, Op><<<blocks_for(count), kThreads, 0, stream>>>(static_cast<S*>(dst), static_cast<const S*>(a),
                                                                         static_cast<const S*>(b), count);
  }
};

struct DivideLaunch {
  void* buf;
  std::size_t count;
  int divisor;
  cudaStream_t stream;
  template <typename Codec>
  void run() const {
    using S = typename Codec::storage;
    divide_kernel<Codec><<<blocks_for(count), kThreads, 0, stream>>>(static_cast<S*>(buf), count, divisor);
  }
};

// A launch reports bad configurations (and sticky errors of earlier work) only through
// cudaGetLastError.
void check_launch(const char* what) {
  const cudaError_t e = cudaGetLastError();
  if (e != cudaSuccess) throw TransportError(std::string(what) + " kernel launch failed: " + cudaGetErrorString(e));
}

}  // namespace

void reduce_device(void* dst, const void* a, const void* b, std::size_t count, DataType type, ReduceOp op,
                   cudaStream_t stream) {
  if (count == 0) return;
  const ReduceLaunch launch{dst, a, b, count, stream};
  if (!devmath::dispatch_reduce(type, op, launch))
    throw InvalidArgument("reduce_device: invalid datatype " + std::to_string(static_cast<int>(type)) + " or op " +
                          std::to_string(static_cast<int>(op)));
  check_launch("reduce_device");
}

void divide_device(void* buf, std::size_t count, DataType type, int divisor, cudaStream_t stream) {
  if (divisor == 0) throw InvalidArgument("divide_device: divisor is 0");
  if (count == 0) return;
  const DivideLaunch launch{buf, count, divisor, stream};
  if (!devmath::dispatch_type(type, launch))
    throw InvalidArgument("divide_device: invalid datatype " + std::to_string(static_cast<int>(type)));
  check_launch("divide_device");
}

}  // namespace commscope
