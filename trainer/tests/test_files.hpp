#pragma once
// Whole-file reads and writes, and the damage the llm.c readers' fuzz tests do to a good file.

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <random>
#include <span>
#include <string>

inline std::string read_all(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

inline void write_all(const std::filesystem::path& p, const std::string& bytes) {
  std::ofstream out(p, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  ASSERT_TRUE(out.good()) << p;
}

// Where a fuzz test aims: the header ints it may set (the first `header_ints`), how short a
// truncation near the header is (below `short_cut` bytes), and the bytes counted as the header's
// fields for random overwrites (the first `header_bytes`).
struct DamageAim {
  std::size_t header_ints;
  std::size_t short_cut;
  std::size_t header_bytes;
};

// Damage of kind `kind` % 3 to `bytes`: 0 sets 1-3 header ints (half of them to one of
// `specials`), 1 truncates, 2 overwrites 1-16 bytes (half in the header) and sometimes appends.
inline void damage(std::string& bytes, int kind, std::mt19937_64& rng, std::span<const std::int32_t> specials,
                   const DamageAim& aim) {
  switch (kind % 3) {
    case 0: {
      const int n = 1 + static_cast<int>(rng() % 3);
      for (int j = 0; j < n; ++j) {
        const std::size_t at = rng() % aim.header_ints;
        const std::int32_t value = rng() % 2 ? specials[rng() % specials.size()] : static_cast<std::int32_t>(rng());
        std::memcpy(bytes.data() + at * 4, &value, 4);
      }
      break;
    }
    case 1:
      bytes.resize(rng() % 2 ? rng() % aim.short_cut : rng() % bytes.size());
      break;
    default: {
      const int n = 1 + static_cast<int>(rng() % 16);
      for (int j = 0; j < n; ++j) {
        const std::size_t at = rng() % 2 ? rng() % aim.header_bytes : rng() % bytes.size();
        bytes[at] = static_cast<char>(rng() & 0xFF);
      }
      if (rng() % 4 == 0) bytes += std::string(1 + rng() % 9, 'z');
    }
  }
}
