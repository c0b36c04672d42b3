// Stage 3 of the Kineto import (src/kineto/match.hpp) on made-up ranks: a rank's collective
// instances, instances matched across ranks (by sequence number, by overlap on a shared clock,
// by order), the partners counted, and each rank's clock from the matched ends.
#include <gtest/gtest.h>

#include "kineto/match.hpp"

namespace commscope::profiler::kineto {
namespace {

Instance instance(std::uint64_t id, const std::string& key, std::int64_t seq, std::int64_t start, std::int64_t end) {
  Instance i;
  i.id = id, i.key = key, i.seq = seq, i.start = start, i.end = end, i.device = true;
  return i;
}

Event communication(std::uint64_t id, std::int64_t t0, std::int64_t t1, TrackKind where) {
  Event e;
  e.kind = EventKind::kCommunication;
  e.id = id, e.start_ns = t0, e.end_ns = t1, e.track_kind = where;
  return e;
}

TEST(KinetoMatch, AnInstanceIsItsKernelsSpanKeyedByGroupAndCollective) {
  RankTrace r;
  r.events = {communication(3, 100, 200, TrackKind::kHostThread), communication(3, 150, 170, TrackKind::kDeviceStream),
              communication(3, 165, 180, TrackKind::kDeviceStream), communication(4, 10, 20, TrackKind::kHostThread)};
  r.comm[0] = CommInfo{"allreduce", "0", 64, 7, {}};
  r.comm[3] = CommInfo{"broadcast", "1", 8, -1, {}};
  const std::vector<Instance> got = instances_of(r);
  ASSERT_EQ(got.size(), 2u);
  EXPECT_EQ(got[0].id, 4u);  // in start order
  EXPECT_EQ(got[0].key, "1/broadcast");
  EXPECT_FALSE(got[0].device);
  EXPECT_EQ(got[1].id, 3u);
  EXPECT_EQ(got[1].key, "0/allreduce");
  EXPECT_EQ(got[1].seq, 7);
  EXPECT_TRUE(got[1].device);  // the kernels' span, not the host call's
  EXPECT_EQ(got[1].start, 150);
  EXPECT_EQ(got[1].end, 180);
}

TEST(KinetoMatch, BySequenceNumberWhenEveryInstanceHasOne) {
  const std::vector<std::vector<Instance>> inst = {
      {instance(1, "0/allreduce", 0, 0, 10), instance(2, "0/allreduce", 1, 20, 30)},
      {instance(5, "0/allreduce", 1, 22, 33), instance(6, "0/allreduce", 2, 40, 50)}};
  const Matching m = match_collectives(inst, false);
  EXPECT_EQ(m.method, "by process group and sequence number");
  EXPECT_EQ(m.seq_of[0].at(2), m.seq_of[1].at(5));  // seq 1 on both ranks
  EXPECT_NE(m.seq_of[1].at(6), m.seq_of[0].at(1));
  ASSERT_EQ(m.ends[1].size(), 1u);
  EXPECT_EQ(m.ends[1][0], std::make_pair(std::int64_t{30}, std::int64_t{33}));
  EXPECT_EQ(matched_counts(m.seq_of), (std::vector<std::int64_t>{1, 1}));
}

TEST(KinetoMatch, ByOverlapOnASharedClockElseByOrder) {
  const std::vector<std::vector<Instance>> inst = {
      {instance(1, "0/allreduce", -1, 0, 10), instance(2, "0/allreduce", -1, 20, 30)},
      {instance(7, "0/allreduce", -1, 25, 35), instance(8, "0/broadcast", -1, 0, 5)}};
  const Matching shared = match_collectives(inst, true);
  EXPECT_EQ(shared.method, "by collective and process group, overlapping device intervals on the shared clock");
  EXPECT_EQ(shared.seq_of[1].at(7), shared.seq_of[0].at(2));  // overlaps the second, not the first
  EXPECT_FALSE(shared.seq_of[1].contains(8));                 // no broadcast on rank 0
  EXPECT_EQ(matched_counts(shared.seq_of), (std::vector<std::int64_t>{1, 1}));

  const Matching ordered = match_collectives(inst, false);
  EXPECT_EQ(ordered.method, "by collective and process group, in order");
  EXPECT_EQ(ordered.seq_of[1].at(7), ordered.seq_of[0].at(1));  // the first with the first
  ASSERT_EQ(ordered.ends[1].size(), 1u);
  EXPECT_EQ(ordered.ends[1][0], std::make_pair(std::int64_t{10}, std::int64_t{35}));
}

TEST(KinetoMatch, AlignedClockIsTheMedianOfEndDifferences) {
  RankTrace d;
  d.epoch_ns = 1000;
  // rank 0's epoch 0: differences (end_0 - 0) - (end_d - 1000) = 1000 + {10, -5, 30}
  align_clock(d, 0, {{110, 100}, {195, 200}, {330, 300}});
  EXPECT_EQ(d.offset_ns, 1010);
  EXPECT_EQ(d.error_ns, 15);  // deviations 0, 15, 20
  align_clock(d, 0, {});
  EXPECT_EQ(d.offset_ns, 0);
  EXPECT_EQ(d.error_ns, kUnknownClockError);
}

TEST(KinetoMatch, ClocksSharedOrAlignedWithAWarningForARankAlone) {
  std::vector<RankTrace> ranks(3);
  ranks[0].min_ts = 500, ranks[1].min_ts = 300, ranks[2].min_ts = 900;
  Matching m;
  m.ends = {{}, {{600, 400}}, {}};
  std::vector<std::string> warnings;
  EXPECT_EQ(set_clocks(ranks, true, m, warnings), "shared (the traces' wall-clock times)");
  for (const RankTrace& r : ranks) {
    EXPECT_EQ(r.epoch_ns, 300);  // the earliest time of any rank
    EXPECT_EQ(r.offset_ns, 0);
  }
  EXPECT_TRUE(warnings.empty());

  ranks[2].report.path = "r2.json";
  const std::string how = set_clocks(ranks, false, m, warnings);
  EXPECT_EQ(how.rfind("aligned from 1 matched collective ends", 0), 0u) << how;
  EXPECT_EQ(ranks[0].epoch_ns, 500);
  EXPECT_EQ(ranks[1].epoch_ns, 300);
  EXPECT_EQ(ranks[1].offset_ns, (600 - 500) - (400 - 300));
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_NE(warnings[0].find("rank 2 (r2.json) shares no collective with rank 0"), std::string::npos);
  EXPECT_EQ(ranks[2].error_ns, kUnknownClockError);
}

}  // namespace
}  // namespace commscope::profiler::kineto
