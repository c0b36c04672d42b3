// Element arithmetic of the device reductions (internal header, C++17 like the .cu file). Every function here compiles
// for the device (in device_reduce.cu) and for the host (in test_device_math.cpp, a plain C++
// test that compares it bit for bit with reduce_host/divide_host), so the GPU path is checked
// on machines without a GPU. It mirrors src/reduce.cpp and half.hpp: 16-bit floats combine in
// f32 and round back (nearest even) once per call, integers wrap as unsigned, min/max compare
// in the storage type, avg combines as sum.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "commscope/collectives/types.hpp"

#if defined(__CUDACC__)
#define COMMSCOPE_HD __host__ __device__ __forceinline__
#else
#define COMMSCOPE_HD inline
#endif

namespace commscope::devmath {

COMMSCOPE_HD std::uint32_t float_bits(float f) {
#if defined(__CUDA_ARCH__)
  return __float_as_uint(f);
#else
  std::uint32_t u;
  std::memcpy(&u, &f, sizeof u);
  return u;
#endif
}

COMMSCOPE_HD float bits_float(std::uint32_t u) {
#if defined(__CUDA_ARCH__)
  return __uint_as_float(u);
#else
  float f;
  std::memcpy(&f, &u, sizeof f);
  return f;
#endif
}

// The conversions of half.hpp, with branches instead of its masks (those exist for the host's
// vectoriser): the same bits for every input, NaN included. CUDA's __half conversions are not
// used because they canonicalise NaNs differently from the host reference.
COMMSCOPE_HD float f16_to_f32(std::uint16_t h) {
  const std::uint32_t sign = static_cast<std::uint32_t>(h & 0x8000u) << 16;
  const std::uint32_t em = h & 0x7fffu;
  const std::uint32_t exp = em & 0x7c00u;
  std::uint32_t mag;
  if (exp == 0x7c00u) {
    mag = (em << 13) | 0x7f800000u;  // infinity or NaN (payload kept in the top bits)
  } else if (exp == 0) {
    // Subnormal: mantissa * 2^-24, exact in f32 arithmetic.
    mag = float_bits(static_cast<float>(static_cast<std::int32_t>(em)) * 0x1p-24f);
  } else {
    mag = (em << 13) + ((127u - 15u) << 23);  // rebias the exponent
  }
  return bits_float(sign | mag);
}

COMMSCOPE_HD std::uint16_t f32_to_f16(float f) {
  const std::uint32_t x = float_bits(f);
  const std::uint32_t sign = (x >> 16) & 0x8000u;
  const std::uint32_t ax = x & 0x7fffffffu;
  const auto sax = static_cast<std::int32_t>(ax);
  std::uint32_t mag;
  if (sax > 0x7f800000) {
    mag = 0x7e00u;  // NaN: one quiet NaN, as the host
  } else if (sax >= 0x477ff000) {
    mag = 0x7c00u;  // rounds to >= 65520: infinity
  } else if (sax < 0x38800000) {
    // Below the smallest normal f16: adding 0.5 makes the FPU round to the 2^-24 step.
    mag = float_bits(bits_float(ax) + 0.5f) - 0x3f000000u;
  } else {
    const std::uint32_t odd = (ax >> 13) & 1u;
    mag = (ax - ((127u - 15u) << 23) + 0xfffu + odd) >> 13;  // round the 13 dropped bits to nearest even
  }
  return static_cast<std::uint16_t>(sign | mag);
}

COMMSCOPE_HD float bf16_to_f32(std::uint16_t b) {
  return bits_float(static_cast<std::uint32_t>(b) << 16);
}

COMMSCOPE_HD std::uint16_t f32_to_bf16(float f) {
  const std::uint32_t x = float_bits(f);
  if (static_cast<std::int32_t>(x & 0x7fffffffu) > 0x7f800000) {
    return static_cast<std::uint16_t>((x >> 16) | 0x0040u);  // NaN stays a quiet NaN
  }
  return static_cast<std::uint16_t>((x + 0x7fffu + ((x >> 16) & 1u)) >> 16);
}

// C++17 (the .cu file's dialect) has no std::type_identity.
template <typename T>
struct Same {
  using type = T;
};

// How an element is stored and in what type it is combined (reduce.cpp's codecs).
template <typename Storage>
struct Native {
  using storage = Storage;
  // Signed integers combine as unsigned so that overflow wraps.
  using compute =
      typename std::conditional_t<std::is_integral_v<Storage>, std::make_unsigned<Storage>, Same<Storage>>::type;
  static constexpr bool kInteger = std::is_integral_v<Storage>;
  static COMMSCOPE_HD compute load(Storage v) { return static_cast<compute>(v); }
  static COMMSCOPE_HD Storage store(compute v) { return static_cast<Storage>(v); }
};
struct Half {
  using storage = std::uint16_t;
  using compute = float;
  static constexpr bool kInteger = false;
  static COMMSCOPE_HD float load(std::uint16_t v) { return f16_to_f32(v); }
  static COMMSCOPE_HD std::uint16_t store(float v) { return f32_to_f16(v); }
};
struct BHalf {
  using storage = std::uint16_t;
  using compute = float;
  static constexpr bool kInteger = false;
  static COMMSCOPE_HD float load(std::uint16_t v) { return bf16_to_f32(v); }
  static COMMSCOPE_HD std::uint16_t store(float v) { return f32_to_bf16(v); }
};

struct Sum {
  template <typename Codec, typename T>
  static COMMSCOPE_HD T apply(T x, T y) {
    return static_cast<T>(x + y);
  }
};
struct Prod {
  template <typename Codec, typename T>
  static COMMSCOPE_HD T apply(T x, T y) {
    return static_cast<T>(x * y);
  }
};
// std::max(x, y) is (x < y ? y : x) and std::min(x, y) is (y < x ? y : x): written out so that
// NaN and signed zeros pick the same operand as the host. Integers compare as the (signed)
// storage type, since unsigned compute would misorder negatives.
template <bool kMax>
struct MinMax {
  template <typename Codec, typename T>
  static COMMSCOPE_HD T apply(T x, T y) {
    if constexpr (std::is_integral_v<T>) {
      using S = typename Codec::storage;
      const S sx = static_cast<S>(x), sy = static_cast<S>(y);
      return static_cast<T>(kMax ? (sx < sy ? sy : sx) : (sy < sx ? sy : sx));
    } else {
      return kMax ? (x < y ? y : x) : (y < x ? y : x);
    }
  }
};
using Min = MinMax<false>;
using Max = MinMax<true>;

template <typename Codec, typename Op>
COMMSCOPE_HD typename Codec::storage combine(typename Codec::storage a, typename Codec::storage b) {
  return Codec::store(Op::template apply<Codec>(Codec::load(a), Codec::load(b)));
}

// v / divisor: integers divide in the storage type (truncating toward zero), the rest in the
// compute type and round back once.
template <typename Codec>
COMMSCOPE_HD typename Codec::storage divide_one(typename Codec::storage v, int divisor) {
  using S = typename Codec::storage;
  if constexpr (Codec::kInteger) {
    // In 64 bits: the rank count need not fit the type (256 ranks are 0 as u8, 128 negative as i8).
    using W = typename std::conditional<std::is_signed<S>::value, long long, unsigned long long>::type;
    return static_cast<S>(static_cast<W>(v) / static_cast<W>(divisor));
  } else {
    using C = typename Codec::compute;
    return Codec::store(Codec::load(v) / static_cast<C>(divisor));
  }
}

// Calls f.template run<Codec, Op>() for `op`, with avg combining as sum (the division by the
// rank count happens once, at the end). False for a value outside the enum.
template <typename Codec, typename F>
bool dispatch_op(ReduceOp op, F& f) {
  switch (op) {
    case ReduceOp::sum:
    case ReduceOp::avg:
      f.template run<Codec, Sum>();
      return true;
    case ReduceOp::prod:
      f.template run<Codec, Prod>();
      return true;
    case ReduceOp::min:
      f.template run<Codec, Min>();
      return true;
    case ReduceOp::max:
      f.template run<Codec, Max>();
      return true;
  }
  return false;
}

// Calls f.template run<Codec, Op>() for (type, op). False for a value outside the enums (the
// caller names it in its error).
template <typename F>
bool dispatch_reduce(DataType type, ReduceOp op, F& f) {
  switch (type) {
    case DataType::f32:
      return dispatch_op<Native<float>>(op, f);
    case DataType::f64:
      return dispatch_op<Native<double>>(op, f);
    case DataType::f16:
      return dispatch_op<Half>(op, f);
    case DataType::bf16:
      return dispatch_op<BHalf>(op, f);
    case DataType::i32:
      return dispatch_op<Native<std::int32_t>>(op, f);
    case DataType::i64:
      return dispatch_op<Native<std::int64_t>>(op, f);
    case DataType::u8:
      return dispatch_op<Native<std::uint8_t>>(op, f);
    case DataType::i8:
      return dispatch_op<Native<std::int8_t>>(op, f);
    case DataType::u32:
      return dispatch_op<Native<std::uint32_t>>(op, f);
    case DataType::u64:
      return dispatch_op<Native<std::uint64_t>>(op, f);
  }
  return false;
}

// Calls f.template run<Codec>() for `type`; false for a value outside the enum.
template <typename F>
bool dispatch_type(DataType type, F& f) {
  switch (type) {
    case DataType::f32:
      f.template run<Native<float>>();
      return true;
    case DataType::f64:
      f.template run<Native<double>>();
      return true;
    case DataType::f16:
      f.template run<Half>();
      return true;
    case DataType::bf16:
      f.template run<BHalf>();
      return true;
    case DataType::i32:
      f.template run<Native<std::int32_t>>();
      return true;
    case DataType::i64:
      f.template run<Native<std::int64_t>>();
      return true;
    case DataType::u8:
      f.template run<Native<std::uint8_t>>();
      return true;
    case DataType::i8:
      f.template run<Native<std::int8_t>>();
      return true;
    case DataType::u32:
      f.template run<Native<std::uint32_t>>();
      return true;
    case DataType::u64:
      f.template run<Native<std::uint64_t>>();
      return true;
  }
  return false;
}

}  // namespace commscope::devmath
