#include "commscope/trainer/checkpoint.hpp"

#include "binary_file.hpp"

#include <array>
#include <bit>
#include <cerrno>
#include <cstdio>
#include <filesystem>
#include <limits>
#include <memory>
#include <system_error>

#include "commscope/trainer/layout.hpp"

namespace commscope::trainer {

static_assert(std::endian::native == std::endian::little, "llm.c's files are little-endian");

namespace {

constexpr std::size_t kHeaderInts = 256;
constexpr std::size_t kHeaderBytes = kHeaderInts * sizeof(std::int32_t);
constexpr std::int32_t kLlmcModelVersionBf16 = 5;
constexpr std::int32_t kTrainingVersion = 1;
using Header = std::array<std::int32_t, kHeaderInts>;

[[noreturn]] void fail(const std::string& path, const std::string& what) {
  binary_file::fail<CheckpointError>(path, what);
}
using binary_file::errno_text;
using binary_file::File;
File open_for_reading(const std::string& path, std::uint64_t& size) {
  File f = binary_file::open_for_reading<CheckpointError>(path, size);
  if (size == 0) fail(path, "is empty");
  return f;
}
void read_exactly(std::FILE* f, void* out, std::size_t bytes, const std::string& path) {
  binary_file::read_exactly<CheckpointError>(f, out, bytes, path);
}
template <class Body>
void write_atomically(const std::string& path, Body&& body) {
  binary_file::write_atomically<CheckpointError>(path, std::forward<Body>(body));
}

Header read_header(std::FILE* f, std::uint64_t size, const std::string& path, const char* kind) {
  if (size < kHeaderBytes)
    fail(path, "too short for " + std::string(kind) + " (" + std::to_string(size) + " bytes, the header alone is " +
                   std::to_string(kHeaderBytes) + ")");
  Header header{};
  read_exactly(f, header.data(), kHeaderBytes, path);
  return header;
}

// a * b + c with overflow detection (false on overflow).
bool mul_add(std::uint64_t a, std::uint64_t b, std::uint64_t c, std::uint64_t& out) {
  std::uint64_t p = 0;
  return !__builtin_mul_overflow(a, b, &p) && !__builtin_add_overflow(p, c, &out);
}

// The parameter count of a header's config, computed without overflow (false when it would
// overflow 64 bits). Every field must already be positive.
bool checked_parameter_count(const ModelConfig& c, std::uint64_t& count) {
  const auto C = static_cast<std::uint64_t>(c.channels);
  std::uint64_t cc = 0, per_layer = 0, layers = 0, embed = 0, total = 0;
  // per layer: 12 C^2 + 13 C (see ParameterLayout)
  if (!mul_add(C, C, 0, cc) || !mul_add(cc, 12, 0, per_layer) || !mul_add(C, 13, per_layer, per_layer)) return false;
  if (!mul_add(per_layer, static_cast<std::uint64_t>(c.layers), 0, layers)) return false;
  if (!mul_add(static_cast<std::uint64_t>(c.padded_vocab) + static_cast<std::uint64_t>(c.max_seq), C, 0, embed))
    return false;
  if (!mul_add(C, 2, embed, total) || __builtin_add_overflow(total, layers, &total)) return false;
  count = total;
  return true;
}

// Checks a config read from a header: positive fields, heads dividing channels, Vp >= V, and a
// parameter count that fits; returns ParameterLayout::total().
std::uint64_t validated_count(const ModelConfig& c, const std::string& path) {
  const std::pair<const char*, int> fields[] = {{"maxT", c.max_seq}, {"V", c.vocab},  {"Vp", c.padded_vocab},
                                                {"L", c.layers},     {"NH", c.heads}, {"C", c.channels}};
  for (const auto& [name, value] : fields)
    if (value < 1)
      fail(path, "bad header: " + std::string(name) + " = " + std::to_string(value) + " (must be positive)");
  if (const std::string problem = c.problem(); !problem.empty()) fail(path, "bad header: " + problem);
  std::uint64_t count = 0;
  if (!checked_parameter_count(c, count)) fail(path, "bad header: the parameter count overflows");
  return count;
}

void check_size(const std::string& path, std::uint64_t size, std::uint64_t elements, std::uint64_t arrays) {
  std::uint64_t expected = 0;
  if (!mul_add(elements, arrays * sizeof(float), kHeaderBytes, expected))
    fail(path, "bad header: the data size overflows");
  if (size != expected)
    fail(path, "the header says " + std::to_string(elements) + " parameters (" + std::to_string(expected) +
                   " bytes) but the file has " + std::to_string(size) + " bytes (" +
                   (size < expected ? "truncated" : "trailing data") + ")");
  if (elements > std::numeric_limits<std::size_t>::max() / sizeof(float)) fail(path, "too large to load");
}

void check_buffer(const char* name, std::size_t got, std::size_t want) {
  if (got != want)
    throw std::invalid_argument(std::string(name) + " has " + std::to_string(got) + " elements, the model has " +
                                std::to_string(want));
}

void check_config(const ModelConfig& config) {
  if (const std::string problem = config.problem(); !problem.empty())
    throw std::invalid_argument("bad model config: " + problem);
}

void put_int64(Header& h, std::size_t at, std::int64_t value) {
  const auto u = static_cast<std::uint64_t>(value);
  h[at] = static_cast<std::int32_t>(static_cast<std::uint32_t>(u & 0xFFFFFFFFu));
  h[at + 1] = static_cast<std::int32_t>(static_cast<std::uint32_t>(u >> 32));
}

std::int64_t get_int64(const Header& h, std::size_t at) {
  const std::uint64_t lo = static_cast<std::uint32_t>(h[at]), hi = static_cast<std::uint32_t>(h[at + 1]);
  return static_cast<std::int64_t>(lo | (hi << 32));
}

// Training checkpoint header indices (see checkpoint.hpp).
enum TrainingField : std::size_t {
  kMagic = 0,
  kVersion = 1,
  kMaxSeq = 2,
  kVocab = 3,
  kPaddedVocab = 4,
  kLayers = 5,
  kHeads = 6,
  kChannels = 7,
  kStep = 8,    // int64: [8] low, [9] high 32 bits
  kCount = 10,  // int64: [10] low, [11] high 32 bits
};

}  // namespace

void write_llmc_model(const std::string& path, const ModelConfig& config, std::span<const float> params) {
  check_config(config);
  const ParameterLayout layout(config);
  check_buffer("params", params.size(), layout.total());
  Header header{};
  header[0] = kLlmcModelMagic;
  header[1] = kLlmcModelVersionFp32;
  header[2] = config.max_seq;
  header[3] = config.vocab;
  header[4] = config.layers;
  header[5] = config.heads;
  header[6] = config.channels;
  header[7] = config.padded_vocab;
  std::vector<float> llmc(layout.total());
  layout.to_llmc(params, llmc);
  write_atomically(path, [&](auto&& write) {
    write(header.data(), kHeaderBytes);
    write(llmc.data(), llmc.size() * sizeof(float));
  });
}

ModelFile read_llmc_model(const std::string& path) {
  std::uint64_t size = 0;
  const File f = open_for_reading(path, size);
  const Header h = read_header(f.get(), size, path, "an llm.c model file");
  if (h[0] != kLlmcModelMagic)
    fail(path, "not an llm.c model file (magic " + std::to_string(h[0]) + ", expected " +
                   std::to_string(kLlmcModelMagic) + ")");
  if (h[1] == kLlmcModelVersionBf16) fail(path, "bf16 model files are not supported; convert to fp32 (version 3)");
  if (h[1] != kLlmcModelVersionFp32)
    fail(path, "unsupported llm.c model version " + std::to_string(h[1]) + " (expected 3 = fp32)");
  ModelFile out;
  out.config.max_seq = h[2];
  out.config.vocab = h[3];
  out.config.layers = h[4];
  out.config.heads = h[5];
  out.config.channels = h[6];
  out.config.padded_vocab = h[7];
  const std::uint64_t count = validated_count(out.config, path);
  check_size(path, size, count, 1);
  const ParameterLayout layout(out.config);
  if (layout.total() != count) fail(path, "bad header: inconsistent parameter count");
  std::vector<float> llmc(layout.total());
  read_exactly(f.get(), llmc.data(), llmc.size() * sizeof(float), path);
  out.params.resize(layout.total());
  layout.from_llmc(llmc, out.params);
  return out;
}

void write_training_checkpoint(const std::string& path, const TrainingState& state) {
  check_config(state.config);
  const ParameterLayout layout(state.config);
  check_buffer("params", state.params.size(), layout.total());
  check_buffer("m", state.m.size(), layout.total());
  check_buffer("v", state.v.size(), layout.total());
  if (state.step < 0)
    throw std::invalid_argument("the step must not be negative (got " + std::to_string(state.step) + ")");
  Header header{};
  header[kMagic] = kTrainingMagic;
  header[kVersion] = kTrainingVersion;
  header[kMaxSeq] = state.config.max_seq;
  header[kVocab] = state.config.vocab;
  header[kPaddedVocab] = state.config.padded_vocab;
  header[kLayers] = state.config.layers;
  header[kHeads] = state.config.heads;
  header[kChannels] = state.config.channels;
  put_int64(header, kStep, state.step);
  put_int64(header, kCount, static_cast<std::int64_t>(layout.total()));
  write_atomically(path, [&](auto&& write) {
    write(header.data(), kHeaderBytes);
    for (const std::vector<float>* a : {&state.params, &state.m, &state.v}) write(a->data(), a->size() * sizeof(float));
  });
}

TrainingState read_training_checkpoint(const std::string& path) {
  std::uint64_t size = 0;
  const File f = open_for_reading(path, size);
  const Header h = read_header(f.get(), size, path, "a commscope training checkpoint");
  if (h[kMagic] != kTrainingMagic)
    fail(path, "not a commscope training checkpoint (magic " + std::to_string(h[kMagic]) + ", expected " +
                   std::to_string(kTrainingMagic) + ")");
  if (h[kVersion] != kTrainingVersion)
    fail(path, "unsupported training checkpoint version " + std::to_string(h[kVersion]) + " (expected " +
                   std::to_string(kTrainingVersion) + ")");
  TrainingState out;
  out.config.max_seq = h[kMaxSeq];
  out.config.vocab = h[kVocab];
  out.config.padded_vocab = h[kPaddedVocab];
  out.config.layers = h[kLayers];
  out.config.heads = h[kHeads];
  out.config.channels = h[kChannels];
  const std::uint64_t count = validated_count(out.config, path);
  out.step = get_int64(h, kStep);
  if (out.step < 0) fail(path, "bad header: negative step " + std::to_string(out.step));
  const std::int64_t stored = get_int64(h, kCount);
  if (stored < 0 || static_cast<std::uint64_t>(stored) != count)
    fail(path, "bad header: element count " + std::to_string(stored) + " does not match the config (" +
                   std::to_string(count) + ")");
  check_size(path, size, count, 3);
  for (std::vector<float>* a : {&out.params, &out.m, &out.v}) {
    a->resize(static_cast<std::size_t>(count));
    read_exactly(f.get(), a->data(), a->size() * sizeof(float), path);
  }
  return out;
}

}  // namespace commscope::trainer
