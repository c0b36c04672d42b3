#include <gtest/gtest.h>

#include <unistd.h>
#include <array>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <limits>
#include <random>
#include <string>
#include <system_error>
#include <vector>

#include "commscope/trainer/checkpoint.hpp"
#include "commscope/trainer/layout.hpp"

#include "test_dir.hpp"
#include "test_files.hpp"

namespace ct = commscope::trainer;
namespace fs = std::filesystem;

namespace {

std::int32_t header_int(const std::string& bytes, std::size_t i) {
  std::int32_t v = 0;
  std::memcpy(&v, bytes.data() + 4 * i, 4);
  return v;
}

void set_header_int(std::string& bytes, std::size_t i, std::int32_t v) {
  std::memcpy(bytes.data() + 4 * i, &v, 4);
}

float float_at(const std::string& bytes, std::size_t element) {
  float v = 0;
  std::memcpy(&v, bytes.data() + 1024 + 4 * element, 4);
  return v;
}

// A small model with a padded vocabulary (Vp > V), so the header fields are all different.
ct::ModelConfig small_config() {
  ct::ModelConfig c;
  c.max_seq = 16;
  c.vocab = 100;
  c.padded_vocab = 128;
  c.layers = 2;
  c.heads = 2;
  c.channels = 8;
  return c;
}

// Random bit patterns, including NaNs with payloads, infinities, -0 and denormals.
std::vector<float> random_floats(std::size_t n, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<float> v(n);
  for (auto& x : v) {
    const auto bits = static_cast<std::uint32_t>(rng());
    std::memcpy(&x, &bits, 4);
  }
  return v;
}

bool same_bytes(const std::vector<float>& a, const std::vector<float>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

bool same_config(const ct::ModelConfig& a, const ct::ModelConfig& b) {
  return a.max_seq == b.max_seq && a.vocab == b.vocab && a.padded_vocab == b.padded_vocab && a.layers == b.layers &&
         a.heads == b.heads && a.channels == b.channels;
}

template <class F>
void expect_checkpoint_error(F&& f, const std::string& path, const std::string& needle) {
  try {
    f();
    ADD_FAILURE() << "no CheckpointError for " << path << " (expected '" << needle << "')";
  } catch (const ct::CheckpointError& e) {
    const std::string what = e.what();
    EXPECT_EQ(what.find('\n'), std::string::npos) << what;
    EXPECT_NE(what.find(path), std::string::npos) << what;
    EXPECT_NE(what.find(needle), std::string::npos) << what;
  }
}

ct::TrainingState random_state(const ct::ModelConfig& c, std::int64_t step) {
  const std::size_t n = ct::ParameterLayout(c).total();
  ct::TrainingState s;
  s.config = c;
  s.step = step;
  s.params = random_floats(n, 1);
  s.m = random_floats(n, 2);
  s.v = random_floats(n, 3);
  return s;
}

}  // namespace

TEST(Checkpoint, LlmcModelRoundTripIsBitIdentical) {
  const TestDir dir;
  for (const ct::ModelConfig& c : {small_config(), ct::preset("tiny")}) {
    const ct::ParameterLayout layout(c);
    const std::vector<float> params = random_floats(layout.total(), 11);
    const std::string path = (dir / "model.bin").string();
    ct::write_llmc_model(path, c, params);
    EXPECT_FALSE(fs::exists(path + ".partial"));
    EXPECT_EQ(fs::file_size(path), 1024u + 4u * layout.total());
    const ct::ModelFile back = ct::read_llmc_model(path);
    EXPECT_TRUE(same_config(back.config, c));
    EXPECT_TRUE(same_bytes(back.params, params));
  }
}

TEST(Checkpoint, LlmcModelHeaderAndTensorOrderAreLlmcs) {
  const TestDir dir;
  const ct::ModelConfig c = small_config();
  const ct::ParameterLayout layout(c);
  std::vector<float> params(layout.total());
  for (std::size_t i = 0; i < params.size(); ++i) params[i] = static_cast<float>(i);  // exact below 2^24
  const std::string path = (dir / "model.bin").string();
  ct::write_llmc_model(path, c, params);
  const std::string raw = read_all(path);
  EXPECT_EQ(header_int(raw, 0), 20240326);
  EXPECT_EQ(header_int(raw, 1), 3);
  EXPECT_EQ(header_int(raw, 2), 16);   // maxT
  EXPECT_EQ(header_int(raw, 3), 100);  // V
  EXPECT_EQ(header_int(raw, 4), 2);    // L
  EXPECT_EQ(header_int(raw, 5), 2);    // NH
  EXPECT_EQ(header_int(raw, 6), 8);    // C
  EXPECT_EQ(header_int(raw, 7), 128);  // Vp
  for (std::size_t i = 8; i < 256; ++i) EXPECT_EQ(header_int(raw, i), 0) << i;

  const std::size_t C = 8, L = 2;
  // wte [Vp, C] then wpe [maxT, C].
  EXPECT_EQ(float_at(raw, 0), static_cast<float>(layout.offset(ct::Tensor::wte)));
  EXPECT_EQ(float_at(raw, 128 * C), static_cast<float>(layout.offset(ct::Tensor::wpe)));
  // Then every layer's ln1w, then every layer's ln1b, ...: tensor-major.
  std::size_t at = (128 + 16) * C;
  for (int t = static_cast<int>(ct::Tensor::ln1w); t <= static_cast<int>(ct::Tensor::fcprojb); ++t) {
    const auto tensor = static_cast<ct::Tensor>(t);
    for (std::size_t l = 0; l < L; ++l) {
      for (std::size_t i = 0; i < layout.size(tensor); ++i)
        ASSERT_EQ(float_at(raw, at + i), static_cast<float>(layout.offset(tensor, static_cast<int>(l)) + i))
            << ct::tensor_name(tensor) << " layer " << l;
      at += layout.size(tensor);
    }
  }
  // The first C floats after wte and wpe are layer 0's ln1w, the next C layer 1's.
  EXPECT_EQ(float_at(raw, (128 + 16) * C), static_cast<float>(layout.offset(ct::Tensor::ln1w, 0)));
  EXPECT_EQ(float_at(raw, (128 + 16) * C + C), static_cast<float>(layout.offset(ct::Tensor::ln1w, 1)));
  // lnfw, lnfb close the file.
  EXPECT_EQ(float_at(raw, at), static_cast<float>(layout.offset(ct::Tensor::lnfw)));
  EXPECT_EQ(float_at(raw, at + C), static_cast<float>(layout.offset(ct::Tensor::lnfb)));
  EXPECT_EQ(at + 2 * C, layout.total());
}

TEST(Checkpoint, LlmcModelRejectsMalformedFilesWithOneLine) {
  const TestDir dir;
  const ct::ModelConfig c = small_config();
  const std::string good_path = (dir / "good.bin").string();
  ct::write_llmc_model(good_path, c, random_floats(ct::ParameterLayout(c).total(), 5));
  const std::string good = read_all(good_path);
  const auto check = [&](const std::string& name, const std::string& bytes, const std::string& needle) {
    const std::string path = (dir / name).string();
    write_all(path, bytes);
    expect_checkpoint_error([&] { (void)ct::read_llmc_model(path); }, path, needle);
  };
  const auto with = [&](std::size_t i, std::int32_t v) {
    std::string b = good;
    set_header_int(b, i, v);
    return b;
  };
  check("magic.bin", with(0, 1234), "not an llm.c model file (magic 1234, expected 20240326)");
  check("bf16.bin", with(1, 5), "bf16 model files are not supported; convert to fp32 (version 3)");
  check("version.bin", with(1, 4), "unsupported llm.c model version 4");
  check("maxT.bin", with(2, 0), "maxT = 0");
  check("V.bin", with(3, -3), "V = -3");
  check("L.bin", with(4, -1), "L = -1");
  check("NH.bin", with(5, 3), "multiple of heads");
  check("C.bin", with(6, std::numeric_limits<std::int32_t>::min()), "C = ");
  check("Vp.bin", with(7, 64), "padded vocabulary");
  std::string overflow = with(6, std::numeric_limits<std::int32_t>::max() - 1);
  set_header_int(overflow, 4, std::numeric_limits<std::int32_t>::max());
  set_header_int(overflow, 5, 2);
  check("overflow.bin", overflow, "overflow");
  check("big.bin", with(4, 1000), "truncated");  // a plausible but much bigger model
  check("truncated.bin", good.substr(0, good.size() - 4), "truncated");
  check("long.bin", good + std::string(4, '\0'), "trailing data");
  check("header.bin", good.substr(0, 1000), "too short");
  check("empty.bin", "", "empty");
  const std::string missing = (dir / "missing.bin").string();
  expect_checkpoint_error([&] { (void)ct::read_llmc_model(missing); }, missing, "no such file");
  expect_checkpoint_error([&] { (void)ct::read_llmc_model(dir.string()); }, dir.string(), "directory");
}

TEST(Checkpoint, TrainingCheckpointRoundTripIsBitIdentical) {
  const TestDir dir;
  const ct::TrainingState state = random_state(small_config(), (std::int64_t{1} << 40) + 5);
  const std::string path = (dir / "state.ckpt").string();
  ct::write_training_checkpoint(path, state);
  EXPECT_FALSE(fs::exists(path + ".partial"));
  const std::size_t n = state.params.size();
  EXPECT_EQ(fs::file_size(path), 1024u + 12u * n);
  const ct::TrainingState back = ct::read_training_checkpoint(path);
  EXPECT_TRUE(same_config(back.config, state.config));
  EXPECT_EQ(back.step, state.step);
  EXPECT_TRUE(same_bytes(back.params, state.params));
  EXPECT_TRUE(same_bytes(back.m, state.m));
  EXPECT_TRUE(same_bytes(back.v, state.v));

  // The documented header.
  const std::string raw = read_all(path);
  EXPECT_EQ(header_int(raw, 0), ct::kTrainingMagic);
  EXPECT_EQ(header_int(raw, 1), 1);
  const std::int32_t fields[] = {16, 100, 128, 2, 2, 8};
  for (std::size_t i = 0; i < 6; ++i) EXPECT_EQ(header_int(raw, 2 + i), fields[i]) << i;
  EXPECT_EQ(header_int(raw, 8), 5);
  EXPECT_EQ(header_int(raw, 9), 256);
  EXPECT_EQ(header_int(raw, 10), static_cast<std::int32_t>(n));
  EXPECT_EQ(header_int(raw, 11), 0);
  EXPECT_EQ(std::memcmp(raw.data() + 1024 + 4 * n, state.m.data(), 4 * n), 0);

  // Step 0 round-trips too, and a rewrite replaces the file.
  ct::write_training_checkpoint(path, random_state(ct::preset("tiny"), 0));
  EXPECT_EQ(ct::read_training_checkpoint(path).step, 0);
}

TEST(Checkpoint, TrainingCheckpointRejectsMalformedFilesWithOneLine) {
  const TestDir dir;
  const std::string good_path = (dir / "good.ckpt").string();
  ct::write_training_checkpoint(good_path, random_state(small_config(), 7));
  const std::string good = read_all(good_path);
  const auto check = [&](const std::string& name, const std::string& bytes, const std::string& needle) {
    const std::string path = (dir / name).string();
    write_all(path, bytes);
    expect_checkpoint_error([&] { (void)ct::read_training_checkpoint(path); }, path, needle);
  };
  const auto with = [&](std::size_t i, std::int32_t v) {
    std::string b = good;
    set_header_int(b, i, v);
    return b;
  };
  check("magic.ckpt", with(0, 20240326), "not a commscope training checkpoint (magic 20240326");
  check("version.ckpt", with(1, 2), "version 2");
  check("heads.ckpt", with(6, 3), "multiple of heads");
  check("zero.ckpt", with(7, 0), "C = 0");
  check("step.ckpt", with(9, -1), "negative step");
  check("count.ckpt", with(10, 12345), "element count 12345");
  check("counthigh.ckpt", with(11, 1), "element count");
  check("truncated.ckpt", good.substr(0, good.size() - 1), "truncated");
  check("long.ckpt", good + "x", "trailing data");
  check("empty.ckpt", "", "empty");
  // An llm.c model file is not a training checkpoint, and the other way round.
  expect_checkpoint_error([&] { (void)ct::read_llmc_model(good_path); }, good_path, "not an llm.c model file");
  const std::string missing = (dir / "missing.ckpt").string();
  expect_checkpoint_error([&] { (void)ct::read_training_checkpoint(missing); }, missing, "no such file");
}

TEST(Checkpoint, WritersFailWithOneLineAndLeaveNoPartialFile) {
  const TestDir dir;
  const ct::ModelConfig c = small_config();
  const std::vector<float> params = random_floats(ct::ParameterLayout(c).total(), 9);
  const std::string unwritable = (dir / "no-such-dir" / "model.bin").string();
  expect_checkpoint_error([&] { ct::write_llmc_model(unwritable, c, params); }, unwritable, "cannot create");
  expect_checkpoint_error([&] { ct::write_training_checkpoint(unwritable, random_state(c, 1)); }, unwritable,
                          "cannot create");
  // The target is a directory: the rename fails, the partial file is removed.
  const fs::path target = dir / "occupied";
  fs::create_directories(target / "inside");
  expect_checkpoint_error([&] { ct::write_llmc_model(target.string(), c, params); }, target.string(), "rename");
  EXPECT_FALSE(fs::exists(target.string() + ".partial"));
  // Disk full: NAME.partial is a link to /dev/full.
  if (fs::exists("/dev/full")) {
    const std::string path = (dir / "full.bin").string();
    fs::create_symlink("/dev/full", path + ".partial");
    expect_checkpoint_error([&] { ct::write_llmc_model(path, c, params); }, path, "write error");
    EXPECT_FALSE(fs::exists(path));
  }
  // Bad arguments are the caller's bug.
  EXPECT_THROW(ct::write_llmc_model((dir / "x.bin").string(), c, std::vector<float>(10)), std::invalid_argument);
  ct::ModelConfig bad = c;
  bad.heads = 3;
  EXPECT_THROW(ct::write_llmc_model((dir / "x.bin").string(), bad, params), std::invalid_argument);
  ct::TrainingState state = random_state(c, 1);
  state.m.pop_back();
  EXPECT_THROW(ct::write_training_checkpoint((dir / "x.ckpt").string(), state), std::invalid_argument);
  EXPECT_FALSE(fs::exists(dir / "x.bin"));
}

TEST(Checkpoint, FuzzedFilesLoadOrThrowCheckpointError) {
  const TestDir dir;
  const ct::ModelConfig c = small_config();
  const std::string model_path = (dir / "good.bin").string(), state_path = (dir / "good.ckpt").string();
  ct::write_llmc_model(model_path, c, random_floats(ct::ParameterLayout(c).total(), 4));
  ct::write_training_checkpoint(state_path, random_state(c, 3));
  const std::string goods[] = {read_all(model_path), read_all(state_path)};
  std::mt19937_64 rng(20240326);
  const std::int32_t specials[] = {0,
                                   -1,
                                   1,
                                   2,
                                   3,
                                   4,
                                   5,
                                   7,
                                   8,
                                   16,
                                   100,
                                   127,
                                   128,
                                   64,
                                   9,
                                   1000,
                                   65536,
                                   1 << 30,
                                   std::numeric_limits<std::int32_t>::max(),
                                   std::numeric_limits<std::int32_t>::min()};
  int loaded = 0, rejected = 0;
  for (int k = 0; k < 200; ++k) {
    const bool model = k % 2 == 0;
    std::string bytes = goods[model ? 0 : 1];
    // The header's meaningful ints are the first 12 (48 bytes).
    damage(bytes, k / 2, rng, specials, DamageAim{12, 1100, 48});
    const std::string path = (dir / ("fuzz-" + std::to_string(k))).string();
    write_all(path, bytes);
    try {
      if (model) {
        const ct::ModelFile f = ct::read_llmc_model(path);
        EXPECT_EQ(f.params.size() * 4 + 1024, bytes.size());
      } else {
        const ct::TrainingState s = ct::read_training_checkpoint(path);
        EXPECT_EQ(s.params.size() * 12 + 1024, bytes.size());
      }
      ++loaded;
    } catch (const ct::CheckpointError& e) {
      EXPECT_EQ(std::string(e.what()).find('\n'), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find(path), std::string::npos) << e.what();
      ++rejected;
    }
    fs::remove(path);
  }
  EXPECT_GT(rejected, 100);
  EXPECT_GT(loaded, 0);
}
