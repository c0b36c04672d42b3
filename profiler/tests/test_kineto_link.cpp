// Stage 2 of the Kineto import (src/kineto/link.hpp) on made-up ranks: operators nested by time,
// device activities linked to their operator by correlation id or External id, a collective call
// made one communication event with its NCCL kernel, calls without a kernel, windows.
#include <gtest/gtest.h>

#include "kineto/link.hpp"

namespace commscope::profiler::kineto {
namespace {

// Builds a rank event by event, as stage 1 leaves it.
struct Rank {
  RankTrace r;
  StringTable strings;

  std::size_t add(Event e, std::int64_t external = -1) {
    r.events.push_back(e);
    r.external.push_back(external);
    r.min_ts = std::min(r.min_ts, e.start_ns);
    return r.events.size() - 1;
  }
  std::size_t op(std::int64_t t0, std::int64_t t1, std::uint32_t thread = 0, std::int64_t external = -1) {
    Event e;
    e.kind = EventKind::kOperator;
    e.id = r.next_id++;
    e.start_ns = t0, e.end_ns = t1, e.track = thread;
    return add(e, external);
  }
  std::size_t runtime(std::int64_t t0, std::int64_t t1, std::uint64_t correlation, std::uint32_t thread = 0) {
    Event e;
    e.kind = EventKind::kRuntime;
    e.start_ns = t0, e.end_ns = t1, e.correlation = correlation, e.track = thread;
    return add(e);
  }
  std::size_t device(EventKind kind, std::int64_t t0, std::int64_t t1, std::uint64_t correlation,
                     std::int64_t external = -1) {
    Event e;
    e.kind = kind;
    e.track_kind = TrackKind::kDeviceStream;
    e.device = 0, e.track = 7;
    e.start_ns = t0, e.end_ns = t1, e.correlation = correlation;
    return add(e, external);
  }
  std::size_t step(std::int64_t t0, std::int64_t t1, std::int32_t n) {
    Event e;
    e.kind = EventKind::kIteration;
    e.iteration = n;
    e.start_ns = t0, e.end_ns = t1;
    return add(e);
  }
  const Event* communication_on_host() const {
    for (const Event& e : r.events)
      if (e.kind == EventKind::kCommunication && e.track_kind == TrackKind::kHostThread) return &e;
    return nullptr;
  }
};

TEST(KinetoLink, OperatorsNestAndDeviceActivitiesFindTheirLauncher) {
  Rank k;
  const std::size_t outer = k.op(0, 100);
  const std::size_t inner = k.op(10, 50);
  const std::size_t launch = k.runtime(20, 22, 9);
  const std::size_t kernel = k.device(EventKind::kKernel, 30, 40, 9);
  const std::size_t other = k.op(200, 300, 1, 77);  // another thread, External id 77
  const std::size_t copy = k.device(EventKind::kMemcpy, 210, 220, 0, 77);
  const std::size_t lost = k.device(EventKind::kKernel, 400, 410, 12345);
  link_rank(k.r, k.strings);
  const auto& ev = k.r.events;
  EXPECT_EQ(ev[outer].parent, 0u);
  EXPECT_EQ(ev[inner].parent, ev[outer].id);
  EXPECT_EQ(ev[launch].parent, ev[inner].id);
  EXPECT_EQ(ev[kernel].parent, ev[inner].id);  // by correlation id, through the runtime call
  EXPECT_EQ(ev[other].parent, 0u);
  EXPECT_EQ(ev[copy].parent, ev[other].id);  // by External id
  EXPECT_EQ(ev[lost].parent, 0u);
  EXPECT_EQ(k.r.report.unlinked_device, 1);
  EXPECT_EQ(k.r.report.host_comm_without_kernel, 0);
}

TEST(KinetoLink, ACollectiveCallAndItsKernelShareOneId) {
  Rank k;
  const std::size_t call = k.op(100, 200);
  k.r.comm[call] = CommInfo{"allreduce", "0", 1024, 5, {0, 1, 2, 3}};
  k.runtime(110, 111, 10);
  const std::size_t nccl = k.device(EventKind::kCommunication, 150, 180, 10);
  link_rank(k.r, k.strings);
  const Event* host = k.communication_on_host();
  ASSERT_NE(host, nullptr);
  const Event& kernel = k.r.events[nccl];
  EXPECT_EQ(k.strings.at(host->name), "allreduce");
  EXPECT_EQ(k.strings.at(host->detail), "process group 0");
  EXPECT_EQ(k.strings.at(host->communicator), "pg[0,1,2,3]");  // its members
  EXPECT_EQ(k.strings.at(k.r.events[nccl].communicator), "pg[0,1,2,3]");
  EXPECT_EQ(host->start_ns, 100);
  EXPECT_EQ(host->end_ns, 200);
  EXPECT_EQ(host->parent, k.r.events[call].id);
  EXPECT_EQ(host->bytes, 1024);
  EXPECT_EQ(kernel.id, host->id);
  EXPECT_EQ(k.strings.at(kernel.name), "allreduce");
  EXPECT_EQ(kernel.bytes, 1024);
  EXPECT_EQ(kernel.seq, 5);  // the trace's own, until stage 3 numbers the instances
  EXPECT_EQ(k.r.events.size(), k.r.external.size());
  EXPECT_EQ(k.r.report.host_comm_without_kernel, 0);
}

TEST(KinetoLink, ACallWithoutKernelIsCommunicationOnlyWithoutDeviceActivity) {
  Rank gpu;  // c10d's wait beside device work: no transfer of its own, it stays an operator
  const std::size_t call = gpu.op(0, 10);
  gpu.r.comm[call] = CommInfo{"wait", "", -1, -1, {}};
  gpu.device(EventKind::kKernel, 20, 30, 0);
  link_rank(gpu.r, gpu.strings);
  EXPECT_EQ(gpu.communication_on_host(), nullptr);
  EXPECT_EQ(gpu.r.report.host_comm_without_kernel, 1);

  Rank cpu;  // a CPU job (gloo): the host calls are the communication
  const std::size_t c = cpu.op(0, 10);
  cpu.r.comm[c] = CommInfo{"allreduce", "", 64, -1, {}};
  link_rank(cpu.r, cpu.strings);
  ASSERT_NE(cpu.communication_on_host(), nullptr);
  EXPECT_EQ(cpu.communication_on_host()->bytes, 64);
  EXPECT_EQ(cpu.r.report.host_comm_without_kernel, 1);
}

TEST(KinetoLink, EventsFallInTheStepTheyStartIn) {
  Rank k;
  k.step(0, 100, 4);
  k.step(100, 200, 5);
  const std::size_t a = k.op(50, 60), b = k.op(150, 260), c = k.op(250, 260);
  make_windows(k.r, KinetoWindow::kSteps, k.strings);
  EXPECT_EQ(k.r.events[a].iteration, 4);
  EXPECT_EQ(k.r.events[b].iteration, 5);
  EXPECT_EQ(k.r.events[c].iteration, -1);
  EXPECT_FALSE(k.r.report.steps_fallback);
}

TEST(KinetoLink, TraceWindowSpansTheDeviceActivity) {
  Rank k;
  k.step(0, 100, 4);
  k.op(0, 500);
  k.device(EventKind::kKernel, 20, 30, 0);
  k.device(EventKind::kMemcpy, 300, 350, 0);
  make_windows(k.r, KinetoWindow::kTrace, k.strings);
  int windows = 0;
  for (const Event& e : k.r.events)
    if (e.kind == EventKind::kIteration) {
      ++windows;
      EXPECT_EQ(e.start_ns, 20);
      EXPECT_EQ(e.end_ns, 350);
      EXPECT_EQ(k.strings.at(e.name), "trace");
    }
  EXPECT_EQ(windows, 1);  // the ProfilerStep is replaced
  EXPECT_FALSE(k.r.report.steps_fallback);

  Rank none;  // --window steps without any step: one window over the trace, said so
  none.op(5, 15);
  make_windows(none.r, KinetoWindow::kSteps, none.strings);
  EXPECT_TRUE(none.r.report.steps_fallback);
  EXPECT_EQ(none.r.events.back().kind, EventKind::kIteration);
  EXPECT_EQ(none.r.events.front().iteration, 0);
}

TEST(KinetoLink, WallClockFromTheBaseOrUnixTimes) {
  RankTrace r;
  EXPECT_FALSE(has_wall_clock(r));
  r.min_ts = 5'000'000;  // 5 ms since the profiler started
  EXPECT_FALSE(has_wall_clock(r));
  r.min_ts = 1'712'195'495'502'095'001;  // 2024 in ns
  EXPECT_TRUE(has_wall_clock(r));
  RankTrace based;
  based.has_base = true;
  EXPECT_TRUE(has_wall_clock(based));
}

}  // namespace
}  // namespace commscope::profiler::kineto
