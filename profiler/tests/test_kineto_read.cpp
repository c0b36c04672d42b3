// Stage 1 of the Kineto import (src/kineto/read.hpp): numbers as the traces write them, and a
// small trace read into one rank's events: what each entry becomes, what is counted as left out
// or not understood, and a damaged file's one-line error.
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <string>

#include "kineto/read.hpp"

namespace commscope::profiler::kineto {
namespace {

std::string temp_file(const std::string& name, const std::string& text) {
  const char* dir = std::getenv("COMMSCOPE_TEST_TMP");
  const std::string path = std::string(dir != nullptr ? dir : "/tmp") + "/" + name;
  std::ofstream(path) << text;
  return path;
}

TEST(KinetoRead, MicrosecondsToNanosecondsExactly) {
  std::int64_t ns = 0;
  ASSERT_TRUE(us_to_ns("1.5", ns));
  EXPECT_EQ(ns, 1500);
  ASSERT_TRUE(us_to_ns("1712195495502095.001", ns));  // a Unix time in us: more digits than a double holds
  EXPECT_EQ(ns, 1712195495502095001);
  ASSERT_TRUE(us_to_ns("-2.0004", ns));
  EXPECT_EQ(ns, -2000);
  ASSERT_TRUE(us_to_ns("0.0005", ns));  // half a ns: away from zero
  EXPECT_EQ(ns, 1);
  ASSERT_TRUE(us_to_ns("1e3", ns));
  EXPECT_EQ(ns, 1000000);
  ASSERT_TRUE(us_to_ns("0", ns));
  EXPECT_EQ(ns, 0);
  EXPECT_FALSE(us_to_ns("9.3e15", ns));  // 9.3e18 ns: past int64
}

TEST(KinetoRead, IntegersAndDtypes) {
  EXPECT_EQ(to_int("42"), 42);
  EXPECT_EQ(to_int("4.7"), 4);
  EXPECT_EQ(to_int("-3"), -3);
  EXPECT_FALSE(to_int("1e3").has_value());
  EXPECT_FALSE(to_int("x").has_value());
  EXPECT_FALSE(to_int("99999999999999999999").has_value());
  EXPECT_EQ(dtype_bytes("Float"), 4);
  EXPECT_EQ(dtype_bytes("c10::BFloat16"), 2);
  EXPECT_EQ(dtype_bytes("long int"), 8);
  EXPECT_EQ(dtype_bytes("ComplexDouble"), 16);
  EXPECT_EQ(dtype_bytes("bool"), 1);
  EXPECT_EQ(dtype_bytes("Half"), 2);
  EXPECT_EQ(dtype_bytes("weird"), 0);
}

const char* kTrace = R"json({
  "distributedInfo": {"rank": 1, "world_size": 2},
  "baseTimeNanoseconds": 1000,
  "traceEvents": [
    {"ph": "M", "name": "process_name", "pid": 1, "args": {"name": "python"}},
    {"ph": "X", "cat": "cpu_op", "name": "ProfilerStep#4", "pid": 1, "tid": 1, "ts": 0, "dur": 100},
    {"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": 1, "tid": 1, "ts": 10, "dur": 5,
     "args": {"External id": 7}},
    {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1, "ts": 11, "dur": 1,
     "args": {"correlation": 99}},
    {"ph": "X", "cat": "kernel", "name": "gemm", "pid": 0, "tid": 7, "ts": 20, "dur": 2.5,
     "args": {"correlation": 99, "device": 0, "stream": 7}},
    {"ph": "X", "cat": "cpu_op", "name": "record_param_comms", "pid": 1, "tid": 2, "ts": 30, "dur": 10,
     "args": {"Collective name": "allreduce", "In msg nelems": 256, "Out msg nelems": 256, "dtype": "Float",
              "Process Group Name": "0", "Seq": 3}},
    {"ph": "X", "cat": "kernel", "name": "ncclKernel_AllReduce_RING_LL_Sum_float(ncclDevComm*)", "pid": 0,
     "tid": 7, "ts": 35, "dur": 4, "args": {"correlation": 100, "device": 0, "stream": 7}},
    {"ph": "f", "cat": "ac2g", "id": 99, "pid": 0, "tid": 7, "ts": 20},
    {"ph": "X", "cat": "mystery", "name": "x", "pid": 1, "tid": 1, "ts": 1, "dur": 1},
    {"ph": "X", "cat": "cpu_op", "name": "late", "pid": 1, "tid": 1, "ts": "soon", "dur": 1},
    [1, 2]
  ]
})json";

TEST(KinetoRead, EachEntryBecomesAtMostOneEvent) {
  RankTrace r;
  StringTable strings;
  read_trace(temp_file("kineto_read.json", kTrace), strings, r, false);
  EXPECT_TRUE(r.has_rank);
  EXPECT_EQ(r.report.original_rank, 1);
  EXPECT_EQ(r.report.world_size, 2);
  EXPECT_TRUE(r.has_base);
  EXPECT_EQ(r.base_ns, 1000);
  EXPECT_EQ(r.report.trace_events, 11);
  ASSERT_EQ(r.events.size(), 6u);
  ASSERT_EQ(r.external.size(), 6u);

  const Event& step = r.events[0];
  EXPECT_EQ(step.kind, EventKind::kIteration);
  EXPECT_EQ(step.iteration, 4);
  const Event& mm = r.events[1];
  EXPECT_EQ(mm.kind, EventKind::kOperator);
  EXPECT_EQ(strings.at(mm.name), "aten::mm");
  EXPECT_EQ(mm.start_ns, 10000);  // absolute times: the base is added after all files are read
  EXPECT_EQ(mm.end_ns, 15000);
  EXPECT_EQ(r.external[1], 7);
  const Event& launch = r.events[2];
  EXPECT_EQ(launch.kind, EventKind::kRuntime);
  EXPECT_EQ(launch.correlation, 99u);
  EXPECT_EQ(launch.track, mm.track);  // one host thread: pid 1, tid 1
  const Event& gemm = r.events[3];
  EXPECT_EQ(gemm.kind, EventKind::kKernel);
  EXPECT_EQ(gemm.track_kind, TrackKind::kDeviceStream);
  EXPECT_EQ(gemm.track, 7u);
  EXPECT_EQ(gemm.device, 0);
  EXPECT_EQ(gemm.end_ns - gemm.start_ns, 2500);
  const Event& call = r.events[4];
  EXPECT_EQ(call.kind, EventKind::kOperator);
  EXPECT_NE(call.track, mm.track);  // tid 2
  ASSERT_TRUE(r.comm.contains(4));
  EXPECT_EQ(r.comm.at(4).collective, "allreduce");
  EXPECT_EQ(r.comm.at(4).pg, "0");
  EXPECT_EQ(r.comm.at(4).bytes, 1024);
  EXPECT_EQ(r.comm.at(4).seq, 3);
  const Event& nccl = r.events[5];
  EXPECT_EQ(nccl.kind, EventKind::kCommunication);
  EXPECT_EQ(strings.at(nccl.detail), "ncclKernel_AllReduce_RING_LL_Sum_float");

  EXPECT_EQ(r.min_ts, 0);
  EXPECT_EQ(r.report.imported.at("kernel"), 1);
  EXPECT_EQ(r.report.imported.at("kernel (NCCL: communication)"), 1);
  EXPECT_EQ(r.report.imported.at("ProfilerStep#N (iterations)"), 1);
  EXPECT_EQ(r.report.skipped.at("metadata (ph M)"), 1);
  EXPECT_EQ(r.report.skipped.at("ac2g flows (links read from correlation ids)"), 1);
  EXPECT_EQ(r.report.unknown.at("ph X, cat mystery"), 1);
  EXPECT_EQ(r.report.unknown.at("ph X without a valid ts/dur, cat cpu_op"), 1);
  EXPECT_EQ(r.report.unknown.at("(not an object)"), 1);
}

TEST(KinetoRead, HtaRoundingToWholeMicroseconds) {
  const std::string path = temp_file("kineto_read_hta.json", R"({"traceEvents": [
    {"ph": "X", "cat": "kernel", "name": "k", "pid": 0, "tid": 7, "ts": 10.2, "dur": 3.5},
    {"ph": "X", "cat": "cpu_op", "name": "op", "pid": 1, "tid": 1, "ts": 10.2, "dur": 3.5}]})");
  RankTrace r;
  StringTable strings;
  read_trace(path, strings, r, true);
  ASSERT_EQ(r.events.size(), 2u);
  EXPECT_EQ(r.events[0].start_ns, 11000);  // start up, end down: [11, 13] us
  EXPECT_EQ(r.events[0].end_ns, 13000);
  EXPECT_EQ(r.events[1].start_ns, 10200);  // host events stay exact
  EXPECT_EQ(r.events[1].end_ns, 13700);
  EXPECT_FALSE(r.has_rank);
}

TEST(KinetoRead, DamagedFilesAreOneLine) {
  RankTrace r;
  StringTable strings;
  try {
    read_trace(temp_file("kineto_read_bad.json", "[1, 2]"), strings, r, false);
    FAIL() << "no error";
  } catch (const KinetoImportError& e) {
    EXPECT_NE(std::string(e.what()).find("not a JSON object"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("(byte "), std::string::npos) << e.what();
  }
  EXPECT_THROW(read_trace(temp_file("kineto_read_none.json", R"({"x": 1})"), strings, r, false), KinetoImportError);
  EXPECT_THROW(read_trace("/nonexistent/trace.json", strings, r, false), KinetoImportError);
}

}  // namespace
}  // namespace commscope::profiler::kineto
