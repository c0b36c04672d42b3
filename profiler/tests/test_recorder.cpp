// The recorder: what the scopes write into the per-thread buffers.

#include <gtest/gtest.h>

#include <set>
#include <thread>

#include "../src/registry.hpp"
#include "commscope/profiler/recorder.hpp"

namespace cp = commscope::profiler;

namespace {

// Recording on, fresh buffers; collects (raw ticks) on destruction of nothing: call take().
class Recording {
 public:
  explicit Recording(std::size_t chunk = 64, std::size_t max = 1 << 20) {
    cp::detail::configure_buffers(chunk, max);
    clock_.start();
    cp::detail::g_comm_seq.store(0);
    cp::detail::g_recording.store(true);
  }
  ~Recording() { cp::detail::g_recording.store(false); }
  std::vector<cp::Event> take(std::int64_t& dropped) {
    cp::detail::g_recording.store(false);
    clock_.stop();
    auto ev = cp::detail::collect_events(cp::ticks(), dropped);
    for (auto& e : ev) e.start_ns = clock_.to_ns(e.start_ns), e.end_ns = clock_.to_ns(e.end_ns);
    return ev;
  }

 private:
  cp::TickConverter clock_;
};

}  // namespace

TEST(Recorder, ScopesNestAndCarryTheirOperator) {
  Recording rec;
  const auto fwd = cp::name_id("fwd"), mm = cp::name_id("matmul"), ar = cp::name_id("allreduce"),
             ring = cp::name_id("ring");
  std::uint64_t outer_id = 0, inner_id = 0;
  {
    cp::IterationScope it(7);
    cp::OperatorScope outer(fwd);
    outer_id = outer.id();
    {
      cp::OperatorScope inner(fwd);
      inner_id = inner.id();
      cp::KernelScope k(mm);
    }
    cp::CommScope c(ar, ring, 4096);
    cp::CommScope c2(ar, ring, 8, 41);
  }
  cp::KernelScope after(mm);  // outside the iteration: recorded with iteration -1
  std::int64_t dropped = -1;
  auto ev = rec.take(dropped);
  EXPECT_EQ(dropped, 0);
  ASSERT_EQ(ev.size(), 7u);
  EXPECT_EQ(ev[0].kind, cp::EventKind::kIteration);
  EXPECT_EQ(ev[0].iteration, 7);
  EXPECT_EQ(ev[1].kind, cp::EventKind::kOperator);
  EXPECT_EQ(ev[1].id, outer_id);
  EXPECT_EQ(ev[1].parent, 0u);
  EXPECT_EQ(ev[2].id, inner_id);
  EXPECT_EQ(ev[2].parent, outer_id);
  EXPECT_NE(inner_id, outer_id);
  EXPECT_EQ(ev[3].kind, cp::EventKind::kKernel);
  EXPECT_EQ(ev[3].name, mm);
  EXPECT_EQ(ev[3].parent, inner_id);
  EXPECT_EQ(ev[3].iteration, 7);
  EXPECT_EQ(ev[4].kind, cp::EventKind::kCommunication);
  EXPECT_EQ(ev[4].parent, outer_id);
  EXPECT_EQ(ev[4].name, ar);
  EXPECT_EQ(ev[4].detail, ring);
  EXPECT_EQ(ev[4].bytes, 4096);
  EXPECT_EQ(ev[4].seq, 0);   // automatic numbering from 0
  EXPECT_EQ(ev[5].seq, 41);  // explicit
  EXPECT_NE(ev[4].id, 0u);
  EXPECT_EQ(ev[6].iteration, -1);
  EXPECT_EQ(ev[6].parent, 0u);
  for (const auto& e : ev) {
    EXPECT_LE(e.start_ns, e.end_ns);
    EXPECT_EQ(e.track_kind, cp::TrackKind::kHostThread);
    EXPECT_EQ(e.device, -1);
  }
  // Nesting in time: the kernel lies inside both operators, the operators inside the iteration.
  EXPECT_LE(ev[1].start_ns, ev[2].start_ns);
  EXPECT_LE(ev[3].end_ns, ev[2].end_ns);
  EXPECT_LE(ev[2].end_ns, ev[1].end_ns);
  EXPECT_LE(ev[1].end_ns, ev[0].end_ns);
}

TEST(Recorder, NothingIsRecordedWhenOff) {
  cp::detail::configure_buffers(64, 1 << 20);
  cp::detail::g_recording.store(false);
  { cp::KernelScope k(cp::name_id("x")); }
  std::int64_t dropped = -1;
  EXPECT_TRUE(cp::detail::collect_events(0, dropped).empty());
}

TEST(Recorder, FullBuffersDropAndCount) {
  Recording rec(16, 64);  // at most 64 events per thread: chunks of 16
  const auto k = cp::name_id("k");
  for (int i = 0; i < 100; ++i) cp::KernelScope s(k);
  std::int64_t dropped = -1;
  auto ev = rec.take(dropped);
  EXPECT_EQ(ev.size(), 64u);
  EXPECT_EQ(dropped, 36);
}

TEST(Recorder, ThreadsHaveTheirOwnTracks) {
  Recording rec;
  const auto k = cp::name_id("k");
  { cp::KernelScope s(k); }
  std::thread t([&] {
    for (int i = 0; i < 3; ++i) cp::KernelScope s(k);
  });
  t.join();
  std::int64_t dropped = -1;
  auto ev = rec.take(dropped);
  ASSERT_EQ(ev.size(), 4u);
  std::set<std::uint32_t> tracks;
  for (const auto& e : ev) tracks.insert(e.track);
  EXPECT_EQ(tracks.size(), 2u);
}

TEST(Recorder, OpenScopesAreClosedAtCollection) {
  Recording rec;
  auto* open = new cp::OperatorScope(cp::name_id("never-closed"));
  std::int64_t dropped = -1;
  auto ev = rec.take(dropped);
  ASSERT_EQ(ev.size(), 1u);
  EXPECT_GE(ev[0].end_ns, ev[0].start_ns);
  delete open;  // recording is off: the destructor leaves the (collected) event alone
}

// The stream's taking: each call gives what finished since the last, a thread's events up to its
// first one still open (given with what it encloses once it ends); the last call gives all.
TEST(Recorder, TakesFinishedEventsSinceTheLastTake) {
  Recording rec;
  std::vector<std::size_t> taken;
  std::int64_t dropped = -1;
  { cp::KernelScope k(cp::name_id("first")); }
  std::vector<cp::Event> got = cp::detail::take_finished_events(taken, dropped);
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(dropped, 0);
  EXPECT_TRUE(cp::detail::take_finished_events(taken, dropped).empty());  // nothing new
  auto* outer = new cp::OperatorScope(cp::name_id("outer"));
  { cp::KernelScope k(cp::name_id("inside")); }
  EXPECT_TRUE(cp::detail::take_finished_events(taken, dropped).empty());  // held behind the open one
  delete outer;
  { cp::KernelScope k(cp::name_id("after")); }
  got = cp::detail::take_finished_events(taken, dropped);
  ASSERT_EQ(got.size(), 3u);
  EXPECT_EQ(got[0].name, cp::name_id("outer"));
  EXPECT_EQ(got[1].name, cp::name_id("inside"));
  EXPECT_EQ(got[2].name, cp::name_id("after"));
  auto* open = new cp::OperatorScope(cp::name_id("open at the end"));
  got = cp::detail::take_finished_events(taken, dropped, cp::ticks());  // the last: closed now
  ASSERT_EQ(got.size(), 1u);
  EXPECT_GE(got[0].end_ns, got[0].start_ns);
  EXPECT_NE(got[0].end_ns, 0);
  cp::detail::g_recording.store(false);
  delete open;
}

TEST(Recorder, NamesAreInternedOnce) {
  EXPECT_EQ(cp::name_id("same"), cp::name_id("same"));
  EXPECT_NE(cp::name_id("same"), cp::name_id("other"));
  EXPECT_EQ(cp::process_names().at(cp::name_id("same")), "same");
  EXPECT_EQ(cp::process_names().at(0), "");
}

TEST(Clock, TicksConvertToMonotonicNanoseconds) {
  cp::TickConverter clock;
  clock.start();
  const std::int64_t raw0 = cp::ticks(), mono0 = cp::mono_ns();
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  const std::int64_t raw1 = cp::ticks(), mono1 = cp::mono_ns();
  clock.stop();
  const std::int64_t measured = clock.to_ns(raw1) - clock.to_ns(raw0), truth = mono1 - mono0;
  // The same interval on both clocks within 0.1% + 2 us (the reads are not simultaneous).
  EXPECT_NEAR(static_cast<double>(measured), static_cast<double>(truth), 1e-3 * static_cast<double>(truth) + 2000);
  EXPECT_NEAR(static_cast<double>(clock.to_ns(raw0)), static_cast<double>(clock.mono_to_ns(mono0)), 2000);
  std::printf("clock source: %s\n", clock.source());
}
