#include <gtest/gtest.h>

#include <unistd.h>
#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <limits>
#include <random>
#include <string>
#include <system_error>
#include <vector>

#include "commscope/trainer/data.hpp"

#include "test_dir.hpp"
#include "test_files.hpp"

namespace ct = commscope::trainer;
namespace fs = std::filesystem;

namespace {

fs::path tiny_text() { return COMMSCOPE_TINY_TEXT; }

std::string header_bytes(std::array<std::int32_t, 256> header) {
  return std::string(reinterpret_cast<const char*>(header.data()), sizeof header);
}

std::string shard_bytes(std::int32_t magic, std::int32_t version, std::int32_t count, std::size_t tokens) {
  std::array<std::int32_t, 256> h{};
  h[0] = magic;
  h[1] = version;
  h[2] = count;
  return header_bytes(h) + std::string(tokens * 2, '\x07');
}

// Runs f, expects a DataError whose what() is one line naming `path` and containing `needle`.
template <class F>
void expect_data_error(F&& f, const std::string& path, const std::string& needle) {
  try {
    f();
    ADD_FAILURE() << "no DataError for " << path << " (expected '" << needle << "')";
  } catch (const ct::DataError& e) {
    const std::string what = e.what();
    EXPECT_EQ(what.find('\n'), std::string::npos) << what;
    EXPECT_NE(what.find(path), std::string::npos) << what;
    EXPECT_NE(what.find(needle), std::string::npos) << what;
  }
}

std::vector<int> to_ints(const std::vector<std::uint16_t>& t) {
  return std::vector<int>(t.begin(), t.end());
}

struct Batch {
  std::vector<int> inputs, targets;
};

Batch draw(const ct::TokenDataset& data, int global, int seq, int rank, int ranks, std::uint64_t seed,
           std::int64_t step) {
  ct::BatchLoader loader(data, global, seq, rank, ranks, seed);
  loader.set_step(step);
  Batch b;
  b.inputs.assign(static_cast<std::size_t>(loader.local_batch() * seq), -1);
  b.targets.assign(b.inputs.size(), -1);
  loader.next(b.inputs.data(), b.targets.data());
  EXPECT_EQ(loader.step(), step + 1);
  return b;
}

}  // namespace

TEST(Token, EncodeDecodeRoundTripsArbitraryBytes) {
  std::string all;
  for (int c = 0; c < 256; ++c) all.push_back(static_cast<char>(c));
  const std::string utf8 =
      "h\xC3\xA9llo w\xC3\xB6rld \xE2\x80\x94 \xE2\x9C\x93 \xE6\x97\xA5\xE6\x9C\xAC \xF0\x9F\x98\x80";
  for (const std::string& text : {std::string(), all, utf8, std::string("plain ascii\n\t\0 with nul", 24)}) {
    const std::vector<std::uint16_t> tokens = ct::encode_bytes(text);
    ASSERT_EQ(tokens.size(), text.size());
    for (std::size_t i = 0; i < text.size(); ++i) EXPECT_EQ(tokens[i], static_cast<unsigned char>(text[i]));
    EXPECT_EQ(ct::decode_bytes(to_ints(tokens)), text);
  }
  std::mt19937 rng(7);
  std::string random(4096, '\0');
  for (char& c : random) c = static_cast<char>(rng() & 0xFF);
  EXPECT_EQ(ct::decode_bytes(to_ints(ct::encode_bytes(random))), random);
  // Tokens outside the byte vocabulary print as '?'.
  const std::vector<int> odd = {'a', 256, 50000, -1, 'b'};
  EXPECT_EQ(ct::decode_bytes(odd), "a???b");
}

TEST(Token, MaxTokenDetectsTokensOutsideTheVocabulary) {
  EXPECT_EQ(ct::TokenDataset().max_token(), -1);
  EXPECT_EQ(ct::TokenDataset(ct::encode_bytes("abcz")).max_token(), 'z');
  const ct::TokenDataset big(std::vector<std::uint16_t>{1, 2, 300, 4});
  const int vocab = 256;
  EXPECT_GE(big.max_token(), vocab);
  EXPECT_EQ(big.max_token(), 300);
  EXPECT_EQ(ct::TokenDataset(std::vector<std::uint16_t>{65535}).max_token(), 65535);
}

TEST(Data, SplitSizes) {
  std::vector<std::uint16_t> tokens(1000);
  for (std::size_t i = 0; i < tokens.size(); ++i) tokens[i] = static_cast<std::uint16_t>(i);
  const ct::TokenDataset data(tokens);
  for (const auto& [fraction, val] : std::vector<std::pair<double, std::size_t>>{
           {0.1, 100}, {0.0, 0}, {1.0, 1000}, {0.25, 250}, {0.0004, 0}, {0.0006, 1}}) {
    const auto [train, validation] = data.split(fraction);
    EXPECT_EQ(validation.size(), val) << fraction;
    EXPECT_EQ(train.size() + validation.size(), data.size()) << fraction;
    std::vector<std::uint16_t> joined = train.tokens();
    joined.insert(joined.end(), validation.tokens().begin(), validation.tokens().end());
    EXPECT_EQ(joined, tokens) << fraction;
  }
  EXPECT_THROW((void)data.split(-0.1), std::invalid_argument);
  EXPECT_THROW((void)data.split(1.5), std::invalid_argument);
  EXPECT_THROW((void)data.split(std::nan("")), std::invalid_argument);
  const auto [t, v] = ct::TokenDataset().split(0.1);
  EXPECT_EQ(t.size() + v.size(), 0u);
}

TEST(Data, LoadsTextFilesAsBytes) {
  const fs::path path = tiny_text();
  ASSERT_TRUE(fs::exists(path)) << path;
  const std::string text = read_all(path);
  ASSERT_GT(text.size(), 1000u);
  const ct::TokenDataset data = ct::TokenDataset::load(path.string());
  EXPECT_EQ(data.size(), text.size());
  EXPECT_EQ(ct::decode_bytes(to_ints(data.tokens())), text);
  EXPECT_LT(data.max_token(), 128);

  const TestDir dir;
  const std::string utf8 = "\xE2\x9C\x93 caf\xC3\xA9\n";
  write_all(dir / "utf8.txt", utf8);
  EXPECT_EQ(ct::TokenDataset::load((dir / "utf8.txt").string()).tokens(), ct::encode_bytes(utf8));
  write_all(dir / "one.txt", "x");
  EXPECT_EQ(ct::TokenDataset::load((dir / "one.txt").string()).size(), 1u);
}

TEST(Data, LoadRecognisesShardsByTheirMagic) {
  const TestDir dir;
  const std::vector<std::uint16_t> tokens = {50256, 0, 1, 255, 256, 65535, 31373};
  const std::string path = (dir / "tokens.bin").string();
  ct::write_llmc_shard(path, tokens);
  const ct::TokenDataset data = ct::TokenDataset::load(path);
  EXPECT_EQ(data.tokens(), tokens);
  EXPECT_EQ(data.max_token(), 65535);
  // A shard with a bad header is an error, not text.
  write_all(dir / "short.bin", shard_bytes(ct::kLlmcShardMagic, 1, 10, 3));
  expect_data_error([&] { (void)ct::TokenDataset::load((dir / "short.bin").string()); }, (dir / "short.bin").string(),
                    "truncated");
}

TEST(Data, LoadRejectsBinaryFilesThatAreNotShards) {
  const TestDir dir;
  // An HDF5 file's signature and superblock start, and any other file with a NUL byte.
  write_all(dir / "r.h5", std::string("\x89HDF\r\n\x1a\n\0\0\0\0\0\x08\x08\0", 16));
  const std::string h5 = (dir / "r.h5").string();
  expect_data_error([&] { (void)ct::TokenDataset::load(h5); }, h5, "is an HDF5 file, not text (a NUL byte at offset 8)");
  write_all(dir / "model.bin", std::string("abc\0def", 7));
  const std::string bin = (dir / "model.bin").string();
  expect_data_error([&] { (void)ct::TokenDataset::load(bin); }, bin, "is not text (a NUL byte at offset 3)");
}

TEST(Data, LoadRejectsMissingEmptyAndDirectories) {
  const TestDir dir;
  const std::string missing = (dir / "missing.txt").string();
  expect_data_error([&] { (void)ct::TokenDataset::load(missing); }, missing, "no such file");
  write_all(dir / "empty.txt", "");
  const std::string empty = (dir / "empty.txt").string();
  expect_data_error([&] { (void)ct::TokenDataset::load(empty); }, empty, "empty");
  expect_data_error([&] { (void)ct::TokenDataset::load(dir.string()); }, dir.string(), "directory");
}

TEST(Shard, RoundTripsAndHasLlmcsLayout) {
  const TestDir dir;
  std::mt19937 rng(3);
  std::vector<std::uint16_t> tokens(10007);
  for (auto& t : tokens) t = static_cast<std::uint16_t>(rng() & 0xFFFF);
  const std::string path = (dir / "shard.bin").string();
  ct::write_llmc_shard(path, tokens);
  EXPECT_FALSE(fs::exists(path + ".partial"));
  EXPECT_EQ(fs::file_size(path), 1024u + 2u * tokens.size());
  EXPECT_EQ(ct::read_llmc_shard(path), tokens);

  const std::string raw = read_all(path);
  std::int32_t header[3];
  std::memcpy(header, raw.data(), sizeof header);
  EXPECT_EQ(header[0], 20240520);
  EXPECT_EQ(header[1], 1);
  EXPECT_EQ(header[2], static_cast<std::int32_t>(tokens.size()));
  for (std::size_t i = 12; i < 1024; ++i) EXPECT_EQ(raw[i], 0) << i;  // header[3..255] are 0
  std::uint16_t first = 0;
  std::memcpy(&first, raw.data() + 1024, 2);
  EXPECT_EQ(first, tokens[0]);

  // Overwriting works; an empty shard round-trips.
  ct::write_llmc_shard(path, {});
  EXPECT_TRUE(ct::read_llmc_shard(path).empty());
  EXPECT_EQ(fs::file_size(path), 1024u);
}

TEST(Shard, RejectsMalformedFilesWithOneLine) {
  const TestDir dir;
  const auto check = [&](const std::string& name, const std::string& bytes, const std::string& needle) {
    const std::string path = (dir / name).string();
    write_all(path, bytes);
    expect_data_error([&] { (void)ct::read_llmc_shard(path); }, path, needle);
  };
  check("magic.bin", shard_bytes(1234, 1, 4, 4), "not an llm.c token shard (magic 1234, expected 20240520)");
  check("version.bin", shard_bytes(ct::kLlmcShardMagic, 2, 4, 4), "version 2");
  check("negative.bin", shard_bytes(ct::kLlmcShardMagic, 1, -5, 0), "negative token count -5");
  check("truncated.bin", shard_bytes(ct::kLlmcShardMagic, 1, 100, 99), "truncated");
  check("long.bin", shard_bytes(ct::kLlmcShardMagic, 1, 100, 101), "trailing data");
  check("huge.bin", shard_bytes(ct::kLlmcShardMagic, 1, std::numeric_limits<std::int32_t>::max(), 1), "truncated");
  check("odd.bin", shard_bytes(ct::kLlmcShardMagic, 1, 2, 2) + "x", "trailing data");
  check("header.bin", shard_bytes(ct::kLlmcShardMagic, 1, 0, 0).substr(0, 100), "too short");
  check("empty.bin", "", "empty");
  const std::string missing = (dir / "missing.bin").string();
  expect_data_error([&] { (void)ct::read_llmc_shard(missing); }, missing, "no such file");
}

TEST(Shard, WriterFailsWithOneLine) {
  const TestDir dir;
  const std::vector<std::uint16_t> tokens = {1, 2, 3};
  const std::string unwritable = (dir / "no-such-dir" / "shard.bin").string();
  expect_data_error([&] { ct::write_llmc_shard(unwritable, tokens); }, unwritable, "cannot create");
  // Disk full: NAME.partial is a link to /dev/full.
  if (fs::exists("/dev/full")) {
    const std::string path = (dir / "full.bin").string();
    fs::create_symlink("/dev/full", path + ".partial");
    expect_data_error([&] { ct::write_llmc_shard(path, std::vector<std::uint16_t>(100000, 7)); }, path, "write error");
    EXPECT_FALSE(fs::exists(path));
    EXPECT_FALSE(fs::is_symlink(path + ".partial"));
  }
}

TEST(Shard, FuzzedFilesLoadOrThrowDataError) {
  const TestDir dir;
  std::vector<std::uint16_t> tokens(300);
  for (std::size_t i = 0; i < tokens.size(); ++i) tokens[i] = static_cast<std::uint16_t>(i * 97);
  const std::string good_path = (dir / "good.bin").string();
  ct::write_llmc_shard(good_path, tokens);
  const std::string good = read_all(good_path);
  std::mt19937_64 rng(20240520);
  const std::int32_t specials[] = {0,
                                   -1,
                                   1,
                                   2,
                                   5,
                                   3,
                                   299,
                                   300,
                                   301,
                                   1 << 30,
                                   std::numeric_limits<std::int32_t>::max(),
                                   std::numeric_limits<std::int32_t>::min(),
                                   20240520};
  int loaded = 0, rejected = 0;
  for (int k = 0; k < 200; ++k) {
    std::string bytes = good;
    // A shard's header: magic, version, token count (3 ints, 12 bytes) and reserved ints.
    damage(bytes, k, rng, specials, DamageAim{4, 1024, 12});
    const std::string path = (dir / ("fuzz-" + std::to_string(k) + ".bin")).string();
    write_all(path, bytes);
    try {
      const std::vector<std::uint16_t> read = ct::read_llmc_shard(path);
      EXPECT_EQ(read.size() * 2 + 1024, bytes.size());
      ++loaded;
    } catch (const ct::DataError& e) {
      EXPECT_EQ(std::string(e.what()).find('\n'), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find(path), std::string::npos) << e.what();
      ++rejected;
    }
    try {
      (void)ct::TokenDataset::load(path);  // may load as text when the magic is gone
    } catch (const ct::DataError& e) {
      EXPECT_NE(std::string(e.what()).find(path), std::string::npos) << e.what();
    }
    fs::remove(path);
  }
  EXPECT_GT(rejected, 100);
  EXPECT_GT(loaded, 0);
}

TEST(Batch, RanksConcatenateToTheSingleRankBatch) {
  const ct::TokenDataset data = ct::TokenDataset::load(tiny_text().string());
  const int global = 12, seq = 16;
  for (std::int64_t step = 0; step < 6; ++step) {
    const Batch whole = draw(data, global, seq, 0, 1, 42, step);
    for (int ranks : {2, 3, 4}) {
      Batch joined;
      for (int r = 0; r < ranks; ++r) {
        const Batch part = draw(data, global, seq, r, ranks, 42, step);
        EXPECT_EQ(part.inputs.size(), static_cast<std::size_t>(global / ranks * seq));
        joined.inputs.insert(joined.inputs.end(), part.inputs.begin(), part.inputs.end());
        joined.targets.insert(joined.targets.end(), part.targets.begin(), part.targets.end());
      }
      EXPECT_EQ(joined.inputs, whole.inputs) << "step " << step << ", " << ranks << " ranks";
      EXPECT_EQ(joined.targets, whole.targets) << "step " << step << ", " << ranks << " ranks";
    }
  }
  // Successive next() calls follow the steps.
  ct::BatchLoader loader(data, global, seq, 1, 3, 42);
  std::vector<int> in(static_cast<std::size_t>(loader.local_batch() * seq)), tg(in.size());
  for (std::int64_t step = 0; step < 3; ++step) {
    loader.next(in.data(), tg.data());
    EXPECT_EQ(in, draw(data, global, seq, 1, 3, 42, step).inputs);
  }
}

TEST(Batch, TargetsAreShiftedInputsFromRealWindows) {
  // Distinct tokens: a window's first token is its position in the stream.
  std::vector<std::uint16_t> tokens(5000);
  for (std::size_t i = 0; i < tokens.size(); ++i) tokens[i] = static_cast<std::uint16_t>(i);
  const ct::TokenDataset counting(tokens);
  const int seq = 32, global = 8;
  int lowest = 1 << 30, highest = -1;
  for (std::int64_t step = 0; step < 200; ++step) {
    const Batch b = draw(counting, global, seq, 0, 1, 9, step);
    for (int w = 0; w < global; ++w) {
      const int start = b.inputs[static_cast<std::size_t>(w * seq)];
      lowest = std::min(lowest, start);
      highest = std::max(highest, start);
      ASSERT_LE(start + seq, 5000 - 1);
      for (int t = 0; t < seq; ++t) {
        ASSERT_EQ(b.inputs[static_cast<std::size_t>(w * seq + t)], start + t);
        ASSERT_EQ(b.targets[static_cast<std::size_t>(w * seq + t)], start + t + 1);
      }
    }
  }
  // 1600 uniform draws over 4968 positions reach both ends of the stream.
  EXPECT_LT(lowest, 100);
  EXPECT_GT(highest, 4968 - 100);

  // On text: every window is a slice of the stream and targets follow inputs.
  const ct::TokenDataset text = ct::TokenDataset::load(tiny_text().string());
  const std::vector<int> stream = to_ints(text.tokens());
  for (std::int64_t step = 0; step < 5; ++step) {
    const Batch b = draw(text, 12, 24, 0, 1, 5, step);
    for (int w = 0; w < 12; ++w) {
      std::vector<int> window(b.inputs.begin() + w * 24, b.inputs.begin() + (w + 1) * 24);
      window.push_back(b.targets[static_cast<std::size_t>(w * 24 + 23)]);
      for (int t = 0; t + 1 < 24; ++t)
        EXPECT_EQ(b.targets[static_cast<std::size_t>(w * 24 + t)], b.inputs[static_cast<std::size_t>(w * 24 + t + 1)]);
      EXPECT_NE(std::search(stream.begin(), stream.end(), window.begin(), window.end()), stream.end());
    }
  }
  // A dataset of exactly seq + 1 tokens has one window.
  const ct::TokenDataset exact(std::vector<std::uint16_t>{5, 6, 7, 8, 9});
  const Batch one = draw(exact, 2, 4, 0, 1, 1, 0);
  EXPECT_EQ(one.inputs, (std::vector<int>{5, 6, 7, 8, 5, 6, 7, 8}));
  EXPECT_EQ(one.targets, (std::vector<int>{6, 7, 8, 9, 6, 7, 8, 9}));
}

TEST(Batch, SeedsAndStepsChangeTheBatch) {
  const ct::TokenDataset data = ct::TokenDataset::load(tiny_text().string());
  const Batch a = draw(data, 12, 16, 0, 1, 1, 0);
  EXPECT_EQ(a.inputs, draw(data, 12, 16, 0, 1, 1, 0).inputs);
  EXPECT_NE(a.inputs, draw(data, 12, 16, 0, 1, 2, 0).inputs);
  EXPECT_NE(a.inputs, draw(data, 12, 16, 0, 1, 1, 1).inputs);
  EXPECT_NE(draw(data, 12, 16, 0, 1, 1, 1).inputs, draw(data, 12, 16, 0, 1, 2, 1).inputs);
}

TEST(Batch, RejectsBadArguments) {
  const ct::TokenDataset data(std::vector<std::uint16_t>(17, 1));
  EXPECT_THROW(ct::BatchLoader(data, 10, 4, 0, 3, 1), std::invalid_argument);   // 10 % 3 != 0
  EXPECT_THROW(ct::BatchLoader(data, 12, 17, 0, 1, 1), std::invalid_argument);  // 17 < seq + 1
  EXPECT_THROW(ct::BatchLoader(ct::TokenDataset(), 12, 4, 0, 1, 1), std::invalid_argument);
  EXPECT_THROW(ct::BatchLoader(data, 12, 4, 4, 4, 1), std::invalid_argument);  // rank >= ranks
  EXPECT_THROW(ct::BatchLoader(data, 12, 4, -1, 4, 1), std::invalid_argument);
  EXPECT_THROW(ct::BatchLoader(data, 12, 4, 0, 0, 1), std::invalid_argument);
  EXPECT_THROW(ct::BatchLoader(data, 0, 4, 0, 1, 1), std::invalid_argument);
  EXPECT_THROW(ct::BatchLoader(data, 12, 0, 0, 1, 1), std::invalid_argument);
  EXPECT_NO_THROW(ct::BatchLoader(data, 12, 16, 0, 1, 1));
  EXPECT_EQ(ct::BatchLoader(data, 12, 16, 2, 4, 1).local_batch(), 3);
}
