// The profile's vocabulary (vocabulary.hpp). Communicator and link labels: what
// communicator_label, intercommunicator_label and link_label write, parse_label reads back;
// labels written before the instance suffix read as before; anything else is refused with its
// reason. Communication names: what classify_call says every name the writers use is, exactly or
// as a longer name's mention, and which names are none.
#include <gtest/gtest.h>

#include <optional>
#include <string>
#include <vector>

#include "commscope/profiler/vocabulary.hpp"

namespace cp = commscope::profiler;
using commscope::Collective;
using cp::CallKind;

namespace {

cp::ParsedLabel parsed(const std::string& label) {
  std::string why;
  const auto p = cp::parse_label(label, &why);
  EXPECT_TRUE(p.has_value()) << label << ": " << why;
  return p.value_or(cp::ParsedLabel{});
}

}  // namespace

TEST(Labels, CommunicatorsWithTheSameMembersDifferByTheirInstance) {
  EXPECT_EQ(cp::communicator_label("mpi", {1, 0}), "mpi[0,1]");
  EXPECT_EQ(cp::communicator_label("mpi", {1, 0}, 0), "mpi[0,1]");
  EXPECT_EQ(cp::communicator_label("mpi", {1, 0}, 1), "mpi[0,1]#1");
  EXPECT_EQ(cp::communicator_label("dp", {0, 2, 4, 6, 8}, 12), "dp[0:8:2]#12");
  const cp::ParsedLabel second = parsed("mpi[0,1]#1");
  EXPECT_EQ(second.kind, "mpi");
  EXPECT_EQ(second.members, (std::vector<int>{0, 1}));
  EXPECT_EQ(second.instance, 1);
  EXPECT_FALSE(second.link);
  EXPECT_FALSE(second.inter);
  EXPECT_EQ(parsed("dp[0:8:2]#12").members, (std::vector<int>{0, 2, 4, 6, 8}));
  EXPECT_EQ(parsed("dp[0:8:2]#12").instance, 12);
}

TEST(Labels, OlderLabelsReadAsBefore) {
  const cp::ParsedLabel tp = parsed("tp[0,1]");
  EXPECT_EQ(tp.kind, "tp");
  EXPECT_EQ(tp.members, (std::vector<int>{0, 1}));
  EXPECT_EQ(tp.instance, 0);
  EXPECT_EQ(parsed("dp[0:62:2]").members.size(), 32u);
  EXPECT_EQ(parsed("pg_0[3,1,2]").members, (std::vector<int>{1, 2, 3}));
  const cp::ParsedLabel link = parsed("pp[2>0]");
  EXPECT_TRUE(link.link);
  EXPECT_EQ(link.members, (std::vector<int>{2, 0}));  // from, to
  EXPECT_EQ(parsed(cp::link_label("p2p", 5, 7)).members, (std::vector<int>{5, 7}));
}

TEST(Labels, IntercommunicatorsNameBothGroupsAlikeOnEitherSide) {
  EXPECT_EQ(cp::intercommunicator_label("mpi", {3, 2}, {1, 0}), "mpi[0,1|2,3]");
  EXPECT_EQ(cp::intercommunicator_label("mpi", {0, 1}, {2, 3}), "mpi[0,1|2,3]");
  EXPECT_EQ(cp::intercommunicator_label("mpi", {0, 2, 4, 6, 8}, {1}, 2), "mpi[0:8:2|1]#2");
  const cp::ParsedLabel inter = parsed("mpi[0:8:2|1]#2");
  EXPECT_TRUE(inter.inter);
  EXPECT_EQ(inter.members, (std::vector<int>{0, 1, 2, 4, 6, 8}));
  EXPECT_EQ(inter.instance, 2);
}

TEST(Labels, AnythingElseIsRefusedWithItsReason) {
  const auto refused = [](const std::string& label, const std::string& reason) {
    std::string why;
    EXPECT_FALSE(cp::parse_label(label, &why).has_value()) << label;
    EXPECT_NE(why.find(reason), std::string::npos) << label << ": " << why;
  };
  refused("", "not a label");
  refused("tp0,1", "not a label");
  refused("[0,1]", "not a label");
  refused("t p[0]", "is not a word");
  refused("tp[0,x]", "'x' is not a rank");
  refused("tp[1,1]", "named twice");
  refused("dp[4:0:2]", "empty range");
  refused("dp[0:2000000000:1]", "more than");
  refused("mpi[0,1]#0", "#k");
  refused("mpi[0,1]#", "#k");
  refused("mpi[0,1]x", "#k");
  refused("mpi[0,1|1,2]", "named twice");
  refused("pp[0>1]#1", "a link has no instance");
  refused("pp[0>-1]", "is not a rank");
}

// Every form the writers write, read back as written: a group of at most four ranks, more in
// steps of one stride, more without one, each with and without an instance; an
// intercommunicator; a link.
TEST(Labels, EveryFormTheWritersWriteReadsBack) {
  struct Form {
    std::string label;
    std::vector<int> members;
    bool link, inter;
    int instance;
  };
  const std::vector<Form> forms = {
      {cp::communicator_label("mpi", {1, 0}), {0, 1}, false, false, 0},
      {cp::communicator_label("tp", {3, 2, 1, 0}, 3), {0, 1, 2, 3}, false, false, 3},
      {cp::communicator_label("dp", {0, 4, 8, 12, 16}), {0, 4, 8, 12, 16}, false, false, 0},
      {cp::communicator_label("dp", {0, 1, 2, 3, 5}, 1), {0, 1, 2, 3, 5}, false, false, 1},
      {cp::communicator_label("pg_0", {7}), {7}, false, false, 0},
      {cp::intercommunicator_label("mpi", {2, 3}, {0, 1}, 1), {0, 1, 2, 3}, false, true, 1},
      {cp::link_label("pp", 2, 3), {2, 3}, true, false, 0},
      {cp::link_label("mpi", 3, 0), {3, 0}, true, false, 0},
  };
  const std::vector<std::string> written = {"mpi[0,1]", "tp[0,1,2,3]#3",  "dp[0:16:4]", "dp[0,1,2,3,5]#1",
                                            "pg_0[7]",  "mpi[0,1|2,3]#1", "pp[2>3]",    "mpi[3>0]"};
  for (std::size_t i = 0; i < forms.size(); ++i) {
    const Form& f = forms[i];
    EXPECT_EQ(f.label, written[i]);
    const cp::ParsedLabel p = parsed(f.label);
    EXPECT_EQ(p.members, f.members) << f.label;
    EXPECT_EQ(p.link, f.link) << f.label;
    EXPECT_EQ(p.inter, f.inter) << f.label;
    EXPECT_EQ(p.instance, f.instance) << f.label;
    EXPECT_EQ(p.kind, f.label.substr(0, f.label.find('['))) << f.label;
  }
}

namespace {

struct Named {
  std::string name;
  CallKind kind;
  Collective collective;  // kCollective's
  bool exact, nonblocking;
};

void expect_calls(const std::vector<Named>& names) {
  for (const Named& n : names) {
    const std::optional<cp::CallName> call = cp::classify_call(n.name);
    ASSERT_TRUE(call.has_value()) << n.name;
    EXPECT_EQ(call->kind, n.kind) << n.name;
    if (n.kind == CallKind::kCollective) {
      EXPECT_EQ(call->collective, n.collective) << n.name;
    }
    EXPECT_EQ(call->exact, n.exact) << n.name;
    EXPECT_EQ(call->nonblocking, n.nonblocking) << n.name;
  }
}

constexpr CallKind kColl = CallKind::kCollective;

}  // namespace

// Every collective under the names the trainer, the PMPI library and the imports write: the call
// itself (exact), blocking or posted.
TEST(CallNames, EveryCollectiveByItsNames) {
  expect_calls({
      {"allreduce", kColl, Collective::allreduce, true, false},
      {"tp.allreduce_max", kColl, Collective::allreduce, true, false},
      {"embedding.allreduce", kColl, Collective::allreduce, true, false},
      {"MPI_Allreduce", kColl, Collective::allreduce, true, false},
      {"iallreduce", kColl, Collective::allreduce, true, true},
      {"ncclAllReduce", kColl, Collective::allreduce, true, false},
      {"allreduce_coalesced", kColl, Collective::allreduce, true, false},
      {"allgather", kColl, Collective::allgather, true, false},
      {"allgatherv", kColl, Collective::allgather, true, false},
      {"_allgather_base", kColl, Collective::allgather, true, false},
      {"MPI_Iallgatherv", kColl, Collective::allgather, true, true},
      {"reducescatter", kColl, Collective::reducescatter, true, false},
      {"tp.reducescatter", kColl, Collective::reducescatter, true, false},
      {"MPI_Reduce_scatter_block", kColl, Collective::reducescatter, true, false},
      {"_reduce_scatter_base", kColl, Collective::reducescatter, true, false},
      {"ireducescatter", kColl, Collective::reducescatter, true, true},
      {"alltoall", kColl, Collective::alltoall, true, false},
      {"alltoallv", kColl, Collective::alltoall, true, false},
      {"all_to_all", kColl, Collective::alltoall, true, false},
      {"ialltoallv", kColl, Collective::alltoall, true, true},
      {"reduce", kColl, Collective::reduce, true, false},
      {"MPI_Ireduce", kColl, Collective::reduce, true, true},
      {"broadcast", kColl, Collective::broadcast, true, false},
      {"MPI_Bcast", kColl, Collective::broadcast, true, false},
      {"ibroadcast", kColl, Collective::broadcast, true, true},
      {"gather", kColl, Collective::gather, true, false},
      {"gatherv", kColl, Collective::gather, true, false},
      {"igatherv", kColl, Collective::gather, true, true},
      {"scatter", kColl, Collective::scatter, true, false},
      {"MPI_Scatterv", kColl, Collective::scatter, true, false},
      {"sendrecv", kColl, Collective::sendrecv, true, false},
      {"MPI_Sendrecv", kColl, Collective::sendrecv, true, false},
      {"barrier", CallKind::kBarrier, {}, true, false},
      {"MPI_Barrier", CallKind::kBarrier, {}, true, false},
      {"ibarrier", CallKind::kBarrier, {}, true, true},
  });
}

// Messages and completions: blocking and posted sends and receives, every MPI_Wait* and MPI_Test*.
TEST(CallNames, MessagesAndCompletions) {
  expect_calls({
      {"send", CallKind::kSend, {}, true, false},
      {"pp.send", CallKind::kSend, {}, true, false},
      {"MPI_Ssend", CallKind::kSend, {}, true, false},
      {"bsend", CallKind::kSend, {}, true, false},
      {"isend", CallKind::kSend, {}, true, true},
      {"MPI_Isend", CallKind::kSend, {}, true, true},
      {"MPI_Issend", CallKind::kSend, {}, true, true},
      {"ibsend", CallKind::kSend, {}, true, true},
      {"recv", CallKind::kRecv, {}, true, false},
      {"pp.recv", CallKind::kRecv, {}, true, false},
      {"MPI_Recv", CallKind::kRecv, {}, true, false},
      {"irecv", CallKind::kRecv, {}, true, true},
      {"MPI_Irecv", CallKind::kRecv, {}, true, true},
  });
  for (const std::string name :
       {"wait", "waitall", "waitany", "waitsome", "test", "testall", "testany", "testsome", "MPI_Waitall"})
    expect_calls({{name, CallKind::kWait, {}, true, false}});
}

// A longer name that only mentions a call: a message by its end, else the first collective's word
// it holds (longer words first); the replay leaves these out, Chakra types them.
TEST(CallNames, LongerNamesOnlyMentionACall) {
  expect_calls({
      {"aten::all_reduce.out", kColl, Collective::allreduce, false, false},
      {"ncclKernel_Broadcast_RING_LL", kColl, Collective::broadcast, false, false},
      {"ncclDevKernel_AllGather_RING_LL(ncclDevComm*)", kColl, Collective::allgather, false, false},
      {"reduce_scatter_tensor_coalesced", kColl, Collective::reducescatter, false, false},
      {"allgather_into_tensor_coalesced", kColl, Collective::allgather, false, false},
      {"alltoallw", kColl, Collective::alltoall, false, false},
      {"MPI_Ialltoallw", kColl, Collective::alltoall, false, false},
      {"MPI_Sendrecv_replace", kColl, Collective::sendrecv, false, false},
      {"MPI_Mrecv", CallKind::kRecv, {}, false, false},
      {"MPI_Rsend", CallKind::kSend, {}, false, false},
      {"barrier_all_ranks", CallKind::kBarrier, {}, false, false},
  });
}

// Names that are no call: the scans, probes, persistent starts, compute, an unnamed collective.
TEST(CallNames, NoCall) {
  for (const std::string name : {"", "scan", "exscan", "MPI_Iscan", "probe", "MPI_Iprobe", "MPI_Improbe", "start",
                                 "MPI_Startall", "compute", "collective", "adamw", "matmul_forward"})
    EXPECT_FALSE(cp::classify_call(name).has_value()) << name;
}

// A communication event as the bench would run it: its communicator's size from its label (the
// profile's ranks for the profiled one), its call, the algorithm its writer named (an imported
// NCCL kernel: nccl; a process group: none) and its bytes.
TEST(ProfiledCalls, CommunicatorCallAlgorithmAndBytes) {
  cp::Profile p;
  p.meta.nranks = 4;
  p.strings = {"", "allreduce", "mpi", "tp[0,1]", "ring", "pp.send", "pp[0>2]", "ncclKernel_AllReduce_RING_LL",
               "process group 0 default_pg", "scan"};
  auto event = [](std::uint32_t name, std::uint32_t detail, std::uint32_t comm, std::int64_t bytes,
                  cp::TrackKind track = cp::TrackKind::kHostThread) {
    cp::Event e;
    e.kind = cp::EventKind::kCommunication;
    e.name = name, e.detail = detail, e.communicator = comm, e.bytes = bytes, e.track_kind = track;
    return e;
  };
  const cp::ProfiledCall world = cp::profiled_call(p, event(1, 2, 0, 4096));
  EXPECT_TRUE(world.collective());
  EXPECT_EQ(world.label, "");
  EXPECT_EQ(world.group_size, 4);
  EXPECT_EQ(world.algorithm, "mpi");
  EXPECT_EQ(world.bytes, 4096);
  const cp::ProfiledCall tp = cp::profiled_call(p, event(1, 4, 3, 8));
  EXPECT_EQ(tp.group_size, 2);
  EXPECT_EQ(tp.algorithm, "ring");
  EXPECT_FALSE(tp.link);
  const cp::ProfiledCall send = cp::profiled_call(p, event(5, 2, 6, 64));
  EXPECT_FALSE(send.collective());
  EXPECT_TRUE(send.link);
  EXPECT_EQ(send.group_size, 2);
  EXPECT_EQ(cp::profiled_call(p, event(1, 7, 0, 8, cp::TrackKind::kDeviceStream)).algorithm, "nccl");
  EXPECT_EQ(cp::profiled_call(p, event(1, 7, 0, 8)).algorithm, "ncclKernel_AllReduce_RING_LL");  // on a host track
  EXPECT_EQ(cp::profiled_call(p, event(1, 8, 0, 8)).algorithm, "");
  EXPECT_FALSE(cp::profiled_call(p, event(9, 2, 0, 8)).collective());
  EXPECT_EQ(cp::profiled_call(p, event(1, 2, 0, -1)).bytes, 0);
}
