#pragma once
// Training data: a byte-level tokenizer (vocabulary 256: a token is a byte), token streams from
// a text file or from llm.c's token shards, a train/validation split, and the batch loader that
// gives every rank its part of the same global batch.

#include <cstddef>
#include <cstdint>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace commscope::trainer {

// Bad or foreign data files: what() is one line naming the file and the problem.
class DataError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

std::vector<std::uint16_t> encode_bytes(std::string_view text);
std::string decode_bytes(std::span<const int> tokens);  // tokens >= 256 print as '?'

// llm.c's token shards: a header of 256 int32 (magic 20240520, version 1, token count), then
// the tokens as uint16.
inline constexpr std::int32_t kLlmcShardMagic = 20240520;
// The file size must be exactly 1024 + 2 * count bytes.
std::vector<std::uint16_t> read_llmc_shard(const std::string& path);  // throws DataError
// Through NAME.partial, renamed when complete; throws DataError (one line) on I/O errors.
void write_llmc_shard(const std::string& path, std::span<const std::uint16_t> tokens);

class TokenDataset {
 public:
  TokenDataset() = default;
  explicit TokenDataset(std::vector<std::uint16_t> tokens) : tokens_(std::move(tokens)) {}
  // A text file as bytes, or an llm.c shard (recognised by its magic). Throws DataError, also
  // for any other binary file (one with a NUL byte: an HDF5 file, a model), which is not text.
  static TokenDataset load(const std::string& path);

  std::size_t size() const noexcept { return tokens_.size(); }
  const std::vector<std::uint16_t>& tokens() const noexcept { return tokens_; }
  int max_token() const noexcept;  // the largest token id (-1 when empty)
  // The first (1 - val_fraction) of the stream for training, the rest (round(size * val_fraction)
  // tokens) for validation; std::invalid_argument unless 0 <= val_fraction <= 1.
  std::pair<TokenDataset, TokenDataset> split(double val_fraction) const;

 private:
  std::vector<std::uint16_t> tokens_;
};

// Every step draws `global_batch` windows of seq + 1 tokens at positions chosen by a generator
// seeded with (seed, step) alone, so the global batch is the same whatever the rank count; rank
// r takes windows [r * local, (r + 1) * local), local = global_batch / ranks (global_batch must
// be a multiple of ranks: std::invalid_argument otherwise, and when the dataset is shorter than
// seq + 1 tokens). Window w of a step starts at a position drawn uniformly from
// [0, size - seq - 1] by a counter-based hash (splitmix64) of (seed, step, w), the same on every
// platform; `data` must outlive the loader.
class BatchLoader {
 public:
  BatchLoader(const TokenDataset& data, int global_batch, int seq, int rank, int ranks, std::uint64_t seed);
  int local_batch() const noexcept { return local_; }
  // inputs, targets: [local_batch, seq]; targets are inputs shifted by one token.
  void next(int* inputs, int* targets);
  std::int64_t step() const noexcept { return step_; }
  void set_step(std::int64_t step) noexcept { step_ = step; }

 private:
  const TokenDataset* data_;
  int global_, seq_, rank_, local_;
  std::uint64_t seed_;
  std::int64_t step_ = 0;
};

}  // namespace commscope::trainer
