// The disk check's estimate held against real results files of several row and sample counts,
// written as the bench writes them (a flush after every row) with samples that do not compress
// (random doubles): the estimate is never below the file, nor above 3 times it (it asked 263 KiB for
// a 4-row run whose file takes about 20 KB, and refused it on a 256 KiB tmpfs).
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdint>
#include <filesystem>
#include <random>
#include <string>

#include "commscope/bench/options.hpp"
#include "disk_space.hpp"
#include "results.hpp"

using namespace commscope;
using namespace commscope::bench;

namespace {

// A header like a run's on a node: the environment's fields, a few variables, a machine model.
Environment run_environment() {
  Environment env;
  env.fields = {{"commscope_version", "0.1.0"},
                {"command_line", "commscope-bench allreduce --algo ring -b 8 -e 64 -f 2 --out r.h5"},
                {"nranks", "2"},
                {"nhosts", "1"},
                {"hosts", "vm:2"},
                {"cpu_model", "AMD EPYC (Zen, Naples; family 23 model 1 stepping 2)"},
                {"cpu_cores", "2"},
                {"os", "Linux 6.1.0-18-amd64"},
                {"mpi_library", "Open MPI v4.1.4, package: Debian OpenMPI, ident: 4.1.4, repo rev: v4.1.4"},
                {"mpi_version", "3.1"}};
  env.env_vars = {{"OMP_NUM_THREADS", "1"}, {"OMPI_MCA_btl", "self,vader"}};
  env.machine_model = "node vm ranks 2 cpus 2 gpus 0 copy 3.15GB/s measured intra 1.05GB/s measured nic - none\n";
  return env;
}

// The size of a results file of `rows` rows of `samples` random samples each.
std::uintmax_t written_size(const std::string& path, std::uint64_t rows, std::uint64_t samples) {
  std::mt19937_64 random(rows * 1000 + samples);
  std::uniform_real_distribution<double> us(1.0, 1000.0);
  {
    ResultsFile file(path, Options{}, run_environment(), 2);
    for (std::uint64_t i = 0; i < rows; ++i) {
      ResultRow r{};
      r.row = static_cast<std::int64_t>(i / 2);
      set_text(r.collective, "allreduce");
      set_text(r.algorithm, "ring");
      r.in_place = static_cast<std::uint8_t>(i % 2);
      r.bytes = 8u << (i / 2 % 30);
      r.time_us = us(random);
      Samples s;
      for (std::uint64_t k = 0; k < samples; ++k) {
        s.time_us.push_back(us(random));
        s.skew_us.push_back(us(random));
      }
      file.append(r, s);
      file.flush();
    }
    file.finish("complete");
  }
  return std::filesystem::file_size(path);
}

}  // namespace

TEST(DiskSpace, EstimateBoundsRealFilesClosely) {
  const std::string dir = "/tmp/commscope-disk-space-" + std::to_string(::getpid());
  std::filesystem::create_directories(dir);
  const struct {
    std::uint64_t rows, samples;
  } runs[] = {{1, 20}, {4, 20}, {8, 20}, {48, 20}, {120, 20}, {8, 200}, {8, 2000}, {300, 20}, {64, 1000}};
  for (const auto& run : runs) {
    const std::string path = dir + "/r" + std::to_string(run.rows) + "x" + std::to_string(run.samples) + ".h5";
    const std::uintmax_t size = written_size(path, run.rows, run.samples);
    const std::uint64_t estimate = results_file_estimate(run.rows, run.samples, run_environment());
    std::printf("%4llu rows x %4llu samples: file %8ju B, estimate %8llu B (%.2fx)\n",
                static_cast<unsigned long long>(run.rows), static_cast<unsigned long long>(run.samples), size,
                static_cast<unsigned long long>(estimate), static_cast<double>(estimate) / static_cast<double>(size));
    EXPECT_GE(estimate, size) << run.rows << " rows x " << run.samples;
    // Each row and sample counted uncompressed: deflate halves random samples (14.7 B of 32 here).
    EXPECT_LE(estimate, 3 * size + (16 << 10)) << run.rows << " rows x " << run.samples;
  }
  std::filesystem::remove_all(dir);
}

TEST(DiskSpace, FreeSpaceProblemSaysBoth) {
  EXPECT_EQ(free_space_problem("/tmp/x.h5", 1000, 4096), "");
  EXPECT_EQ(free_space_problem("/tmp/x.h5", 8192, 4096),
            "4.0 KiB free on its file system, the run needs about 8.0 KiB");
}
