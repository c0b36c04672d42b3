// Chrome trace export: one slice per event, exact ts/dur strings with clock offsets, the track
// (tid) scheme, JSON string escaping, one process per rank. The JSON as a whole is parsed by
// python3 in the profiler.trace_cli test.
#include <gtest/gtest.h>

#include <cstddef>
#include <cstdint>
#include <limits>
#include <sstream>
#include <string>
#include <vector>

#include "commscope/profiler/chrome_trace.hpp"

using namespace commscope::profiler;

namespace {

std::size_t count(const std::string& text, const std::string& needle) {
  std::size_t n = 0;
  for (std::size_t at = text.find(needle); at != std::string::npos; at = text.find(needle, at + needle.size())) ++n;
  return n;
}

// The one line of the trace holding `needle` (every trace event is on a line of its own).
std::string line_with(const std::string& text, const std::string& needle) {
  const std::size_t at = text.find(needle);
  if (at == std::string::npos) return {};
  const std::size_t begin = text.rfind('\n', at) + 1;
  const std::size_t end = text.find('\n', at);
  return text.substr(begin, end - begin);
}

Event event(EventKind kind, std::int64_t start, std::int64_t end, std::uint32_t name) {
  Event e;
  e.kind = kind;
  e.start_ns = start;
  e.end_ns = end;
  e.name = name;
  return e;
}

Event on_device(Event e, std::int16_t device, std::uint32_t stream) {
  e.track_kind = TrackKind::kDeviceStream;
  e.device = device;
  e.track = stream;
  return e;
}

// Strings: 1 "step", 2 the nasty name, 3 "ring", 4 "allreduce", 5 "gemm", 6 control+UTF-8,
// 7 invalid UTF-8, 8 "forward", 9 "HtoD".
Profile small_profile() {
  Profile p;
  p.meta.version = "test";
  p.meta.nranks = 2;
  p.meta.events_layout = "single";
  p.meta.attributes = {{"model", "say \"hi\""}};
  p.ranks = {{0, "node-a", 0, 5, "host", 0, 0, "", 0, 0, ""}, {1, "node-b", 1000, 5, "cupti", 0, 0, "", 0, 0, ""}};
  p.strings = {"",          "step", "say \"hi\"\\ and\nnewline",     "ring",
               "allreduce", "gemm", "bell\x01 \xc3\xa9\xe2\x86\x92", "bad \xff\xc3 end",
               "forward",   "HtoD"};

  std::vector<Event> r0;
  Event it = event(EventKind::kIteration, -1500, 10'000'000, 1);
  it.iteration = 0;
  r0.push_back(it);
  Event fwd = event(EventKind::kOperator, 0, 9'000'000, 8);
  fwd.id = 7;
  fwd.iteration = 0;
  r0.push_back(fwd);
  Event nasty = event(EventKind::kOperator, 10, 20, 2);
  nasty.id = 8;
  nasty.parent = 7;
  nasty.iteration = 0;
  r0.push_back(nasty);
  Event comm = event(EventKind::kCommunication, 100, 2100, 4);
  comm.detail = 3;
  comm.bytes = 1 << 20;
  comm.seq = 12;
  comm.id = 9;
  comm.parent = 7;
  r0.push_back(comm);
  r0.push_back(event(EventKind::kKernel, 5, 6, 6));
  r0.push_back(event(EventKind::kKernel, 5, 6, 7));
  r0.push_back(event(EventKind::kOperator, 0, 999, 2));  // same track as `nasty`: named once
  Event t3 = event(EventKind::kOperator, 0, 1, 8);
  t3.track = 3;
  r0.push_back(t3);

  std::vector<Event> r1;
  Event kernel = on_device(event(EventKind::kKernel, 1'234'567, 1'240'000, 5), 0, 7);
  kernel.correlation = 4242;
  r1.push_back(kernel);
  Event copy = on_device(event(EventKind::kMemcpy, 2000, 3000, 9), 1, 13);
  copy.bytes = 4096;
  r1.push_back(copy);
  Event nccl = on_device(event(EventKind::kCommunication, 3000, 7000, 4), 0, 7);
  nccl.detail = 3;
  r1.push_back(nccl);
  Event far = on_device(event(EventKind::kKernel, 0, 1, 5), 600, 70000);  // outside the formula's ranges
  r1.push_back(far);
  r1.push_back(event(EventKind::kCommunication, 0, 10, 4));
  p.events = {r0, r1};
  return p;
}

std::string export_trace(const Profile& p, std::size_t* slices) {
  std::ostringstream out;
  *slices = write_chrome_trace(p, out);
  return out.str();
}

TEST(ChromeTrace, OneSlicePerEvent) {
  const Profile p = small_profile();
  std::size_t slices = 0;
  const std::string json = export_trace(p, &slices);
  EXPECT_EQ(slices, p.events[0].size() + p.events[1].size());
  EXPECT_EQ(count(json, "\"ph\":\"X\""), slices);
  EXPECT_EQ(json.rfind("{\"displayTimeUnit\":\"ns\",", 0), 0u) << json.substr(0, 80);
  EXPECT_NE(json.find("\"traceEvents\":["), std::string::npos);
  EXPECT_NE(json.find("\"schema\":\"commscope.profile/1\""), std::string::npos);
  EXPECT_NE(json.find("\"nranks\":2"), std::string::npos);
  EXPECT_NE(json.find("\"model\":\"say \\\"hi\\\"\""), std::string::npos);
  EXPECT_EQ(json.substr(json.size() - 4), "\n]}\n");
}

TEST(ChromeTrace, MicrosecondsWithNanosecondPrecisionOnRankZerosClock) {
  std::size_t slices = 0;
  const std::string json = export_trace(small_profile(), &slices);
  // Rank 1's kernel: 1234567 ns + offset 1000 ns = 1235.567 us, lasting 5433 ns.
  const std::string kernel = line_with(json,
                                       "\"name\":\"gemm\",\"cat\":\"kernel\",\"args\":{\"iteration\":-1,\"id\":0,"
                                       "\"parent\":0,\"correlation\":4242");
  EXPECT_NE(kernel.find("\"pid\":1,\"tid\":1000007,\"ts\":1235.567,\"dur\":5.433,"), std::string::npos) << kernel;
  // Rank 0 has no offset; a negative start keeps its sign and three decimals.
  const std::string step = line_with(json, "\"name\":\"step\"");
  EXPECT_NE(step.find("\"pid\":0,\"tid\":999998,\"ts\":-1.500,\"dur\":10001.500,"), std::string::npos) << step;
  const std::string tiny = line_with(json, "\"ts\":0.005,\"dur\":0.001");
  EXPECT_FALSE(tiny.empty());
  const std::string copy = line_with(json, "\"name\":\"HtoD\"");
  EXPECT_NE(copy.find("\"ts\":3.000,\"dur\":1.000,"), std::string::npos) << copy;
  EXPECT_NE(copy.find("\"bytes\":4096"), std::string::npos) << copy;
}

TEST(ChromeTrace, StringsAreEscaped) {
  std::size_t slices = 0;
  const std::string json = export_trace(small_profile(), &slices);
  // say "hi"\ and<newline>newline
  EXPECT_EQ(count(json, "\"name\":\"say \\\"hi\\\"\\\\ and\\nnewline\""), 2u);
  // A control character as \u0001, valid UTF-8 as it is.
  EXPECT_NE(json.find("\"name\":\"bell\\u0001 \xc3\xa9\xe2\x86\x92\""), std::string::npos);
  // Bytes that are not UTF-8 become U+FFFD.
  EXPECT_NE(json.find("\"name\":\"bad \xef\xbf\xbd\xef\xbf\xbd end\""), std::string::npos);
  EXPECT_EQ(json.find('\x01'), std::string::npos);
  EXPECT_EQ(json.find('\xff'), std::string::npos);
}

TEST(ChromeTrace, ProcessesAndTracks) {
  std::size_t slices = 0;
  const std::string json = export_trace(small_profile(), &slices);
  EXPECT_EQ(count(json, "\"name\":\"process_name\""), 2u);
  EXPECT_EQ(count(json, "\"name\":\"process_sort_index\""), 2u);
  EXPECT_NE(json.find("\"pid\":0,\"tid\":0,\"args\":{\"name\":\"rank 0 (node-a)\"}"), std::string::npos);
  EXPECT_NE(json.find("\"pid\":1,\"tid\":0,\"args\":{\"name\":\"rank 1 (node-b)\"}"), std::string::npos);

  // Each (rank, track) is named once: rank 0 has iterations, threads 0 and 3, communication.
  const auto named = [&](int pid, long long tid, const std::string& name) {
    return count(json, "\"name\":\"thread_name\",\"pid\":" + std::to_string(pid) + ",\"tid\":" + std::to_string(tid) +
                           ",\"args\":{\"name\":\"" + name + "\"}");
  };
  EXPECT_EQ(named(0, 999998, "iterations"), 1u);
  EXPECT_EQ(named(0, 0, "thread 0"), 1u);
  EXPECT_EQ(named(0, 3, "thread 3"), 1u);
  EXPECT_EQ(named(0, 999999, "communication"), 1u);
  EXPECT_EQ(named(1, 1000007, "GPU 0 stream 7"), 1u);
  EXPECT_EQ(named(1, 1000000 + 65536 + 13, "GPU 1 stream 13"), 1u);
  EXPECT_EQ(named(1, 1000000 + 65535, "GPU 0 communication"), 1u);
  EXPECT_EQ(named(1, 1 << 30, "GPU 600 stream 70000"), 1u);  // the first track outside the formula
  EXPECT_EQ(named(1, 999999, "communication"), 1u);
  EXPECT_EQ(count(json, "\"name\":\"thread_name\""), 9u);

  // Operators stay on their thread; communication gets its own track with its arguments.
  EXPECT_NE(line_with(json, "\"name\":\"forward\"").find("\"tid\":0,"), std::string::npos);
  const std::string comm = line_with(json, "\"cat\":\"communication\",\"args\":{\"iteration\":-1,\"id\":9");
  EXPECT_NE(comm.find("\"pid\":0,\"tid\":999999,\"ts\":0.100,\"dur\":2.000,\"name\":\"allreduce\""), std::string::npos)
      << comm;
  EXPECT_NE(comm.find("\"parent\":7,\"bytes\":1048576,\"seq\":12,\"algorithm\":\"ring\",\"group\":\"dp\"}"),
            std::string::npos)
      << comm;
  const std::string nccl = line_with(json, "\"tid\":1065535,\"ts\"");
  EXPECT_NE(nccl.find("\"ts\":4.000,\"dur\":4.000,\"name\":\"allreduce\",\"cat\":\"communication\""), std::string::npos)
      << nccl;
}

TEST(ChromeTrace, EmptyProfile) {
  Profile p;
  p.strings = {""};
  std::size_t slices = 7;
  const std::string json = export_trace(p, &slices);
  EXPECT_EQ(slices, 0u);
  EXPECT_NE(json.find("\"traceEvents\":[\n]}"), std::string::npos) << json;
}

TEST(ChromeTrace, ExtremeTimesDoNotOverflow) {
  Profile p;
  p.strings = {"", "x"};
  p.meta.nranks = 1;
  p.ranks = {{0, "h", 1000, 0, "host", 0, 0, "", 0, 0, ""}};
  p.events = {{event(EventKind::kKernel, std::numeric_limits<std::int64_t>::max() - 10,
                     std::numeric_limits<std::int64_t>::max(), 1),
               event(EventKind::kKernel, std::numeric_limits<std::int64_t>::min(), 5, 1),
               event(EventKind::kKernel, 50, 10, 1)}};
  std::size_t slices = 0;
  const std::string json = export_trace(p, &slices);
  EXPECT_EQ(slices, 3u);
  EXPECT_NE(json.find("\"ts\":9223372036854775.807,\"dur\":0.010,"), std::string::npos) << json;  // saturated
  EXPECT_NE(json.find("\"ts\":-9223372036854774.808,\"dur\":9223372036854775.807,"), std::string::npos) << json;
  EXPECT_NE(json.find("\"ts\":1.050,\"dur\":0.000,"), std::string::npos) << json;  // end < start: zero length
}

}  // namespace

// A 3D-parallel job's grid (PP x DP x TP, TP innermost) and each communication's group by name.
TEST(ChromeTrace, GridPlacesAndGroups) {
  // 8 ranks, tp 2, pp 2: dp 2; rank = tp_rank + 2 (dp_rank + 2 pp_rank).
  const GridPlace r5 = grid_place(5, 8, 2, 2);
  EXPECT_EQ(r5.tp_rank, 1);
  EXPECT_EQ(r5.dp_rank, 0);
  EXPECT_EQ(r5.pp_rank, 1);
  const GridPlace r2 = grid_place(2, 8, 2, 2);
  EXPECT_EQ(r2.tp_rank, 0);
  EXPECT_EQ(r2.dp_rank, 1);
  EXPECT_EQ(r2.pp_rank, 0);
  const GridPlace bad = grid_place(3, 6, 4, 1);  // 4 does not divide 6: no place
  EXPECT_EQ(bad.tp_rank + bad.dp_rank + bad.pp_rank, 0);
  EXPECT_EQ(communication_group("tp.allreduce"), "tp");
  EXPECT_EQ(communication_group("pp.recv"), "pp");
  EXPECT_EQ(communication_group("embedding.allreduce"), "embedding");
  EXPECT_EQ(communication_group("allreduce"), "dp");
  EXPECT_EQ(communication_group("tpx.allreduce"), "dp");
  EXPECT_EQ(communication_group("tp"), "dp");  // a prefix needs its dot
}
