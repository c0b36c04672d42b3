// capture_environment / print_environment under MPI (registered with 3 ranks). Every rank runs
// every test (capture is collective); only rank 0 prints gtest's output, and the exit status is
// the same on every rank (failed anywhere -> non-zero everywhere).
#include <gtest/gtest.h>
#include <mpi.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <numeric>
#include <string>
#include <string_view>
#include <vector>

#include "commscope/bench/environment.hpp"

namespace {

using commscope::bench::capture_environment;
using commscope::bench::Environment;
using commscope::bench::describe_cpu;
using commscope::bench::is_recorded_variable;

int world_rank() {
  int r = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &r);
  return r;
}
int world_size() {
  int s = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &s);
  return s;
}

Environment capture_with(std::vector<const char*> args, MPI_Comm comm = MPI_COMM_WORLD) {
  return capture_environment(comm, static_cast<int>(args.size()), args.data());
}

// Everything in an Environment as one string, for exact comparison across ranks.
std::string flatten(const Environment& env) {
  std::string s;
  for (const auto& [k, v] : env.fields) s += k + '\x1f' + v + '\x1e';
  s += '\x1d';
  for (const auto& [k, v] : env.env_vars) s += k + '\x1f' + v + '\x1e';
  return s;
}

// True on every rank iff every rank's string equals rank 0's.
bool same_on_every_rank(std::string s) {
  unsigned long long n = s.size();
  std::string root = s;
  MPI_Bcast(&n, 1, MPI_UNSIGNED_LONG_LONG, 0, MPI_COMM_WORLD);
  root.resize(n);
  MPI_Bcast(root.data(), static_cast<int>(n), MPI_CHAR, 0, MPI_COMM_WORLD);
  int mine = root == s ? 1 : 0, all = 0;
  MPI_Allreduce(&mine, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  return all == 1;
}

std::string field(const Environment& env, std::string_view key) {
  const std::string* v = env.find(key);
  return v != nullptr ? *v : std::string();
}

TEST(Environment, RequiredFieldsArePresent) {
  const Environment env = capture_with({"test_environment", "-b", "8"});
  for (const char* key : {"commscope_version", "command_line", "nranks", "nhosts", "hosts", "cpu_model", "cpu_cores",
                          "os", "mpi_library", "mpi_version", "date"}) {
    const std::string* v = env.find(key);
    ASSERT_NE(v, nullptr) << key;
    EXPECT_FALSE(v->empty()) << key;
  }
  EXPECT_EQ(env.fields.front().first, "commscope_version");
  EXPECT_EQ(env.fields.back().first, "date");
  EXPECT_EQ(field(env, "nranks"), std::to_string(world_size()));
  EXPECT_EQ(field(env, "command_line"), "test_environment -b 8");
  EXPECT_NE(field(env, "mpi_version").find('.'), std::string::npos);
  EXPECT_EQ(field(env, "mpi_thread_level"), "single");  // this test calls MPI_Init
  EXPECT_EQ(field(env, "mpi_library").find('\n'), std::string::npos);
  EXPECT_EQ(env.find("no_such_field"), nullptr);
  const std::string date = field(env, "date");  // 2025-01-31T12:00:00Z
  ASSERT_EQ(date.size(), 20u) << date;
  EXPECT_EQ(date[10], 'T');
  EXPECT_EQ(date.back(), 'Z');
}

// Built with CUDA: the CUDA fields are there (and sensible without a GPU or driver); without: absent.
TEST(Environment, CudaFieldsFollowTheBuild) {
  const Environment env = capture_with({"t"});
  for (const char* key : {"cuda_runtime", "cuda_driver", "nccl_version", "gpus"}) {
#ifdef COMMSCOPE_WITH_CUDA
    const std::string* v = env.find(key);
    ASSERT_NE(v, nullptr) << key;
    EXPECT_FALSE(v->empty()) << key;
#else
    EXPECT_EQ(env.find(key), nullptr) << key;
#endif
  }
#ifdef COMMSCOPE_WITH_CUDA
  const std::string gpus = field(env, "gpus");
  if (world_rank() == 0 && gpus.starts_with("none")) std::printf("[ INFO     ] no GPU: gpus = %s\n", gpus.c_str());
#endif
}

TEST(Environment, HostsCountEveryRank) {
  const Environment env = capture_with({"t"});
  const std::string hosts = field(env, "hosts");
  int total = 0, entries = 0;
  std::size_t start = 0;
  while (start <= hosts.size()) {
    const std::size_t end = std::min(hosts.find(',', start), hosts.size());
    const std::string entry = hosts.substr(start, end - start);
    const std::size_t colon = entry.rfind(':');
    ASSERT_NE(colon, std::string::npos) << hosts;
    ASSERT_GT(colon, 0u) << hosts;
    total += std::stoi(entry.substr(colon + 1));
    ++entries;
    start = end + 1;
  }
  EXPECT_EQ(total, world_size()) << hosts;
  EXPECT_EQ(field(env, "nhosts"), std::to_string(entries)) << hosts;
}

TEST(Environment, SubCommunicator) {
  const Environment env = capture_with({"t"}, MPI_COMM_SELF);
  EXPECT_EQ(field(env, "nranks"), "1");
  EXPECT_EQ(field(env, "nhosts"), "1");
  EXPECT_EQ(field(env, "hosts").substr(field(env, "hosts").rfind(':')), ":1");
}

TEST(Environment, CapturesCommunicationVariablesSorted) {
  ASSERT_EQ(setenv("NCCL_DEBUG", "INFO", 1), 0);
  ASSERT_EQ(setenv("FOO_BAR", "1", 1), 0);
  ASSERT_EQ(setenv("CUDA_VISIBLE_DEVICES", "0,1", 1), 0);
  ASSERT_EQ(setenv("CUDA_VISIBLE_DEVICES_X", "2", 1), 0);
  const Environment env = capture_with({"t"});
  unsetenv("FOO_BAR");
  unsetenv("CUDA_VISIBLE_DEVICES");
  unsetenv("CUDA_VISIBLE_DEVICES_X");
  const auto has = [&](std::string_view name) {
    return std::any_of(env.env_vars.begin(), env.env_vars.end(), [&](const auto& p) { return p.first == name; });
  };
  EXPECT_TRUE(has("NCCL_DEBUG"));
  EXPECT_TRUE(has("CUDA_VISIBLE_DEVICES"));
  EXPECT_FALSE(has("FOO_BAR"));
  EXPECT_FALSE(has("CUDA_VISIBLE_DEVICES_X"));
  for (const auto& [name, value] : env.env_vars) {
    if (name == "NCCL_DEBUG") {
      EXPECT_EQ(value, "INFO");
    }
    EXPECT_TRUE(is_recorded_variable(name)) << name;
    // Under mpirun the launcher's bookkeeping is in the environment: none of it is recorded.
    EXPECT_FALSE(name.starts_with("OMPI_COMM_WORLD") || name.starts_with("OMPI_MCA_orte_") || name == "OMPI_ARGV")
        << name;
  }
  EXPECT_TRUE(std::is_sorted(env.env_vars.begin(), env.env_vars.end(),
                             [](const auto& a, const auto& b) { return a.first < b.first; }));
}

TEST(Environment, RecordsWhatChangesBehaviourNotTheLaunchersBookkeeping) {
  for (const char* name : {"NCCL_IB_HCA", "NCCL_ALGO", "UCX_TLS", "FI_PROVIDER", "CUDA_VISIBLE_DEVICES",
                           "OMPI_MCA_btl", "OMPI_MCA_pml", "OMPI_MCA_btl_vader_single_copy_mechanism",
                           "OMPI_MCA_coll_tuned_allreduce_algorithm", "OMPI_MCA_mpi_yield_when_idle", "SLURM_JOB_ID",
                           "SLURM_JOB_NODELIST", "SLURM_NODEID", "I_MPI_FABRICS"})
    EXPECT_TRUE(is_recorded_variable(name)) << name;
  for (const char* name : {"OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_LOCAL_SIZE", "OMPI_ARGV", "OMPI_COMMAND",
                           "OMPI_FILE_LOCATION", "OMPI_APP_CTX_NUM_PROCS", "OMPI_UNIVERSE_SIZE",
                           "OMPI_MCA_orte_hnp_uri", "OMPI_MCA_orte_ess_vpid", "OMPI_MCA_ess",
                           "OMPI_MCA_ess_singleton_isolated", "OMPI_MCA_pmix", "OMPI_MCA_plm", "OMPI_MCA_initial_wdir",
                           "OMPI_MCA_orte_precondition_transports", "OMPI_ALLOW_RUN_AS_ROOT", "PMIX_RANK",
                           "SLURM_TASKS_PER_NODE", "SLURM_PROCID", "CUDA_VISIBLE_DEVICES_X", "NCCL", "PATH"})
    EXPECT_FALSE(is_recorded_variable(name)) << name;
}

TEST(Environment, CpuModelNamesTheProcessorWhenTheNameIsOnlyTheVendor) {
  const std::string vm_amd =
      "processor\t: 0\nvendor_id\t: AuthenticAMD\ncpu family\t: 26\nmodel\t\t: 2\nmodel name\t: AMD EPYC\n"
      "stepping\t: 1\nflags\t\t: fpu\n\nprocessor\t: 1\nmodel name\t: other\n";
  EXPECT_EQ(describe_cpu(vm_amd, "x86_64"), "AMD EPYC (Zen 5, Turin; family 26 model 2 stepping 1)");
  const std::string intel =
      "processor\t: 0\nvendor_id\t: GenuineIntel\ncpu family\t: 6\nmodel\t\t: 143\n"
      "model name\t: Intel(R) Xeon(R) Platinum 8480+\nstepping\t: 8\n";
  EXPECT_EQ(describe_cpu(intel, "x86_64"), "Intel(R) Xeon(R) Platinum 8480+ (Sapphire Rapids; family 6 model 143 stepping 8)");
  const std::string unknown = "vendor_id\t: SomeVendor\ncpu family\t: 7\nmodel\t\t: 3\nmodel name\t: X\n";
  EXPECT_EQ(describe_cpu(unknown, "x86_64"), "X (family 7 model 3)");
  const std::string arm = "processor\t: 0\nBogoMIPS\t: 50.00\nCPU implementer\t: 0x41\n";
  EXPECT_EQ(describe_cpu(arm, "aarch64"), "aarch64");
  EXPECT_EQ(describe_cpu("", ""), "unknown");
}

TEST(Environment, QuotesArgumentsWithSpaces) {
  const Environment env = capture_with({"commscope-bench", "--name", "two words", "it's", "-n", "5"});
  EXPECT_EQ(field(env, "command_line"), "commscope-bench --name 'two words' 'it'\\''s' -n 5");
}

TEST(Environment, IdenticalOnEveryRank) {
  // Arguments and variables that differ per rank: the result must still be rank 0's everywhere.
  const std::string arg = "rank" + std::to_string(world_rank());
  ASSERT_EQ(setenv("NCCL_COMMSCOPE_TEST_RANK", arg.c_str(), 1), 0);
  const Environment env = capture_with({"t", arg.c_str()});
  unsetenv("NCCL_COMMSCOPE_TEST_RANK");
  EXPECT_EQ(field(env, "command_line"), "t rank0");
  EXPECT_TRUE(same_on_every_rank(flatten(env)));
}

TEST(Environment, PrintsHeader) {
  ASSERT_EQ(setenv("NCCL_DEBUG", "INFO", 1), 0);
  const Environment env = capture_with({"t", "x"});
  std::FILE* f = std::tmpfile();
  ASSERT_NE(f, nullptr);
  commscope::bench::print_environment(f, env, "commscope-test");
  std::string text(static_cast<std::size_t>(std::ftell(f)), '\0');
  std::rewind(f);
  ASSERT_EQ(std::fread(text.data(), 1, text.size(), f), text.size());
  std::fclose(f);
  EXPECT_EQ(text.rfind("# commscope-test " + field(env, "commscope_version") + "\n", 0), 0u) << text;
  EXPECT_NE(text.find("\n# nranks: " + std::to_string(world_size()) + "\n"), std::string::npos) << text;
  EXPECT_NE(text.find("\n# command_line: t x\n"), std::string::npos) << text;
  EXPECT_NE(text.find("\n# env: NCCL_DEBUG=INFO\n"), std::string::npos) << text;
  // Every line is a "# " comment.
  std::size_t lines = 0;
  for (std::size_t pos = 0; pos < text.size(); pos = text.find('\n', pos) + 1) {
    EXPECT_EQ(text.compare(pos, 2, "# "), 0) << text.substr(pos, 40);
    ++lines;
  }
  EXPECT_EQ(lines, 1 + env.fields.size() + env.env_vars.size());
  if (world_rank() == 0) std::fputs(text.c_str(), stdout);
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  ::testing::InitGoogleTest(&argc, argv);
  const int rank = world_rank();
  if (rank != 0) {  // one copy of the output: rank 0's
    auto& listeners = ::testing::UnitTest::GetInstance()->listeners();
    delete listeners.Release(listeners.default_result_printer());
  }
  const int mine = RUN_ALL_TESTS();
  int worst = 0;
  MPI_Allreduce(&mine, &worst, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  if (mine != 0 && rank != 0) std::fprintf(stderr, "rank %d: tests failed\n", rank);
  if (worst != 0 && mine == 0 && rank == 0) std::fprintf(stderr, "rank 0 passed, but tests failed on another rank\n");
  MPI_Finalize();
  return worst;
}
