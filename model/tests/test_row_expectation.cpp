// expected_row: the expectation the bench writes into its rows and the report recomputes, with
// NCCL_ALGO's pricing rule for nccl rows (docs/verdicts.md).
#include "commscope/model/row_expectation.hpp"

#include <gtest/gtest.h>

#include <limits>
#include <optional>
#include <string>
#include <vector>

using namespace commscope;

namespace {

constexpr double kN = 64.0 * 1024 * 1024;

// 2 hosts x 2 ranks: copy 10 GB/s, NIC 0.125 GB/s (1 Gbit/s), 50 us per message.
MachineModel two_hosts() {
  MachineModel m;
  for (int h = 0; h < 2; ++h) {
    NodeModel n;
    n.host = "host" + std::to_string(h + 1);
    n.ranks = 2;
    n.copy = {10, FigureSource::measured, "memcpy"};
    n.nic = {0.125, FigureSource::system, "eth0 1000 Mb/s"};
    m.nodes.push_back(n);
  }
  m.latency_us = 50;
  m.latency_source = FigureSource::doctor;
  return m;
}

const std::vector<int> kPlace{0, 0, 1, 1};

}  // namespace

TEST(NcclAlgorithm, OneAlgorithmIsPricedOrMissingAListLeavesTheChoice) {
  EXPECT_EQ(nccl_algorithm("Ring").priced, "ring");
  EXPECT_EQ(nccl_algorithm(" tree ").priced, "tree");
  EXPECT_EQ(nccl_algorithm("Tree").basis, "NCCL_ALGO=Tree");
  const NcclAlgorithm nvls = nccl_algorithm("NVLS");
  EXPECT_EQ(nvls.priced, "");
  EXPECT_EQ(nvls.missing, "a cost model of NCCL_ALGO=NVLS (priced: Ring, Tree)");
  for (const char* choice : {"", "Ring,Tree", "^NVLS", "allreduce:tree;broadcast:ring"}) {
    const NcclAlgorithm a = nccl_algorithm(choice);
    EXPECT_EQ(a.basis, "") << choice;
    EXPECT_EQ(a.priced, "") << choice;
    EXPECT_EQ(a.missing, "") << choice;
  }
}

// NCCL_ALGO=Ring prices an nccl row with the ring's terms: 6 a + 1.5 n / 0.125 + 0.75 n / 10 =
// 810639.5328 us (common.expected_time's ring), where without it the best textbook algorithm's.
TEST(ExpectedRow, NcclAlgoRingPricesTheRing) {
  const MachineModel m = two_hosts();
  const Expectation ring = expected_row(m, kPlace, Collective::allreduce, "nccl", kN, "Ring");
  ASSERT_TRUE(ring.time_us);
  EXPECT_NEAR(*ring.time_us, 810639.5328, 1e-6);
  EXPECT_EQ(ring.basis, "NCCL_ALGO=Ring: ring");
  const Expectation best = expected_row(m, kPlace, Collective::allreduce, "nccl", kN);
  ASSERT_TRUE(best.time_us);
  EXPECT_EQ(best.basis.rfind("best of the textbook algorithms", 0), 0u) << best.basis;
  EXPECT_EQ(*best.time_us, *expected_time(m, kPlace, Collective::allreduce, "nccl", kN).time_us);
  // A list leaves NCCL its choice: priced as without NCCL_ALGO.
  EXPECT_EQ(*expected_row(m, kPlace, Collective::allreduce, "nccl", kN, "Ring,Tree").time_us, *best.time_us);
}

// NCCL_ALGO=Tree prices allreduce as NCCL runs it, its pipelined tree (expected_time's nccl_tree:
// 4 a + n / 0.125 + n / 10 = 543781.7984 us, where the binomial tree's read 1114207.1424 us), and
// the other collectives as the ring they fall back to, saying so in the basis and in the limit's
// detail (which the verdicts print).
TEST(ExpectedRow, NcclAlgoTreeIsNcclsTreeForAllreduceAndTheRingForTheRest) {
  const MachineModel m = two_hosts();
  const Expectation tree = expected_row(m, kPlace, Collective::allreduce, "nccl", kN, "TREE");
  ASSERT_TRUE(tree.time_us);
  EXPECT_NEAR(*tree.time_us, 543781.7984, 1e-6);
  EXPECT_EQ(*tree.time_us, *expected_time(m, kPlace, Collective::allreduce, "nccl_tree", kN).time_us);
  EXPECT_EQ(tree.basis,
            "NCCL_ALGO=TREE: NCCL's pipelined tree (a double binary tree between the nodes, a chain in each)");
  EXPECT_EQ(tree.limit.detail, "eth0 1000 Mb/s");
  for (const Collective c : {Collective::broadcast, Collective::reduce, Collective::allgather,
                             Collective::reducescatter, Collective::alltoall}) {
    const std::string name(collective_name(c));
    const Expectation e = expected_row(m, kPlace, c, "nccl", kN, "Tree");
    const Expectation ring = expected_time(m, kPlace, c, "ring", kN);
    ASSERT_TRUE(e.time_us && ring.time_us) << name;
    EXPECT_EQ(*e.time_us, *ring.time_us) << name;
    const std::string said = "NCCL runs only allreduce as a tree; " + name + " falls back to ring";
    EXPECT_EQ(e.basis, "NCCL_ALGO=Tree: ring (" + said + ")");
    EXPECT_EQ(e.limit.detail, ring.limit.detail + "; " + said);
  }
}

TEST(ExpectedRow, AnotherNcclAlgorithmIsMissingNotGuessed) {
  const Expectation e = expected_row(two_hosts(), kPlace, Collective::allreduce, "nccl", kN, "NVLS");
  EXPECT_FALSE(e.time_us);
  EXPECT_FALSE(e.busbw_GBps);
  ASSERT_EQ(e.missing.size(), 1u);
  EXPECT_EQ(e.missing.front(), "a cost model of NCCL_ALGO=NVLS (priced: Ring, Tree)");
  EXPECT_FALSE(of_expected(e, 1000));
  // One rank copies the array whatever the algorithm: 64 MiB at 10 GB/s.
  const std::vector<int> one{0};
  const Expectation copy = expected_row(two_hosts(), one, Collective::allreduce, "nccl", kN, "NVLS");
  ASSERT_TRUE(copy.time_us);
  EXPECT_NEAR(*copy.time_us, kN / 1e4, 1e-9);
}

// NCCL_ALGO is NCCL's: our own algorithms' rows and mpi's are priced as they are.
TEST(ExpectedRow, OtherAlgorithmsIgnoreNcclAlgo) {
  const MachineModel m = two_hosts();
  for (const char* algo : {"ring", "rhd", "mpi"}) {
    const Expectation a = expected_row(m, kPlace, Collective::allreduce, algo, kN, "Tree");
    const Expectation b = expected_time(m, kPlace, Collective::allreduce, algo, kN);
    ASSERT_TRUE(a.time_us && b.time_us) << algo;
    EXPECT_EQ(*a.time_us, *b.time_us) << algo;
    EXPECT_EQ(a.basis, b.basis) << algo;
  }
}

TEST(ExpectedRow, OfExpectedIsExpectedOverMeasured) {
  const Expectation e = expected_row(two_hosts(), kPlace, Collective::allreduce, "ring", kN);
  ASSERT_TRUE(of_expected(e, 2 * *e.time_us));
  EXPECT_DOUBLE_EQ(*of_expected(e, 2 * *e.time_us), 0.5);
  EXPECT_FALSE(of_expected(e, 0));
  EXPECT_FALSE(of_expected(Expectation{}, 10));
}

// The run's recorded settings reach the price: --shm-adapt never (UINT64_MAX in the header) prices
// shm's segment alone where direct reads would price far lower; a file without the settings, or
// 0, keeps the library's defaults.
TEST(ExpectedRow, TheRunsSettingsChangeThePrice) {
  const ExpectationOptions never = run_expectation_options(1 << 20, 18446744073709551615.0);
  EXPECT_EQ(never.shm_adapt_bytes, std::numeric_limits<double>::infinity());
  EXPECT_EQ(never.ring_segment_bytes, 1 << 20);
  const ExpectationOptions old_file = run_expectation_options(std::nullopt, std::nullopt);
  EXPECT_EQ(old_file.shm_adapt_bytes, ExpectationOptions{}.shm_adapt_bytes);
  EXPECT_EQ(old_file.ring_segment_bytes, ExpectationOptions{}.ring_segment_bytes);
  EXPECT_EQ(run_expectation_options(0, 65536).ring_segment_bytes, ExpectationOptions{}.ring_segment_bytes);
  EXPECT_EQ(run_expectation_options(0, 65536).shm_adapt_bytes, 65536);
  // One node of 2 ranks whose rate between them is far above its copies: direct reads are cheaper.
  MachineModel m = two_hosts();
  m.nodes.resize(1);
  m.nodes[0].intra = {1000, FigureSource::user, "intra=1000GB/s"};
  const std::vector<int> one{0, 0};
  const Expectation adaptive = expected_row(m, one, Collective::allreduce, "shm", kN);
  const Expectation segment = expected_row(m, one, Collective::allreduce, "shm", kN, "", never);
  ASSERT_TRUE(adaptive.time_us && segment.time_us);
  EXPECT_EQ(adaptive.basis, "shm, direct reads (its measured choice from --shm-adapt's size)");
  EXPECT_EQ(segment.basis, "shm");
  EXPECT_GT(*segment.time_us, 2 * *adaptive.time_us);
  EXPECT_EQ(*segment.time_us, *expected_time(m, one, Collective::allreduce, "shm", kN, never).time_us);
}
