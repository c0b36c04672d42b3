// Known answers of expected_time on synthetic machine models: the numbers below are worked out by
// hand from docs/verdicts.md's formulas (n = 64 MiB = 67108864 B, rates in GB/s = 1e3 B/us).
#include "commscope/model/expected_time.hpp"
#include "machine_fixtures.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>
#include <stdexcept>
#include <string>
#include <tuple>

using namespace commscope;
using commscope::test_fixtures::cluster;
using commscope::test_fixtures::rate;

namespace {

constexpr double kN = 64.0 * 1024 * 1024;

Expectation expect(const MachineModel& m, std::string_view algo, Collective c, double bytes,
                   const ExpectationOptions& o = {}) {
  int p = 0;
  for (const NodeModel& n : m.nodes) p += n.ranks;
  const std::vector<int> place = placement_of(m, p);
  return expected_time(m, place, c, algo, bytes, o);
}

}  // namespace

// A ring over 2 hosts x 2 ranks crosses each host's link once per step in each direction: the
// link's whole rate. 6 a + 1.5 n / 0.125 + 0.75 n / 10 = 300 + 805306.368 + 5033.1648 us.
TEST(ExpectedTime, RingAcrossTwoHostsRunsAtTheLinkRate) {
  const Expectation e = expect(cluster(2, 2), "ring", Collective::allreduce, kN);
  ASSERT_TRUE(e.time_us) << (e.missing.empty() ? "" : e.missing.front());
  EXPECT_NEAR(*e.time_us, 810639.5328, 1e-6);
  EXPECT_NEAR(*e.busbw_GBps, 1.5 * kN / 810639.5328e3, 1e-12);
  EXPECT_EQ(e.limit.level, LinkLevel::inter);
  EXPECT_EQ(e.limit.sharing, 1);
  EXPECT_DOUBLE_EQ(e.limit.link_GBps, 0.125);
  EXPECT_FALSE(e.latency_bound());
  EXPECT_EQ(e.basis, "ring");
}

// rhd's reducescatter halves from the farthest rank (its blocks end in rank order): its first step
// (distance 2) sends n/2 from both ranks of a host through its link at once (each gets 0.0625),
// the second (distance 1) n/4 inside the host (copy / 2 = 5): 2 a + 0.75 n x (0.5 / 0.0625 +
// 0.25 / 5) / 0.75 / 1e3, 0.75 n G at 10, and its block out of the halving's scratch, n/4 at 10.
TEST(ExpectedTime, RhdReducescatterSharesTheLinkInItsFirstStep) {
  const Expectation e = expect(cluster(2, 2), "rhd", Collective::reducescatter, kN);
  ASSERT_TRUE(e.time_us);
  const double beta = 0.75 * kN * (0.5 / 0.0625 + 0.25 / 5) / 0.75 / 1e3;
  EXPECT_NEAR(*e.time_us, 100 + beta + 0.75 * kN / 10e3 + 0.25 * kN / 10e3, 1e-6);
  EXPECT_EQ(e.limit.sharing, 2);
}

// rhd's reduce gathers the halving's groups to the root down a binomial tree, and its broadcast
// scatters the root's array down one before its allgather: in the tree's steps only one message
// crosses the link (rank 2 -> 0, n/2), alone, where the halving's step sent two at once. Reduce
// over 2 hosts x 2 ranks: the halving's n/2 at 0.0625 and n/4 at 5, the gather's n/4 at 5 and
// n/2 at 0.125: 4 a + n (0.5 x 16 + 0.25 x 0.2 + 0.25 x 0.2 + 0.5 x 8) / 1e3 + 0.75 n / 10;
// broadcast the same steps the other way, and the root's copy n / 10 for the gamma.
TEST(ExpectedTime, RhdReduceAndBroadcastCrossTheLinkAloneInTheirTrees) {
  const double beta = kN * 12.1 / 1e3;
  const Expectation red = expect(cluster(2, 2), "rhd", Collective::reduce, kN);
  ASSERT_TRUE(red.time_us);
  EXPECT_NEAR(*red.time_us, 200 + beta + 0.75 * kN / 1e4, 1e-6);
  const Expectation bc = expect(cluster(2, 2), "rhd", Collective::broadcast, kN);
  ASSERT_TRUE(bc.time_us);
  EXPECT_NEAR(*bc.time_us, 200 + beta + kN / 1e4, 1e-6);
}

// Rabenseifner's allreduce, rhd's and the MPI libraries' (Open MPI's redscat_allgather, MPICH's),
// halves the vector as the distance doubles: the halves of n/2 go to the neighbour at distance 1,
// inside the host, and only the quarters cross the link at distance 2, both ranks at once (each
// gets 0.0625). Over 2 hosts x 2 ranks: 4 a + 1.5 n x (0.5 / 5 + 0.25 / 0.0625) / 0.75 / 1e3 +
// 0.75 n / 10, faster than the ring at 64 MiB; the vendor's expectation is it.
TEST(ExpectedTime, RabenseifnerKeepsItsHalvesInsideTheHost) {
  const double beta = 1.5 * kN * (0.5 / 5 + 0.25 / 0.0625) / 0.75 / 1e3;
  for (const char* algo : {"rhd", "mpi"}) {
    const Expectation e = expect(cluster(2, 2), algo, Collective::allreduce, kN);
    ASSERT_TRUE(e.time_us) << algo;
    EXPECT_NEAR(*e.time_us, 200 + beta + 0.75 * kN / 10e3, 1e-6) << algo;
    EXPECT_EQ(e.limit.sharing, 2) << algo;
    EXPECT_GT(*e.busbw_GBps, 0.18) << algo;
  }
  EXPECT_EQ(expect(cluster(2, 2), "mpi", Collective::allreduce, kN).basis,
            "best of the textbook algorithms (the library's choice is hidden): rabenseifner");
}

// The vendor's algorithm: the best of the textbook algorithms', said so: on 3 hosts of one rank at
// 64 MiB the ring, 4 a + 4/3 n / 0.125 + 2/3 n / 10 (Rabenseifner and recursive doubling fold the
// third rank in and out: 3 n through the link).
TEST(ExpectedTime, VendorIsTheBestTextbookAlgorithm) {
  const Expectation e = expect(cluster(3, 1), "mpi", Collective::allreduce, kN);
  ASSERT_TRUE(e.time_us);
  EXPECT_NEAR(*e.time_us, 200 + 4.0 / 3 * kN / 125 + 2.0 / 3 * kN / 1e4, 1e-6);
  EXPECT_EQ(e.basis, "best of the textbook algorithms (the library's choice is hidden): ring");
}

// 8 B: the latency term (6 x 50 us) is nearly all of it.
TEST(ExpectedTime, SmallSizesAreLatencyBound) {
  const Expectation e = expect(cluster(2, 2), "ring", Collective::allreduce, 8);
  ASSERT_TRUE(e.time_us);
  EXPECT_DOUBLE_EQ(e.latency_us, 300);
  EXPECT_NEAR(*e.time_us, 300 + 1.5 * 8 / 125 + 0.75 * 8 / 1e4, 1e-12);
  EXPECT_TRUE(e.latency_bound());
}

// hier, 2 hosts x 2 ranks, 64 MiB allreduce: intra 3 n / 10 (shm's reducescatter, n B + n/2 G,
// and allgather, 3/2 n B; their 384 handoffs unpriced across nodes), inter 2 a + 1 n / (the slower
// link, host2's 0.1) + 0.25 n / 10: the slowest link is between the nodes, host2's.
TEST(ExpectedTime, HierSlowestLinkBetweenNodes) {
  MachineModel m = cluster(2, 2);
  m.nodes[1].nic = rate(0.1, FigureSource::user, "--link-rate host2=800mbit");
  const Expectation e = expect(m, "hier", Collective::allreduce, kN);
  ASSERT_TRUE(e.time_us);
  EXPECT_NEAR(*e.time_us, 2 * 50 + 3 * kN / 1e4 + kN / 100 + 0.25 * kN / 1e4, 1e-6);
  EXPECT_EQ(e.limit.level, LinkLevel::inter);
  EXPECT_EQ(e.limit.host, "host2");
  EXPECT_EQ(e.limit.sharing, 2);
  EXPECT_EQ(e.basis, "hier: shm in nodes, ring between them");
}

// A NIC that reports no rate: no number, and what is missing said.
TEST(ExpectedTime, MissingNicRateGivesNoNumber) {
  MachineModel m = cluster(2, 2);
  m.nodes[1].nic = {};
  for (const char* algo : {"ring", "rhd", "hier", "mpi"}) {
    const Expectation e = expect(m, algo, Collective::allreduce, kN);
    EXPECT_FALSE(e.time_us) << algo;
    EXPECT_FALSE(e.busbw_GBps) << algo;
    ASSERT_EQ(e.missing.size(), 1u) << algo;
    EXPECT_EQ(e.missing.front(), "host2's link rate (its NIC reports none: --link-rate host2=RATE)") << algo;
  }
  // No latency either: both said.
  m.latency_source = FigureSource::none;
  EXPECT_EQ(expect(m, "ring", Collective::allreduce, kN).missing.size(), 2u);
}

// shm on one node of 4 ranks: through the slots (--shm-adapt off), two-shot from 2 KiB, 256 steps
// of 256 KiB: 512 a + 7/4 n / 10 + 3/4 n / 10 (no curve: the slots' reductions at the one rate).
// From --shm-adapt's size the faster of that and the direct reads, which move at the rate between
// the ranks (here half the copy rate): 2 a + 3/2 n / 5 + 3/4 n / 10, the cheaper at a = 50 us.
TEST(ExpectedTime, ShmAtTheCopyRate) {
  ExpectationOptions slots;
  slots.shm_adapt_bytes = std::numeric_limits<double>::infinity();
  const Expectation e = expect(cluster(1, 4), "shm", Collective::allreduce, kN, slots);
  ASSERT_TRUE(e.time_us);
  EXPECT_NEAR(*e.time_us, 512 * 50 + 2.5 * kN / 1e4, 1e-6);
  EXPECT_EQ(e.limit.level, LinkLevel::memory);
  const Expectation adaptive = expect(cluster(1, 4), "shm", Collective::allreduce, kN);
  ASSERT_TRUE(adaptive.time_us);
  EXPECT_NEAR(*adaptive.time_us, 2 * 50 + 1.5 * kN / 5e3 + 0.75 * kN / 1e4, 1e-6);
  EXPECT_EQ(adaptive.limit.level, LinkLevel::intra);
  EXPECT_EQ(adaptive.basis, "shm, direct reads (its measured choice from --shm-adapt's size)");
  // hier on one node is shm on the whole call, priced alike.
  EXPECT_NEAR(*expect(cluster(1, 4), "hier", Collective::allreduce, kN, slots).time_us, *e.time_us, 1e-6);
  EXPECT_NEAR(*expect(cluster(1, 4), "hier", Collective::allreduce, kN).time_us, *adaptive.time_us, 1e-6);
  EXPECT_FALSE(expect(cluster(2, 2), "shm", Collective::allreduce, kN).time_us);  // one node only
}

// shm's one-shot reduce (below 64 KiB on 2 ranks): the other rank fills its slot, the root reduces
// it, and calls back to back overlap the two: 50 + max(n / 10, n / 10) us for 16 KiB at the copy
// rate (no curves), where the allreduce, whose every rank does both, takes 50 + n / 10 + n / 10.
// From two-shot, every rank copies and reduces: the reduce is priced as the allreduce.
TEST(ExpectedTime, ShmReduceOneShotOverlapsItsRoles) {
  ExpectationOptions slots;
  slots.shm_adapt_bytes = std::numeric_limits<double>::infinity();
  const MachineModel m = cluster(1, 2);
  const double n = 16384;
  EXPECT_NEAR(*expect(m, "shm", Collective::reduce, n, slots).time_us, 50 + n / 1e4, 1e-9);
  EXPECT_NEAR(*expect(m, "shm", Collective::allreduce, n, slots).time_us, 50 + 2 * n / 1e4, 1e-9);
  EXPECT_NEAR(*expect(m, "shm", Collective::reduce, kN, slots).time_us,
              *expect(m, "shm", Collective::allreduce, kN, slots).time_us, 1e-9);
}

// Every rank on its own node with one link rate: the algorithms' terms at that rate, exactly.
TEST(ExpectedTime, OneRankPerNodeIsTheTermsAtTheLinkRate) {
  for (int p : {2, 3, 5, 8}) {
    const MachineModel m = cluster(p, 1);
    for (const char* algo : {"ring", "rhd", "tree"})
      for (Collective c : {Collective::allreduce, Collective::allgather, Collective::broadcast}) {
        const auto terms = std::string(algo) == "ring"  ? ring_cost_terms(c, p, kN, 1 << 20)
                           : std::string(algo) == "rhd" ? rhd_cost_terms(c, p)
                                                        : tree_cost_terms(c, p);
        ASSERT_TRUE(terms);
        const Expectation e = expect(m, algo, c, kN);
        ASSERT_TRUE(e.time_us) << algo;
        // Besides the terms, a rank's local copies at the copy rate (10 GB/s), before its
        // messages: allgather's own block, 1/p n; the broadcast root's array into its output, n.
        const double copies = c == Collective::allgather ? 1.0 / p : c == Collective::broadcast ? 1.0 : 0.0;
        const double copy_us = copies * kN / 1e4;
        const double expected = terms->time(50, 1 / 125.0, 1 / 1e4, kN) + copy_us;
        EXPECT_NEAR(*e.time_us, expected, 1e-6 * *e.time_us) << algo << " " << collective_name(c) << " p=" << p;
      }
  }
}

// The ring's chains over 2 hosts x 2 ranks (hops host1 0 -> 1 at copy / 2 = 5, 1 -> 2 across the
// link at 0.125, 2 -> 3 at 5): a round of the pipeline lasts as long as its slowest hop, and only
// the hops that hold a unit move. Broadcast of 1 MiB, one segment: the three hops one after the
// other, 3 a + n (1/5 + 1/0.125 + 1/5) / 1e3, plus the root's copy n / 1e4; the link once, not
// three times (busbw near the link's 0.125 GB/s, not a third of it).
TEST(ExpectedTime, RingChainsCrossTheSlowLinkOnlyOnItsHop) {
  constexpr double kMiB = 1 << 20;
  const Expectation one = expect(cluster(2, 2), "ring", Collective::broadcast, kMiB);
  ASSERT_TRUE(one.time_us) << (one.missing.empty() ? "" : one.missing.front());
  EXPECT_NEAR(*one.time_us, 150 + kMiB * 8.4 / 1e3 + kMiB / 1e4, 1e-6);
  EXPECT_GT(*one.busbw_GBps, 0.11);
  EXPECT_EQ(one.limit.level, LinkLevel::inter);
  // 64 MiB in 64 segments, 66 rounds: hop 1 alone, hops 1-2, 62 rounds of every hop, hops 2-3,
  // hop 3 alone; the link decides 64 of them: 66 a + n/64 (2 x 0.2 + 64 x 8) / 1e3 + n / 1e4.
  const Expectation big = expect(cluster(2, 2), "ring", Collective::broadcast, kN);
  ASSERT_TRUE(big.time_us);
  EXPECT_NEAR(*big.time_us, 66 * 50 + kN / 64 * 512.4 / 1e3 + kN / 1e4, 1e-6);
  // Reduce: the same chain towards the root, each segment reduced on the way: 3 n G at 10.
  const Expectation red = expect(cluster(2, 2), "ring", Collective::reduce, kMiB);
  ASSERT_TRUE(red.time_us);
  EXPECT_NEAR(*red.time_us, 150 + kMiB * 8.4 / 1e3 + 3 * kMiB / 1e4, 1e-6);
  // Gather, a block a round: hop h carries the blocks of ranks h .. 3, in rounds 1 .. 4 - h, so the
  // rounds are hop 1 alone, hops 1-2, hops 1-3: n/4 (0.2 + 8 + 8) / 1e3, the link twice, plus 3 a
  // and the root's own block, n/4 / 1e4. Scatter is its mirror image: the same.
  for (Collective c : {Collective::gather, Collective::scatter}) {
    const Expectation g = expect(cluster(2, 2), "ring", c, kMiB);
    ASSERT_TRUE(g.time_us) << collective_name(c);
    EXPECT_NEAR(*g.time_us, 150 + kMiB / 4 * 16.2 / 1e3 + kMiB / 4 / 1e4, 1e-6) << collective_name(c);
  }
}

// Over 2 hosts x 2 ranks whose rates between ranks were measured down to messages of 8 B (0.5 us
// each) with a call of 0.05 us: a step between ranks of one host pays its call (its transfer's
// latency is on the curve), a step across the link the latency, 50 us. At 8 B the ring's broadcast
// crosses the link in one round of three and the tree's in one step of two: the latency once, not
// at every message (150 and 100 us, which read its runs "above the model"). The ring's allreduce
// moves bytes across the link in every step, but each rank waits only for the message it receives:
// its time runs down a chain of 6 consecutive flows of the ring, 3 of them across the link (before,
// priced at the call alone: the step's slowest flow by rate is between ranks of a host at 8 B);
// the allgather's chain of 3 crosses it twice at most; a sendrecv's one message pays it.
TEST(ExpectedTime, OnlyTheStepsAcrossTheLinkPayItsLatency) {
  MachineModel m = cluster(2, 2);
  for (NodeModel& n : m.nodes) {
    n.intra = rate(6, FigureSource::measured, "ring exchange");
    n.intra.curve = {{16, 0.016}, {4096, 4}, {134217728, 6}};
    n.self_exchange = rate(0.16, FigureSource::measured, "MPI_Sendrecv of 8 B with its own rank");
    n.self_exchange.curve = {{16, 0.16}};
  }
  ExpectationOptions none;
  none.latency_us = 0;
  for (const auto& [algo, c, messages, latencies] :
       {std::tuple{"ring", Collective::broadcast, 3, 1}, std::tuple{"tree", Collective::broadcast, 2, 1},
        std::tuple{"ring", Collective::allreduce, 6, 3}, std::tuple{"ring", Collective::allgather, 3, 2},
        std::tuple{"ring", Collective::sendrecv, 1, 1}, std::tuple{"rhd", Collective::allreduce, 4, 2}}) {
    const Expectation e = expect(m, algo, c, 8);
    const Expectation without = expect(m, algo, c, 8, none);
    ASSERT_TRUE(e.time_us && without.time_us) << algo;
    EXPECT_EQ(e.messages, messages) << algo;
    EXPECT_NEAR(*e.time_us - *without.time_us, 50.0 * latencies, 1e-9) << algo << " " << collective_name(c);
    EXPECT_FALSE(e.call_priced) << algo;
    EXPECT_NEAR(e.latency_share, static_cast<double>(latencies) / messages, 1e-12) << algo;
  }
  // The ring's broadcast: 2 calls of 0.05 us and one latency over its 3 messages, each its least
  // time beside (the link's none: (0.5 + 0 + 0.5) / 3 a message).
  const Expectation ring = expect(m, "ring", Collective::broadcast, 8);
  EXPECT_NEAR(ring.alpha_us, (50 + 2 * 0.05) / 3, 1e-12);
  EXPECT_NEAR(ring.crossing_alpha_us, 50, 1e-12);
  EXPECT_NEAR(ring.call_us, 0.05, 1e-12);
  EXPECT_EQ(ring.call_detail, "MPI_Sendrecv of 8 B with its own rank");
  EXPECT_NEAR(ring.latency_us, 50 + 2 * 0.05 + 2 * 0.5, 1e-9);
  EXPECT_TRUE(ring.latency_bound());
  // Without curves between ranks (the rates alone) every message pays the latency, as before.
  const Expectation flat = expect(cluster(2, 2), "ring", Collective::broadcast, 8);
  const Expectation flat_none = expect(cluster(2, 2), "ring", Collective::broadcast, 8, none);
  ASSERT_TRUE(flat.time_us && flat_none.time_us);
  EXPECT_NEAR(*flat.time_us - *flat_none.time_us, 150, 1e-9);
  EXPECT_EQ(flat.latency_share, 1);
}

// One rank: one copy of the array at the copy rate.
TEST(ExpectedTime, OneRankIsACopy) {
  const Expectation e = expect(cluster(1, 1), "nccl", Collective::allreduce, kN);
  ASSERT_TRUE(e.time_us);
  EXPECT_NEAR(*e.time_us, kN / 1e4, 1e-9);
  EXPECT_FALSE(e.busbw_GBps);  // allreduce's busbw factor is 0 on one rank
}

TEST(ExpectedTime, PlacementMustMatchTheRun) {
  EXPECT_THROW(placement_of(cluster(2, 2), 5), std::invalid_argument);
  MachineModel m = cluster(2, 2);
  m.node_of_rank = {0, 1, 0, 1};
  EXPECT_EQ(placement_of(m, 4), (std::vector<int>{0, 1, 0, 1}));
  // Round robin: the ring crosses the links at every step, both ranks of a host at once.
  const Expectation e = expect(m, "ring", Collective::allreduce, kN);
  ASSERT_TRUE(e.time_us);
  EXPECT_EQ(e.limit.sharing, 2);
}

// The vendor's sendrecv (no textbook algorithm): one message to the next rank, a + n / link; its
// alltoallv (no terms): what is missing said.
TEST(ExpectedTime, VendorSendrecvIsOneMessage) {
  const Expectation e = expect(cluster(2, 1), "mpi", Collective::sendrecv, kN);
  ASSERT_TRUE(e.time_us);
  EXPECT_NEAR(*e.time_us, 50 + kN / 125, 1e-6);
  const Expectation v = expect(cluster(2, 1), "mpi", Collective::alltoallv, kN);
  EXPECT_FALSE(v.time_us);
  ASSERT_EQ(v.missing.size(), 1u);
  EXPECT_EQ(v.missing.front(), "a textbook algorithm of alltoallv");
}

// A model without the latency (a file written before the bench measured it): a size is priced
// with none where 20 x its messages x a generous latency (10 us on one node, 100 us across nodes)
// is at most the time without it. 2 ranks of one node, ring: 2 messages, n / 5 + 0.5 n / 10 =
// 0.00025 n us against 400 us: 2 MiB priced (524.288 us), 1 MiB (262.144 us) not. 2 hosts x 2
// ranks at 64 MiB: 805306.368 + 5033.1648 us against 6 x 100 x 20.
TEST(ExpectedTime, WithoutTheLatencyOnlySizesItCannotMatter) {
  MachineModel one = cluster(1, 2);
  one.latency_source = FigureSource::none, one.latency_us = 0;
  const Expectation big = expect(one, "ring", Collective::allreduce, 2.0 * 1024 * 1024);
  ASSERT_TRUE(big.time_us) << (big.missing.empty() ? "" : big.missing.front());
  EXPECT_NEAR(*big.time_us, 524.288, 1e-9);
  EXPECT_TRUE(big.latency_left_out);
  EXPECT_DOUBLE_EQ(big.latency_us, 0);
  const Expectation small = expect(one, "ring", Collective::allreduce, 1024.0 * 1024);
  EXPECT_FALSE(small.time_us);
  ASSERT_EQ(small.missing.size(), 1u);
  EXPECT_EQ(small.missing.front(),
            "the latency per message (the bench measures it at start-up; else a doctor file's 8 B pairs or a machine "
            "file's latency_us), needed below 20x a generous 10 us per message");
  MachineModel two = cluster(2, 2);
  two.latency_source = FigureSource::none;
  const Expectation across = expect(two, "ring", Collective::allreduce, kN);
  ASSERT_TRUE(across.time_us);
  EXPECT_NEAR(*across.time_us, 810339.5328, 1e-6);
  EXPECT_TRUE(across.latency_left_out);
  EXPECT_FALSE(expect(cluster(2, 2), "ring", Collective::allreduce, kN).latency_left_out);  // with a latency
}

// Two ranks of one CPU node, ring allreduce: each step's message at the node's intra rate, the
// start-up probe's (4 GB/s: 2 a + n / 4 + 0.5 n / 10), else copy / 2 (5 GB/s: 2 a + n / 5 +
// 0.5 n / 10) where the model has no intra figure (files from before the probe, or given none).
TEST(ExpectedTime, IntraNodeRateIsTheProbesElseHalfTheCopyRate) {
  MachineModel m = cluster(1, 2);
  m.nodes[0].intra =
      rate(4, FigureSource::measured, "4 MiB ping-pong between two of its ranks, the fastest of 6 round trips");
  const Expectation probed = expect(m, "ring", Collective::allreduce, kN);
  ASSERT_TRUE(probed.time_us);
  EXPECT_NEAR(*probed.time_us, 2 * 50 + kN / 4e3 + 0.5 * kN / 1e4, 1e-6);
  EXPECT_EQ(probed.limit.level, LinkLevel::intra);
  EXPECT_DOUBLE_EQ(probed.limit.link_GBps, 4);
  EXPECT_EQ(probed.limit.detail, "4 MiB ping-pong between two of its ranks, the fastest of 6 round trips");
  m.nodes[0].intra = {};
  const Expectation halved = expect(m, "ring", Collective::allreduce, kN);
  ASSERT_TRUE(halved.time_us);
  EXPECT_NEAR(*halved.time_us, 2 * 50 + kN / 5e3 + 0.5 * kN / 1e4, 1e-6);
  EXPECT_DOUBLE_EQ(halved.limit.link_GBps, 5);
  EXPECT_EQ(halved.limit.detail, "memcpy 256 MiB, halved: copied in and out of shared memory");
}

// NCCL's tree allreduce (NCCL_ALGO=Tree), pipelined: a chain in each node, a double binary tree
// between the nodes, both at once. 2 hosts x 2 ranks: 4 a (the chain's one link and the tree's
// one level, up and down) + max(n / 5 (the chain, copy / 2), n / 0.125 (one tree edge at each
// host in each tree, n/2 each way apiece)) + n / 10 = 200 + 536870.912 + 6710.8864 us (the
// binomial tree's 2 lg p (a + n / link): 1114207.1424 us). 8 hosts x 1: 6 a + 2 n / 0.125 +
// n / 10 (a host inside one tree and a leaf of the other: 4 edges). One host of 4: the chain,
// 6 a + n / 5 + n / 10. Allreduce only.
TEST(ExpectedTime, NcclTreeAllreduceIsPipelined) {
  const Expectation two = expect(cluster(2, 2), "nccl_tree", Collective::allreduce, kN);
  ASSERT_TRUE(two.time_us) << (two.missing.empty() ? "" : two.missing.front());
  EXPECT_NEAR(*two.time_us, 543781.7984, 1e-6);
  EXPECT_DOUBLE_EQ(two.latency_us, 200);
  EXPECT_EQ(two.limit.level, LinkLevel::inter);
  EXPECT_EQ(two.limit.sharing, 1);
  EXPECT_NEAR(*two.busbw_GBps, 1.5 * kN / 543781.7984e3, 1e-12);  // nccl-tests' factor, whatever the algorithm
  EXPECT_EQ(two.basis, "NCCL's pipelined tree (a double binary tree between the nodes, a chain in each)");
  const Expectation eight = expect(cluster(8, 1), "nccl_tree", Collective::allreduce, kN);
  ASSERT_TRUE(eight.time_us);
  EXPECT_NEAR(*eight.time_us, 6 * 50 + 2 * kN / 125 + kN / 1e4, 1e-6);
  const Expectation one = expect(cluster(1, 4), "nccl_tree", Collective::allreduce, kN);
  ASSERT_TRUE(one.time_us);
  EXPECT_NEAR(*one.time_us, 6 * 50 + kN / 5e3 + kN / 1e4, 1e-6);
  EXPECT_EQ(one.limit.level, LinkLevel::intra);
  const Expectation bcast = expect(cluster(2, 2), "nccl_tree", Collective::broadcast, kN);
  EXPECT_FALSE(bcast.time_us);
  ASSERT_EQ(bcast.missing.size(), 1u);
  EXPECT_EQ(bcast.missing.front(), "NCCL's tree for broadcast (NCCL runs only allreduce as a tree)");
  constexpr NcclTreeCostTerms t3 = nccl_tree_allreduce_cost_terms(3, 1);
  EXPECT_EQ(t3.tree.alpha_count, 4);
  EXPECT_EQ(t3.tree.beta_factor, 1.5);
  EXPECT_EQ(t3.chain.beta_factor, 0);
}

// The rate of a size (docs/verdicts.md): a rate with a curve prices each row at the row's working
// set, one rank's send and receive buffers (2 n for an allreduce). The copy rate's curve, 40 GB/s at
// 16 KiB, 30 at 256 KiB, 10 at 4 MiB, 8 at 128 MiB: shm's copies (through the slots: --shm-adapt
// off) of an allreduce of 4 KiB (8 KiB a rank, below the first point) at 40, 128 KiB (256 KiB) at
// 30, 512 KiB (1 MiB: half way in log2 between 256 KiB and 4 MiB) at 20, 2 MiB (4 MiB) at 10,
// 64 MiB (128 MiB) at 8; its reductions read the slots of a step, 3 chunks of 256 KiB = 768 KiB
// (log2(3)/4 of the way from 256 KiB to 4 MiB): 30 - 20 log2(3)/4 = 22.075 GB/s; a = 50 us.
TEST(ExpectedTime, EachSizeAtTheRateOfItsWorkingSet) {
  MachineModel m = cluster(1, 2);
  m.nodes[0].copy = rate(8, FigureSource::measured, "memcpy 128 MiB, best of 8");
  m.nodes[0].copy.curve = {{16384, 40}, {262144, 30}, {4194304, 10}, {134217728, 8}};
  EXPECT_DOUBLE_EQ(buffer_bytes_per_rank(Collective::allreduce, 4096, 2), 8192);
  EXPECT_DOUBLE_EQ(buffer_bytes_per_rank(Collective::allgather, 4096, 2), 6144);
  const double cached = 30 - 20 * std::log2(3.0) / 4;
  EXPECT_NEAR(rate_at(m.nodes[0].copy, 3 * 262144), cached, 1e-12);
  ExpectationOptions slots;
  slots.shm_adapt_bytes = std::numeric_limits<double>::infinity();
  for (const auto& [n, gbps] :
       std::vector<std::pair<double, double>>{{4096, 40}, {131072, 30}, {524288, 20}, {2097152, 10}, {kN, 8}}) {
    const Expectation e = expect(m, "shm", Collective::allreduce, n, slots);
    const auto t = shm_cost_terms(Collective::allreduce, 2, n, shm_default_cost_settings(2));
    ASSERT_TRUE(e.time_us && t) << n;
    const double copies_us = t->beta_factor * n / (gbps * 1e3), reductions_us = t->gamma_factor * n / (cached * 1e3);
    EXPECT_NEAR(*e.time_us, t->alpha_count * 50 + copies_us + reductions_us, 1e-9) << n;
    EXPECT_DOUBLE_EQ(e.limit.link_GBps, copies_us >= reductions_us ? gbps : cached) << n;
  }
  // Which point priced it, in its detail.
  EXPECT_EQ(expect(m, "shm", Collective::allreduce, 2097152, slots).limit.detail,
            "memcpy 128 MiB, best of 8; at 4.0 MiB a rank, its buffers, on its curve (16.0 KiB to 128.0 MiB)");
  // The rate between the ranks by its own curve: 5 GB/s at 16 KiB, 3 at 4 MiB; a ring allreduce of
  // 1 MiB sends messages of 512 KiB (the point of 1 MiB: 3.5), but its ranks' buffers (2 MiB, 7/8
  // of the way in log2) are past the curve's peak, at 3.25: 2 a + n / 3.25 + 0.5 n / 10.
  m.nodes[0].intra = rate(3, FigureSource::measured, "ring exchange of its 2 ranks at once");
  m.nodes[0].intra.curve = {{16384, 5}, {4194304, 3}};
  const Expectation ring = expect(m, "ring", Collective::allreduce, 1048576);
  ASSERT_TRUE(ring.time_us);
  EXPECT_DOUBLE_EQ(ring.limit.link_GBps, 3.25);
  EXPECT_NEAR(*ring.time_us, 2 * 50 + 1048576 / 3.25e3 + 0.5 * 1048576 / 15e3, 1e-9);
  // A rate without a curve (given, or a file from before it) prices every size.
  m.nodes[0].intra.curve.clear();
  EXPECT_DOUBLE_EQ(expect(m, "ring", Collective::allreduce, 1048576).limit.link_GBps, 3);
  m.nodes[0].copy.curve.clear();
  EXPECT_DOUBLE_EQ(expect(m, "shm", Collective::allreduce, kN, slots).limit.link_GBps, 8);
}

// The rates between a node's ranks are read at the algorithm's messages (docs/verdicts.md, "The rate
// of a size"): a message's rate depends on its own size (a library sends small ones eagerly and
// larger ones by rendezvous), and the probe's point at 2 S is a message of S. The curve below has
// Open MPI's step on the 2-core VM (2 KiB messages at 4 GB/s, 4 KiB at 1.5) and a peak at 4 MiB.
// A ring allreduce on 2 ranks sends messages of n / 2: n = 4 KiB at the point of 4 KiB (4 GB/s,
// where its 8 KiB of buffers would read 1.5), 8 KiB at 1.5 (the row's 16 KiB would read 3); past
// the peak, no faster than its buffers allow: 64 MiB sends 32 MiB messages (the point of 64 MiB,
// 4/5 of the way from 4 MiB to 128 MiB in log2: 6.8), its buffers of 128 MiB read 6.
TEST(ExpectedTime, LinksAtTheRateOfTheAlgorithmsMessages) {
  MachineModel m = cluster(1, 2);
  m.nodes[0].intra = rate(6, FigureSource::measured, "ring exchange");
  m.nodes[0].intra.curve = {{1024, 2}, {4096, 4}, {8192, 1.5}, {16384, 3}, {4194304, 10}, {134217728, 6}};
  for (const auto& [n, gbps] : std::vector<std::pair<double, double>>{{4096, 4}, {8192, 1.5}, {kN, 6}}) {
    const Expectation e = expect(m, "ring", Collective::allreduce, n);
    ASSERT_TRUE(e.time_us) << n;
    EXPECT_DOUBLE_EQ(e.limit.link_GBps, gbps) << n;
    EXPECT_NEAR(*e.time_us, 2 * 50 + n / (gbps * 1e3) + 0.5 * n / 10e3, 1e-9) << n;
  }
  EXPECT_NEAR(rate_at(m.nodes[0].intra, 2 * kN / 2), 6.8, 1e-12);
  EXPECT_EQ(expect(m, "ring", Collective::allreduce, 4096).limit.detail,
            "ring exchange; at messages of 2.0 KiB (its point of 4.0 KiB, a message's two buffers), on its curve "
            "(1.0 KiB to 128.0 MiB)");
  EXPECT_EQ(expect(m, "ring", Collective::allreduce, kN).limit.detail,
            "ring exchange; at messages of 32.0 MiB (its point of 64.0 MiB, a message's two buffers) and, past its "
            "peak at 4.0 MiB, at 128.0 MiB a rank, its buffers, on its curve (1.0 KiB to 128.0 MiB)");
  // A binomial tree's broadcast sends the whole array each step: 2 KiB at 4 GB/s, one message alone
  // (intra_one, where there is none, the exchange's).
  const Expectation tree = expect(m, "tree", Collective::broadcast, 2048);
  ASSERT_TRUE(tree.time_us);
  EXPECT_DOUBLE_EQ(tree.limit.link_GBps, 4);
}

// A message under the curve's smallest point takes that point's time, and each message's least
// time is a fixed cost counted with the latency. The exchange measured down to messages of 8 B in
// 0.5 us (16 B of buffers at 0.016 GB/s), latency 0.2 us: a ring allreduce of 8 B on 2 ranks sends
// 2 messages of 4 B, 0.5 us each (not 0.25 at the point's rate), 1.4 us of latency in 1.4004
// (latency-bound); 4 KiB sends 2 of 2 KiB at 4 GB/s, 1.024 us each: 0.4 + 2 x 0.5 us of it latency,
// still latency-bound; 1 MiB sends 2 of 512 KiB at 5.07 GB/s (8/15 of the way to 6 in log2): 1.4 us
// of latency in 310 us.
TEST(ExpectedTime, AMessageUnderTheCurvesSmallestTakesItsTime) {
  MachineModel m = cluster(1, 2);
  m.latency_us = 0.2;
  m.nodes[0].intra = rate(6, FigureSource::measured, "ring exchange");
  m.nodes[0].intra.curve = {{16, 0.016}, {4096, 4}, {134217728, 6}};
  const Expectation tiny = expect(m, "ring", Collective::allreduce, 8);
  ASSERT_TRUE(tiny.time_us);
  EXPECT_NEAR(*tiny.time_us, 0.4 + 1.0 + 0.5 * 8 / 10e3, 1e-12);
  EXPECT_NEAR(tiny.latency_us, 1.4, 1e-12);
  EXPECT_DOUBLE_EQ(tiny.messages, 2);
  EXPECT_TRUE(tiny.latency_bound());
  EXPECT_DOUBLE_EQ(tiny.limit.message_floor_us, 0.5);
  EXPECT_EQ(tiny.limit.detail,
            "ring exchange; at messages of 4 B (under its smallest, of 8 B: 0.5 us a message, as that one), on its "
            "curve (16 B to 128.0 MiB)");
  const Expectation row = expect(m, "ring", Collective::allreduce, 4096);
  ASSERT_TRUE(row.time_us);
  EXPECT_NEAR(*row.time_us, 0.4 + 4096 / 4e3 + 0.5 * 4096 / 10e3, 1e-12);
  EXPECT_NEAR(row.latency_us, 1.4, 1e-12);
  EXPECT_TRUE(row.latency_bound());
  const double mib = 1 << 20;
  const Expectation large = expect(m, "ring", Collective::allreduce, mib);
  ASSERT_TRUE(large.time_us);
  EXPECT_NEAR(*large.time_us, 0.4 + mib / ((4 + 2.0 * 8 / 15) * 1e3) + 0.5 * mib / 10e3, 1e-9);
  EXPECT_NEAR(large.latency_us, 1.4, 1e-12);
  EXPECT_FALSE(large.latency_bound());
  // Without a curve a message has no least time: the latency alone.
  m.nodes[0].intra.curve.clear();
  EXPECT_NEAR(expect(m, "ring", Collective::allreduce, 8).latency_us, 0.4, 1e-12);
}

// Where every step is between ranks of one node on the rate's curve, whose points hold the
// transfer's latency, a message pays its call (a rank's exchange with itself) beside it, not the
// ping-pong's latency again. The exchange as above (0.5 us a message of 8 B or less), a call of
// 0.05 us (16 B of buffers at 0.16 GB/s), latency 0.2: 8 B on 2 ranks is 2 x (0.05 + 0.5) us of
// latency in 1.1004; across two nodes of one rank each the steps cross the link and pay the
// latency; a model without a latency still prices the row by its calls.
TEST(ExpectedTime, OnOneNodeAMessagePaysItsCallBesideItsTransfer) {
  MachineModel m = cluster(1, 2);
  m.latency_us = 0.2;
  m.nodes[0].intra = rate(6, FigureSource::measured, "ring exchange");
  m.nodes[0].intra.curve = {{16, 0.016}, {4096, 4}, {134217728, 6}};
  m.nodes[0].self_exchange = rate(0.16, FigureSource::measured, "MPI_Sendrecv of 8 B with its own rank");
  m.nodes[0].self_exchange.curve = {{16, 0.16}};
  const Expectation e = expect(m, "ring", Collective::allreduce, 8);
  ASSERT_TRUE(e.time_us);
  EXPECT_TRUE(e.call_priced);
  EXPECT_NEAR(e.alpha_us, 0.05, 1e-12);
  EXPECT_NEAR(*e.time_us, 2 * 0.05 + 1.0 + 0.5 * 8 / 10e3, 1e-12);
  EXPECT_NEAR(e.latency_us, 1.1, 1e-12);
  EXPECT_TRUE(e.latency_bound());
  EXPECT_EQ(e.call_detail, "MPI_Sendrecv of 8 B with its own rank");
  // The library's textbook algorithms are priced so too.
  EXPECT_TRUE(expect(m, "mpi", Collective::allreduce, 8).call_priced);
  MachineModel none = m;
  none.latency_us = 0, none.latency_source = FigureSource::none;
  const Expectation without = expect(none, "ring", Collective::allreduce, 8);
  ASSERT_TRUE(without.time_us) << (without.missing.empty() ? "" : without.missing.front());
  EXPECT_NEAR(*without.time_us, *e.time_us, 1e-12);
  MachineModel two = cluster(2, 1);
  two.latency_us = 0.2;
  for (NodeModel& n : two.nodes) n.intra = m.nodes[0].intra, n.self_exchange = m.nodes[0].self_exchange;
  const Expectation across = expect(two, "ring", Collective::allreduce, 8);
  ASSERT_TRUE(across.time_us);
  EXPECT_FALSE(across.call_priced);
  EXPECT_NEAR(across.alpha_us, 0.2, 1e-12);
}

// shm's reductions read slots other ranks of the node just wrote: priced at reduce_slot (measured
// by the bench with the slots handed from core to core) at the rank's buffers' working set, where
// the node has it, for shm, hier on one node, and hier's node level across nodes. An allreduce of
// 1 MiB on 2 ranks (2 MiB a rank), reduce_slot 6 GB/s at 16 KiB and 3 at 128 MiB: 2 MiB is 7/13 of
// the way in log2, 6 - 3 x 7/13 GB/s; without it, the reduction at the copy rate, 10 GB/s.
TEST(ExpectedTime, ShmReductionsAtTheRateOfSlotsOtherRanksWrote) {
  MachineModel m = cluster(1, 2);
  ExpectationOptions slots;
  slots.shm_adapt_bytes = std::numeric_limits<double>::infinity();
  const double n = 1048576, slot_rate = 6 - 3.0 * 7 / 13;
  const auto t = shm_cost_terms(Collective::allreduce, 2, n, shm_default_cost_settings(2));
  ASSERT_TRUE(t);
  const Expectation cached = expect(m, "shm", Collective::allreduce, n, slots);
  ASSERT_TRUE(cached.time_us);
  m.nodes[0].reduce_slot = rate(3, FigureSource::measured, "f32 sums of the previous rank's slot");
  m.nodes[0].reduce_slot.curve = {{16384, 6}, {134217728, 3}};
  const Expectation e = expect(m, "shm", Collective::allreduce, n, slots);
  ASSERT_TRUE(e.time_us);
  EXPECT_NEAR(*e.time_us - *cached.time_us, t->gamma_factor * n / (slot_rate * 1e3) - t->gamma_factor * n / 1e4, 1e-9);
  EXPECT_NEAR(*expect(m, "hier", Collective::allreduce, n, slots).time_us, *e.time_us, 1e-9);
  // A copy rate the user gave sets every rate of the node's memory: the measured one is not used.
  MachineModel given = m;
  given.nodes[0].copy.source = FigureSource::user;
  EXPECT_NEAR(*expect(given, "shm", Collective::allreduce, n, slots).time_us, *cached.time_us, 1e-9);
  // hier across 2 nodes of 2: the node level's reductions at reduce_slot too (slower here).
  MachineModel two = cluster(2, 2);
  const Expectation across = expect(two, "hier", Collective::allreduce, n, slots);
  for (NodeModel& node : two.nodes) node.reduce_slot = m.nodes[0].reduce_slot;
  const Expectation across_slots = expect(two, "hier", Collective::allreduce, n, slots);
  ASSERT_TRUE(across.time_us && across_slots.time_us);
  const HierCostTerms h = hier_cost_terms(Collective::allreduce, 2, 2, n,
                                          {shm_default_cost_settings(2), ExpectationOptions{}.ring_segment_bytes});
  EXPECT_NEAR(*across_slots.time_us - *across.time_us,
              h.intra.gamma_factor * n / (slot_rate * 1e3) - h.intra.gamma_factor * n / 1e4, 1e-9);
}

// One dispatch from a name to its terms (cost_terms_of): the library's flat algorithms' own terms
// (the ring's chains at the segment), nothing for the other names; every textbook algorithm's
// terms are those of the algorithm of the library that runs it, and textbook_algorithm_of reads
// library_algorithm_of backwards.
// shm's copies through the slots (collectives/src/algorithms/shm.cpp): a reducescatter reduces
// its own block from its input into its output, so it copies into its slot only the p - 1
// others' blocks, until the outputs are streamed (from a block of 32 MiB), when its own goes
// through the slot too. A two-shot allreduce writes every line of its slot, the p - 1 other
// slices copied and its own reduced into it, and copies out the p - 1 other reduced slices (its
// own stays in its caches). A gather's root fills no slot. And the split is the terms' bytes, for
// every collective.
TEST(ShmCostTerms, OwnBlockFromTheInputUntilStreamed) {
  const ShmCostSettings s = shm_default_cost_settings(4);
  const double mib = 1048576;
  const auto rs = shm_slot_copies(Collective::reducescatter, 4, mib, s);
  ASSERT_TRUE(rs);
  EXPECT_EQ(rs->in, 0.75);
  EXPECT_EQ(shm_cost_terms(Collective::reducescatter, 4, mib, s)->beta_factor, 0.75);
  EXPECT_EQ(shm_slot_copies(Collective::reducescatter, 4, 256 * mib, s)->in, 1);  // 64 MiB a block
  const auto ar = shm_slot_copies(Collective::allreduce, 4, mib, s);
  ASSERT_TRUE(ar);
  EXPECT_EQ(ar->in, 1);
  EXPECT_EQ(ar->out, 0.75);
  // An allgather's rank copies its block into its slot for its peers and to its output; a
  // gather's root only to its output (no peer reads its slot), and the others' out of theirs.
  const auto ag = shm_slot_copies(Collective::allgather, 4, mib, s);
  ASSERT_TRUE(ag);
  EXPECT_EQ(ag->in, 0.25);
  EXPECT_EQ(ag->out, 1);
  const auto g = shm_slot_copies(Collective::gather, 4, mib, s);
  ASSERT_TRUE(g);
  EXPECT_EQ(g->in, 0);
  EXPECT_EQ(g->out, 1);
  EXPECT_EQ(shm_cost_terms(Collective::allgather, 4, mib, s)->beta_factor, 1.25);
  EXPECT_EQ(shm_cost_terms(Collective::gather, 4, mib, s)->beta_factor, 1);
  for (const Collective c : kAllCollectives)
    for (int p = 2; p <= 9; ++p)
      for (const double n : {4096.0, mib, 64 * mib, 512 * mib}) {
        const auto t = shm_cost_terms(c, p, n, shm_default_cost_settings(p));
        const auto x = shm_slot_copies(c, p, n, shm_default_cost_settings(p));
        ASSERT_EQ(t.has_value(), x.has_value()) << collective_name(c);
        if (!t) continue;
        EXPECT_NEAR(x->in + x->out + x->local, t->beta_factor, 1e-12) << collective_name(c) << " p=" << p << " n=" << n;
      }
}

TEST(CostTermsOf, OneDispatchForTheFlatAndTextbookAlgorithms) {
  auto same = [](const std::optional<CostTerms>& a, const std::optional<CostTerms>& b) {
    return a.has_value() == b.has_value() &&
           (!a || (a->alpha_count == b->alpha_count && a->beta_factor == b->beta_factor &&
                   a->gamma_factor == b->gamma_factor));
  };
  for (const Collective c : kAllCollectives)
    for (int p = 1; p <= 9; ++p) {
      const std::string what = std::string(collective_name(c)) + " p=" + std::to_string(p);
      EXPECT_TRUE(same(cost_terms_of("ring", c, p, {kN, 65536}), ring_cost_terms(c, p, kN, 65536))) << what;
      EXPECT_TRUE(same(cost_terms_of("rhd", c, p), rhd_cost_terms(c, p))) << what;
      EXPECT_TRUE(same(cost_terms_of("tree", c, p), tree_cost_terms(c, p))) << what;
      for (const char* other : {"mpi", "nccl", "shm", "hier", "bogus"})
        EXPECT_FALSE(cost_terms_of(other, c, p)) << other << " " << what;
      for (const TextbookAlgorithm a : kAllTextbookAlgorithms) {
        const std::string_view ours = library_algorithm_of(c, a);
        if (ours.empty()) continue;
        EXPECT_TRUE(same(textbook_cost_terms(c, a, p), cost_terms_of(ours, c, p))) << ours << " " << what;
        EXPECT_EQ(textbook_algorithm_of(c, ours), a) << ours << " " << what;
      }
    }
  EXPECT_TRUE(library_chooses("mpi") && library_chooses("nccl") && !library_chooses("ring"));
  EXPECT_EQ(parse_collective("reducescatter"), Collective::reducescatter);
  EXPECT_THROW(parse_collective("all_reduce"), std::invalid_argument);
}
