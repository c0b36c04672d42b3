#include "disk_space.hpp"

#include <cstdio>
#include <filesystem>
#include <system_error>

#include "results.hpp"

namespace commscope::bench {

namespace {

// HDF5's structures in a results file, without the tables' rows: 14.5 KiB of metadata (superblock,
// three groups, two table headers, their chunk indexes) and the 4 KiB global heap of the
// header's variable-length strings, in a 2-row file of 18,494 B whose header text is 1.7 KB.
constexpr std::uint64_t kStructures = 20 << 10;
// Per attribute of the header: its object-header message and global-heap entry.
constexpr std::uint64_t kPerAttribute = 64;
// Per chunk of a table (the results' 256 rows, the samples' 4,096): its index entry.
constexpr std::uint64_t kPerChunk = 64;
constexpr std::uint64_t kResultChunkRows = 256, kSampleChunkRows = 4096;

}  // namespace

std::uint64_t results_file_estimate(std::uint64_t rows, std::uint64_t samples_per_row, const Environment& env) {
  std::uint64_t header = env.machine_model.size() + kPerAttribute;
  for (const auto* pairs : {&env.fields, &env.env_vars})
    for (const auto& [key, value] : *pairs) header += key.size() + value.size() + kPerAttribute;
  const std::uint64_t samples = rows * samples_per_row;
  const std::uint64_t chunks =
      (rows + kResultChunkRows - 1) / kResultChunkRows + (samples + kSampleChunkRows - 1) / kSampleChunkRows;
  return kStructures + header + chunks * kPerChunk + rows * sizeof(ResultRow) + samples * sizeof(SampleRow);
}

std::string free_space_problem(const std::string& path, std::uint64_t needed, std::int64_t free_override) {
  namespace fs = std::filesystem;
  std::error_code ec;
  fs::path dir = fs::absolute(fs::path(path), ec).parent_path();
  const fs::space_info space = fs::space(dir, ec);
  if (ec && free_override < 0) return {};  // the file's creation reports a missing folder better
  const std::uint64_t available = free_override >= 0 ? static_cast<std::uint64_t>(free_override) : space.available;
  if (available >= needed) return {};
  char text[160];
  std::snprintf(text, sizeof text, "%.1f KiB free on its file system, the run needs about %.1f KiB",
                static_cast<double>(available) / 1024.0, static_cast<double>(needed) / 1024.0);
  return text;
}

}  // namespace commscope::bench
