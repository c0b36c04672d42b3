// Which algorithm has which collective, and each algorithm's alpha-beta cost.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstring>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "commscope/collectives/collectives.hpp"
#include "commscope/common/stream_copy.hpp"

using namespace commscope;

TEST(Algorithms, EachHasTheCollectivesItCanShape) {
  auto has = [](std::string_view algo, Collective c) { return find_algorithm(algo).supports(c); };
  for (Collective c : kAllCollectives) {
    EXPECT_TRUE(has("mpi", c)) << to_string(c);
    EXPECT_TRUE(has("ring", c)) << to_string(c);
  }
  EXPECT_TRUE(has("tree", Collective::gather));
  EXPECT_TRUE(has("tree", Collective::scatter));
  for (Collective c : {Collective::sendrecv, Collective::alltoallv, Collective::alltoall}) {
    EXPECT_FALSE(has("tree", c)) << to_string(c);
    EXPECT_FALSE(has("rhd", c)) << to_string(c);
  }
  EXPECT_FALSE(has("rhd", Collective::gather));
  EXPECT_FALSE(has("rhd", Collective::scatter));
  // shm has every collective but alltoallv.
  for (Collective c : kAllCollectives) EXPECT_EQ(has("shm", c), c != Collective::alltoallv) << to_string(c);
  // hier: the five that reduce or replicate (two levels help them; the others move each block once).
  for (Collective c : kAllCollectives) {
    const bool five = c == Collective::allreduce || c == Collective::allgather || c == Collective::reducescatter ||
                      c == Collective::reduce || c == Collective::broadcast;
    EXPECT_EQ(has("hier", c), five) << to_string(c);
  }
}

// Each algorithm's options live in its own struct on AlgoOptions, by the algorithm's name: unset,
// the struct's defaults; set, that algorithm's calls and costs read them (hier's cost through
// shm's for its node phases); copies keep what was set when they were made.
TEST(Options, EachAlgorithmReadsItsOwnOptionsOrItsDefaults) {
  AlgoOptions o;
  EXPECT_EQ(o.get<ShmOptions>().chunk_bytes, std::size_t{256} << 10);
  EXPECT_FALSE(o.get<ShmOptions>().two_shot_bytes.has_value());
  EXPECT_EQ(o.get<ShmOptions>().direct_bytes, SIZE_MAX);
  EXPECT_EQ(o.get<ShmOptions>().adapt_bytes, std::size_t{256} << 10);
  EXPECT_EQ(o.get<HierOptions>().test_nodes, 0);
  const Algorithm& shm = find_algorithm("shm");
  const double n = 4 << 20;  // allgather at 4 ranks: a block of 1 MiB per rank
  EXPECT_DOUBLE_EQ(shm.cost(Collective::allgather, 4, n, o)->alpha, 4);  // steps of 256 KiB
  const double hier_default = hier_cost(Collective::allgather, 2, 4, n, o).intra.alpha;

  o.set(ShmOptions{.chunk_bytes = std::size_t{128} << 10});
  const AlgoOptions copy = o;
  o.set(ShmOptions{.chunk_bytes = std::size_t{64} << 10}).set(HierOptions{.test_nodes = 3});
  EXPECT_EQ(o.by_algorithm.size(), 2u);  // set again: replaced, not added
  EXPECT_EQ(o.get<ShmOptions>().chunk_bytes, std::size_t{64} << 10);
  EXPECT_EQ(o.get<ShmOptions>().adapt_bytes, std::size_t{256} << 10);  // the rest: defaults
  EXPECT_EQ(o.get<HierOptions>().test_nodes, 3);
  EXPECT_EQ(copy.get<ShmOptions>().chunk_bytes, std::size_t{128} << 10);
  EXPECT_EQ(copy.get<HierOptions>().test_nodes, 0);
  EXPECT_DOUBLE_EQ(shm.cost(Collective::allgather, 4, n, copy)->alpha, 8);
  EXPECT_DOUBLE_EQ(shm.cost(Collective::allgather, 4, n, o)->alpha, 16);
  EXPECT_DOUBLE_EQ(hier_cost(Collective::allgather, 2, 4, n, o).intra.alpha, 4 * hier_default);
  // Other algorithms ignore them.
  EXPECT_DOUBLE_EQ(find_algorithm("ring").cost(Collective::allgather, 4, n, o)->alpha,
                   find_algorithm("ring").cost(Collective::allgather, 4, n, AlgoOptions{})->alpha);
}

TEST(Formulas, AlphaBetaCostsMatchTheTextbook) {
  const AlgoOptions o;
  auto cost = [&](std::string_view algo, Collective c, int p) { return *find_algorithm(algo).cost(c, p, 1e6, o); };
  const Cost ring = cost("ring", Collective::allreduce, 4);
  EXPECT_DOUBLE_EQ(ring.alpha, 6);
  EXPECT_DOUBLE_EQ(ring.beta, 1.5);
  EXPECT_DOUBLE_EQ(ring.gamma, 0.75);
  const Cost rab = cost("rhd", Collective::allreduce, 8);  // 2 lg p a + 2(p-1)/p nB + (p-1)/p nG
  EXPECT_DOUBLE_EQ(rab.alpha, 6);
  EXPECT_DOUBLE_EQ(rab.beta, 1.75);
  EXPECT_DOUBLE_EQ(rab.gamma, 0.875);
  const Cost tree = cost("tree", Collective::allreduce, 5);  // 2 ceil(lg p)(a + nB) + ceil(lg p) nG
  EXPECT_DOUBLE_EQ(tree.alpha, 6);
  EXPECT_DOUBLE_EQ(tree.beta, 6);
  EXPECT_DOUBLE_EQ(tree.gamma, 3);
  const Cost rdb = cost("rhd", Collective::allgather, 16);  // lg p a + (p-1)/p nB
  EXPECT_DOUBLE_EQ(rdb.alpha, 4);
  EXPECT_DOUBLE_EQ(rdb.beta, 15.0 / 16);
  EXPECT_DOUBLE_EQ(cost("tree", Collective::broadcast, 8).beta, 3);
  EXPECT_FALSE(find_algorithm("mpi").cost(Collective::allreduce, 4, 1e6, o).has_value());
  EXPECT_FALSE(find_algorithm("tree").cost(Collective::alltoall, 4, 1e6, o).has_value());
  const Cost chain = cost("ring", Collective::gather, 5);  // (p-1)a + (p-1)/p nB
  EXPECT_DOUBLE_EQ(chain.alpha, 4);
  EXPECT_DOUBLE_EQ(chain.beta, 0.8);
  const Cost binomial = cost("tree", Collective::scatter, 5);  // ceil(lg p) a + (p-1)/p nB
  EXPECT_DOUBLE_EQ(binomial.alpha, 3);
  EXPECT_DOUBLE_EQ(binomial.beta, 0.8);
  EXPECT_DOUBLE_EQ(cost("ring", Collective::sendrecv, 4).alpha, 1);
  EXPECT_DOUBLE_EQ(cost("ring", Collective::sendrecv, 4).beta, 1);
  EXPECT_FALSE(find_algorithm("ring").cost(Collective::alltoallv, 4, 1e6, o).has_value());
  EXPECT_NEAR(ring.seconds(1e6, 1e-6, 1e-9, 1e-10), 6e-6 + 1.5e-3 + 0.75e-4, 1e-12);
  // shm: one-shot below the switch (k a + nB + (p-1) nG), two-shot from it on
  // (2k a + (2p-1)/p nB + (p-1)/p nG), k = steps of 256 KiB.
  const Algorithm& shm = find_algorithm("shm");
  // The switch by rank count (64 KiB for 2 or oversubscribed ranks, 4 KiB for 3, 2 KiB from 4
  // on) unless set.
  const ShmOptions so;
  EXPECT_EQ(shm_two_shot_switch(so, 2, false), std::size_t{64} << 10);
  EXPECT_EQ(shm_two_shot_switch(so, 3, false), std::size_t{4} << 10);
  EXPECT_EQ(shm_two_shot_switch(so, 4, false), std::size_t{2} << 10);
  EXPECT_EQ(shm_two_shot_switch(so, 8, true), std::size_t{64} << 10);
  EXPECT_EQ(shm_two_shot_switch(ShmOptions{.two_shot_bytes = 100}, 8, false), 100u);
  EXPECT_EQ(shm.cost(Collective::allreduce, 4, 2048, o)->alpha, 2);  // two-shot from 2 KiB at 4 ranks
  const Cost one = *shm.cost(Collective::allreduce, 4, 1024, o);
  EXPECT_DOUBLE_EQ(one.alpha, 1);
  EXPECT_DOUBLE_EQ(one.beta, 1);
  EXPECT_DOUBLE_EQ(one.gamma, 3);
  const Cost two = *shm.cost(Collective::allreduce, 4, 3 << 20, o);
  EXPECT_DOUBLE_EQ(two.alpha, 24);
  EXPECT_DOUBLE_EQ(two.beta, 7.0 / 4);
  EXPECT_DOUBLE_EQ(two.gamma, 0.75);
  // allgather: a block of n/p per rank in steps of 256 KiB, copied in and to the own output, the
  // p-1 others' out: (p+1)/p; alltoall: n/p in chunk/p pieces.
  const Cost ag = *shm.cost(Collective::allgather, 4, 4 << 20, o);
  EXPECT_DOUBLE_EQ(ag.alpha, 4);
  EXPECT_DOUBLE_EQ(ag.beta, 5.0 / 4);
  const Cost a2a = *shm.cost(Collective::alltoall, 4, 4 << 20, o);
  EXPECT_DOUBLE_EQ(a2a.alpha, 16);
  EXPECT_DOUBLE_EQ(a2a.beta, 7.0 / 4);
  EXPECT_FALSE(shm.cost(Collective::alltoallv, 4, 1e6, o).has_value());
  // Direct (from 1 MiB here; never by default): one handoff, every byte copied once;
  // alltoall has no direct form; allreduce's has two handoffs and reads twice (p-1)/p.
  AlgoOptions direct = o;
  direct.set(ShmOptions{.direct_bytes = std::size_t{1} << 20});
  const Cost dar = *shm.cost(Collective::allreduce, 4, 3 << 20, direct);
  EXPECT_DOUBLE_EQ(dar.alpha, 2);
  EXPECT_DOUBLE_EQ(dar.beta, 1.5);
  EXPECT_DOUBLE_EQ(dar.gamma, 0.75);
  EXPECT_DOUBLE_EQ(shm.cost(Collective::allreduce, 4, 512 << 10, direct)->alpha, 4);  // below: two-shot steps
  const Cost dag = *shm.cost(Collective::allgather, 4, 4 << 20, direct);
  EXPECT_DOUBLE_EQ(dag.alpha, 1);
  EXPECT_DOUBLE_EQ(dag.beta, 0.75);
  EXPECT_DOUBLE_EQ(shm.cost(Collective::broadcast, 4, 4 << 20, direct)->beta, 1);
  EXPECT_DOUBLE_EQ(shm.cost(Collective::broadcast, 4, 512 << 10, direct)->alpha, 2);  // below: steps
  EXPECT_DOUBLE_EQ(shm.cost(Collective::alltoall, 4, 4 << 20, direct)->alpha, 16);
  // reducescatter reads 3 of its 4 blocks' pieces and reduces them.
  const Cost drs = *shm.cost(Collective::reducescatter, 4, 4 << 20, direct);
  EXPECT_DOUBLE_EQ(drs.alpha, 1);
  EXPECT_DOUBLE_EQ(drs.beta, 0.75);
  EXPECT_DOUBLE_EQ(drs.gamma, 0.75);
  // hier, one rank per node: the cross algorithm (ring from 256 KiB, rhd or tree below).
  const Algorithm& hier = find_algorithm("hier");
  EXPECT_DOUBLE_EQ(hier.cost(Collective::allreduce, 4, 1e6, o)->alpha, 6);   // ring 2(p-1)
  EXPECT_DOUBLE_EQ(hier.cost(Collective::allreduce, 8, 1024, o)->alpha, 6);  // rhd 2 lg p
  EXPECT_DOUBLE_EQ(hier.cost(Collective::broadcast, 8, 1024, o)->alpha, 3);  // tree ceil(lg p)
  EXPECT_FALSE(hier.cost(Collective::alltoall, 4, 1e6, o).has_value());
  // 2 nodes x 2 ranks, 64 MiB allreduce: shm reducescatter (256 steps of 128 KiB blocks) and
  // allgather (128 steps), ring allreduce of a half in each cross group: the node's link carries
  // 2(N-1)/N = 1 of the array (a flat ring across the two nodes: 2(p-1)/p = 1.5).
  const HierCost h = hier_cost(Collective::allreduce, 2, 2, 64 << 20, o);
  EXPECT_DOUBLE_EQ(h.intra.alpha, 384);
  EXPECT_DOUBLE_EQ(h.intra.beta, 2.5);  // reducescatter 1, allgather 3/2
  EXPECT_DOUBLE_EQ(h.intra.gamma, 0.5);
  EXPECT_DOUBLE_EQ(h.inter.alpha, 2);
  EXPECT_DOUBLE_EQ(h.inter.beta, 1);
  EXPECT_DOUBLE_EQ(h.inter.gamma, 0.25);
  // One node: shm's cost, nothing between nodes (broadcast: the root's own output, then the slots).
  const HierCost one_node = hier_cost(Collective::broadcast, 1, 4, 4 << 20, o);
  EXPECT_DOUBLE_EQ(one_node.intra.beta, 2);
  EXPECT_DOUBLE_EQ(one_node.inter.alpha, 0);
}

// The library's costs are the shared header's functions (the report's textbook curves and expected
// values use them): every algorithm's cost() equals them at 1 to 9 ranks, and shm's defaults agree.
TEST(Algorithms, CostsAreTheSharedHeadersTerms) {
  const AlgoOptions o;
  auto same = [](const std::optional<Cost>& k, const std::optional<CostTerms>& t, const std::string& what) {
    ASSERT_EQ(k.has_value(), t.has_value()) << what;
    if (!k) return;
    EXPECT_EQ(k->alpha, t->alpha_count) << what;
    EXPECT_EQ(k->beta, t->beta_factor) << what;
    EXPECT_EQ(k->gamma, t->gamma_factor) << what;
  };
  for (Collective c : kAllCollectives)
    for (int p = 1; p <= 9; ++p)
      for (double n : {8.0, 5000.0, 3e6, 3e8}) {
        const std::string what = std::string(to_string(c)) + " p=" + std::to_string(p) + " n=" + std::to_string(n);
        same(find_algorithm("ring").cost(c, p, n, o), ring_cost_terms(c, p, n, 1 << 20), "ring " + what);
        same(find_algorithm("rhd").cost(c, p, n, o), rhd_cost_terms(c, p), "rhd " + what);
        same(find_algorithm("tree").cost(c, p, n, o), tree_cost_terms(c, p), "tree " + what);
        same(find_algorithm("shm").cost(c, p, n, o), shm_cost_terms(c, p, n, shm_default_cost_settings(p)),
             "shm " + what);
        const HierCost h = hier_cost(c, 2, p, n, o);
        const HierCostTerms t = hier_cost_terms(c, 2, p, n, {shm_default_cost_settings(p), 1 << 20});
        same(h.intra, t.intra, "hier intra " + what);
        same(h.inter, t.inter, "hier inter " + what);
      }
  // The model's defaults are the library's: where shm starts to stream its outputs, too.
  EXPECT_EQ(shm_default_cost_settings(2).stream_bytes, static_cast<double>(kStreamOutputBytes));
}

namespace {

// A transport of one rank among `size` that records what it is asked, in order: "send" with the
// buffer each send reads and its peer, "copy" with the destination each local copy writes.
// Receives deliver nothing (the order of the calls is under test, not their data).
class RecordingTransport final : public Transport {
 public:
  RecordingTransport(int rank, int size) : rank_(rank), size_(size) {}
  int rank() const override { return rank_; }
  int size() const override { return size_; }
  void post_send(const void* buf, std::size_t bytes, int peer) override { calls.push_back({"send", buf, bytes, peer}); }
  void post_recv(void*, std::size_t, int) override {}
  void wait() override {}
  void reduce(void*, const void*, const void*, std::size_t, DataType, ReduceOp) override {}
  void copy(void* dst, const void* src, std::size_t bytes) override {
    std::memmove(dst, src, bytes);
    calls.push_back({"copy", dst, bytes, rank_});
  }
  void divide(void*, std::size_t, DataType, int) override {}
  void* scratch(int slot, std::size_t bytes) override {
    auto& s = scratch_[static_cast<std::size_t>(slot)];
    if (s.size() < bytes) s.resize(bytes);
    return s.data();
  }
  struct Call {
    std::string what;
    const void* buf;
    std::size_t bytes;
    int peer;
  };
  std::vector<Call> calls;

 private:
  int rank_, size_;
  std::array<std::vector<std::byte>, kScratchSlots> scratch_;
};

}  // namespace

// rhd's allreduce halves the vector as the distance doubles (as Open MPI's and MPICH's Rabenseifner):
// on 8 ranks rank 0 sends n/2 to rank 1, n/4 to rank 2, n/8 to rank 4, then gathers back in the
// mirror order. With a node's ranks numbered together the largest halves stay inside the node;
// halving from the farthest rank (rank 4 first, n/2) sent them across its link.
TEST(Algorithms, RhdAllreduceHalvesToTheNearestRankFirst) {
  const std::size_t count = 1024, n = count * sizeof(float);
  std::vector<float> send(count, 1.0f), recv(count, 0.0f);
  RecordingTransport t(0, 8);
  find_algorithm("rhd").run(t, CollArgs{Collective::allreduce, send.data(), recv.data(), count}, AlgoOptions{});
  std::vector<std::pair<int, std::size_t>> sends;
  for (const auto& c : t.calls)
    if (c.what == "send") sends.emplace_back(c.peer, c.bytes);
  const std::vector<std::pair<int, std::size_t>> want{{1, n / 2}, {2, n / 4}, {4, n / 8},
                                                      {4, n / 8}, {2, n / 4}, {1, n / 2}};
  EXPECT_EQ(sends, want);
}

// The ring and rhd allgathers send the rank's own block from the caller's send buffer, which the
// rank has not just written (a buffer it has just written makes a slow handover on machines whose
// cores pass modified lines slowly: at 2 ranks on the 2-core VM, the ring's 6.4 GB/s against 9.7
// at 1 MiB), and copy it into place after it went; in place it is in place already, and sent from
// there.
// rhd's ranks folded with a neighbour send it in their group from the receive buffer, as before.
TEST(Algorithms, AllgatherSendsItsOwnBlockFromTheSendBuffer) {
  const std::size_t count = 1000;
  for (const char* algo : {"ring", "rhd"})
    for (int p : {2, 3, 5, 8}) {
      const int r = p - 1;  // in rhd's fold, a rank of a group of its own
      const std::string what = std::string(algo) + " p=" + std::to_string(p);
      std::vector<float> send(count, 1.0f), recv(count * static_cast<std::size_t>(p), 0.0f);
      RecordingTransport t(r, p);
      find_algorithm(algo).run(t, CollArgs{Collective::allgather, send.data(), recv.data(), count}, AlgoOptions{});
      ASSERT_FALSE(t.calls.empty()) << what;
      EXPECT_EQ(t.calls.front().what, "send") << what;
      EXPECT_EQ(t.calls.front().buf, send.data()) << what;
      // One copy into its block, after that first send (the ring's after its last step, rhd's
      // before its second, which sends the block on from `out`).
      const auto copied = [&](const RecordingTransport::Call& c) {
        return c.what == "copy" && c.buf == recv.data() + count * r;
      };
      EXPECT_EQ(std::count_if(t.calls.begin(), t.calls.end(), copied), 1) << what;
      EXPECT_GT(std::find_if(t.calls.begin(), t.calls.end(), copied) - t.calls.begin(), 0) << what;
      EXPECT_EQ(recv[count * r], 1.0f) << what;

      RecordingTransport in_place(r, p);
      find_algorithm(algo).run(in_place, CollArgs{Collective::allgather, recv.data() + count * r, recv.data(), count},
                               AlgoOptions{});
      EXPECT_EQ(in_place.calls.front().buf, recv.data() + count * r) << what;
      EXPECT_EQ(
          std::count_if(in_place.calls.begin(), in_place.calls.end(), [](const auto& c) { return c.what == "copy"; }),
          0)
          << what;
    }
}

// The broadcast roots (ring, tree, rhd) send from the caller's send buffer, not from a receive
// buffer they have just written, as the allgathers send a rank's own block (above). The ring's and
// the tree's copy the array into their receive buffer after their sends; rhd's (van de Geijn: a
// scatter, then an allgather that brings the other blocks back) copies only its own block. In
// place: no copy.
TEST(Algorithms, BroadcastRootSendsFromTheSendBuffer) {
  const std::size_t count = 1000;
  for (const char* algo : {"ring", "tree", "rhd"})
    for (int p : {2, 3, 4, 5}) {
      for (int root : {0, p - 1}) {
        const std::string what = std::string(algo) + " p=" + std::to_string(p) + " root=" + std::to_string(root);
        std::vector<float> send(count, 1.0f), recv(count, 0.0f);
        RecordingTransport t(root, p);
        find_algorithm(algo).run(
            t, CollArgs{Collective::broadcast, send.data(), recv.data(), count, DataType::f32, ReduceOp::sum, root},
            AlgoOptions{});
        ASSERT_FALSE(t.calls.empty()) << what;
        EXPECT_EQ(t.calls.front().what, "send") << what;
        const auto* first = static_cast<const float*>(t.calls.front().buf);
        EXPECT_TRUE(first >= send.data() && first < send.data() + count) << what;
        const auto copy = [](const auto& c) { return c.what == "copy"; };
        ASSERT_EQ(std::count_if(t.calls.begin(), t.calls.end(), copy), 1) << what;
        const auto& copied = *std::find_if(t.calls.begin(), t.calls.end(), copy);
        EXPECT_EQ(copied.buf, recv.data()) << what;
        if (std::string(algo) == "rhd") {
          EXPECT_LE(copied.bytes,
                    (count + static_cast<std::size_t>(p) - 1) / static_cast<std::size_t>(p) * sizeof(float))
              << what;  // its own block
        } else {
          EXPECT_EQ(&copied, &t.calls.back()) << what;
          EXPECT_EQ(copied.bytes, count * sizeof(float)) << what;
        }

        RecordingTransport in_place(root, p);
        find_algorithm(algo).run(
            in_place,
            CollArgs{Collective::broadcast, recv.data(), recv.data(), count, DataType::f32, ReduceOp::sum, root},
            AlgoOptions{});
        EXPECT_EQ(std::count_if(in_place.calls.begin(), in_place.calls.end(), copy), 0) << what;
      }
    }
}

// The tree's gather and allgather: a leaf of the binomial tree (a rank other than the root whose
// subtree is itself alone: every odd rank, and the last of an even count whose subtree is cut)
// sends its block from the caller's send buffer and copies nothing (the allgather's broadcast
// brings its own block back with the rest); a rank with a subtree gathers into a buffer, its own
// block copied there first.
TEST(Algorithms, TreeGatherLeavesSendFromTheSendBuffer) {
  const std::size_t count = 1000;
  const auto copy = [](const auto& c) { return c.what == "copy"; };
  for (const Collective c : {Collective::gather, Collective::allgather})
    for (int p : {2, 3, 5, 8})
      for (int r = 1; r < p; ++r) {
        const std::string what = std::string(to_string(c)) + " p=" + std::to_string(p) + " r=" + std::to_string(r);
        std::vector<float> send(count, 1.0f), recv(count * static_cast<std::size_t>(p), 0.0f);
        RecordingTransport t(r, p);
        find_algorithm("tree").run(t, CollArgs{c, send.data(), recv.data(), count}, AlgoOptions{});
        ASSERT_FALSE(t.calls.empty()) << what;
        const bool leaf = r % 2 == 1 || r == p - 1;  // its subtree: itself alone
        if (leaf) {
          EXPECT_EQ(t.calls.front().what, "send") << what;
          EXPECT_EQ(t.calls.front().buf, send.data()) << what;
          EXPECT_EQ(std::count_if(t.calls.begin(), t.calls.end(), copy), 0) << what;
        } else {
          EXPECT_EQ(t.calls.front().what, "copy") << what;
          const auto sent =
              std::find_if(t.calls.begin(), t.calls.end(), [](const auto& x) { return x.what == "send"; });
          ASSERT_NE(sent, t.calls.end()) << what;
          EXPECT_NE(sent->buf, send.data()) << what;  // its subtree's blocks, gathered
        }
      }
}
