#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "commscope/profiler/breakdown.hpp"
#include "commscope/profiler/device_records.hpp"

// RecordProcessor with made-up records, as the CUPTI glue would decode them: linking through
// external-correlation records (in any order), NCCL kernels as communication, memcpy directions,
// host API records, the clock offset, malformed records, tracks and output order.

namespace commscope::profiler {
namespace {

DeviceRecord kernel(std::string name, std::uint64_t start, std::uint64_t end, std::uint32_t correlation,
                    std::uint32_t device = 0, std::uint32_t stream = 7) {
  DeviceRecord r;
  r.kind = DeviceRecordKind::kKernel;
  r.name = std::move(name);
  r.start_ns = start;
  r.end_ns = end;
  r.correlation = correlation;
  r.device = device;
  r.stream = stream;
  return r;
}

DeviceRecord external(std::uint32_t correlation, ExternalKind kind, std::uint64_t id) {
  DeviceRecord r;
  r.kind = DeviceRecordKind::kExternalCorrelation;
  r.correlation = correlation;
  r.external_kind = kind;
  r.external_id = id;
  return r;
}

DeviceRecord api(DeviceRecordKind kind, std::string name, std::uint64_t start, std::uint64_t end,
                 std::uint32_t correlation, std::uint32_t thread) {
  DeviceRecord r;
  r.kind = kind;
  r.name = std::move(name);
  r.start_ns = start;
  r.end_ns = end;
  r.correlation = correlation;
  r.thread = thread;
  return r;
}

Event host_operator(std::uint64_t id, std::uint32_t name, std::int32_t iteration) {
  Event e;
  e.kind = EventKind::kOperator;
  e.id = id;
  e.name = name;
  e.iteration = iteration;
  e.start_ns = 10;
  e.end_ns = 5000;
  return e;
}

Event host_comm(std::uint64_t id, std::uint32_t collective, std::uint32_t algorithm, std::int64_t bytes,
                std::int64_t seq, std::int32_t iteration) {
  Event e;
  e.kind = EventKind::kCommunication;
  e.id = id;
  e.name = collective;
  e.detail = algorithm;
  e.bytes = bytes;
  e.seq = seq;
  e.iteration = iteration;
  e.start_ns = 20;
  e.end_ns = 4000;
  return e;
}

TEST(RecordProcessor, IsNcclKernel) {
  EXPECT_TRUE(is_nccl_kernel("ncclKernel_AllReduce_RING_LL_Sum_float"));
  EXPECT_TRUE(is_nccl_kernel("ncclDevKernel_Generic"));
  EXPECT_TRUE(is_nccl_kernel("ncclDevKernel_AllReduce_Sum_f32_RING_LL"));
  EXPECT_TRUE(is_nccl_kernel("ncclDevKernel_Generic(ncclDevKernelArgsStorage<4096ul>)"));       // demangled
  EXPECT_TRUE(is_nccl_kernel("_Z21ncclDevKernel_Generic24ncclDevKernelArgsStorageILm4096EE"));  // mangled
  EXPECT_FALSE(is_nccl_kernel("nccl"));
  EXPECT_FALSE(is_nccl_kernel("ncclKernel"));
  EXPECT_FALSE(is_nccl_kernel(""));
  EXPECT_FALSE(is_nccl_kernel("my_ncclKernel_copy"));
  EXPECT_FALSE(is_nccl_kernel("ampere_sgemm_128x64_nn"));
  EXPECT_FALSE(is_nccl_kernel("_Z6matmulPfS_"));
}

TEST(RecordProcessor, KernelLinkedToOperatorWhicheverRecordComesFirst) {
  for (bool external_first : {false, true}) {
    SCOPED_TRACE(external_first ? "external record first" : "kernel record first");
    StringTable strings;
    const auto op_name = strings.intern("block0.attn.fwd");
    const std::vector<Event> host = {host_operator(0x100000001, op_name, 3)};
    RecordProcessor p(strings, 0);
    const DeviceRecord k = kernel("matmul", 1000, 1500, 42);
    const DeviceRecord x = external(42, ExternalKind::kOperator, 0x100000001);
    if (external_first) {
      p.add(x);
      p.add(k);
    } else {
      p.add(k);
      p.add(x);
    }
    const auto events = p.finish(host);
    ASSERT_EQ(events.size(), 1u);  // the external record is no event
    const Event& e = events[0];
    EXPECT_EQ(e.kind, EventKind::kKernel);
    EXPECT_EQ(strings.at(e.name), "matmul");
    EXPECT_EQ(e.parent, 0x100000001u);
    EXPECT_EQ(e.iteration, 3);
    EXPECT_EQ(e.correlation, 42u);
    EXPECT_EQ(e.track_kind, TrackKind::kDeviceStream);
    EXPECT_EQ(e.track, 7u);
    EXPECT_EQ(e.device, 0);
    EXPECT_EQ(e.id, 0u);
    EXPECT_EQ(e.seq, -1);
    EXPECT_EQ(p.malformed(), 0);
  }
}

TEST(RecordProcessor, UnlinkedKernelHasNoParentNorIteration) {
  StringTable strings;
  RecordProcessor p(strings, 0);
  p.add(kernel("relu", 100, 200, 5));
  p.add(external(6, ExternalKind::kOperator, 99));  // another correlation
  const auto events = p.finish({});
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].parent, 0u);
  EXPECT_EQ(events[0].iteration, -1);
}

TEST(RecordProcessor, NcclKernelTakesTheHostCommunicationEvent) {
  StringTable strings;
  const auto allreduce = strings.intern("allreduce");
  const auto ring = strings.intern("ring");
  const std::vector<Event> host = {host_comm(0x200000005, allreduce, ring, 1 << 20, 17, 4)};
  RecordProcessor p(strings, 0);
  p.add(kernel("ncclDevKernel_AllReduce_Sum_f32_RING_LL", 2000, 2600, 77, 1, 13));
  p.add(external(77, ExternalKind::kCommunication, 0x200000005));
  const auto events = p.finish(host);
  ASSERT_EQ(events.size(), 1u);
  const Event& e = events[0];
  EXPECT_EQ(e.kind, EventKind::kCommunication);
  EXPECT_EQ(e.id, 0x200000005u);
  EXPECT_EQ(e.seq, 17);
  EXPECT_EQ(e.bytes, 1 << 20);
  EXPECT_EQ(e.name, allreduce);
  EXPECT_EQ(e.detail, ring);
  EXPECT_EQ(e.iteration, 4);
  EXPECT_EQ(e.parent, 0u);  // no operator link
  EXPECT_EQ(e.track_kind, TrackKind::kDeviceStream);
  EXPECT_EQ(e.device, 1);
  EXPECT_EQ(e.track, 13u);
  EXPECT_EQ(e.correlation, 77u);
}

TEST(RecordProcessor, KernelInsideACommunicationBelongsToIt) {
  // Our ring's reduction kernel, launched inside the allreduce's CommScope: its own kind and
  // name, the collective's id and seq (the breakdown's communication).
  StringTable strings;
  const auto allreduce = strings.intern("allreduce");
  const auto ring = strings.intern("ring");
  const std::vector<Event> host = {host_comm(0x200000009, allreduce, ring, 4096, 5, 2)};
  RecordProcessor p(strings, 0);
  p.add(kernel("reduce_kernel", 100, 180, 31, 0, 7));
  p.add(external(31, ExternalKind::kCommunication, 0x200000009));
  p.add(kernel("reduce_kernel", 200, 260, 32, 0, 7));  // the same kernel outside any collective
  const auto events = p.finish(host);
  ASSERT_EQ(events.size(), 2u);
  EXPECT_EQ(events[0].kind, EventKind::kKernel);
  EXPECT_EQ(strings.at(events[0].name), "reduce_kernel");
  EXPECT_EQ(events[0].id, 0x200000009u);
  EXPECT_EQ(events[0].seq, 5);
  EXPECT_EQ(events[0].iteration, 2);
  EXPECT_EQ(events[1].kind, EventKind::kKernel);
  EXPECT_EQ(strings.at(events[1].name), "reduce_kernel");
  EXPECT_EQ(events[1].id, 0u);
  EXPECT_EQ(events[1].seq, -1);
}

TEST(RecordProcessor, NcclKernelWithoutCommunicationLink) {
  StringTable strings;
  const auto allreduce = strings.intern("allreduce");
  const std::vector<Event> host = {host_comm(0x200000005, allreduce, 0, 4096, 3, 1)};
  RecordProcessor p(strings, 0);
  p.add(kernel("ncclKernel_AllReduce_RING_LL_Sum_float", 2000, 2600, 78));
  p.add(external(77, ExternalKind::kCommunication, 0x200000005));  // links another launch
  const auto events = p.finish(host);
  ASSERT_EQ(events.size(), 1u);
  const Event& e = events[0];
  EXPECT_EQ(e.kind, EventKind::kCommunication);
  EXPECT_EQ(e.id, 0u);
  EXPECT_EQ(e.seq, -1);
  EXPECT_EQ(e.bytes, 0);
  EXPECT_EQ(e.detail, 0u);
  EXPECT_EQ(strings.at(e.name), "ncclKernel_AllReduce_RING_LL_Sum_float");
  EXPECT_EQ(e.iteration, -1);
}

TEST(RecordProcessor, NcclKernelLinkedToAMissingHostEventKeepsItsOwnName) {
  StringTable strings;
  RecordProcessor p(strings, 0);
  p.add(kernel("ncclDevKernel_Generic", 10, 20, 1));
  p.add(external(1, ExternalKind::kCommunication, 12345));  // host event lost (e.g. a full buffer)
  const auto events = p.finish({});
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].kind, EventKind::kCommunication);
  EXPECT_EQ(events[0].id, 0u);
  EXPECT_EQ(events[0].seq, -1);
  EXPECT_EQ(strings.at(events[0].name), "ncclDevKernel_Generic");
}

TEST(RecordProcessor, LaunchWithOperatorAndCommunicationLinks) {
  StringTable strings;
  const auto op_name = strings.intern("grad_sync");
  const auto allgather = strings.intern("allgather");
  const auto tree = strings.intern("tree");
  const std::vector<Event> host = {host_operator(0x100000002, op_name, 8),
                                   host_comm(0x100000003, allgather, tree, 512, 40, 8)};
  RecordProcessor p(strings, 0);
  p.add(external(9, ExternalKind::kCommunication, 0x100000003));
  p.add(kernel("ncclDevKernel_Generic", 300, 900, 9, 0, 2));
  p.add(external(9, ExternalKind::kOperator, 0x100000002));
  p.add(api(DeviceRecordKind::kRuntime, "cudaLaunchKernel", 250, 280, 9, 0));
  const auto events = p.finish(host);
  ASSERT_EQ(events.size(), 2u);
  const Event& launch = events[0];  // host tracks sort first
  EXPECT_EQ(launch.kind, EventKind::kRuntime);
  EXPECT_EQ(launch.parent, 0x100000002u);
  EXPECT_EQ(launch.iteration, 8);
  const Event& nccl = events[1];
  EXPECT_EQ(nccl.kind, EventKind::kCommunication);
  EXPECT_EQ(nccl.id, 0x100000003u);
  EXPECT_EQ(nccl.parent, 0x100000002u);
  EXPECT_EQ(nccl.seq, 40);
  EXPECT_EQ(nccl.bytes, 512);
  EXPECT_EQ(nccl.name, allgather);
  EXPECT_EQ(nccl.detail, tree);
  EXPECT_EQ(nccl.iteration, 8);
}

TEST(RecordProcessor, NestedOperatorLinksKeepTheInnermost) {
  StringTable strings;
  RecordProcessor p(strings, 0);
  p.add(external(4, ExternalKind::kOperator, 0x100000007));  // inner (opened later: larger id)
  p.add(external(4, ExternalKind::kOperator, 0x100000001));  // outer
  p.add(kernel("k", 1, 2, 4));
  const auto events = p.finish({});
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].parent, 0x100000007u);
}

TEST(RecordProcessor, MemcpyDirectionAndBytes) {
  StringTable strings;
  RecordProcessor p(strings, 0);
  DeviceRecord r;
  r.kind = DeviceRecordKind::kMemcpy;
  r.name = "HtoD";
  r.start_ns = 500;
  r.end_ns = 900;
  r.correlation = 11;
  r.device = 2;
  r.stream = 3;
  r.bytes = 123456789;
  p.add(r);
  r.name = "DtoH";
  r.start_ns = 1000;
  r.end_ns = 1100;
  r.bytes = 64;
  p.add(r);
  DeviceRecord m;
  m.kind = DeviceRecordKind::kMemset;
  m.start_ns = 1200;
  m.end_ns = 1300;
  m.device = 2;
  m.stream = 3;
  m.bytes = 4096;
  p.add(m);
  const auto events = p.finish({});
  ASSERT_EQ(events.size(), 3u);
  EXPECT_EQ(events[0].kind, EventKind::kMemcpy);
  EXPECT_EQ(strings.at(events[0].name), "memcpy HtoD");
  EXPECT_EQ(strings.at(events[0].detail), "HtoD");
  EXPECT_EQ(events[0].bytes, 123456789);
  EXPECT_EQ(events[0].device, 2);
  EXPECT_EQ(events[0].track, 3u);
  EXPECT_EQ(events[0].track_kind, TrackKind::kDeviceStream);
  EXPECT_EQ(events[0].correlation, 11u);
  EXPECT_EQ(strings.at(events[1].name), "memcpy DtoH");
  EXPECT_EQ(strings.at(events[1].detail), "DtoH");
  EXPECT_EQ(events[1].bytes, 64);
  EXPECT_EQ(events[2].kind, EventKind::kMemset);
  EXPECT_EQ(strings.at(events[2].name), "memset");
  EXPECT_EQ(events[2].bytes, 4096);
}

TEST(RecordProcessor, RuntimeAndSyncRecordsOnTheHostThread) {
  StringTable strings;
  const auto op_name = strings.intern("step");
  const std::vector<Event> host = {host_operator(0x300000001, op_name, 2)};
  RecordProcessor p(strings, 0);
  p.add(api(DeviceRecordKind::kRuntime, "cudaLaunchKernel", 100, 130, 21, 3));
  p.add(external(21, ExternalKind::kOperator, 0x300000001));
  p.add(api(DeviceRecordKind::kDriver, "cuStreamSynchronize", 200, 800, 22, 3));
  // Synchronization records carry no thread: they take their API call's.
  p.add(api(DeviceRecordKind::kSynchronization, "stream synchronize", 210, 790, 22, 0x80000000u));
  const auto events = p.finish(host);
  ASSERT_EQ(events.size(), 3u);
  const Event& launch = events[0];
  EXPECT_EQ(launch.kind, EventKind::kRuntime);
  EXPECT_EQ(strings.at(launch.name), "cudaLaunchKernel");
  EXPECT_EQ(launch.track_kind, TrackKind::kHostThread);
  EXPECT_EQ(launch.track, 3u);
  EXPECT_EQ(launch.device, -1);
  EXPECT_EQ(launch.correlation, 21u);
  EXPECT_EQ(launch.parent, 0x300000001u);
  EXPECT_EQ(launch.iteration, 2);
  const Event& sync_call = events[1];
  EXPECT_EQ(sync_call.kind, EventKind::kRuntime);
  EXPECT_EQ(strings.at(sync_call.name), "cuStreamSynchronize");
  EXPECT_EQ(sync_call.parent, 0u);
  const Event& wait = events[2];
  EXPECT_EQ(wait.kind, EventKind::kSync);
  EXPECT_EQ(wait.track_kind, TrackKind::kHostThread);
  EXPECT_EQ(wait.track, 3u);
  EXPECT_EQ(wait.device, -1);
  EXPECT_EQ(wait.correlation, 22u);
}

TEST(RecordProcessor, SyncWithoutItsApiRecordKeepsItsThread) {
  StringTable strings;
  RecordProcessor p(strings, 0);
  p.add(api(DeviceRecordKind::kSynchronization, "context synchronize", 10, 20, 5, 0x80000000u));
  const auto events = p.finish({});
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].track, 0x80000000u);
}

TEST(RecordProcessor, TimeOffsetAppliedExactly) {
  StringTable strings;
  // CUPTI's clock is 1'700'000'000'000'000'123 ns ahead of the rank clock.
  const std::int64_t offset = 1'700'000'000'000'000'123;
  RecordProcessor p(strings, offset);
  p.add(kernel("a", 1'700'000'000'000'005'123, 1'700'000'000'000'006'124, 1));
  p.add(kernel("b", 1'700'000'000'000'000'000, 1'700'000'000'000'000'100, 2, 0, 8));  // before the epoch
  const auto events = p.finish({});
  ASSERT_EQ(events.size(), 2u);
  EXPECT_EQ(events[0].start_ns, 5000);
  EXPECT_EQ(events[0].end_ns, 6001);
  EXPECT_EQ(events[1].start_ns, -123);
  EXPECT_EQ(events[1].end_ns, -23);

  // A negative offset (CUPTI's clock behind the rank clock) moves events later.
  RecordProcessor q(strings, -1000);
  q.add(kernel("c", 5, 7, 3));
  const auto later = q.finish({});
  ASSERT_EQ(later.size(), 1u);
  EXPECT_EQ(later[0].start_ns, 1005);
  EXPECT_EQ(later[0].end_ns, 1007);
}

TEST(RecordProcessor, MalformedRecordsDroppedAndCounted) {
  StringTable strings;
  RecordProcessor p(strings, 0);
  p.add(kernel("backwards", 500, 499, 1));
  p.add(api(DeviceRecordKind::kRuntime, "cudaMemcpyAsync", 30, 10, 2, 0));
  p.add(kernel("untimed", 0, 0, 3));  // CUPTI: no timestamp collected
  p.add(kernel("instant", 600, 600, 4));
  p.add(external(1, ExternalKind::kOperator, 7));  // no times: never malformed
  const auto events = p.finish({});
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(strings.at(events[0].name), "instant");
  EXPECT_EQ(p.malformed(), 3);
}

TEST(RecordProcessor, TwoStreamsOnTwoDevicesKeepTheirTracks) {
  StringTable strings;
  RecordProcessor p(strings, 0);
  p.add(kernel("d1s5", 100, 200, 1, 1, 5));
  p.add(kernel("d0s5", 100, 200, 2, 0, 5));
  p.add(kernel("d1s9", 150, 250, 3, 1, 9));
  p.add(kernel("d0s9", 150, 250, 4, 0, 9));
  const auto events = p.finish({});
  ASSERT_EQ(events.size(), 4u);
  for (const Event& e : events) {
    const std::string name = strings.at(e.name);
    EXPECT_EQ(e.device, name[1] - '0') << name;
    EXPECT_EQ(e.track, static_cast<std::uint32_t>(name[3] - '0')) << name;
    EXPECT_EQ(e.track_kind, TrackKind::kDeviceStream) << name;
  }
}

TEST(RecordProcessor, OutputOrder) {
  StringTable strings;
  RecordProcessor p(strings, 0);
  // Added in scrambled order; expected: host threads first (by thread, then time), then device
  // streams by device, stream, start; equal starts: the longer first.
  p.add(kernel("dev1.s1.t100", 100, 150, 1, 1, 1));
  p.add(kernel("dev0.s2.t50", 50, 60, 2, 0, 2));
  p.add(api(DeviceRecordKind::kRuntime, "thread1.t5", 5, 6, 3, 1));
  p.add(kernel("dev0.s1.t300", 300, 310, 4, 0, 1));
  p.add(kernel("dev0.s1.t100.short", 100, 120, 5, 0, 1));
  p.add(api(DeviceRecordKind::kRuntime, "thread0.t90", 90, 95, 6, 0));
  p.add(kernel("dev0.s1.t100.long", 100, 200, 7, 0, 1));
  p.add(api(DeviceRecordKind::kRuntime, "thread0.t10", 10, 20, 8, 0));
  const auto events = p.finish({});
  std::vector<std::string> names;
  for (const Event& e : events) names.push_back(strings.at(e.name));
  const std::vector<std::string> expected = {"thread0.t10",        "thread0.t90",  "thread1.t5",  "dev0.s1.t100.long",
                                             "dev0.s1.t100.short", "dev0.s1.t300", "dev0.s2.t50", "dev1.s1.t100"};
  EXPECT_EQ(names, expected);
}

TEST(RecordProcessor, FinishConsumesTheRecords) {
  StringTable strings;
  RecordProcessor p(strings, 0);
  const std::vector<DeviceRecord> batch = {kernel("a", 1, 2, 1), kernel("b", 3, 4, 2)};
  p.add(batch);
  EXPECT_EQ(p.finish({}).size(), 2u);
  EXPECT_TRUE(p.finish({}).empty());
  p.add(kernel("c", 5, 6, 3));
  EXPECT_EQ(p.finish({}).size(), 1u);
}

}  // namespace
}  // namespace commscope::profiler

namespace commscope::profiler {
namespace {

DeviceRecord copy(DeviceRecordKind kind, std::string direction, std::uint64_t start, std::uint64_t end,
                  std::uint32_t correlation) {
  DeviceRecord r = kernel(std::move(direction), start, end, correlation);
  r.kind = kind;
  r.bytes = 4096;
  return r;
}

// One collective of the staged transport as CUPTI reports it, run through the record processor
// and the device-timeline breakdown: the host scope [10, 90) of iteration [0, 100) holds a copy to
// the host, MPI's transfers and waits (nothing on the device), then a copy back, plus (allreduce)
// a reduction kernel; a memset and a copy outside the scope are compute. `reduce`: allreduce's shape.
RankBreakdown staged_collective(bool reduce, StringTable& strings, std::vector<Event>* device_events = nullptr) {
  const auto name = strings.intern(reduce ? "allreduce" : "allgather");
  const auto ring = strings.intern("ring");
  Event iteration;
  iteration.kind = EventKind::kIteration;
  iteration.iteration = 0;
  iteration.start_ns = 0;
  iteration.end_ns = 100;
  Event comm = host_comm(9, name, ring, 4096, 0, 0);
  comm.start_ns = 10;
  comm.end_ns = 90;
  const std::vector<Event> host = {iteration, comm};
  RecordProcessor p(strings, 0);
  p.add(copy(DeviceRecordKind::kMemcpy, "DtoH", 12, 20, 1));
  p.add(copy(DeviceRecordKind::kMemcpy, "HtoD", 70, 80, 2));
  p.add(copy(DeviceRecordKind::kMemset, "", 92, 94, 4));      // after the scope: compute
  p.add(copy(DeviceRecordKind::kMemcpy, "DtoD", 95, 97, 5));  // likewise
  for (std::uint32_t c : {1u, 2u}) p.add(external(c, ExternalKind::kCommunication, 9));
  if (reduce) {
    p.add(kernel("reduce_kernel", 81, 85, 3));
    p.add(external(3, ExternalKind::kCommunication, 9));
  }
  std::vector<Event> events = p.finish(host);
  if (device_events != nullptr) *device_events = events;
  events.insert(events.end(), host.begin(), host.end());
  return analyze_rank(0, events, build_timeline(events, Timeline::kDevice), 0);
}

// Copies inside a collective belong to it like its kernels (its id and seq, their own kind and
// name); outside, they are nobody's.
TEST(RecordProcessor, CopiesInsideACommunicationBelongToIt) {
  StringTable strings;
  std::vector<Event> events;
  staged_collective(true, strings, &events);
  ASSERT_EQ(events.size(), 5u);
  int inside = 0;
  for (const Event& e : events) {
    const bool in = e.end_ns <= 90;
    EXPECT_EQ(e.id, in ? 9u : 0u) << e.start_ns;
    EXPECT_EQ(e.seq, in ? 0 : -1) << e.start_ns;
    EXPECT_NE(e.kind, EventKind::kCommunication) << e.start_ns;
    inside += in;
  }
  EXPECT_EQ(inside, 3);
  EXPECT_EQ(strings.at(events[0].name), "memcpy DtoH");
}

// The staged transport's host-side transfers and waits stay communication once the device holds
// pieces of the collective, and allreduce (with a reduction kernel) and allgather (copies only)
// come out alike: communication for the whole scope, compute only outside it. Before, allreduce's
// kernel made the host scope vanish from the device timeline (its MPI time became dispatch) and
// the copies were compute.
TEST(Breakdown, StagedCollectivesAreCommunicationWhateverTheirDeviceWork) {
  for (bool reduce : {true, false}) {
    StringTable strings;
    const RankBreakdown b = staged_collective(reduce, strings);
    ASSERT_EQ(b.rows.size(), 1u);
    const BreakdownRow& r = b.rows[0];
    EXPECT_EQ(r.comm_ns, 80) << (reduce ? "allreduce" : "allgather");
    EXPECT_EQ(r.kernel_ns, 4) << "the memset and copy after the scope";
    EXPECT_EQ(r.overlap_ns, 0);
    EXPECT_EQ(r.comm_ns + r.kernel_ns + r.intra_ns + r.inter_ns, 100);
  }
}

}  // namespace
}  // namespace commscope::profiler
