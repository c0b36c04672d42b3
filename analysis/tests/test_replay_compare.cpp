// commscope-report replay's counts on made-up profiles: calls and bytes per communicator from each
// file's own events, whatever the replay planned (replay_compare.cpp).
#include <gtest/gtest.h>

#include <string>

#include "commscope/formats/profile.hpp"
#include "replay_compare.hpp"

namespace ca = commscope::analysis;
namespace prof = commscope::profiler;

namespace {

// Two ranks, one step; communication events added by name and label.
struct TwoRanks {
  prof::Profile p;
  prof::StringTable strings;
  std::uint64_t next_id = 1;
  TwoRanks() {
    p.meta.nranks = 2;
    p.events.resize(2);
    for (int r = 0; r < 2; ++r) {
      prof::BreakdownRow row;
      row.rank = r, row.iteration = 0, row.window_ns = 1000, row.comm_ns = 100;
      p.breakdown.push_back(row);
    }
  }
  void comm(int rank, const std::string& name, const std::string& label, std::int64_t bytes, std::int64_t seq,
            std::int32_t iteration = 0) {
    prof::Event e;
    e.kind = prof::EventKind::kCommunication;
    e.name = strings.intern(name), e.communicator = label.empty() ? 0 : strings.intern(label);
    e.bytes = bytes, e.seq = seq, e.iteration = iteration, e.id = next_id++;
    e.start_ns = 10 * static_cast<std::int64_t>(p.events[static_cast<std::size_t>(rank)].size());
    e.end_ns = e.start_ns + 5;
    p.events[static_cast<std::size_t>(rank)].push_back(e);
  }
  prof::Profile done() {
    p.strings = strings.strings();
    return p;
  }
};

const ca::ReplayCollectiveRow* row(const ca::ReplayComparison& c, const std::string& group, const std::string& name) {
  for (const ca::ReplayCollectiveRow& r : c.by_collective)
    if (r.group == group && r.name == name) return &r;
  return nullptr;
}

}  // namespace

TEST(ReplayCompare, CountsEachFilesOwnCallsPerCommunicator) {
  TwoRanks original, replay;
  for (int r = 0; r < 2; ++r) {
    // Two communicators of the same members and label (two duplicates of one, as recorded before
    // the library told them apart), one allreduce each with the same instance number: two calls,
    // of which the replay made one.
    original.comm(r, "MPI_Allreduce", "mpi[0,1]", 64, 0);
    original.comm(r, "MPI_Allreduce", "mpi[0,1]", 64, 0);
    replay.comm(r, "MPI_Allreduce", "mpi[0,1]", 64, 0);
    // A posted send and its completion, recorded with its number and 0 bytes: one call.
    original.comm(r, "pp.send", "pp[0>1]", 100, 0);
    original.comm(r, "pp.send", "pp[0>1]", 0, 0);
    replay.comm(r, "pp.send", "pp[0>1]", 100, 0);
    // Barriers move no bytes: two are two calls.
    original.comm(r, "MPI_Barrier", "", 0, 0);
    original.comm(r, "MPI_Barrier", "", 0, 1);
    replay.comm(r, "MPI_Barrier", "", 0, 0);
    replay.comm(r, "MPI_Barrier", "", 0, 1);
    // A host call and its device kernel (imported: their own ids, the same number): one call.
    original.comm(r, "all_to_all", "pg0[0,1]", 512, 0);
    original.comm(r, "all_to_all", "pg0[0,1]", 512, 0);
    original.p.events[static_cast<std::size_t>(r)].back().track_kind = prof::TrackKind::kDeviceStream;
    replay.comm(r, "all_to_all", "pg0[0,1]", 512, 0);
    // A call replayed on another communicator of the same kind.
    original.comm(r, "MPI_Bcast", "mpi[0]", 8, 0);
    replay.comm(r, "MPI_Bcast", "mpi[1]", 8, 0);
    // Calls outside the steps: one recorded that the replay lost.
    original.comm(r, "MPI_Allgather", "", 32, 2, -1);
  }
  const ca::ReplayComparison c = ca::compare_replay(original.done(), replay.done());
  EXPECT_TRUE(c.outside_iterations);
  const ca::ReplayCollectiveRow* sum = row(c, "mpi[0,1]", "MPI_Allreduce");
  ASSERT_NE(sum, nullptr);
  EXPECT_EQ(sum->recorded_calls, 4);
  EXPECT_EQ(sum->replayed_calls, 2);
  EXPECT_EQ(sum->recorded_bytes, 256);
  const ca::ReplayCollectiveRow* send = row(c, "pp[0>1]", "pp.send");
  ASSERT_NE(send, nullptr);
  EXPECT_EQ(send->recorded_calls, 2);
  EXPECT_EQ(send->replayed_calls, 2);
  EXPECT_EQ(send->recorded_bytes, send->replayed_bytes);
  EXPECT_EQ(row(c, "pg0[0,1]", "all_to_all")->recorded_calls, 2);
  EXPECT_EQ(row(c, "all", "MPI_Barrier")->recorded_calls, 4);
  EXPECT_EQ(row(c, "all", "MPI_Barrier")->replayed_calls, 4);
  EXPECT_EQ(row(c, "mpi[0]", "MPI_Bcast")->replayed_calls, 0);
  EXPECT_EQ(row(c, "mpi[1]", "MPI_Bcast")->recorded_calls, 0);
  const ca::ReplayCollectiveRow* outside = row(c, "all", "MPI_Allgather");
  ASSERT_NE(outside, nullptr);
  EXPECT_EQ(outside->recorded_calls, 2);
  EXPECT_EQ(outside->replayed_calls, 0);
  // The step's own counts: the calls inside it only.
  ASSERT_EQ(c.by_iteration.size(), 1u);
  EXPECT_EQ(c.by_iteration[0].recorded_calls, 14);
  EXPECT_EQ(c.by_iteration[0].replayed_calls, 12);
}

TEST(ReplayCompare, CallsOutsideTheStepsLeftOutWhenStepsAreNot) {
  TwoRanks original, replay;
  for (int r = 0; r < 2; ++r) {
    prof::BreakdownRow later;
    later.rank = r, later.iteration = 1, later.window_ns = 1000;
    original.p.breakdown.push_back(later);
    original.comm(r, "MPI_Allreduce", "", 64, 0);
    original.comm(r, "MPI_Allreduce", "", 64, 1, 1);
    original.comm(r, "MPI_Bcast", "", 8, 2, -1);
    replay.comm(r, "MPI_Allreduce", "", 64, 0);
  }
  // The replay ran step 0 of 2 (--iterations 1): what lies outside the steps is not compared.
  const ca::ReplayComparison c = ca::compare_replay(original.done(), replay.done());
  EXPECT_FALSE(c.outside_iterations);
  ASSERT_EQ(c.by_collective.size(), 1u);
  EXPECT_EQ(c.by_collective[0].recorded_calls, 2);
  EXPECT_EQ(c.by_collective[0].replayed_calls, 2);
}
