#pragma once
// Checkpoints: llm.c's model files (interoperable both ways) and our own training checkpoints.
//
// llm.c: a header of 256 int32 (magic 20240326, version 3 = fp32, maxT, V, L, NH, C, Vp), then
// the 16 parameter tensors as fp32 in llm.c's order (layout.hpp converts), vocabulary padded.

#include <cstdint>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include "commscope/trainer/config.hpp"

namespace commscope::trainer {

class CheckpointError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

inline constexpr std::int32_t kLlmcModelMagic = 20240326;
inline constexpr std::int32_t kLlmcModelVersionFp32 = 3;

struct ModelFile {
  ModelConfig config;
  std::vector<float> params;  // our layout
};

// Writes params (our layout) in llm.c's format; through NAME.partial, renamed when complete.
// Throws std::invalid_argument for an invalid config or a params size other than total(), and
// CheckpointError (one line) for I/O errors. The training checkpoint writer behaves the same.
void write_llmc_model(const std::string& path, const ModelConfig& config, std::span<const float> params);
// Throws CheckpointError (one line naming the file): missing, bad magic, version other than 3
// (bf16 files are version 5: say so), sizes that do not add up, truncated.
ModelFile read_llmc_model(const std::string& path);

// Our training checkpoint: the model, AdamW's moments and the step, so a run resumes exactly.
// Format (little-endian, version 1): a header of 256 int32
//   [0] magic kTrainingMagic, [1] version 1,
//   [2] maxT, [3] V, [4] Vp, [5] L, [6] NH, [7] C   (the ModelConfig),
//   [8] [9]   step as int64 (low, high 32 bits),
//   [10] [11] element count N as int64 (low, high) = ParameterLayout(config).total(),
//   the rest 0;
// then params, m, v: N fp32 each, in our (segment-major) layout. The file is exactly
// 1024 + 12 N bytes. Readers reject anything else with CheckpointError (one line naming the file).
struct TrainingState {
  ModelConfig config;
  std::int64_t step = 0;
  std::vector<float> params, m, v;  // our layout, all of total() elements
};
inline constexpr std::int32_t kTrainingMagic = 0x43535452;  // "CSTR"
void write_training_checkpoint(const std::string& path, const TrainingState& state);
TrainingState read_training_checkpoint(const std::string& path);  // throws CheckpointError

}  // namespace commscope::trainer
