#include "commscope/trainer/data.hpp"

#include "binary_file.hpp"

#include <algorithm>
#include <array>
#include <bit>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <limits>
#include <memory>
#include <string>
#include <string_view>
#include <system_error>

namespace commscope::trainer {

static_assert(std::endian::native == std::endian::little, "llm.c's files are little-endian");

namespace {

constexpr std::size_t kShardHeaderInts = 256;
constexpr std::size_t kShardHeaderBytes = kShardHeaderInts * sizeof(std::int32_t);
constexpr std::int32_t kShardVersion = 1;

[[noreturn]] void fail(const std::string& path, const std::string& what) {
  binary_file::fail<DataError>(path, what);
}
using binary_file::errno_text;
using binary_file::File;
File open_for_reading(const std::string& path, std::uint64_t& size) {
  return binary_file::open_for_reading<DataError>(path, size);
}
void read_exactly(std::FILE* f, void* out, std::size_t bytes, const std::string& path) {
  binary_file::read_exactly<DataError>(f, out, bytes, path);
}
template <class Body>
void write_atomically(const std::string& path, Body&& body) {
  binary_file::write_atomically<DataError>(path, std::forward<Body>(body));
}

// A counter-based generator: splitmix64's finaliser over a key, so window i of step s depends
// on (seed, s, i) alone and every rank computes only its own windows.
constexpr std::uint64_t mix64(std::uint64_t x) noexcept {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

// Uniform in [0, bound) (bound >= 1), without modulo bias: draws from a stream keyed by `key`.
std::uint64_t uniform_below(std::uint64_t key, std::uint64_t bound) noexcept {
  const std::uint64_t max = std::numeric_limits<std::uint64_t>::max();
  const std::uint64_t limit = max - (max % bound + 1) % bound;  // accept x <= limit
  for (std::uint64_t draw = 0;; ++draw) {
    const std::uint64_t x = mix64(key ^ mix64(draw));
    if (x <= limit) return x % bound;
  }
}

}  // namespace

std::vector<std::uint16_t> encode_bytes(std::string_view text) {
  std::vector<std::uint16_t> tokens(text.size());
  std::transform(text.begin(), text.end(), tokens.begin(),
                 [](char c) { return static_cast<std::uint16_t>(static_cast<unsigned char>(c)); });
  return tokens;
}

std::string decode_bytes(std::span<const int> tokens) {
  std::string text(tokens.size(), '?');
  for (std::size_t i = 0; i < tokens.size(); ++i)
    if (tokens[i] >= 0 && tokens[i] < 256) text[i] = static_cast<char>(static_cast<unsigned char>(tokens[i]));
  return text;
}

std::vector<std::uint16_t> read_llmc_shard(const std::string& path) {
  std::uint64_t size = 0;
  const File f = open_for_reading(path, size);
  if (size == 0) fail(path, "is empty");
  if (size < kShardHeaderBytes)
    fail(path, "too short for an llm.c token shard (" + std::to_string(size) + " bytes, the header alone is " +
                   std::to_string(kShardHeaderBytes) + ")");
  std::array<std::int32_t, kShardHeaderInts> header{};
  read_exactly(f.get(), header.data(), kShardHeaderBytes, path);
  if (header[0] != kLlmcShardMagic)
    fail(path, "not an llm.c token shard (magic " + std::to_string(header[0]) + ", expected " +
                   std::to_string(kLlmcShardMagic) + ")");
  if (header[1] != kShardVersion)
    fail(path, "unsupported llm.c token shard version " + std::to_string(header[1]) + " (expected " +
                   std::to_string(kShardVersion) + ")");
  if (header[2] < 0) fail(path, "negative token count " + std::to_string(header[2]) + " in the header");
  const std::uint64_t count = static_cast<std::uint64_t>(header[2]);
  const std::uint64_t expected = kShardHeaderBytes + count * sizeof(std::uint16_t);
  if (size != expected)
    fail(path, "the header says " + std::to_string(count) + " tokens (" + std::to_string(expected) +
                   " bytes) but the file has " + std::to_string(size) + " bytes (" +
                   (size < expected ? "truncated" : "trailing data") + ")");
  std::vector<std::uint16_t> tokens(static_cast<std::size_t>(count));
  read_exactly(f.get(), tokens.data(), tokens.size() * sizeof(std::uint16_t), path);
  return tokens;
}

void write_llmc_shard(const std::string& path, std::span<const std::uint16_t> tokens) {
  if (tokens.size() > static_cast<std::size_t>(std::numeric_limits<std::int32_t>::max()))
    fail(path, "too many tokens for one llm.c shard (" + std::to_string(tokens.size()) + ")");
  std::array<std::int32_t, kShardHeaderInts> header{};
  header[0] = kLlmcShardMagic;
  header[1] = kShardVersion;
  header[2] = static_cast<std::int32_t>(tokens.size());
  write_atomically(path, [&](auto&& write) {
    write(header.data(), kShardHeaderBytes);
    write(tokens.data(), tokens.size() * sizeof(std::uint16_t));
  });
}

TokenDataset TokenDataset::load(const std::string& path) {
  std::uint64_t size = 0;
  File f = open_for_reading(path, size);
  if (size == 0) fail(path, "is empty");
  if (size >= sizeof(std::int32_t)) {
    std::int32_t magic = 0;
    read_exactly(f.get(), &magic, sizeof magic, path);
    if (magic == kLlmcShardMagic) {
      f.reset();
      return TokenDataset(read_llmc_shard(path));
    }
    std::rewind(f.get());
  }
  if (size > std::numeric_limits<std::size_t>::max() / sizeof(std::uint16_t))
    fail(path, "too large to load (" + std::to_string(size) + " bytes)");
  std::string bytes(static_cast<std::size_t>(size), '\0');
  read_exactly(f.get(), bytes.data(), bytes.size(), path);
  // Text never holds a NUL byte; a binary file read as text trains on noise without a word.
  if (const std::size_t nul = bytes.find('\0'); nul != std::string::npos) {
    static constexpr std::string_view kHdf5Signature("\x89HDF\r\n\x1a\n", 8);
    const std::string kind = std::string_view(bytes).starts_with(kHdf5Signature) ? "an HDF5 file, " : "";
    fail(path, "is " + kind + "not text (a NUL byte at offset " + std::to_string(nul) +
                   ") nor an llm.c token shard (magic " + std::to_string(kLlmcShardMagic) + ")");
  }
  return TokenDataset(encode_bytes(bytes));
}

int TokenDataset::max_token() const noexcept {
  if (tokens_.empty()) return -1;
  return *std::max_element(tokens_.begin(), tokens_.end());
}

std::pair<TokenDataset, TokenDataset> TokenDataset::split(double val_fraction) const {
  if (!(val_fraction >= 0.0 && val_fraction <= 1.0))
    throw std::invalid_argument("the validation fraction must be in [0, 1] (got " + std::to_string(val_fraction) + ")");
  const auto n = static_cast<double>(tokens_.size());
  const auto val = std::min(tokens_.size(), static_cast<std::size_t>(std::llround(n * val_fraction)));
  const auto cut = tokens_.begin() + static_cast<std::ptrdiff_t>(tokens_.size() - val);
  return {TokenDataset(std::vector<std::uint16_t>(tokens_.begin(), cut)),
          TokenDataset(std::vector<std::uint16_t>(cut, tokens_.end()))};
}

BatchLoader::BatchLoader(const TokenDataset& data, int global_batch, int seq, int rank, int ranks, std::uint64_t seed)
    : data_(&data), global_(global_batch), seq_(seq), rank_(rank), local_(0), seed_(seed) {
  if (ranks < 1) throw std::invalid_argument("the rank count must be at least 1 (got " + std::to_string(ranks) + ")");
  if (rank < 0 || rank >= ranks)
    throw std::invalid_argument("rank " + std::to_string(rank) + " is outside [0, " + std::to_string(ranks) + ")");
  if (global_batch < 1)
    throw std::invalid_argument("the global batch must be at least 1 (got " + std::to_string(global_batch) + ")");
  if (global_batch % ranks != 0)
    throw std::invalid_argument("the global batch (" + std::to_string(global_batch) +
                                ") must be a multiple of the rank count (" + std::to_string(ranks) + ")");
  if (seq < 1) throw std::invalid_argument("the sequence length must be at least 1 (got " + std::to_string(seq) + ")");
  if (data.size() < static_cast<std::size_t>(seq) + 1)
    throw std::invalid_argument("the dataset has " + std::to_string(data.size()) +
                                " tokens, fewer than one window of seq + 1 = " + std::to_string(seq + 1));
  local_ = global_batch / ranks;
}

void BatchLoader::next(int* inputs, int* targets) {
  const std::vector<std::uint16_t>& tokens = data_->tokens();
  const auto seq = static_cast<std::size_t>(seq_);
  const std::uint64_t positions = tokens.size() - seq;  // window starts 0 .. size - (seq + 1)
  const std::uint64_t step_key = mix64(mix64(seed_) ^ static_cast<std::uint64_t>(step_));
  for (int b = 0; b < local_; ++b) {
    const auto window =
        static_cast<std::uint64_t>(rank_) * static_cast<std::uint64_t>(local_) + static_cast<std::uint64_t>(b);
    const auto start = static_cast<std::size_t>(uniform_below(mix64(step_key ^ mix64(window + 1)), positions));
    const std::uint16_t* src = tokens.data() + start;
    int* in = inputs + static_cast<std::size_t>(b) * seq;
    int* tg = targets + static_cast<std::size_t>(b) * seq;
    for (std::size_t t = 0; t < seq; ++t) {
      in[t] = src[t];
      tg[t] = src[t + 1];
    }
  }
  ++step_;
}

}  // namespace commscope::trainer
