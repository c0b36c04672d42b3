// memcpy with non-temporal stores, for outputs that would not stay in the caches anyway: shm's
// large outputs (collectives/src/algorithms/shm.cpp) and the bench's probe of the rate a copy out
// of the caches reaches (machine/src/machine_curves.cpp), which prices them.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>

#if defined(__SSE2__)
#include <immintrin.h>
#endif

namespace commscope {

// Outputs of at least this many bytes are written with non-temporal stores: they would not
// stay in the caches anyway, and a normal store first reads each output line from memory.
inline constexpr std::size_t kStreamOutputBytes = std::size_t{32} << 20;

// memcpy with non-temporal stores where the CPU has them (x86-64: SSE2 always, AVX-512 when
// the CPU says so at run time). They are weakly ordered: store_fence() before anyone else may
// read the destination.
#if defined(__SSE2__)
__attribute__((target("avx512f"))) inline void stream_lines_avx512(std::byte* d, const std::byte* s,
                                                                   std::size_t lines) {
  for (std::size_t i = 0; i < lines * 64; i += 64)
    _mm512_stream_si512(reinterpret_cast<__m512i*>(d + i), _mm512_loadu_si512(s + i));
}
inline void stream_lines_sse2(std::byte* d, const std::byte* s, std::size_t lines) {
  for (std::size_t i = 0; i < lines * 64; i += 64) {
    const __m128i x0 = _mm_loadu_si128(reinterpret_cast<const __m128i*>(s + i));
    const __m128i x1 = _mm_loadu_si128(reinterpret_cast<const __m128i*>(s + i + 16));
    const __m128i x2 = _mm_loadu_si128(reinterpret_cast<const __m128i*>(s + i + 32));
    const __m128i x3 = _mm_loadu_si128(reinterpret_cast<const __m128i*>(s + i + 48));
    _mm_stream_si128(reinterpret_cast<__m128i*>(d + i), x0);
    _mm_stream_si128(reinterpret_cast<__m128i*>(d + i + 16), x1);
    _mm_stream_si128(reinterpret_cast<__m128i*>(d + i + 32), x2);
    _mm_stream_si128(reinterpret_cast<__m128i*>(d + i + 48), x3);
  }
}
inline const auto stream_lines = __builtin_cpu_supports("avx512f") ? stream_lines_avx512 : stream_lines_sse2;
#endif

inline void stream_copy(void* dst, const void* src, std::size_t bytes) {
#if defined(__SSE2__)
  auto* d = static_cast<std::byte*>(dst);
  const auto* s = static_cast<const std::byte*>(src);
  const std::size_t head = std::min(bytes, (64 - reinterpret_cast<std::uintptr_t>(d) % 64) % 64);
  std::memcpy(d, s, head);
  d += head, s += head, bytes -= head;
  stream_lines(d, s, bytes / 64);
  std::memcpy(d + bytes / 64 * 64, s + bytes / 64 * 64, bytes % 64);
#else
  std::memcpy(dst, src, bytes);
#endif
}

inline void store_fence() {
#if defined(__SSE2__)
  _mm_sfence();
#endif
}

}  // namespace commscope
