// The report's input readers: small bench and profile files written here (the bench file with
// commscope::h5 following docs/bench-results.md, the profile with profiler::ProfileWriter) read
// back field by field, and every kind of bad file refused with one line naming it.

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <random>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "../../profiler/tests/expect_rows.hpp"
#include "bench_file_writer.hpp"
#include "commscope/analysis/inputs.hpp"
#include "commscope/formats/profile_file.hpp"
#include "commscope/h5/h5.hpp"

namespace {

namespace fs = std::filesystem;
namespace ca = commscope::analysis;
namespace cp = commscope::profiler;
namespace h5 = commscope::h5;
using ca::testing::bench_record;
using ca::testing::BenchRecord;
using ca::testing::SampleRecord;

fs::path work_dir() {
  const char* tmp = std::getenv("COMMSCOPE_TEST_TMP");
  fs::path dir =
      fs::path(tmp != nullptr && *tmp != '\0' ? tmp : fs::temp_directory_path().string()) / "analysis_inputs_test";
  fs::create_directories(dir);
  return dir;
}

std::string temp_file(const std::string& name) {
  const fs::path path = work_dir() / name;
  fs::remove_all(path);
  return path.string();
}

// A small bench results file following docs/bench-results.md; `schema` replaces the schema name,
// `samples_per_row` below the rows' sample_count (5) damages /samples.
void write_bench_file(const std::string& path, const std::string& schema = "commscope.bench/1",
                      std::int64_t samples_per_row = 5) {
  h5::File f = h5::File::create(path);
  ca::testing::write_bench_meta(f, schema);
  auto results = h5::Table<BenchRecord>::create(f, "results", ca::testing::bench_record_type());
  const std::vector<BenchRecord> rows = {bench_record(0, "allreduce", "ring", false, 8, 12.5),
                                         bench_record(0, "allreduce", "ring", true, 8, 11.0),
                                         bench_record(1, "allreduce", "ring", false, 65536, 80.0)};
  results.append(rows);

  auto samples = h5::Table<SampleRecord>::create(f, "samples", ca::testing::sample_record_type());
  for (std::uint64_t r = 0; r < rows.size(); ++r) {
    for (std::int64_t i = 0; i < samples_per_row; ++i) samples.append(SampleRecord{r, i, rows[r].time_us + i, 0.25});
  }
  f.close();
}

cp::Profile sample_profile() {
  cp::Profile p;
  p.meta.version = "0.1.0";
  p.meta.command_line = "commscope-train --model tiny --steps 2";
  p.meta.clock = "steady_clock";
  p.meta.epoch_unix_ns = 1'700'000'000'000'000'000;
  p.meta.nranks = 2;
  p.meta.events_layout = "single";
  p.meta.attributes = {{"dp", "ddp"}, {"model", "tiny"}};
  p.ranks = {{0, "node0", 0, 100, "host", 3, 0, "", 0, 0, ""}, {1, "node1", -2'500, 120, "host", 3, 7, "", 0, 0, ""}};
  p.strings = {"", "step", "allreduce", "ring"};
  for (std::int32_t r = 0; r < 2; ++r) {
    std::vector<cp::Event> events;
    for (std::int32_t it = 0; it < 2; ++it) {
      cp::Event step;
      step.start_ns = it * 1000;
      step.end_ns = it * 1000 + 900;
      step.iteration = it;
      step.name = 1;
      step.kind = cp::EventKind::kIteration;
      events.push_back(step);
    }
    cp::Event comm;
    comm.start_ns = 100;
    comm.end_ns = 400;
    comm.id = 1;
    comm.bytes = 4096;
    comm.seq = 0;
    comm.iteration = 0;
    comm.name = 2;
    comm.detail = 3;
    comm.kind = cp::EventKind::kCommunication;
    events.push_back(comm);
    p.events.push_back(events);
    for (std::int32_t it = 0; it < 2; ++it) {
      cp::BreakdownRow row;
      row.rank = r;
      row.iteration = it;
      row.start_ns = it * 1000;
      row.window_ns = 900;
      row.kernel_ns = 500;
      row.intra_ns = 50;
      row.inter_ns = 50;
      row.comm_ns = 300;
      row.comm_wait_ns = 100;
      row.comm_transfer_ns = 200;
      row.overlap_ns = 10;
      row.kernels = 3;
      row.communications = 1;
      row.operators = 2;
      row.identity_ok = 1;
      p.breakdown.push_back(row);
    }
    p.operators.push_back({r, 2, 1, 300, 0, 300, 0});
  }
  return p;
}

std::vector<char> file_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

void write_bytes(const std::string& path, const std::vector<char>& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

// `call` must throw an InputError of one line naming `path` and containing `part`.
template <class Call>
void expect_input_error(Call&& call, const std::string& path, const std::string& part) {
  try {
    call();
    ADD_FAILURE() << "no InputError for " << path;
  } catch (const ca::InputError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find(path), std::string::npos) << what;
    EXPECT_NE(what.find(part), std::string::npos) << what;
    EXPECT_EQ(what.find('\n'), std::string::npos) << what;
  }
}

// ------------------------------------------------------------------------------ reading

TEST(BenchFile, ReadsEveryFieldBack) {
  const std::string path = temp_file("bench.h5");
  write_bench_file(path);
  const ca::BenchFile b = ca::read_bench_file(path);
  EXPECT_EQ(b.path, path);
  EXPECT_EQ(b.nranks, 2);
  EXPECT_EQ(b.device, "cpu");

  EXPECT_EQ(b.meta_value("schema"), "commscope.bench/1");
  EXPECT_EQ(b.meta_value("tool"), "commscope-bench");
  EXPECT_EQ(b.meta_value("command_line"), "commscope-bench allreduce --algo ring -b 8 -e 64K --out 'r .h5'");
  EXPECT_EQ(b.meta_value("hosts"), "node0:2");
  EXPECT_EQ(b.meta_value("nranks"), "2");
  EXPECT_EQ(b.meta_value("collectives"), "allreduce, allgather");
  EXPECT_EQ(b.meta_value("algorithms"), "all");
  EXPECT_EQ(b.meta_value("min_bytes"), "8");
  EXPECT_EQ(b.meta_value("max_bytes"), "65536");
  EXPECT_EQ(b.meta_value("step_bytes"), "0");
  EXPECT_EQ(b.meta_value("step_factor"), "4");
  EXPECT_EQ(b.meta_value("timeout_s"), "2.5");
  EXPECT_EQ(b.meta_value("root"), "0");
  EXPECT_EQ(b.meta_value("combine"), "max");
  EXPECT_EQ(b.meta_value("seed"), "18446744073709551615");  // uint64 beyond int64
  EXPECT_EQ(b.meta_value("segment_bytes"), "1048576");
  EXPECT_EQ(b.meta_value("no_such_attribute"), "");
  EXPECT_EQ(b.meta.size(), 30U);  // every attribute of /meta, none of /meta/env
  for (std::size_t i = 1; i < b.meta.size(); ++i) EXPECT_LT(b.meta[i - 1].first, b.meta[i].first);

  const std::vector<std::pair<std::string, std::string>> env = {{"OMPI_COMM_WORLD_SIZE", "2"}, {"UCX_TLS", "self,sm"}};
  EXPECT_EQ(b.env, env);

  ASSERT_EQ(b.rows.size(), 3U);
  const BenchRecord want[] = {bench_record(0, "allreduce", "ring", false, 8, 12.5),
                              bench_record(0, "allreduce", "ring", true, 8, 11.0),
                              bench_record(1, "allreduce", "ring", false, 65536, 80.0)};
  for (std::size_t i = 0; i < b.rows.size(); ++i) {
    const ca::BenchRow& got = b.rows[i];
    const BenchRecord& w = want[i];
    EXPECT_EQ(got.row, w.row);
    EXPECT_EQ(got.collective, "allreduce");
    EXPECT_EQ(got.algorithm, "ring");
    EXPECT_EQ(got.device, "cpu");
    EXPECT_EQ(got.type, "float");
    EXPECT_EQ(got.op, "sum");
    EXPECT_EQ(got.root, -1);
    EXPECT_EQ(got.in_place, w.in_place != 0);
    EXPECT_EQ(got.nranks, 2);
    EXPECT_EQ(got.bytes, w.bytes);
    EXPECT_EQ(got.count, w.count);
    EXPECT_EQ(got.iterations, 5);
    EXPECT_DOUBLE_EQ(got.time_us, w.time_us);
    EXPECT_DOUBLE_EQ(got.algbw_GBps, w.algbw_GBps);
    EXPECT_DOUBLE_EQ(got.busbw_GBps, w.busbw_GBps);
    EXPECT_EQ(got.nwrong, 0U);
    EXPECT_DOUBLE_EQ(got.min_us, w.min_us);
    EXPECT_DOUBLE_EQ(got.p50_us, w.p50_us);
    EXPECT_DOUBLE_EQ(got.p99_us, w.p99_us);
    EXPECT_DOUBLE_EQ(got.max_us, w.max_us);
    EXPECT_DOUBLE_EQ(got.skew_us, 0.25);
    EXPECT_EQ(got.slowest_rank, 1);
    EXPECT_EQ(got.sample_offset, w.sample_offset);
    EXPECT_EQ(got.sample_count, 5U);
  }
  ASSERT_EQ(b.sample_time_us.size(), 15U);  // /samples time_us, 5 per row, in file order
  EXPECT_DOUBLE_EQ(b.sample_time_us[0], 12.5);
  EXPECT_DOUBLE_EQ(b.sample_time_us[6], 12.0);
  EXPECT_DOUBLE_EQ(b.sample_time_us[14], 84.0);
  EXPECT_NO_THROW(ca::preflight(path, "bench"));
}

TEST(BenchFile, StringsUsingEveryByteOfTheirField) {
  const std::string path = temp_file("bench-wide.h5");
  {
    h5::File f = h5::File::create(path);
    h5::Group meta = f.create_group("meta");
    meta.set_attr("schema", "commscope.bench/1");
    meta.set_attr("nranks", std::int64_t{1});
    meta.set_attr("device", "cpu");
    BenchRecord r = bench_record(0, "reducescatter_xy", "0123456789abcdef", false, 8, 1.0);
    h5::set_fixed(r.type, "bfloat16");
    r.sample_count = 0;  // and no /samples table
    auto type = h5::CompoundType<BenchRecord>{};
    // Only the fields the reader needs, in another order: it selects by name.
    type.add("sample_count", &BenchRecord::sample_count)
        .add("sample_offset", &BenchRecord::sample_offset)
        .add("slowest_rank", &BenchRecord::slowest_rank)
        .add("skew_us", &BenchRecord::skew_us)
        .add("max_us", &BenchRecord::max_us)
        .add("p99_us", &BenchRecord::p99_us)
        .add("p50_us", &BenchRecord::p50_us)
        .add("min_us", &BenchRecord::min_us)
        .add("nwrong", &BenchRecord::nwrong)
        .add("busbw_GBps", &BenchRecord::busbw_GBps)
        .add("algbw_GBps", &BenchRecord::algbw_GBps)
        .add("time_us", &BenchRecord::time_us)
        .add("iterations", &BenchRecord::iterations)
        .add("count", &BenchRecord::count)
        .add("bytes", &BenchRecord::bytes)
        .add("nranks", &BenchRecord::nranks)
        .add("in_place", &BenchRecord::in_place)
        .add("root", &BenchRecord::root)
        .add("op", &BenchRecord::op)
        .add("type", &BenchRecord::type)
        .add("device", &BenchRecord::device)
        .add("algorithm", &BenchRecord::algorithm)
        .add("collective", &BenchRecord::collective)
        .add("row", &BenchRecord::row);
    auto t = h5::Table<BenchRecord>::create(f, "results", type);
    t.append(r);
    f.close();
  }
  const ca::BenchFile b = ca::read_bench_file(path);
  ASSERT_EQ(b.rows.size(), 1U);
  EXPECT_EQ(b.rows[0].collective, "reducescatter_xy");
  EXPECT_EQ(b.rows[0].algorithm, "0123456789abcdef");
  EXPECT_EQ(b.rows[0].type, "bfloat16");
  EXPECT_TRUE(b.env.empty());  // no /meta/env: none
  EXPECT_TRUE(b.sample_time_us.empty());
}

TEST(ProfileFile, ReadsEveryFieldBack) {
  const std::string path = temp_file("profile.h5");
  const cp::Profile want = sample_profile();
  cp::write_profile_file(want, path);

  const cp::Profile got = ca::read_profile_file(path, true);
  EXPECT_EQ(got.meta.schema, "commscope.profile/1");
  EXPECT_EQ(got.meta.version, want.meta.version);
  EXPECT_EQ(got.meta.command_line, want.meta.command_line);
  EXPECT_EQ(got.meta.clock, want.meta.clock);
  EXPECT_EQ(got.meta.epoch_unix_ns, want.meta.epoch_unix_ns);
  EXPECT_EQ(got.meta.nranks, 2);
  EXPECT_EQ(got.meta.events_layout, "single");
  EXPECT_EQ(got.meta.attributes, want.meta.attributes);
  ASSERT_EQ(got.ranks.size(), 2U);
  for (std::size_t r = 0; r < 2; ++r) {
    EXPECT_EQ(got.ranks[r].rank, want.ranks[r].rank);
    EXPECT_EQ(got.ranks[r].host, want.ranks[r].host);
    EXPECT_EQ(got.ranks[r].clock_offset_ns, want.ranks[r].clock_offset_ns);
    EXPECT_EQ(got.ranks[r].clock_error_ns, want.ranks[r].clock_error_ns);
    EXPECT_EQ(got.ranks[r].backend, want.ranks[r].backend);
    EXPECT_EQ(got.ranks[r].events, want.ranks[r].events);
    EXPECT_EQ(got.ranks[r].dropped_events, want.ranks[r].dropped_events);
  }
  EXPECT_EQ(got.strings, want.strings);
  ASSERT_EQ(got.events.size(), 2U);
  for (std::size_t r = 0; r < 2; ++r) {
    ASSERT_EQ(got.events[r].size(), want.events[r].size());
    for (std::size_t i = 0; i < got.events[r].size(); ++i) {
      const cp::Event& g = got.events[r][i];
      const cp::Event& w = want.events[r][i];
      EXPECT_EQ(g.start_ns, w.start_ns);
      EXPECT_EQ(g.end_ns, w.end_ns);
      EXPECT_EQ(g.id, w.id);
      EXPECT_EQ(g.bytes, w.bytes);
      EXPECT_EQ(g.seq, w.seq);
      EXPECT_EQ(g.iteration, w.iteration);
      EXPECT_EQ(g.name, w.name);
      EXPECT_EQ(g.detail, w.detail);
      EXPECT_EQ(g.kind, w.kind);
      EXPECT_EQ(g.track_kind, w.track_kind);
    }
  }
  expect_same_breakdown(got.breakdown, want.breakdown);
  expect_same_operators(got.operators, want.operators);

  // Without the events: the rest is the same.
  const cp::Profile light = ca::read_profile_file(path, false);
  EXPECT_EQ(light.breakdown.size(), want.breakdown.size());
  for (const auto& events : light.events) EXPECT_TRUE(events.empty());
  EXPECT_NO_THROW(ca::preflight(path, "profile"));
}

// ------------------------------------------------------------------------------- errors

TEST(InputErrors, MissingFile) {
  const std::string path = temp_file("missing.h5");
  expect_input_error([&] { ca::read_bench_file(path); }, path, "no such file");
  expect_input_error([&] { ca::read_profile_file(path); }, path, "no such file");
  expect_input_error([&] { ca::preflight(path, "bench"); }, path, "no such file");
  expect_input_error([&] { ca::preflight(path, "profile"); }, path, "no such file");
}

// A writer stopped before its rename (rank 0 killed) left PATH.partial: the error says where.
TEST(InputErrors, MissingFileBesideItsPartial) {
  const std::string path = temp_file("killed.h5");
  fs::remove(path);
  std::ofstream(path + ".partial") << "rows";
  const std::string where = "no such file: it was not completed (its writer stopped before renaming it: killed?); "
                            "what it wrote is in " +
                            path + ".partial";
  expect_input_error([&] { ca::read_bench_file(path); }, path, where);
  expect_input_error([&] { ca::read_profile_file(path); }, path, where);
  expect_input_error([&] { ca::preflight(path, "bench"); }, path, where);
  fs::remove(path + ".partial");
}

TEST(InputErrors, Directory) {
  const std::string path = temp_file("a-directory.h5");
  fs::create_directories(path);
  expect_input_error([&] { ca::read_bench_file(path); }, path, "is a directory");
  expect_input_error([&] { ca::read_profile_file(path); }, path, "is a directory");
}

TEST(InputErrors, TextFile) {
  const std::string path = temp_file("text.h5");
  std::ofstream(path) << "time,busbw\n8,0.1\n16,0.2\n";
  expect_input_error([&] { ca::read_bench_file(path); }, path, "not an HDF5 file");
  expect_input_error([&] { ca::read_profile_file(path); }, path, "not an HDF5 file");
  expect_input_error([&] { ca::preflight(path, "bench"); }, path, "not an HDF5 file");
}

TEST(InputErrors, EmptyFile) {
  const std::string path = temp_file("empty.h5");
  std::ofstream{path};
  expect_input_error([&] { ca::read_bench_file(path); }, path, "empty");
  expect_input_error([&] { ca::read_profile_file(path); }, path, "empty");
  expect_input_error([&] { ca::preflight(path, "profile"); }, path, "empty");
}

TEST(InputErrors, BenchFileGivenAsProfile) {
  const std::string path = temp_file("bench-as-profile.h5");
  write_bench_file(path);
  const std::string message = "is a commscope bench results file, not a profile (use 'commscope-report bench')";
  expect_input_error([&] { ca::read_profile_file(path); }, path, message);
  expect_input_error([&] { ca::preflight(path, "profile"); }, path, message);
}

TEST(InputErrors, ProfileGivenAsBenchFile) {
  const std::string path = temp_file("profile-as-bench.h5");
  cp::write_profile_file(sample_profile(), path);
  const std::string message = "is a commscope profile, not a bench results file (use 'commscope-report profile')";
  expect_input_error([&] { ca::read_bench_file(path); }, path, message);
  expect_input_error([&] { ca::preflight(path, "bench"); }, path, message);
}

TEST(InputErrors, OtherSchemaVersion) {
  const std::string path = temp_file("bench-v2.h5");
  write_bench_file(path, "commscope.bench/2");
  expect_input_error([&] { ca::read_bench_file(path); }, path,
                     "schema 'commscope.bench/2', expected 'commscope.bench/1'");
}

TEST(InputErrors, HdfFileOfSomethingElse) {
  const std::string no_meta = temp_file("other.h5");
  {
    h5::File f = h5::File::create(no_meta);
    f.create_group("data");
    f.close();
  }
  expect_input_error([&] { ca::read_bench_file(no_meta); }, no_meta, "no /meta group");
  expect_input_error([&] { ca::read_profile_file(no_meta); }, no_meta, "not a commscope profile");

  const std::string no_schema = temp_file("no-schema.h5");
  {
    h5::File f = h5::File::create(no_schema);
    f.create_group("meta").set_attr("tool", "something");
    f.close();
  }
  expect_input_error([&] { ca::read_bench_file(no_schema); }, no_schema, "no schema attribute");

  const std::string no_results = temp_file("no-results.h5");
  {
    h5::File f = h5::File::create(no_results);
    h5::Group meta = f.create_group("meta");
    meta.set_attr("schema", "commscope.bench/1");
    meta.set_attr("nranks", std::int64_t{1});
    meta.set_attr("device", "cpu");
    f.close();
  }
  expect_input_error([&] { ca::read_bench_file(no_results); }, no_results, "no /results");

  // A /results table that lacks a field the reader needs.
  const std::string missing_field = temp_file("missing-field.h5");
  {
    h5::File f = h5::File::create(missing_field);
    h5::Group meta = f.create_group("meta");
    meta.set_attr("schema", "commscope.bench/1");
    meta.set_attr("nranks", std::int64_t{1});
    meta.set_attr("device", "cpu");
    auto type = h5::CompoundType<BenchRecord>{}.add("row", &BenchRecord::row).add("bytes", &BenchRecord::bytes);
    auto t = h5::Table<BenchRecord>::create(f, "results", type);
    t.append(bench_record(0, "allreduce", "ring", false, 8, 1.0));
    f.close();
  }
  expect_input_error([&] { ca::read_bench_file(missing_field); }, missing_field, "cannot read it");
}

TEST(InputErrors, SamplesBeyondTheSamplesTable) {
  const std::string path = temp_file("bench-few-samples.h5");
  write_bench_file(path, "commscope.bench/1", 3);  // 9 samples; the last row claims 5..9
  expect_input_error([&] { ca::read_bench_file(path); }, path, "/results row 1 points at samples beyond the 9");
}

TEST(InputErrors, TruncatedFiles) {
  const std::string bench = temp_file("bench-whole.h5");
  write_bench_file(bench);
  const std::string profile = temp_file("profile-whole.h5");
  cp::write_profile_file(sample_profile(), profile);
  for (const auto& [whole, kind] : {std::pair{bench, "bench"}, std::pair{profile, "profile"}}) {
    const std::vector<char> bytes = file_bytes(whole);
    ASSERT_GT(bytes.size(), 2048U);
    for (std::size_t length : {std::size_t{1}, std::size_t{8}, std::size_t{100}, std::size_t{512}, std::size_t{1024},
                               bytes.size() / 3, bytes.size() / 2, bytes.size() - 100, bytes.size() - 1}) {
      SCOPED_TRACE(std::string(kind) + " truncated at " + std::to_string(length));
      const std::string path = temp_file(std::string(kind) + "-truncated-" + std::to_string(length) + ".h5");
      write_bytes(path, std::vector<char>(bytes.begin(), bytes.begin() + static_cast<std::ptrdiff_t>(length)));
      // Every truncation is refused (HDF5 checks the end of file against the superblock), in the
      // child of preflight and in the readers themselves; once the superblock is whole, as such.
      const std::string part =
          length >= 100 ? "truncated: " + std::to_string(length) + " of " + std::to_string(bytes.size()) + " bytes"
                        : "";
      expect_input_error([&] { ca::preflight(path, kind); }, path, part);
      if (std::string(kind) == "bench") {
        expect_input_error([&] { ca::read_bench_file(path); }, path, part);
      } else {
        expect_input_error([&] { ca::read_profile_file(path, true); }, path, part);
      }
    }
  }
}

TEST(Preflight, DamagedFilesNeverCrashTheCaller) {
  const std::string bench = temp_file("bench-undamaged.h5");
  write_bench_file(bench);
  const std::string profile = temp_file("profile-undamaged.h5");
  cp::write_profile_file(sample_profile(), profile);
  std::mt19937_64 random(2026);
  int fine = 0;
  int refused = 0;
  for (const auto& [whole, kind] : {std::pair{bench, "bench"}, std::pair{profile, "profile"}}) {
    const std::vector<char> original = file_bytes(whole);
    for (int variant = 0; variant < 25; ++variant) {
      std::vector<char> bytes = original;
      // 1..64 random bytes somewhere in the middle half of the file.
      const std::size_t count = 1 + random() % 64;
      const std::size_t offset = bytes.size() / 4 + random() % (bytes.size() / 2);
      for (std::size_t i = 0; i < count && offset + i < bytes.size(); ++i) {
        bytes[offset + i] = static_cast<char>(random() & 0xff);
      }
      const std::string path = temp_file(std::string(kind) + "-damaged-" + std::to_string(variant) + ".h5");
      write_bytes(path, bytes);
      SCOPED_TRACE(path);
      try {
        ca::preflight(path, kind);
        // The child read it: the parent's read gives the same outcome, without crashing.
        if (std::string(kind) == "bench") {
          (void)ca::read_bench_file(path);
        } else {
          (void)ca::read_profile_file(path, true);
        }
        ++fine;
      } catch (const ca::InputError& e) {
        const std::string what = e.what();
        EXPECT_NE(what.find(path), std::string::npos) << what;
        EXPECT_EQ(what.find('\n'), std::string::npos) << what;
        ++refused;
      }
    }
  }
  EXPECT_EQ(fine + refused, 50);
  std::printf("damaged files: %d read, %d refused\n", fine, refused);
}

TEST(Preflight, UnknownKind) {
  const std::string path = temp_file("bench-kind.h5");
  write_bench_file(path);
  EXPECT_THROW(ca::preflight(path, "trace"), std::invalid_argument);
}

}  // namespace

// The bench report's fits go through measurements(): one size whose mean is raised 10x by a
// stalled call must not hide a protocol switch (the fit takes the median call there).
#include "../src/report/bench_fits.hpp"

namespace {

commscope::analysis::BenchFile switching_file(bool with_samples) {
  commscope::analysis::BenchFile f;
  f.nranks = 2;
  f.device = "cpu";
  for (int e = 3; e <= 16; ++e) {
    const double bytes = std::ldexp(1.0, e);
    const double t = bytes <= 1024 ? 1.0 + bytes / 1e3 : 20.0 + bytes / 1e3;  // switch above 1 KiB
    commscope::analysis::BenchRow r;
    r.collective = "allreduce", r.algorithm = "mpi", r.device = "cpu", r.type = "f32", r.op = "sum";
    r.nranks = 2, r.bytes = static_cast<std::uint64_t>(bytes), r.count = r.bytes / 4;
    r.sample_offset = f.sample_time_us.size();
    double sum = 0;
    for (int i = 0; i < 20; ++i) {
      const double s = (e == 3 && i == 7) ? 200 * t : t * (1 + 0.001 * (i % 3));  // one stall at 8 B
      f.sample_time_us.push_back(s);
      sum += s;
    }
    r.sample_count = with_samples ? 20 : 0;
    r.time_us = sum / 20;
    r.busbw_GBps = bytes / r.time_us * 1e-3;
    f.rows.push_back(r);
  }
  if (!with_samples) f.sample_time_us.clear();
  return f;
}

TEST(BenchFits, AStalledCallDoesNotHideAProtocolSwitch) {
  const auto data = commscope::analysis::measurements(switching_file(true));
  ASSERT_EQ(data.size(), 1U);
  const auto& m = data[0].second.at(0);
  EXPECT_GT(m.time_us[0], 10.0);              // the mean of 20 calls with one 200x stall
  EXPECT_NEAR(m.typical_us[0], 1.008, 0.01);  // the median call
  ASSERT_EQ(m.regimes.size(), 2U);
  EXPECT_EQ(m.regimes[0].to_bytes, 1024);
  EXPECT_EQ(m.regimes[1].from_bytes, 2048);
  for (const auto& r : m.regimes) EXPECT_GT(r.fit.r_squared, 0.99);
}

TEST(BenchFits, WithoutSamplesTheRowTimeIsFitted) {
  const auto data = commscope::analysis::measurements(switching_file(false));
  const auto& m = data.at(0).second.at(0);
  EXPECT_EQ(m.typical_us, m.time_us);
}

}  // namespace

// The machine model in a bench file's header: none in a file without it, every figure of one with
// it, and a damaged one an InputError naming the file and the line.
TEST(BenchFile, MachineModel) {
  const std::string path = temp_file("bench-machine.h5");
  write_bench_file(path);
  EXPECT_TRUE(ca::machine_model_of(ca::read_bench_file(path)).nodes.empty());
  auto set_model = [&](const std::string& text) {
    h5::File f = h5::File::open_rw(path);
    f.open_group("meta").set_attr("machine_model", text);
    f.close();
  };
  set_model(
      "node host=host1 ranks=2 cpus=4 gpus=0 copy=9.5GB/s copy.source=measured nic=0.125GB/s nic.source=user "
      "nic.detail=\"--link-rate host1=1gbit\"\n"
      "node host=host2 ranks=2 cpus=4 gpus=0 nic.source=none nic.detail=\"eth0: speed -1 (not known)\"\n");
  const commscope::MachineModel m = ca::machine_model_of(ca::read_bench_file(path));
  ASSERT_EQ(m.nodes.size(), 2U);
  EXPECT_EQ(m.nodes[0].host, "host1");
  EXPECT_EQ(m.nodes[0].copy.gbytes_per_s, 9.5);
  EXPECT_EQ(m.nodes[0].nic.source, commscope::FigureSource::user);
  EXPECT_EQ(m.nodes[0].nic.detail, "--link-rate host1=1gbit");
  EXPECT_FALSE(m.nodes[1].nic.known());
  set_model("node nic=1gbit\n");
  try {
    (void)ca::machine_model_of(ca::read_bench_file(path));
    FAIL() << "a damaged model was read";
  } catch (const ca::InputError& e) {
    EXPECT_EQ(std::string(e.what()),
              path + ": /meta machine_model: line 1: no host= (a host name, or * for every node)");
  }
}
