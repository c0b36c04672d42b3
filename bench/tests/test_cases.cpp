// The cases a sweep runs: their order, names, in-place pairs, the algorithms that have each
// collective, and the buffers' layouts.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "backends/backend.hpp"
#include "cases.hpp"
#include "commscope/bench/options.hpp"
#include "commscope/collectives/error.hpp"
#include "from_profile.hpp"
#include "parse_args.hpp"

using namespace commscope;
using namespace commscope::bench;
using test::parse;

namespace {

// The algorithms of the cpu device without touching MPI.
class FakeBackend final : public Backend {
 public:
  std::string device() const override { return "cpu"; }
  DeviceInfo device_info() const override { return {}; }
  std::vector<MemoryUse> memory_use() const override { return {}; }
  std::vector<std::string> algorithms() const override { return {"mpi", "ring", "tree", "rhd", "shm"}; }
  bool supports(const std::string& a, Collective c) const override {
    return unavailable(a).empty() && find_algorithm(a).supports(c);
  }
  // As the cpu backend says on ranks that span nodes, when asked to.
  std::string unavailable(const std::string& a) const override {
    return a == "shm" && multi_node ? "needs every rank on one node (this node has 2 of 4 ranks)" : "";
  }
  bool multi_node = false;
  void prepare(const Case&, std::uint64_t) override {}
  LocalTimings run_timed(const TimingPlan&, Watchdog&) override { return {}; }
  std::uint64_t check_once(std::uint64_t, bool) override { return 0; }
};

}  // namespace

TEST(Cases, OrderPairsAndNames) {
  Options o = parse({"allreduce,allgather,alltoall", "--algo", "mpi,ring,tree,rhd", "-b", "8", "-e", "64", "-f", "8",
                     "-d", "f32,u8", "-o", "sum,max"})
                  .options;
  FakeBackend be;
  const std::vector<Case> cases = make_cases(o, 3, be);
  // allreduce: 2 types x 2 ops x 2 sizes x 4 algos x 2 sides; allgather: 2 x 1 x 2 x 4 x 2;
  // alltoall: 2 x 1 x 2 x 2 x 2 (tree and rhd have none).
  EXPECT_EQ(cases.size(), 64u + 32u + 16u);
  for (std::size_t i = 0; i + 1 < cases.size(); i += 2) {
    EXPECT_EQ(cases[i].row, cases[i + 1].row);
    EXPECT_FALSE(cases[i].in_place);
    EXPECT_TRUE(cases[i + 1].in_place);
    EXPECT_EQ(cases[i].id, static_cast<int>(i));
  }
  EXPECT_EQ(cases[0].name, "allreduce/mpi/f32/sum/root:-1/bytes:8/inplace:0");
  const Case& ag = cases[64];
  EXPECT_EQ(ag.coll, Collective::allgather);
  EXPECT_EQ(ag.op_name(), "none");
  EXPECT_EQ(ag.count, 0u);  // 8 B over 3 ranks of 4-byte elements
  EXPECT_EQ(ag.bytes, 0u);
  EXPECT_EQ(cases[72].bytes, 60u);  // 64 B: 5 elements per rank
  EXPECT_THROW(make_cases(parse({"allreduce", "--algo", "nope"}).options, 3, be), InvalidArgument);
  EXPECT_THROW(make_cases(parse({"alltoall", "--algo", "tree"}).options, 3, be), UnsupportedCollective);
  // --algo all (the default) runs the algorithms that have the collective.
  const std::vector<Case> a2a = make_cases(parse({"alltoall", "-b", "8", "-e", "8"}).options, 3, be);
  ASSERT_EQ(a2a.size(), 6u);  // mpi, ring, shm x 2 sides
  EXPECT_EQ(a2a[0].algo, "mpi");
  EXPECT_EQ(a2a[2].algo, "ring");
  EXPECT_EQ(a2a[4].algo, "shm");
  EXPECT_THROW(make_cases(parse({"reduce", "-r", "3"}).options, 3, be), InvalidArgument);
  // shm where the ranks span nodes: left out of --algo all, an error when named.
  FakeBackend nodes;
  nodes.multi_node = true;
  for (const Case& c : make_cases(parse({"allreduce", "-b", "8", "-e", "8"}).options, 4, nodes))
    EXPECT_NE(c.algo, "shm");
  try {
    make_cases(parse({"allreduce", "--algo", "shm"}).options, 4, nodes);
    ADD_FAILURE() << "shm across nodes accepted";
  } catch (const UnsupportedCollective& e) {
    EXPECT_STREQ(e.what(), "algorithm 'shm' needs every rank on one node (this node has 2 of 4 ranks)");
  }
  EXPECT_NO_THROW(make_cases(parse({"allreduce", "-r", "3"}).options, 3, be));  // no root involved
}

TEST(Cases, NewCollectives) {
  FakeBackend be;
  // gather, scatter: mpi, ring, tree x 2 sides; sendrecv: mpi and ring x 2 sides; alltoallv:
  // mpi and ring, out of place only (it has no in-place form). (shm left out: its cases would
  // only move the indices below.)
  const std::vector<Case> cases = make_cases(
      parse({"gather,scatter,sendrecv,alltoallv", "--algo", "mpi,ring,tree", "-b", "96", "-e", "96", "-r", "2"})
          .options,
      3, be);
  ASSERT_EQ(cases.size(), 6u + 6u + 4u + 2u);
  EXPECT_EQ(cases[0].name, "gather/mpi/f32/none/root:2/bytes:96/inplace:0");
  EXPECT_EQ(cases[0].count, 8u);  // 96 B = 3 ranks x 8 f32
  EXPECT_EQ(cases[4].algo, "tree");
  EXPECT_EQ(cases[6].coll, Collective::scatter);
  EXPECT_EQ(cases[6].count, 8u);
  EXPECT_EQ(cases[12].name, "sendrecv/mpi/f32/none/root:-1/bytes:96/inplace:0");
  EXPECT_EQ(cases[12].count, 24u);
  EXPECT_EQ(cases[16].name, "alltoallv/mpi/f32/none/root:-1/bytes:96/inplace:0");
  EXPECT_EQ(cases[16].count, 24u);  // every rank sends and receives 24 elements in all
  EXPECT_EQ(cases[17].algo, "ring");
  EXPECT_FALSE(cases[17].in_place);
  EXPECT_NE(cases[16].row, cases[17].row);  // no in-place partner
  EXPECT_THROW(make_cases(parse({"gather", "-r", "3"}).options, 3, be), InvalidArgument);
  EXPECT_THROW(make_cases(parse({"sendrecv", "--algo", "tree"}).options, 3, be), UnsupportedCollective);
}

TEST(Cases, InPlaceLayouts) {
  Case c;
  c.coll = Collective::allgather;
  c.count = 10;
  c.type = DataType::f64;
  c.nranks = 4;
  c.in_place = true;
  Layout l = buffer_layout(c, 2, 0);
  EXPECT_EQ(l.a_bytes, 320u);
  EXPECT_EQ(l.send_offset, 160u);
  EXPECT_EQ(l.recv_offset, 0u);
  EXPECT_FALSE(l.recv_in_b);
  c.coll = Collective::reducescatter;
  l = buffer_layout(c, 3, 0);
  EXPECT_EQ(l.recv_offset, 240u);
  c.in_place = false;
  l = buffer_layout(c, 3, 0);
  EXPECT_EQ(l.a_bytes, 320u);
  EXPECT_EQ(l.b_bytes, 80u);
  EXPECT_TRUE(l.recv_in_b);
  // -u 3: both buffers move 3 elements (24 B) off the pools' start, and the pools grow by as much.
  l = buffer_layout(c, 3, 3);
  EXPECT_EQ(l.send_offset, 24u);
  EXPECT_EQ(l.recv_offset, 24u);
  EXPECT_EQ(l.a_bytes, 344u);
  EXPECT_EQ(l.b_bytes, 104u);
  c.in_place = true;
  l = buffer_layout(c, 3, 3);
  EXPECT_EQ(l.recv_offset, 24u + 240u);
  EXPECT_EQ(l.send_offset, 24u);
  EXPECT_EQ(l.a_bytes, 344u);
  // gather and scatter as NCCL: the root's block of the big side is the small side.
  c.coll = Collective::gather;
  l = buffer_layout(c, 1, 0);
  EXPECT_EQ(l.a_bytes, 320u);
  EXPECT_EQ(l.send_offset, 80u);
  EXPECT_EQ(l.recv_offset, 0u);
  c.coll = Collective::scatter;
  l = buffer_layout(c, 1, 0);
  EXPECT_EQ(l.send_offset, 0u);
  EXPECT_EQ(l.recv_offset, 80u);
}

// --from-profile at more ranks than a communicator has: the profile's groups where they partition
// the run's ranks, else consecutive blocks where the size divides the run's, else none.
TEST(Cases, FromProfileGroups) {
  const std::vector<ProfileCall> calls = {
      {Collective::allreduce, "mpi", 8, 2, {{0, 2}, {1, 3}}},  // pp-like: strided
      {Collective::allreduce, "mpi", 64, 3, {{0, 1, 2}}},      // one group of 3
  };
  EXPECT_EQ(group_colors(calls, 2, 4), (std::vector<int>{0, 1, 0, 1}));
  EXPECT_EQ(group_colors(calls, 2, 6), (std::vector<int>{0, 0, 1, 1, 2, 2}));  // the sets do not cover 6
  EXPECT_EQ(group_colors(calls, 3, 6), (std::vector<int>{0, 0, 0, 1, 1, 1}));
  EXPECT_FALSE(group_colors(calls, 3, 4));  // 3 does not divide 4
  EXPECT_FALSE(group_colors(calls, 4, 2));  // larger than the run
  EXPECT_EQ(group_colors(calls, 3, 3), (std::vector<int>{0, 0, 0}));

  // The cases: the run's size first (none here), then each smaller size the run can rebuild.
  Options o = parse({"allreduce", "-b", "8", "-e", "64"}).options;
  o.profile_calls = calls;
  o.from_profile = "p.h5";
  FakeBackend be;
  const std::vector<Case> cases = make_cases(o, 4, be, true);
  ASSERT_EQ(cases.size(), 1u);  // the 2-rank call (the 3-rank one fits no grouping of 4)
  EXPECT_EQ(cases[0].nranks, 2);
  EXPECT_EQ(cases[0].bytes, 8u);
  EXPECT_NE(cases[0].name.find("/group:2"), std::string::npos);
  EXPECT_THROW(make_cases(o, 4, be, false), InvalidArgument);  // a device without groups: the run's size only
}
