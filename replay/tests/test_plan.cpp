// The replay's plan and rank mapping on made-up profiles: no MPI.
#include <gtest/gtest.h>

#include "commscope/formats/events.hpp"
#include "commscope/profiler/vocabulary.hpp"
#include "commscope/replay/gap_budget.hpp"
#include "commscope/replay/plan.hpp"

namespace rp = commscope::replay;
namespace prof = commscope::profiler;
using commscope::Collective;
using commscope::DataType;

namespace {

// A profile of `nranks` ranks whose events the tests add by name.
struct Builder {
  prof::Profile p;
  explicit Builder(int nranks) {
    p.meta.nranks = nranks;
    p.strings = {""};
    p.events.resize(static_cast<std::size_t>(nranks));
  }
  std::uint32_t id(const std::string& s) {
    for (std::size_t i = 0; i < p.strings.size(); ++i)
      if (p.strings[i] == s) return static_cast<std::uint32_t>(i);
    p.strings.push_back(s);
    return static_cast<std::uint32_t>(p.strings.size() - 1);
  }
  void iteration(int rank, int step, std::int64_t start, std::int64_t end) {
    prof::Event e;
    e.kind = prof::EventKind::kIteration;
    e.iteration = step, e.start_ns = start, e.end_ns = end;
    p.events[static_cast<std::size_t>(rank)].push_back(e);
  }
  void comm(int rank, int step, const std::string& name, const std::string& group, std::int64_t bytes,
            std::int64_t start, std::int64_t end, std::int64_t seq = -1) {
    prof::Event e;
    e.kind = prof::EventKind::kCommunication;
    e.iteration = step, e.start_ns = start, e.end_ns = end, e.bytes = bytes, e.seq = seq;
    e.name = id(name), e.communicator = id(group);
    p.events[static_cast<std::size_t>(rank)].push_back(e);
  }
};

}  // namespace

TEST(ReplayLabels, ListsRangesLinksAndAll) {
  EXPECT_EQ(rp::parse_group_label("tp[0,1]", 4).members, (std::vector<int>{0, 1}));
  EXPECT_EQ(rp::parse_group_label("tp[0,1]", 4).kind, "tp");
  EXPECT_EQ(rp::parse_group_label("dp[0:6:2]", 8).members, (std::vector<int>{0, 2, 4, 6}));
  const rp::GroupLabel link = rp::parse_group_label("pp[1>3]", 4);
  EXPECT_TRUE(link.link);
  EXPECT_EQ(link.members, (std::vector<int>{1, 3}));
  EXPECT_EQ(rp::parse_group_label("", 3).members, (std::vector<int>{0, 1, 2}));
  // The label the profiler writes parses back to its members.
  EXPECT_EQ(rp::parse_group_label(prof::communicator_label("dp", {6, 0, 2, 4, 8}), 9).members,
            (std::vector<int>{0, 2, 4, 6, 8}));
}

TEST(ReplayLabels, GroupsThatCannotBeRebuiltAreErrors) {
  EXPECT_THROW(rp::parse_group_label("tp[0,4]", 4), rp::PlanError);  // rank 4 of 4
  EXPECT_THROW(rp::parse_group_label("tp0,1", 4), rp::PlanError);
  EXPECT_THROW(rp::parse_group_label("tp[0,x]", 4), rp::PlanError);
  EXPECT_THROW(rp::parse_group_label("tp[1,1]", 4), rp::PlanError);
  EXPECT_THROW(rp::parse_group_label("dp[4:0:2]", 8), rp::PlanError);
  EXPECT_THROW(rp::parse_group_label("mpi[0,1]#0", 4), rp::PlanError);
}

// Two communicators of the same members ("mpi[0,1]" and the second one, "mpi[0,1]#1") are two
// groups: their calls, numbered alike on each, are all replayed, each on its own group.
TEST(ReplayLabels, CommunicatorsWithTheSameMembersAreTwoGroups) {
  const rp::GroupLabel second = rp::parse_group_label("mpi[0,1]#1", 2);
  EXPECT_EQ(second.kind, "mpi");
  EXPECT_EQ(second.members, (std::vector<int>{0, 1}));
  Builder b(2);
  for (int r = 0; r < 2; ++r)
    for (int k = 0; k < 2; ++k) {
      b.comm(r, -1, "allreduce", "mpi[0,1]", 16, 100 * k, 100 * k + 10, k);
      b.comm(r, -1, "allreduce", "mpi[0,1]#1", 4096, 100 * k + 50, 100 * k + 60, k);
    }
  const rp::ReplayPlan plan = rp::make_plan(b.p);
  EXPECT_EQ(plan.ops(), 8);
  EXPECT_EQ(plan.groups.size(), 2u);
  const std::vector<rp::ReplayOp>& ops = plan.ranks[1].iterations.at(0).ops;
  ASSERT_EQ(ops.size(), 4u);
  EXPECT_EQ(ops[1].group, "mpi[0,1]#1");
  EXPECT_EQ(ops[1].bytes, 4096);
}

// A collective on an intercommunicator ("mpi[0,1|2,3]") is not replayed, and said so.
TEST(ReplayLabels, IntercommunicatorCollectivesAreSkippedAndSaid) {
  EXPECT_TRUE(rp::parse_group_label("mpi[0,1|2,3]", 4).inter);
  Builder b(4);
  for (int r = 0; r < 4; ++r) {
    b.comm(r, -1, "iallreduce", r < 2 ? "mpi[0,1]" : "mpi[2,3]", 1024, 10, 20, 0);
    b.comm(r, -1, "allreduce", "mpi[0,1|2,3]", 64, 30, 40, 0);
  }
  const rp::ReplayPlan plan = rp::make_plan(b.p);
  EXPECT_EQ(plan.ops(), 4);
  EXPECT_EQ(plan.ranks[2].skipped.at("allreduce (on an intercommunicator)"), 1);
  EXPECT_EQ(plan.ranks[2].iterations.at(0).ops.at(0).group, "mpi[2,3]");
  EXPECT_FALSE(plan.groups.contains("mpi[0,1|2,3]"));
}

// An MPI_Sendrecv as the PMPI library records it: a send and a receive spanning the one call,
// each labelled by its peers. Replayed as the send posted and the receive waited for, between
// the pair only (0-1 and 2-3), not as a ring shift over all ranks.
TEST(ReplayPlan, ASendrecvIsItsSendThenItsReceiveBetweenItsPeers) {
  Builder b(4);
  for (int r = 0; r < 4; ++r) {
    const int peer = r ^ 1;
    b.comm(r, -1, "send", prof::link_label("mpi", r, peer), 1024 + r, 100, 200);
    b.comm(r, -1, "recv", prof::link_label("mpi", peer, r), 1024 + peer, 100, 200);
  }
  const rp::ReplayPlan plan = rp::make_plan(b.p);
  EXPECT_EQ(plan.ops(), 8);
  for (int r = 0; r < 4; ++r) {
    const std::vector<rp::ReplayOp>& ops = plan.ranks[static_cast<std::size_t>(r)].iterations.at(0).ops;
    ASSERT_EQ(ops.size(), 2u);
    EXPECT_EQ(ops[0].kind, rp::OpKind::kSend);
    EXPECT_EQ(ops[1].kind, rp::OpKind::kRecv);
    EXPECT_FALSE(rp::posted_receive(ops[1]));  // waited for where the call was
    EXPECT_EQ(ops[0].peer, r ^ 1);
    EXPECT_EQ(ops[1].peer, r ^ 1);
    EXPECT_EQ(ops[1].gap_before_ns, 0);
  }
}

// In an MPI program (its ranks recorded completions) a blocking send is replayed blocking, but a
// sendrecv's send is posted and completed by its own receive: both ranks send first, and two
// blocking sends of 64 KiB (past the eager limit) deadlock.
TEST(ReplayPlan, ASendrecvsReceiveCompletesItsSend) {
  Builder b(2);
  for (int r = 0; r < 2; ++r) {
    b.comm(r, 0, "send", prof::link_label("mpi", r, 1 - r), 65536, 100, 200);
    b.comm(r, 0, "recv", prof::link_label("mpi", 1 - r, r), 65536, 100, 200);
    b.comm(r, 0, r == 0 ? "send" : "recv", "mpi[0>1]", 64, 300, 320);  // MPI_Send, MPI_Recv
    b.comm(r, 0, "wait", "", 0, 400, 500);
  }
  const rp::ReplayPlan plan = rp::make_plan(b.p);
  for (int r = 0; r < 2; ++r) {
    const rp::ReplayIteration& it = plan.ranks[static_cast<std::size_t>(r)].iterations.at(0);
    ASSERT_EQ(it.ops.size(), 4u) << "rank " << r;
    EXPECT_TRUE(it.ops[0].posted) << "rank " << r;
    EXPECT_FALSE(it.ops[1].posted) << "rank " << r;
    EXPECT_EQ(it.ops[1].completes, std::vector<std::int64_t>{it.ops[0].request}) << "rank " << r;
    EXPECT_FALSE(it.ops[2].posted) << "rank " << r;
    EXPECT_TRUE(it.ops[3].completes.empty()) << "rank " << r;
    EXPECT_TRUE(it.completes_at_end.empty()) << "rank " << r;
  }
}

// Rank 1 came late to the sendrecv: rank 0's receive ended 661 ns before rank 1's send started
// on rank 0's clock, within the two ranks' clock errors (3.8 and 6.0 us; so recorded by the PMPI
// library on 4 ranks). Both halves are replayed; with exact clocks the receive is left out.
TEST(ReplayPlan, ASendStartsByAReceivesEndWithinTheClockErrors) {
  for (const std::int64_t error : {std::int64_t{0}, std::int64_t{3813}}) {
    Builder b(2);
    b.comm(0, -1, "send", "mpi[0>1]", 1024, 1000, 200000);
    b.comm(0, -1, "recv", "mpi[1>0]", 1024, 1000, 200000);
    b.comm(1, -1, "send", "mpi[1>0]", 1024, 200661, 240000);
    b.comm(1, -1, "recv", "mpi[0>1]", 1024, 200661, 240000);
    for (int r = 0; r < 2; ++r) {
      prof::RankInfo info;
      info.rank = r, info.clock_error_ns = r == 0 ? 0 : error;
      b.p.ranks.push_back(info);
    }
    const rp::ReplayPlan plan = rp::make_plan(b.p);
    EXPECT_EQ(plan.ops(), error > 0 ? 4 : 2) << "clock error " << error;
    EXPECT_EQ(plan.ranks[0].skipped.contains("recv (no send recorded for it)"), error == 0);
  }
}

// The replay takes profiler::classify_call's exact readings only: a name that only mentions a
// collective (an NCCL kernel's, MPI's alltoallw) is left out, as before the one classifier.
TEST(ReplayNames, CollectivesMessagesAndTheRest) {
  const auto kind = [](const std::string& name) { return rp::replayed_call(name).value().kind; };
  const auto collective = [](const std::string& name) { return rp::replayed_call(name).value().collective; };
  EXPECT_EQ(kind("tp.allreduce_max"), rp::OpKind::kCollective);
  EXPECT_EQ(collective("tp.allreduce_max"), Collective::allreduce);
  EXPECT_EQ(collective("MPI_Bcast"), Collective::broadcast);
  EXPECT_EQ(collective("MPI_Reduce_scatter_block"), Collective::reducescatter);
  EXPECT_EQ(collective("reduce"), Collective::reduce);
  EXPECT_EQ(collective("iallgather"), Collective::allgather);
  EXPECT_TRUE(rp::replayed_call("iallgather")->nonblocking);
  EXPECT_EQ(kind("pp.send"), rp::OpKind::kSend);
  EXPECT_FALSE(rp::replayed_call("pp.send")->nonblocking);
  EXPECT_EQ(kind("MPI_Irecv"), rp::OpKind::kRecv);
  EXPECT_TRUE(rp::replayed_call("MPI_Irecv")->nonblocking);
  EXPECT_EQ(kind("MPI_Barrier"), rp::OpKind::kBarrier);
  EXPECT_EQ(kind("wait"), rp::OpKind::kWait);  // a recorded completion (MPI_Wait*, MPI_Test*)
  EXPECT_EQ(kind("MPI_Testsome"), rp::OpKind::kWait);
  EXPECT_FALSE(rp::replayed_call("MPI_Scan"));
  EXPECT_FALSE(rp::replayed_call("probe"));
  EXPECT_FALSE(rp::replayed_call("alltoallw"));
  EXPECT_FALSE(rp::replayed_call("ncclKernel_AllReduce_RING_LL"));
  EXPECT_FALSE(rp::replayed_call("aten::all_reduce.out"));
}

TEST(ReplayPlan, OrderGapsAndTails) {
  Builder b(2);
  for (int r = 0; r < 2; ++r) {
    b.iteration(r, 0, 1000, 9000);
    b.comm(r, 0, "allreduce", "", 4096, 3000, 4000, 1);  // given out of order: sorted by start
    b.comm(r, 0, "allreduce", "", 1024, 1500, 2000, 0);
    b.comm(r, 0, "wait", "", 0, 4500, 4600);
  }
  const rp::ReplayPlan plan = rp::make_plan(b.p);
  ASSERT_EQ(plan.ranks.size(), 2u);
  const rp::ReplayIteration& it = plan.ranks[1].iterations.at(0);
  EXPECT_EQ(it.number, 0);
  EXPECT_EQ(it.window_ns, 8000);
  ASSERT_EQ(it.ops.size(), 3u);
  EXPECT_EQ(it.ops[0].bytes, 1024);
  EXPECT_EQ(it.ops[0].gap_before_ns, 500);   // from the iteration's start
  EXPECT_EQ(it.ops[1].gap_before_ns, 1000);  // from the previous op's end
  EXPECT_EQ(it.ops[2].kind, rp::OpKind::kWait);
  EXPECT_TRUE(it.ops[2].completes.empty());  // the allreduces were blocking
  EXPECT_EQ(it.tail_ns, 4400);               // to the iteration's end
  EXPECT_TRUE(plan.ranks[1].skipped.empty());
  EXPECT_EQ(plan.ops(), 6);
}

TEST(ReplayPlan, AnInstanceRecordedTwiceIsReplayedOnce) {
  Builder b(2);
  b.comm(0, -1, "pp.send", "pp[0>1]", 512, 10, 20, 0);
  b.comm(0, -1, "pp.send", "pp[0>1]", 0, 30, 40, 0);  // the wait on the newest send
  b.comm(1, -1, "pp.recv", "pp[0>1]", 512, 10, 20, 0);
  const rp::ReplayPlan plan = rp::make_plan(b.p);
  ASSERT_EQ(plan.ranks[0].iterations.at(0).ops.size(), 1u);
  EXPECT_EQ(plan.ranks[0].iterations[0].ops[0].peer, 1);
  EXPECT_EQ(plan.ranks[1].iterations.at(0).ops.at(0).peer, 0);
  EXPECT_EQ(plan.ranks[1].iterations[0].ops[0].kind, rp::OpKind::kRecv);
}

// A send whose receive was not recorded with its peer (MPI_ANY_SOURCE) would wait forever in
// the replay, or be matched by the next receive: each pair replays as many sends as receives.
TEST(ReplayPlan, MessagesWithoutTheirOtherSideAreLeftOut) {
  Builder b(3);
  b.iteration(0, 0, 0, 1000);
  b.iteration(1, 0, 0, 1000);
  b.comm(0, 0, "MPI_Send", "mpi[0>1]", 64, 100, 110);
  b.comm(0, 0, "MPI_Send", "mpi[0>1]", 4096, 200, 300);  // received from any source: no peer
  b.comm(0, 0, "MPI_Send", "mpi[0>1]", 8, 400, 410);
  b.comm(1, 0, "MPI_Recv", "mpi[0>1]", 64, 100, 120);
  b.comm(1, 0, "MPI_Recv", "mpi[0>1]", 8, 400, 420);
  b.comm(2, -1, "MPI_Recv", "mpi[1>2]", 8, 10, 20);  // and rank 1 never sent it
  for (int r = 0; r < 3; ++r) b.comm(r, -1, "MPI_Allreduce", "mpi[0,1,2]", 8, 2000, 2010);
  const rp::ReplayPlan plan = rp::make_plan(b.p);
  const rp::ReplayIteration& sends = plan.ranks[0].iterations.at(0);
  ASSERT_EQ(sends.ops.size(), 2u);  // the first two of three: as many as rank 1 received
  EXPECT_EQ(sends.ops[1].bytes, 4096);
  EXPECT_EQ(sends.tail_ns, 590 + 100 + 10);  // the third's gap and call go to the tail
  EXPECT_EQ(plan.ranks[0].skipped.at("MPI_Send (no receive recorded for it)"), 1);
  EXPECT_EQ(plan.ranks[1].iterations.at(0).ops.size(), 2u);
  ASSERT_EQ(plan.ranks[2].iterations.at(0).ops.size(), 1u);           // the allreduce alone
  EXPECT_EQ(plan.ranks[2].iterations[0].ops[0].gap_before_ns, 2000);  // with the receive's 10 + 10 before it
  EXPECT_EQ(plan.ranks[2].skipped.at("MPI_Recv (no send recorded for it)"), 1);
}

// A blocking receive completed, so it had a send before its end: a posted receive before it that
// the program never completed (or kept for a later message by its tag) is the one left out, not
// the blocking receive, which would otherwise wait in the replay for a send that comes later.
TEST(ReplayPlan, ABlockingReceiveKeepsTheSendsBeforeIt) {
  Builder b(2);
  b.comm(1, -1, "MPI_Send", "mpi[1>0]", 64, 50, 60);
  b.comm(1, -1, "MPI_Allreduce", "", 8, 200, 300);
  b.comm(1, -1, "MPI_Send", "mpi[1>0]", 64, 400, 410);
  b.comm(0, -1, "irecv", "mpi[1>0]", 4096, 10, 12);  // posted first, completed by the second send
  b.comm(0, -1, "MPI_Recv", "mpi[1>0]", 64, 40, 100);
  b.comm(0, -1, "MPI_Allreduce", "", 8, 200, 300);
  const rp::ReplayPlan plan = rp::make_plan(b.p);
  const std::vector<rp::ReplayOp>& ops = plan.ranks[0].iterations.at(0).ops;
  ASSERT_EQ(ops.size(), 2u);  // the receive and the allreduce: the posted one left out
  EXPECT_EQ(ops[0].name, "MPI_Recv");
  EXPECT_EQ(plan.ranks[0].skipped.at("irecv (no send recorded for it)"), 1);
  EXPECT_EQ(plan.ranks[1].skipped.at("MPI_Send (no receive recorded for it)"), 1);  // the second
}

// A receive from MPI_ANY_SOURCE is labelled by its communicator: in a group of two its sender can
// only be the other member (HPC Challenge's 274 posts a rank on 2 ranks); in a larger one it is unknown.
TEST(ReplayPlan, AnySourceReceivesInAGroupOfTwo) {
  Builder b(3);
  b.comm(0, -1, "MPI_Isend", "mpi[0>1]", 64, 10, 20);
  b.comm(1, -1, "MPI_Irecv", "mpi[0,1]", 64, 10, 20);
  b.comm(2, -1, "MPI_Irecv", "", 64, 10, 20);  // any of 3 ranks
  const rp::ReplayPlan plan = rp::make_plan(b.p);
  ASSERT_EQ(plan.ranks[1].iterations.at(0).ops.size(), 1u);
  EXPECT_EQ(plan.ranks[1].iterations[0].ops[0].peer, 0);
  EXPECT_EQ(plan.ranks[0].iterations.at(0).ops.size(), 1u);  // its receive found: the send stays
  EXPECT_EQ(plan.ranks[2].skipped.at("MPI_Irecv (no peer recorded)"), 1);
}

// Ranks that disagree because the profiler dropped events (its buffers full): the refusal says so.
TEST(ReplayPlan, AProfileThatLostEventsSaysSo) {
  Builder b(2);
  for (int r = 0; r < 2; ++r) {
    b.comm(r, -1, "MPI_Allreduce", "", 8, 10, 20);
    if (r == 1) b.comm(r, -1, "MPI_Allreduce", "", 8, 30, 40);
    prof::RankInfo info;
    info.rank = r;
    info.dropped_events = r == 0 ? 912 : 0;
    b.p.ranks.push_back(info);
  }
  rp::ReplayPlan plan = rp::make_plan(b.p);
  try {
    rp::harmonize(plan, rp::map_ranks(2, 2));
    FAIL() << "replayed together";
  } catch (const rp::PlanError& e) {
    EXPECT_NE(std::string(e.what()).find("ran 1 and 2 collectives on 'all ranks'"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("the profile is incomplete: rank 0 lost 912 events"), std::string::npos)
        << e.what();
  }
}

TEST(ReplayPlan, IterationsLimited) {
  Builder b(1);
  for (int s = 0; s < 3; ++s) {
    b.iteration(0, s, s * 100, s * 100 + 90);
    b.comm(0, s, "allreduce", "", 8, s * 100 + 10, s * 100 + 20);
  }
  EXPECT_EQ(rp::make_plan(b.p, 2).ranks[0].iterations.size(), 2u);
  EXPECT_EQ(rp::make_plan(b.p).ranks[0].iterations.size(), 3u);
}

TEST(ReplayPlan, BadProfilesAreOneLineErrors) {
  Builder none(2);
  none.iteration(0, 0, 0, 10);
  none.comm(0, 0, "wait", "", 0, 1, 2);
  try {
    (void)rp::make_plan(none.p);
    FAIL() << "a profile without communication was planned";
  } catch (const rp::PlanError& e) {
    EXPECT_NE(std::string(e.what()).find("no communication"), std::string::npos) << e.what();
  }
  Builder outside(2);
  outside.comm(0, 0, "tp.allreduce", "tp[0,2]", 8, 1, 2);  // rank 2 of 2
  EXPECT_THROW((void)rp::make_plan(outside.p), rp::PlanError);
  Builder not_member(3);
  not_member.comm(0, 0, "tp.allreduce", "tp[1,2]", 8, 1, 2);
  EXPECT_THROW((void)rp::make_plan(not_member.p), rp::PlanError);
}

TEST(ReplayMapping, EqualFewerChosenAndBad) {
  const rp::RankMapping same = rp::map_ranks(4, 4);
  EXPECT_TRUE(same.identity());
  const rp::RankMapping fewer = rp::map_ranks(4, 2);
  EXPECT_FALSE(fewer.identity());
  EXPECT_EQ(fewer.recorded, (std::vector<int>{0, 1}));
  EXPECT_EQ(fewer.replay_rank(1), 1);
  EXPECT_EQ(fewer.replay_rank(3), -1);
  EXPECT_NE(fewer.describe().find("2 of 4 recorded ranks"), std::string::npos) << fewer.describe();
  const rp::RankMapping chosen = rp::map_ranks(4, 2, {0, 2});
  EXPECT_EQ(chosen.replay_rank(2), 1);
  EXPECT_NE(chosen.describe().find("1<-2"), std::string::npos) << chosen.describe();
  EXPECT_THROW(rp::map_ranks(2, 4), rp::PlanError);          // more than recorded
  EXPECT_THROW(rp::map_ranks(4, 2, {0, 4}), rp::PlanError);  // out of range
  EXPECT_THROW(rp::map_ranks(4, 2, {1, 1}), rp::PlanError);  // twice
  EXPECT_THROW(rp::map_ranks(4, 2, {1}), rp::PlanError);     // not one per replay rank
}

TEST(ReplayMapping, GroupsKeepTheirPlayedMembers) {
  const rp::RankMapping m = rp::map_ranks(4, 2, {0, 2});
  EXPECT_EQ(rp::played_members(rp::parse_group_label("dp[0,2]", 4), m), (std::vector<int>{0, 2}));
  EXPECT_EQ(rp::played_members(rp::parse_group_label("tp[0,1]", 4), m), (std::vector<int>{0}));
  EXPECT_EQ(rp::played_members(rp::parse_group_label("", 4), m), (std::vector<int>{0, 2}));
}

TEST(ReplayElements, BytesPerRankKept) {
  // allreduce: S is one rank's array; allgather: S is every member's block.
  EXPECT_EQ(rp::elements_of(Collective::allreduce, 4096, 4).count, 1024u);
  EXPECT_EQ(rp::elements_of(Collective::allgather, 4096, 4).count, 256u);
  EXPECT_EQ(rp::elements_of(Collective::allgather, 4096, 4).type, DataType::f32);
  const rp::Elements odd = rp::elements_of(Collective::allreduce, 6, 2);
  EXPECT_EQ(odd.type, DataType::u8);
  EXPECT_EQ(odd.count, 6u);
}

TEST(ReplayPlan, MembersAgreeOnEachCall) {
  // Uneven bytes of one call (an imported all_to_all): the largest, counted.
  Builder uneven(2);
  uneven.comm(0, -1, "all_to_all", "", 800, 10, 20);
  uneven.comm(1, -1, "all_to_all", "", 1200, 10, 20);
  rp::ReplayPlan plan = rp::make_plan(uneven.p);
  rp::harmonize(plan, rp::map_ranks(2, 2));
  EXPECT_EQ(plan.ranks[0].iterations.at(0).ops.at(0).bytes, 1200);
  EXPECT_EQ(plan.resized, 1);
  // Other calls, or another number of them: not replayable together.
  Builder other(2);
  other.comm(0, -1, "allreduce", "", 8, 10, 20);
  other.comm(1, -1, "broadcast", "", 8, 10, 20);
  rp::ReplayPlan other_plan = rp::make_plan(other.p);
  EXPECT_THROW(rp::harmonize(other_plan, rp::map_ranks(2, 2)), rp::PlanError);
  EXPECT_NO_THROW(rp::harmonize(other_plan, rp::map_ranks(2, 1, {1})));  // rank 1 alone
  Builder fewer(2);
  fewer.comm(0, -1, "allreduce", "", 8, 10, 20);
  fewer.comm(0, -1, "allreduce", "", 8, 30, 40);
  fewer.comm(1, -1, "allreduce", "", 8, 10, 20);
  rp::ReplayPlan fewer_plan = rp::make_plan(fewer.p);
  EXPECT_THROW(rp::harmonize(fewer_plan, rp::map_ranks(2, 2)), rp::PlanError);
}

// The gaps' lateness (a rank that sees its deadline a time slice late) comes off the next gaps, so
// an iteration's gaps sum to the recorded ones.
TEST(ReplayGaps, LatenessComesOffTheNextGaps) {
  rp::GapBudget b;
  EXPECT_EQ(b.next(100), 100);
  b.spent(100, 130);           // 30 late
  EXPECT_EQ(b.next(100), 70);  // 100 recorded, 70 asked
  b.spent(70, 70);
  EXPECT_EQ(b.next(20), 20);
  b.spent(20, 80);           // 60 late
  EXPECT_EQ(b.next(50), 0);  // all of it absorbed, 10 left
  EXPECT_EQ(b.late_ns(), 10);
  EXPECT_EQ(b.next(0), 0);
  EXPECT_EQ(b.next(40), 30);
  b.reset();
  EXPECT_EQ(b.next(40), 40);
}

TEST(ReplayPlan, IterationsStartAsRecorded) {
  // Two ranks whose steps end 9 ms apart (rank 0's longer tail) and begin together: the trainer
  // meets between steps in a collective it does not profile. Rank 1's clock runs 5 ms ahead.
  Builder b(2);
  b.p.ranks = {prof::RankInfo{}, prof::RankInfo{}};
  b.p.ranks[0].rank = 0, b.p.ranks[1].rank = 1;
  b.p.ranks[1].clock_offset_ns = -5'000'000;
  const std::int64_t ms = 1'000'000;
  for (int step = 0; step < 2; ++step) {
    const std::int64_t t0 = step * 100 * ms;
    b.iteration(0, step, t0, t0 + 90 * ms);
    b.comm(0, step, "allgather", "dp[0,1]", 64, t0 + 10 * ms, t0 + 12 * ms);
    b.iteration(1, step, t0 + 5 * ms + (step == 1 ? 2 * ms : 0), t0 + 5 * ms + 81 * ms);
    b.comm(1, step, "allgather", "dp[0,1]", 64, t0 + 15 * ms, t0 + 17 * ms);
  }
  const rp::ReplayPlan plan = rp::make_plan(b.p);
  EXPECT_EQ(plan.ranks[1].iterations[1].start_ns, 102 * ms);  // on rank 0's clock
  const rp::RankMapping both = rp::map_ranks(2, 2);
  EXPECT_EQ(rp::iteration_leads(plan, both, 0), (std::vector<std::int64_t>{0, 0}));
  EXPECT_EQ(rp::iteration_leads(plan, both, 1), (std::vector<std::int64_t>{0, 2 * ms}));
  // Alone, a rank leads nobody.
  EXPECT_EQ(rp::iteration_leads(plan, rp::map_ranks(2, 1, {1}), 1), (std::vector<std::int64_t>{0, 0}));

  // Ranks that recorded other iterations (one without communication in step 1) start theirs
  // as they come: no leads.
  Builder other(2);
  other.iteration(0, 0, 0, 90 * ms);
  other.comm(0, 0, "allgather", "", 64, 10 * ms, 12 * ms);
  other.comm(0, 1, "send", "pp[0>1]", 64, 110 * ms, 112 * ms);
  other.iteration(1, 0, 0, 90 * ms);
  other.comm(1, 0, "allgather", "", 64, 10 * ms, 12 * ms);
  const rp::ReplayPlan uneven = rp::make_plan(other.p);
  EXPECT_TRUE(rp::iteration_leads(uneven, both, 0).empty());
  EXPECT_TRUE(rp::iteration_leads(uneven, both, 1).empty());
}

// Calls outside every iteration (-1: before the first step, between steps, after the last) stay
// in their recorded place, each run its own, and the steps still start together.
TEST(ReplayPlan, CallsOutsideIterationsKeepTheirPlace) {
  Builder b(2);
  for (int r = 0; r < 2; ++r) {
    b.comm(r, -1, "broadcast", "", 64, 10, 20);  // before the first step
    b.iteration(r, 0, 100, 200);
    b.comm(r, 0, "allreduce", "", 8, 120, 130);
    b.comm(r, -1, "allgather", "", 32, 250, 260);  // between the steps: validation
    b.comm(r, -1, "allreduce", "", 4, 270, 280);
    b.iteration(r, 1, 300, 400);
    b.comm(r, 1, "allreduce", "", 8, 320, 330);
    b.comm(r, -1, "reduce", "", 16, 500, 510);  // after the last
  }
  const rp::ReplayPlan plan = rp::make_plan(b.p);
  std::vector<std::pair<std::int32_t, std::vector<std::string>>> order;
  for (const rp::ReplayIteration& it : plan.ranks[1].iterations) {
    order.emplace_back(it.number, std::vector<std::string>{});
    for (const rp::ReplayOp& op : it.ops) order.back().second.push_back(op.name);
  }
  using Runs = std::vector<std::pair<std::int32_t, std::vector<std::string>>>;
  EXPECT_EQ(order, (Runs{{-1, {"broadcast"}},
                         {0, {"allreduce"}},
                         {-1, {"allgather", "allreduce"}},
                         {1, {"allreduce"}},
                         {-1, {"reduce"}}}));
  EXPECT_EQ(plan.ranks[1].iterations[2].ops[0].gap_before_ns, 50);  // from the step's last call
  EXPECT_EQ(rp::iteration_leads(plan, rp::map_ranks(2, 2), 1), (std::vector<std::int64_t>{0, 0, 0, 0, 0}));
  // --iterations 1: the runs after the first step's are left out with the steps.
  const rp::ReplayPlan first = rp::make_plan(b.p, 1);
  ASSERT_EQ(first.ranks[0].iterations.size(), 2u);
  EXPECT_EQ(first.ranks[0].iterations[1].number, 0);
}

// An MPI program's nonblocking calls are posted where recorded and completed by the recorded
// completion that can have completed them: the first after them that ended after their other
// side had begun. Rank 0: Ibcast, Send, Wait; rank 1: Recv, Ibcast, Wait (a valid program that
// a blocking broadcast would deadlock).
TEST(ReplayPlan, NonblockingCallsCompleteWhereRecorded) {
  Builder b(2);
  b.comm(0, 0, "ibroadcast", "", 1 << 20, 100, 110);
  b.comm(0, 0, "send", "mpi[0>1]", 64, 200, 210);
  b.comm(0, 0, "wait", "", 0, 300, 900);
  b.comm(1, 0, "recv", "mpi[0>1]", 64, 100, 250);
  b.comm(1, 0, "ibroadcast", "", 1 << 20, 260, 270);
  b.comm(1, 0, "wait", "", 0, 280, 900);
  const rp::ReplayPlan plan = rp::make_plan(b.p);
  for (int r = 0; r < 2; ++r) {
    const std::vector<rp::ReplayOp>& ops = plan.ranks[static_cast<std::size_t>(r)].iterations.at(0).ops;
    ASSERT_EQ(ops.size(), 3u) << "rank " << r;
    const rp::ReplayOp& bcast = ops[r == 0 ? 0 : 1];
    EXPECT_TRUE(bcast.posted);
    EXPECT_EQ(ops[2].completes, std::vector<std::int64_t>{bcast.request}) << "rank " << r;
    EXPECT_FALSE(ops[r == 0 ? 1 : 0].posted) << "rank " << r;  // MPI_Send, MPI_Recv: blocking
  }
}

// A receive posted in one iteration and completed in the next: the first iteration's completion
// (of the send, whose receive was posted) ended before the message's send began, so it cannot
// have completed the receive; the next iteration's did.
TEST(ReplayPlan, AReceivePostedAcrossIterationsCompletesInTheNext) {
  Builder b(2);
  b.iteration(0, 0, 0, 1000);
  b.comm(0, 0, "irecv", "mpi[1>0]", 64, 100, 101);  // A, sent in step 1
  b.comm(0, 0, "isend", "mpi[0>1]", 64, 110, 111);  // B
  b.comm(0, 0, "wait", "", 0, 120, 200);            // MPI_Waitall(B)
  b.comm(0, 0, "MPI_Barrier", "", 0, 300, 400, 0);
  b.iteration(0, 1, 1000, 2000);
  b.comm(0, 1, "wait", "", 0, 1100, 1300);  // MPI_Wait(A)
  b.iteration(1, 0, 0, 1000);
  b.comm(1, 0, "irecv", "mpi[0>1]", 64, 105, 106);  // B
  b.comm(1, 0, "wait", "", 0, 130, 190);
  b.comm(1, 0, "MPI_Barrier", "", 0, 300, 400, 0);
  b.iteration(1, 1, 1000, 2000);
  b.comm(1, 1, "isend", "mpi[1>0]", 64, 1150, 1151);  // A
  b.comm(1, 1, "wait", "", 0, 1160, 1200);
  const rp::ReplayPlan plan = rp::make_plan(b.p);
  const rp::RankPlan& r0 = plan.ranks[0];
  const std::int64_t a = r0.iterations.at(0).ops.at(0).request, sent = r0.iterations[0].ops.at(1).request;
  EXPECT_EQ(r0.iterations[0].ops.at(2).completes, std::vector<std::int64_t>{sent});
  EXPECT_EQ(r0.iterations.at(1).ops.at(0).completes, std::vector<std::int64_t>{a});
  EXPECT_TRUE(r0.iterations[0].completes_at_end.empty());
  // A rank that recorded no completions (the trainer) completes its sends at the iteration's end.
  Builder trainer(2);
  trainer.comm(0, 0, "pp.send", "pp[0>1]", 64, 10, 20, 0);
  trainer.comm(1, 0, "pp.recv", "pp[0>1]", 64, 10, 30, 0);
  const rp::ReplayPlan posted = rp::make_plan(trainer.p);
  EXPECT_TRUE(posted.ranks[0].iterations.at(0).ops.at(0).posted);
  EXPECT_EQ(posted.ranks[0].iterations[0].completes_at_end, std::vector<std::int64_t>{0});
  EXPECT_FALSE(posted.ranks[1].iterations.at(0).ops.at(0).posted);
}

// Two calls of the same name, communicator label and number that both moved bytes (two
// communicators of the same members) are two calls; a 0-byte repeat is a completion.
TEST(ReplayPlan, TwoCallsWithOneLabelAndNumberAreTwo) {
  Builder b(2);
  for (int r = 0; r < 2; ++r) {
    b.comm(r, 0, "MPI_Allreduce", "mpi[0,1]", 64, 10, 20, 0);
    b.comm(r, 0, "MPI_Allreduce", "mpi[0,1]", 64, 30, 40, 0);
  }
  const rp::ReplayPlan plan = rp::make_plan(b.p);
  EXPECT_EQ(plan.ranks[0].iterations.at(0).ops.size(), 2u);
  EXPECT_EQ(plan.ranks[1].iterations.at(0).ops.size(), 2u);
}
