// The iteration breakdown against hand-computed timelines. Times are in ns; each case states its
// timeline, and every component is checked to the nanosecond together with the identity.

#include <gtest/gtest.h>

#include <random>

#include "commscope/profiler/breakdown.hpp"

namespace cp = commscope::profiler;
using cp::Activity;
using cp::ActivityClass;
using cp::Components;
using cp::Marker;

namespace {

Activity K(std::int64_t s, std::int64_t e, std::uint64_t op) {
  return {s, e, ActivityClass::kCompute, op, 0, -1, cp::kNoArrival};
}
Activity C(std::int64_t s, std::int64_t e, std::uint64_t op, std::int64_t wait_until = cp::kNoArrival) {
  return {s, e, ActivityClass::kCommunication, op, 0, 0, wait_until};
}
// Begin and end markers of operator `op` spanning [s, e].
void op_markers(std::vector<Marker>& m, std::uint64_t op, std::int64_t s, std::int64_t e) {
  m.push_back({s, op});
  m.push_back({e, op});
}
std::vector<Marker> sorted(std::vector<Marker> m) {
  std::stable_sort(m.begin(), m.end(), [](const Marker& a, const Marker& b) { return a.t_ns < b.t_ns; });
  return m;
}

struct Expect {
  std::int64_t window, kernel, intra, inter, comm, wait, overlap;
};

void check(const Components& c, const Expect& x) {
  EXPECT_EQ(c.window_ns, x.window);
  EXPECT_EQ(c.kernel_ns, x.kernel);
  EXPECT_EQ(c.intra_ns, x.intra);
  EXPECT_EQ(c.inter_ns, x.inter);
  EXPECT_EQ(c.comm_ns, x.comm);
  EXPECT_EQ(c.comm_wait_ns, x.wait);
  EXPECT_EQ(c.comm_transfer_ns, x.comm - x.wait);
  EXPECT_EQ(c.overlap_ns, x.overlap);
  EXPECT_TRUE(c.identity_holds());
  EXPECT_EQ(c.kernel_ns + c.intra_ns + c.inter_ns + c.comm_ns, c.window_ns);
}

cp::OperatorTree flat(std::initializer_list<std::uint64_t> ops) {
  cp::OperatorTree t;
  for (auto op : ops) t.add(op, 0);
  return t;
}

std::int64_t gaps_ns(const std::vector<cp::Interval>& gaps) {
  std::int64_t ns = 0;
  for (const auto& g : gaps) ns += g.end_ns - g.start_ns;
  return ns;
}

}  // namespace

// Two kernels of one operator back to back fill the window.
TEST(Breakdown, NoGaps) {
  std::vector<Activity> a{K(0, 40, 1), K(40, 100, 1)};
  std::vector<Marker> m;
  op_markers(m, 1, 0, 100);
  check(cp::breakdown_window(0, 100, a, m, flat({1})), {100, 100, 0, 0, 0, 0, 0});
}

// Operator 1 spans [10, 90] with kernels [20,40) and [50,80): the gaps inside it are intra-op,
// the edges of the window outside it inter-op.
TEST(Breakdown, GapsInsideOneOperator) {
  std::vector<Activity> a{K(20, 40, 1), K(50, 80, 1)};
  std::vector<Marker> m;
  op_markers(m, 1, 10, 90);
  cp::IntraGaps by_op;
  check(cp::breakdown_window(0, 100, a, m, flat({1}), &by_op), {100, 50, 30, 20, 0, 0, 0});
  EXPECT_EQ(gaps_ns(by_op[1]), 30);
}

// Operators 1 [0,30] and 2 [50,100]: the gap between them is inter-op.
TEST(Breakdown, GapsBetweenOperators) {
  std::vector<Activity> a{K(0, 30, 1), K(50, 100, 2)};
  std::vector<Marker> m;
  op_markers(m, 1, 0, 30);
  op_markers(m, 2, 50, 100);
  check(cp::breakdown_window(0, 100, a, sorted(m), flat({1, 2})), {100, 80, 0, 20, 0, 0, 0});
}

// Device timeline (no markers): a gap between kernels of different operators is inter-op, of
// the same operator intra-op.
TEST(Breakdown, DeviceGapsClassifiedByNeighbouringKernels) {
  std::vector<Activity> different{K(0, 30, 1), K(50, 100, 2)};
  check(cp::breakdown_window(0, 100, different, {}, flat({1, 2})), {100, 80, 0, 20, 0, 0, 0});
  std::vector<Activity> same{K(0, 30, 1), K(50, 100, 1)};
  check(cp::breakdown_window(0, 100, same, {}, flat({1})), {100, 80, 20, 0, 0, 0, 0});
  // Kernels launched outside any operator: every gap is inter-op.
  std::vector<Activity> none{K(0, 30, 0), K(50, 100, 0)};
  check(cp::breakdown_window(0, 100, none, {}, flat({})), {100, 80, 0, 20, 0, 0, 0});
}

// Operator 1 [0,100] holds operator 2 [30,70] and operator 3 [75,95] (siblings). Kernels: [5,20)
// in 1, [40,60) in 2, [80,90) in 3. A gap between an operator and one nested in it is intra-op
// (attributed to the deeper one); between siblings inter-op.
TEST(Breakdown, NestedOperators) {
  cp::OperatorTree tree;
  tree.add(1, 0);
  tree.add(2, 1);
  tree.add(3, 1);
  std::vector<Activity> a{K(5, 20, 1), K(40, 60, 2), K(80, 90, 3)};
  std::vector<Marker> m{{0, 1}, {30, 2}, {70, 2}, {75, 3}, {95, 3}, {100, 1}};
  cp::IntraGaps by_op;
  // intra: [0,5) 1, [20,30) 2, [30,40) 2, [60,70) 2, [75,80) 3, [90,95) 3, [95,100) 3; inter: [70,75)
  check(cp::breakdown_window(0, 100, a, m, tree, &by_op), {100, 45, 50, 5, 0, 0, 0});
  EXPECT_EQ(gaps_ns(by_op[1]), 5);
  EXPECT_EQ(gaps_ns(by_op[2]), 30);
  EXPECT_EQ(gaps_ns(by_op[3]), 15);
  ASSERT_EQ(by_op[1].size(), 1u);
  EXPECT_EQ(by_op[1][0].start_ns, 0);
  EXPECT_EQ(by_op[1][0].end_ns, 5);
  EXPECT_TRUE(tree.related(1, 3));
  EXPECT_TRUE(tree.related(3, 1));
  EXPECT_FALSE(tree.related(2, 3));
  EXPECT_FALSE(tree.related(0, 0));
  EXPECT_EQ(tree.depth(3), 2);
}

// Communication [30,60) entirely under a kernel [10,90): communication counts first, the hidden
// compute is the overlap.
TEST(Breakdown, CommunicationOverlapsComputeFully) {
  std::vector<Activity> a{K(10, 90, 1), C(30, 60, 1)};
  check(cp::breakdown_window(0, 100, a, {}, flat({1})), {100, 50, 0, 20, 30, 0, 30});
}

// Kernel [0,50) and communication [30,80): 20 ns overlap; the idle tail is inter-op.
TEST(Breakdown, CommunicationOverlapsComputePartly) {
  std::vector<Activity> a{K(0, 50, 1), C(30, 80, 2)};
  check(cp::breakdown_window(0, 100, a, {}, flat({1, 2})), {100, 30, 0, 20, 50, 0, 20});
}

// Kernel [0,40), then communication [60,100) of the same operator: no overlap, an intra-op gap.
TEST(Breakdown, CommunicationDoesNotOverlap) {
  std::vector<Activity> a{K(0, 40, 1), C(60, 100, 1)};
  check(cp::breakdown_window(0, 100, a, {}, flat({1})), {100, 40, 20, 0, 40, 0, 0});
}

// Stream A: [0,30) and [50,70) of operator 1; stream B: [20,45) of operator 2. The union has a
// gap [45,50) between B's kernel (op 2) and A's (op 1): inter-op; the tail [70,100) too.
TEST(Breakdown, TwoStreams) {
  std::vector<Activity> a{K(0, 30, 1), K(50, 70, 1), K(20, 45, 2)};
  check(cp::breakdown_window(0, 100, a, {}, flat({1, 2})), {100, 65, 0, 35, 0, 0, 0});
}

// Only a collective [0,100) whose slowest peer arrived at 40: wait 40, transfer 60.
TEST(Breakdown, OnlyCommunication) {
  std::vector<Activity> a{C(0, 100, 1, 40)};
  check(cp::breakdown_window(0, 100, a, {}, flat({1})), {100, 0, 0, 0, 100, 40, 0});
}

// Nothing recorded: all inter-op. A zero-length window: all zero.
TEST(Breakdown, EmptyIterations) {
  check(cp::breakdown_window(0, 100, {}, {}, flat({})), {100, 0, 0, 100, 0, 0, 0});
  check(cp::breakdown_window(50, 50, {}, {}, flat({})), {0, 0, 0, 0, 0, 0, 0});
  std::vector<Activity> outside{K(200, 300, 1)};
  check(cp::breakdown_window(0, 100, outside, {}, flat({1})), {100, 0, 0, 100, 0, 0, 0});
}

// Waits longer than the collective cover it all; arrivals before it started are no wait.
TEST(Breakdown, WaitIsClippedToTheCollective) {
  std::vector<Activity> late{C(10, 60, 1, 500)};
  check(cp::breakdown_window(0, 100, late, {}, flat({1})), {100, 0, 0, 50, 50, 50, 0});
  std::vector<Activity> early{C(10, 60, 1, 5)};
  check(cp::breakdown_window(0, 100, early, {}, flat({1})), {100, 0, 0, 50, 50, 0, 0});
}

// Sibling operators back to back at the same instant and an operator starting at the window's
// start: markers at one instant keep their order (end of 1, then begin of 2).
TEST(Breakdown, MarkersAtTheSameInstant) {
  std::vector<Activity> a{K(10, 40, 1), K(60, 90, 2)};
  std::vector<Marker> m{{0, 1}, {50, 1}, {50, 2}, {100, 2}};
  // intra: [0,10) 1, [40,50) 1, [50,60) 2, [90,100) 2
  check(cp::breakdown_window(0, 100, a, m, flat({1, 2}), nullptr), {100, 60, 40, 0, 0, 0, 0});
}

// Events straddling iteration boundaries are split between the windows, through analyze_rank on
// real events. Iterations [0,100) and [100,200); operator 1 [70,140] with a kernel [80,130);
// a collective [190,250) outside any operator.
TEST(Breakdown, EventsStraddlingIterationBoundaries) {
  std::vector<cp::Event> ev;
  auto add = [&](cp::EventKind kind, std::int64_t s, std::int64_t e, std::uint64_t id, std::uint64_t parent,
                 std::int32_t it) {
    cp::Event x;
    x.kind = kind;
    x.start_ns = s;
    x.end_ns = e;
    x.id = id;
    x.parent = parent;
    x.iteration = it;
    ev.push_back(x);
    return &ev.back();
  };
  add(cp::EventKind::kIteration, 0, 100, 0, 0, 0);
  add(cp::EventKind::kIteration, 100, 200, 0, 0, 1);
  add(cp::EventKind::kOperator, 70, 140, 1, 0, 0)->name = 7;
  add(cp::EventKind::kKernel, 80, 130, 0, 1, 0);
  add(cp::EventKind::kCommunication, 190, 250, 2, 0, 1)->seq = 0;
  auto timeline = cp::build_timeline(ev, cp::Timeline::kHost);
  auto r = cp::analyze_rank(4, ev, timeline, 1000);
  ASSERT_EQ(r.rows.size(), 2u);
  const auto& w0 = r.rows[0];
  const auto& w1 = r.rows[1];
  EXPECT_EQ(w0.rank, 4);
  EXPECT_EQ(w0.iteration, 0);
  EXPECT_EQ(w0.start_ns, 1000);  // on rank 0's clock
  // window 0: [0,70) inter, [70,80) intra, [80,100) kernel
  EXPECT_EQ(w0.window_ns, 100);
  EXPECT_EQ(w0.kernel_ns, 20);
  EXPECT_EQ(w0.intra_ns, 10);
  EXPECT_EQ(w0.inter_ns, 70);
  EXPECT_EQ(w0.comm_ns, 0);
  EXPECT_EQ(w0.identity_ok, 1);
  EXPECT_EQ(w0.kernels, 1);
  EXPECT_EQ(w0.communications, 0);
  EXPECT_EQ(w0.operators, 1);
  // window 1: [100,130) kernel, [130,140) intra, [140,190) inter, [190,200) communication
  EXPECT_EQ(w1.iteration, 1);
  EXPECT_EQ(w1.start_ns, 1100);
  EXPECT_EQ(w1.kernel_ns, 30);
  EXPECT_EQ(w1.intra_ns, 10);
  EXPECT_EQ(w1.inter_ns, 50);
  EXPECT_EQ(w1.comm_ns, 10);
  EXPECT_EQ(w1.comm_wait_ns, 0);
  EXPECT_EQ(w1.comm_transfer_ns, 10);
  EXPECT_EQ(w1.identity_ok, 1);
  EXPECT_EQ(w1.kernels, 1);
  EXPECT_EQ(w1.communications, 1);
  EXPECT_EQ(w1.operators, 1);
  // Operator totals: one call of 70 ns, its kernel's 50 ns, intra 10 + 10.
  ASSERT_EQ(r.operators.size(), 1u);
  EXPECT_EQ(r.operators[0].rank, 4);
  EXPECT_EQ(r.operators[0].name, 7u);
  EXPECT_EQ(r.operators[0].calls, 1);
  EXPECT_EQ(r.operators[0].host_ns, 70);
  EXPECT_EQ(r.operators[0].kernel_ns, 50);
  EXPECT_EQ(r.operators[0].comm_ns, 0);
  EXPECT_EQ(r.operators[0].intra_ns, 20);
  EXPECT_EQ(r.operators[0].total_ns, 70);  // its kernel and gaps lie inside its scope
}

// An operator's totals on a device timeline (an imported GPU trace): its kernels run after its
// host scope has ended (vit128's aten::mm: 21.8 ms on the host, 80.5 ms of kernels of which 0.2
// ms inside the scopes, so host - kernel - comm - intra was -58.84 ms). Operator 1's scope
// [0,10) launches kernels on two streams [20,60) and [30,70) (concurrent: 50 ns, not 80) and a
// collective's kernel [65,90) (communication first where they overlap); operator 2 [100,104)
// nested in nothing launches a kernel [104,110) and one [120,130): the gap [110,120) between them
// is its intra-op time. total = |scope or work or gaps|, and total - kernel - comm - intra is the
// scope's time outside its own work: never below 0.
TEST(Breakdown, OperatorTotalsOnTheDeviceTimeline) {
  std::vector<cp::Event> ev;
  auto add = [&](cp::EventKind kind, std::int64_t s, std::int64_t e, std::uint64_t id, std::uint64_t parent) {
    cp::Event x;
    x.kind = kind, x.start_ns = s, x.end_ns = e, x.id = id, x.parent = parent;
    x.track_kind = kind == cp::EventKind::kOperator || kind == cp::EventKind::kIteration ? cp::TrackKind::kHostThread
                                                                                         : cp::TrackKind::kDeviceStream;
    ev.push_back(x);
    return &ev.back();
  };
  add(cp::EventKind::kIteration, 0, 200, 0, 0);
  add(cp::EventKind::kOperator, 0, 10, 1, 0)->name = 7;
  add(cp::EventKind::kOperator, 100, 104, 2, 0)->name = 8;
  add(cp::EventKind::kKernel, 20, 60, 0, 1);
  add(cp::EventKind::kKernel, 30, 70, 0, 1)->track = 1;
  add(cp::EventKind::kCommunication, 65, 90, 5, 1)->seq = 0;
  add(cp::EventKind::kKernel, 104, 110, 0, 2);
  add(cp::EventKind::kKernel, 120, 130, 0, 2);
  const auto r = cp::analyze_rank(0, ev, cp::build_timeline(ev, cp::Timeline::kDevice), 0);
  ASSERT_EQ(r.operators.size(), 2u);
  const auto& one = r.operators[0];
  EXPECT_EQ(one.host_ns, 10);
  EXPECT_EQ(one.comm_ns, 25);
  EXPECT_EQ(one.kernel_ns, 45);  // [20,65): the kernels' union less the collective's
  EXPECT_EQ(one.intra_ns, 0);
  EXPECT_EQ(one.total_ns, 80);  // [0,10) and [20,90)
  EXPECT_EQ(one.total_ns - one.kernel_ns - one.comm_ns - one.intra_ns, 10);
  const auto& two = r.operators[1];
  EXPECT_EQ(two.host_ns, 4);
  EXPECT_EQ(two.kernel_ns, 16);
  EXPECT_EQ(two.intra_ns, 10);
  EXPECT_EQ(two.total_ns, 30);  // [100,130)
  EXPECT_EQ(two.total_ns - two.kernel_ns - two.comm_ns - two.intra_ns, 4);
  for (const auto& o : r.operators) EXPECT_GE(o.total_ns - o.kernel_ns - o.comm_ns - o.intra_ns, 0);
}

TEST(Breakdown, UnionOfIntervals) {
  EXPECT_EQ(cp::union_ns({}), 0);
  EXPECT_EQ(cp::union_ns({{30, 70}, {20, 60}, {80, 90}, {90, 95}, {5, 5}}), 65);
}

// Three ranks, each: a compute kernel, then collective 0. Clock offsets (rank 0's clock = local
// + offset): 0, -50, +200. Arrivals on rank 0's clock: 100, 250, 400 -> rank 2 is the slowest;
// all leave at 500 (rank 0's clock). Waits: 300, 150, 0; transfers 100 each. Collective 1: rank 0
// arrives last (global 700 vs 650, 600), each ends at 800.
TEST(Breakdown, SkewedArrivalsAcrossThreeRanks) {
  const std::int64_t offset[3] = {0, -50, 200};
  const std::int64_t arrive0[3] = {100, 250, 400}, arrive1[3] = {700, 650, 600};
  std::vector<std::vector<cp::Event>> events(3);
  std::vector<cp::RankTimeline> timelines;
  std::vector<std::int64_t> latest;
  for (int r = 0; r < 3; ++r) {
    auto local = [&](std::int64_t global) { return global - offset[r]; };
    auto& ev = events[static_cast<std::size_t>(r)];
    cp::Event it;
    it.kind = cp::EventKind::kIteration;
    it.iteration = 0;
    it.start_ns = local(0);
    it.end_ns = local(800);
    ev.push_back(it);
    cp::Event k;
    k.kind = cp::EventKind::kKernel;
    k.start_ns = local(0);
    k.end_ns = local(arrive0[r]);
    ev.push_back(k);
    for (int s = 0; s < 2; ++s) {
      cp::Event c;
      c.kind = cp::EventKind::kCommunication;
      c.seq = s;
      c.start_ns = local(s == 0 ? arrive0[r] : arrive1[r]);
      c.end_ns = local(s == 0 ? 500 : 800);
      ev.push_back(c);
    }
    cp::Event k2 = k;
    k2.start_ns = local(500);
    k2.end_ns = local(arrive1[r]);
    ev.push_back(k2);
    timelines.push_back(cp::build_timeline(ev, cp::Timeline::kHost));
    cp::merge_latest_arrivals(latest, cp::collective_arrivals(timelines.back(), offset[r]));
  }
  ASSERT_EQ(latest.size(), 2u);
  EXPECT_EQ(latest[0], 400);
  EXPECT_EQ(latest[1], 700);
  const std::int64_t wait0[3] = {300, 150, 0}, wait1[3] = {0, 50, 100};
  for (int r = 0; r < 3; ++r) {
    cp::apply_latest_arrivals(timelines[static_cast<std::size_t>(r)], latest, offset[r]);
    auto out =
        cp::analyze_rank(r, events[static_cast<std::size_t>(r)], timelines[static_cast<std::size_t>(r)], offset[r]);
    ASSERT_EQ(out.rows.size(), 1u);
    const auto& row = out.rows[0];
    SCOPED_TRACE("rank " + std::to_string(r));
    EXPECT_EQ(row.start_ns, 0);
    EXPECT_EQ(row.window_ns, 800);
    EXPECT_EQ(row.comm_wait_ns, wait0[r] + wait1[r]);
    EXPECT_EQ(row.comm_ns, (500 - arrive0[r]) + (800 - arrive1[r]));
    EXPECT_EQ(row.comm_transfer_ns, 100 + 100);
    EXPECT_EQ(row.kernel_ns, arrive0[r] + (arrive1[r] - 500));
    EXPECT_EQ(row.intra_ns + row.inter_ns, 0);
    EXPECT_EQ(row.identity_ok, 1);
  }
}

// A (1,2,2) layout's instances: ranks {0,1} and {2,3} are two tensor-parallel groups (strings
// 1 and 2), stage 0 = ranks 0 and 1, stage 1 = 2 and 3, messages 0 -> 2 and 1 -> 3 (strings 3
// and 4), clocks all alike. Every rank: its group's allreduce 0, then a message (stage 0 sends,
// stage 1 receives), then allreduce 1. Rank 2 (stage 1) arrives 400 ns late at its allreduce 0;
// stage 0 sends at 100. Only rank 2's peers wait for it: rank 3 (its TP peer) 400 ns, and no
// one on stage 0, whose numbers 0 and 1 name other communicators' collectives. Numbered by one
// counter per process (every communicator as string 0), ranks 0 and 1 would wait 400 ns at
// rank 2's allreduce and rank 2 would wait at their message.
TEST(Breakdown, InstancesMatchOnlyWithinTheirCommunicator) {
  const std::uint32_t tp_group[4] = {1, 1, 2, 2}, link[4] = {3, 4, 3, 4};
  const std::int64_t allreduce0_at[4] = {0, 0, 400, 0};
  std::vector<std::vector<cp::Event>> events(4);
  for (int r = 0; r < 4; ++r) {
    auto& ev = events[static_cast<std::size_t>(r)];
    auto add = [&](cp::EventKind kind, std::int64_t s, std::int64_t e, std::uint32_t comm, std::int64_t seq) {
      cp::Event x;
      x.kind = kind, x.start_ns = s, x.end_ns = e, x.communicator = comm, x.seq = seq, x.iteration = 0;
      ev.push_back(x);
    };
    add(cp::EventKind::kIteration, 0, 2000, 0, -1);
    add(cp::EventKind::kCommunication, allreduce0_at[r], 500, tp_group[r], 0);
    const bool sender = r < 2;
    add(cp::EventKind::kCommunication, sender ? 600 : 500, sender ? 610 : 900, link[r], 0);  // send / recv
    add(cp::EventKind::kCommunication, 1000, 1100, tp_group[r], 1);
  }
  const std::vector<std::int64_t> offsets(4, 0);
  const auto out = cp::analyze_ranks(events, offsets, cp::Timeline::kHost);
  ASSERT_EQ(out.size(), 4u);
  // rank: allreduce 0's wait + the message's wait (a receiver waits for its sender's post at 600,
  // a sender's post before its receiver's 500 is none) + allreduce 1's (none).
  const std::int64_t wait[4] = {0, 0, 0 + 100, 400 + 100};
  for (int r = 0; r < 4; ++r) {
    SCOPED_TRACE("rank " + std::to_string(r));
    ASSERT_EQ(out[static_cast<std::size_t>(r)].rows.size(), 1u);
    const auto& row = out[static_cast<std::size_t>(r)].rows[0];
    EXPECT_EQ(row.comm_wait_ns, wait[r]);
    EXPECT_EQ(row.identity_ok, 1);
  }
}

// A rank that skipped a collective instance (seq) does not stop the others from matching.
TEST(Breakdown, ArrivalsWithMissingInstances) {
  std::vector<std::int64_t> latest{cp::kNoArrival, 10};
  cp::merge_latest_arrivals(latest, std::vector<std::int64_t>{5, cp::kNoArrival, 30});
  ASSERT_EQ(latest.size(), 3u);
  EXPECT_EQ(latest[0], 5);
  EXPECT_EQ(latest[1], 10);
  EXPECT_EQ(latest[2], 30);
}

// The device timeline: a host communication scope that launched an NCCL kernel is not counted
// twice (the kernel is the communication), one that launched nothing (host-staged) is.
TEST(Breakdown, DeviceTimelineUsesDeviceCommunication) {
  std::vector<cp::Event> ev(5);
  ev[0].kind = cp::EventKind::kIteration;
  ev[0].start_ns = 0, ev[0].end_ns = 100;
  ev[1].kind = cp::EventKind::kCommunication;  // host scope of an NCCL call: launch only
  ev[1].id = 9, ev[1].seq = 0, ev[1].start_ns = 0, ev[1].end_ns = 5;
  ev[2] = ev[1];  // its NCCL kernel on the device
  ev[2].track_kind = cp::TrackKind::kDeviceStream, ev[2].start_ns = 20, ev[2].end_ns = 50;
  ev[3].kind = cp::EventKind::kCommunication;  // host-staged MPI: no device kernel
  ev[3].id = 10, ev[3].seq = 1, ev[3].start_ns = 60, ev[3].end_ns = 70;
  ev[4].kind = cp::EventKind::kKernel;  // a host compute section: not on the device timeline
  ev[4].start_ns = 80, ev[4].end_ns = 90;
  auto t = cp::build_timeline(ev, cp::Timeline::kDevice);
  auto r = cp::analyze_rank(0, ev, t, 0);
  ASSERT_EQ(r.rows.size(), 1u);
  EXPECT_EQ(r.rows[0].comm_ns, 40);
  EXPECT_EQ(r.rows[0].kernel_ns, 0);
  EXPECT_EQ(r.rows[0].inter_ns, 60);
  auto host = cp::analyze_rank(0, ev, cp::build_timeline(ev, cp::Timeline::kHost), 0);
  EXPECT_EQ(host.rows[0].comm_ns, 15);
  EXPECT_EQ(host.rows[0].kernel_ns, 10);
}

namespace {

// The definition, one ns at a time: an independent check of the sweep on random timelines.
Components reference(std::int64_t ws, std::int64_t we, const std::vector<Activity>& acts,
                     const std::vector<Marker>& marks, const cp::OperatorTree& tree) {
  Components c;
  c.window_ns = we - ws;
  auto busy = [&](std::int64_t t) {
    for (const auto& a : acts)
      if (a.start_ns <= t && t < a.end_ns) return true;
    return false;
  };
  auto marker_at = [&](std::int64_t t) {
    for (const auto& m : marks)
      if (m.t_ns == t) return true;
    return false;
  };
  auto left = [&](std::int64_t x) -> std::uint64_t {
    std::uint64_t op = 0;
    bool found = false;
    for (const auto& m : marks)
      if (m.t_ns == x) op = m.op, found = true;  // the last marker
    if (found) return op;
    std::int64_t best_start = 0;
    for (const auto& a : acts)
      if (std::min(a.end_ns, we) == x && std::max(a.start_ns, ws) < x && (!found || a.start_ns >= best_start))
        op = a.op, best_start = a.start_ns, found = true;
    return op;
  };
  auto right = [&](std::int64_t y) -> std::uint64_t {
    for (const auto& m : marks)
      if (m.t_ns == y) return m.op;  // the first marker
    for (const auto& a : acts)
      if (std::max(a.start_ns, ws) == y && std::min(a.end_ns, we) > y) return a.op;
    return 0;
  };
  for (std::int64_t t = ws; t < we; ++t) {
    bool comm = false, compute = false, waiting = false;
    for (const auto& a : acts) {
      if (!(a.start_ns <= t && t < a.end_ns)) continue;
      if (a.cls == ActivityClass::kCommunication) {
        comm = true;
        if (a.wait_until_ns != cp::kNoArrival && t < a.wait_until_ns) waiting = true;
      } else {
        compute = true;
      }
    }
    if (comm) {
      ++c.comm_ns;
      if (waiting) ++c.comm_wait_ns;
      if (compute) ++c.overlap_ns;
    } else if (compute) {
      ++c.kernel_ns;
    } else {
      std::int64_t x = t, y = t + 1;
      while (x > ws && !busy(x - 1) && !marker_at(x)) --x;
      while (y < we && !busy(y) && !marker_at(y)) ++y;
      if (tree.related(left(x), right(y)))
        ++c.intra_ns;
      else
        ++c.inter_ns;
    }
  }
  c.comm_transfer_ns = c.comm_ns - c.comm_wait_ns;
  return c;
}

}  // namespace

TEST(Breakdown, RandomTimelinesMatchTheDefinition) {
  std::mt19937_64 rng(20261122);
  for (int round = 0; round < 300; ++round) {
    cp::OperatorTree tree;
    const int nops = 1 + static_cast<int>(rng() % 5);
    for (int op = 1; op <= nops; ++op)
      tree.add(static_cast<std::uint64_t>(op), rng() % 2 ? 0 : rng() % static_cast<std::uint64_t>(op));
    std::vector<Activity> acts;
    const int n = static_cast<int>(rng() % 7);
    for (int i = 0; i < n; ++i) {
      const auto s = static_cast<std::int64_t>(rng() % 140) - 20;
      const auto len = static_cast<std::int64_t>(rng() % 40);
      const auto op = rng() % static_cast<std::uint64_t>(nops + 1);
      if (rng() % 3 == 0)
        acts.push_back(C(s, s + len, op, rng() % 2 ? s + static_cast<std::int64_t>(rng() % 50) : cp::kNoArrival));
      else
        acts.push_back(K(s, s + len, op));
    }
    std::vector<Marker> marks;
    const int nm = static_cast<int>(rng() % 5);
    for (int i = 0; i < nm; ++i)
      marks.push_back({static_cast<std::int64_t>(rng() % 110), 1 + rng() % static_cast<std::uint64_t>(nops)});
    marks = sorted(marks);
    const Components got = cp::breakdown_window(0, 100, acts, marks, tree);
    const Components want = reference(0, 100, acts, marks, tree);
    SCOPED_TRACE("round " + std::to_string(round));
    ASSERT_TRUE(got.identity_holds());
    ASSERT_EQ(got.kernel_ns, want.kernel_ns);
    ASSERT_EQ(got.intra_ns, want.intra_ns);
    ASSERT_EQ(got.inter_ns, want.inter_ns);
    ASSERT_EQ(got.comm_ns, want.comm_ns);
    ASSERT_EQ(got.comm_wait_ns, want.comm_wait_ns);
    ASSERT_EQ(got.overlap_ns, want.overlap_ns);

    // Each call's share, one ns at a time: the earliest-started communication in progress (the
    // first listed among equal starts) takes the ns; wait and overlap as the window's.
    std::vector<cp::CommShare> want_shares(acts.size());
    for (std::int64_t t = 0; t < 100; ++t) {
      std::size_t owner = acts.size();
      bool waiting = false, compute = false;
      for (std::size_t i = 0; i < acts.size(); ++i) {
        const Activity& a = acts[i];
        if (!(a.start_ns <= t && t < a.end_ns)) continue;
        if (a.cls != ActivityClass::kCommunication) {
          compute = true;
          continue;
        }
        if (a.wait_until_ns != cp::kNoArrival && t < a.wait_until_ns) waiting = true;
        if (owner == acts.size() ||
            std::max<std::int64_t>(a.start_ns, 0) < std::max<std::int64_t>(acts[owner].start_ns, 0))
          owner = i;
      }
      if (owner == acts.size()) continue;
      ++want_shares[owner].comm_ns;
      want_shares[owner].wait_ns += waiting ? 1 : 0;
      want_shares[owner].overlap_ns += compute ? 1 : 0;
    }
    std::int64_t comm = 0, wait = 0, overlap = 0;
    for (const cp::CommShare& share : cp::communication_shares(0, 100, acts)) {
      ASSERT_LT(share.activity, acts.size());
      const cp::CommShare& w = want_shares[share.activity];
      ASSERT_EQ(share.comm_ns, w.comm_ns) << "activity " << share.activity;
      ASSERT_EQ(share.wait_ns, w.wait_ns) << "activity " << share.activity;
      ASSERT_EQ(share.overlap_ns, w.overlap_ns) << "activity " << share.activity;
      comm += share.comm_ns, wait += share.wait_ns, overlap += share.overlap_ns;
    }
    ASSERT_EQ(comm, got.comm_ns);
    ASSERT_EQ(wait, got.comm_wait_ns);
    ASSERT_EQ(overlap, got.overlap_ns);
  }
}

// Two collectives in flight at once and compute under the second: the first takes the union's
// pieces while it runs, the second the rest; the sums are the window's.
TEST(Breakdown, CommunicationSharesOfConcurrentCalls) {
  const std::vector<Activity> acts{C(10, 40, 1, 25), C(30, 60, 2), K(50, 80, 3), C(90, 120, 4)};
  const std::vector<cp::CommShare> shares = cp::communication_shares(0, 100, acts);
  ASSERT_EQ(shares.size(), 3u);
  EXPECT_EQ(shares[0].activity, 0u);
  EXPECT_EQ(shares[0].comm_ns, 30);  // [10, 40)
  EXPECT_EQ(shares[0].wait_ns, 15);  // [10, 25)
  EXPECT_EQ(shares[0].overlap_ns, 0);
  EXPECT_EQ(shares[1].activity, 1u);
  EXPECT_EQ(shares[1].comm_ns, 20);  // [40, 60): [30, 40) was the first's
  EXPECT_EQ(shares[1].wait_ns, 0);
  EXPECT_EQ(shares[1].overlap_ns, 10);  // [50, 60)
  EXPECT_EQ(shares[2].activity, 3u);
  EXPECT_EQ(shares[2].comm_ns, 10);  // [90, 100): clipped to the window
  const Components c = cp::breakdown_window(0, 100, acts, {}, flat({1, 2, 3, 4}));
  EXPECT_EQ(c.comm_ns, 60);
  EXPECT_EQ(c.comm_wait_ns, 15);
  EXPECT_EQ(c.overlap_ns, 10);
}
