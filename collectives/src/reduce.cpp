// Host reduction kernels. Each (type, op) pair is one flat loop the compiler vectorises
// (configure with -DCOMMSCOPE_VEC_REPORT=ON to see -fopt-info-vec for this file).
#include "commscope/collectives/reduce.hpp"

#include <algorithm>
#include <cstdint>
#include <type_traits>

#include "commscope/collectives/error.hpp"
#include "commscope/collectives/half.hpp"

namespace commscope {
namespace {

// How an element is stored and in what type it is combined.
template <typename Storage>
struct Native {
  using storage = Storage;
  // Signed integers combine as unsigned so that overflow wraps instead of being UB.
  using compute = typename std::conditional_t<std::is_integral_v<Storage>, std::make_unsigned<Storage>,
                                              std::type_identity<Storage>>::type;
  static compute load(Storage v) { return static_cast<compute>(v); }
  static Storage store(compute v) { return static_cast<Storage>(v); }
};
struct Half {
  using storage = std::uint16_t;
  using compute = float;
  static float load(std::uint16_t v) { return f16_to_f32(v); }
  static std::uint16_t store(float v) { return f32_to_f16(v); }
};
struct BHalf {
  using storage = std::uint16_t;
  using compute = float;
  static float load(std::uint16_t v) { return bf16_to_f32(v); }
  static std::uint16_t store(float v) { return f32_to_bf16(v); }
};

struct Sum {
  template <typename T>
  static T apply(T x, T y) {
    return static_cast<T>(x + y);
  }
};
struct Prod {
  template <typename T>
  static T apply(T x, T y) {
    return static_cast<T>(x * y);
  }
};
// min/max compare in the storage type's signedness (unsigned compute would misorder negatives).
template <typename Codec, bool kMax>
struct MinMax {
  template <typename T>
  static T apply(T x, T y) {
    using S = typename Codec::storage;
    if constexpr (std::is_integral_v<T>) {  // integers: compare as the signed storage type
      const S sx = static_cast<S>(x), sy = static_cast<S>(y);
      return static_cast<T>(kMax ? std::max(sx, sy) : std::min(sx, sy));
    } else {
      return kMax ? std::max(x, y) : std::min(x, y);
    }
  }
};

template <typename Codec, typename Op>
void loop(void* dst_v, const void* a_v, const void* b_v, std::size_t count) {
  using S = typename Codec::storage;
  S* dst = static_cast<S*>(dst_v);
  const S* a = static_cast<const S*>(a_v);
  const S* b = static_cast<const S*>(b_v);
  for (std::size_t i = 0; i < count; ++i) {
    dst[i] = Codec::store(Op::apply(Codec::load(a[i]), Codec::load(b[i])));
  }
}

template <typename Codec>
void by_op(void* dst, const void* a, const void* b, std::size_t count, ReduceOp op) {
  switch (op) {
    case ReduceOp::sum:
    case ReduceOp::avg:
      return loop<Codec, Sum>(dst, a, b, count);
    case ReduceOp::prod:
      return loop<Codec, Prod>(dst, a, b, count);
    case ReduceOp::min:
      return loop<Codec, MinMax<Codec, false>>(dst, a, b, count);
    case ReduceOp::max:
      return loop<Codec, MinMax<Codec, true>>(dst, a, b, count);
  }
  throw InvalidArgument("invalid ReduceOp value " + std::to_string(static_cast<int>(op)));
}

template <typename Codec>
void divide_loop(void* buf_v, std::size_t count, int divisor) {
  using S = typename Codec::storage;
  S* buf = static_cast<S*>(buf_v);
  if constexpr (std::is_integral_v<S> && std::is_same_v<Codec, Native<S>>) {
    // In 64 bits: the rank count need not fit the type (256 ranks are 0 as u8, 128 negative as i8).
    using W = std::conditional_t<std::is_signed_v<S>, std::int64_t, std::uint64_t>;
    const auto d = static_cast<W>(divisor);
    for (std::size_t i = 0; i < count; ++i) buf[i] = static_cast<S>(static_cast<W>(buf[i]) / d);
  } else {
    using C = typename Codec::compute;
    const C d = static_cast<C>(divisor);
    for (std::size_t i = 0; i < count; ++i) buf[i] = Codec::store(Codec::load(buf[i]) / d);
  }
}

}  // namespace

void reduce_host(void* dst, const void* a, const void* b, std::size_t count, DataType type, ReduceOp op) {
  switch (type) {
    case DataType::f32:
      return by_op<Native<float>>(dst, a, b, count, op);
    case DataType::f64:
      return by_op<Native<double>>(dst, a, b, count, op);
    case DataType::f16:
      return by_op<Half>(dst, a, b, count, op);
    case DataType::bf16:
      return by_op<BHalf>(dst, a, b, count, op);
    case DataType::i32:
      return by_op<Native<std::int32_t>>(dst, a, b, count, op);
    case DataType::i64:
      return by_op<Native<std::int64_t>>(dst, a, b, count, op);
    case DataType::u8:
      return by_op<Native<std::uint8_t>>(dst, a, b, count, op);
    case DataType::i8:
      return by_op<Native<std::int8_t>>(dst, a, b, count, op);
    case DataType::u32:
      return by_op<Native<std::uint32_t>>(dst, a, b, count, op);
    case DataType::u64:
      return by_op<Native<std::uint64_t>>(dst, a, b, count, op);
  }
  throw InvalidArgument("invalid DataType value " + std::to_string(static_cast<int>(type)));
}

void divide_host(void* buf, std::size_t count, DataType type, int divisor) {
  if (divisor == 0) throw InvalidArgument("divide_host: divisor is 0");
  switch (type) {
    case DataType::f32:
      return divide_loop<Native<float>>(buf, count, divisor);
    case DataType::f64:
      return divide_loop<Native<double>>(buf, count, divisor);
    case DataType::f16:
      return divide_loop<Half>(buf, count, divisor);
    case DataType::bf16:
      return divide_loop<BHalf>(buf, count, divisor);
    case DataType::i32:
      return divide_loop<Native<std::int32_t>>(buf, count, divisor);
    case DataType::i64:
      return divide_loop<Native<std::int64_t>>(buf, count, divisor);
    case DataType::u8:
      return divide_loop<Native<std::uint8_t>>(buf, count, divisor);
    case DataType::i8:
      return divide_loop<Native<std::int8_t>>(buf, count, divisor);
    case DataType::u32:
      return divide_loop<Native<std::uint32_t>>(buf, count, divisor);
    case DataType::u64:
      return divide_loop<Native<std::uint64_t>>(buf, count, divisor);
  }
  throw InvalidArgument("invalid DataType value " + std::to_string(static_cast<int>(type)));
}

}  // namespace commscope
