#include "disk_space.hpp"

#include <cstdio>
#include <filesystem>
#include <system_error>

#include "results.hpp"

namespace commscope::bench {

std::uint64_t results_file_estimate(std::size_t cases, std::int64_t iters) {
  const auto samples = static_cast<std::uint64_t>(iters > 0 ? iters : 1000);
  return (256u << 10) + cases * (sizeof(ResultRow) + samples * sizeof(SampleRow));
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
