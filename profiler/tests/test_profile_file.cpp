// Profile files (schema commscope.profile/1): every field of every struct written and read back,
// in the single and the per-rank layout; the .partial-then-rename rule; and bad files, each of
// which must give one ProfileFileError line naming the file (never a crash).
#include <gtest/gtest.h>
#include <stdlib.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <limits>
#include <random>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "commscope/formats/profile_file.hpp"
#include "commscope/h5/h5.hpp"
#include "expect_rows.hpp"

namespace fs = std::filesystem;
namespace h5 = commscope::h5;
using namespace commscope::profiler;

namespace {

constexpr std::int64_t kI64Min = std::numeric_limits<std::int64_t>::min();
constexpr std::int64_t kI64Max = std::numeric_limits<std::int64_t>::max();
constexpr std::uint64_t kU64Max = std::numeric_limits<std::uint64_t>::max();

const std::string kHost64(64, 'h');  // fills /ranks' char[64] exactly

std::vector<std::string> test_strings() {
  return {"",
          "iteration",
          "forward pass",
          "matmul \"quoted\" 'single'",
          "UTF-8: \xc3\xa9t\xc3\xa9 \xe2\x86\x92 \xf0\x9f\x9a\x80",
          "ring",
          "allreduce",
          "HtoD",
          "cudaLaunchKernel",
          "back\\slash\nnew line\ttab",
          "cudaStreamSynchronize",
          "memset zero"};
}

// Every EventKind, both TrackKinds, extreme values. Distinct per rank.
std::vector<Event> test_events(int rank) {
  const auto r = static_cast<std::int64_t>(rank);
  std::vector<Event> events;
  const auto add = [&](EventKind kind, TrackKind track_kind, std::uint32_t name, std::uint32_t detail) {
    const auto i = static_cast<std::int64_t>(events.size());
    Event e;
    e.start_ns = -1'000'000'007 + i * 1'000 + r * 100'000;
    e.end_ns = e.start_ns + 5'000 + i * 3;
    e.id = kU64Max - static_cast<std::uint64_t>(i + 10 * r);
    e.parent = i % 2 == 0 ? 0 : kU64Max - 1 - static_cast<std::uint64_t>(r);
    e.correlation = 0x1234'5678'9abc'def0ULL + static_cast<std::uint64_t>(i + r);
    e.bytes = i % 3 == 0 ? kI64Max - r : -(i + 1) * 1'000'003;
    e.seq = i % 2 == 0 ? -1 : kI64Min + i + r;
    e.iteration = i % 4 == 0 ? -1 : static_cast<std::int32_t>(2'000'000'000 + i + r);
    e.name = name;
    e.detail = detail;
    e.track = track_kind == TrackKind::kDeviceStream ? 0xFFFF'FFF0u + static_cast<std::uint32_t>(i)
                                                     : 3u + static_cast<std::uint32_t>(i);
    e.device = track_kind == TrackKind::kDeviceStream ? static_cast<std::int16_t>(32767 - i - r) : std::int16_t{-1};
    e.kind = kind;
    e.track_kind = track_kind;
    events.push_back(e);
  };
  add(EventKind::kIteration, TrackKind::kHostThread, 1, 0);
  add(EventKind::kOperator, TrackKind::kHostThread, 2, 0);
  add(EventKind::kOperator, TrackKind::kHostThread, 3, 4);
  add(EventKind::kKernel, TrackKind::kDeviceStream, 3, 0);
  add(EventKind::kKernel, TrackKind::kHostThread, 4, 9);
  add(EventKind::kMemcpy, TrackKind::kDeviceStream, 7, 7);
  add(EventKind::kMemset, TrackKind::kDeviceStream, 11, 0);
  add(EventKind::kCommunication, TrackKind::kHostThread, 6, 5);
  add(EventKind::kCommunication, TrackKind::kDeviceStream, 6, 5);
  add(EventKind::kRuntime, TrackKind::kHostThread, 8, 0);
  add(EventKind::kSync, TrackKind::kHostThread, 10, 0);
  add(static_cast<EventKind>(kEventKindCount - 1), TrackKind::kDeviceStream, 9, 9);
  return events;
}

Profile test_profile(const std::string& layout) {
  Profile p;
  p.meta.version = "0.1.0-test \"v\"";
  p.meta.command_line = "mpirun -n 3 train --model 'big one' --note \"x\\y\"";
  p.meta.clock = "tsc";
  p.meta.epoch_unix_ns = 1'700'000'000'123'456'789;
  p.meta.nranks = 3;
  p.meta.events_layout = layout;
  // In name order: read_profile returns the attributes in name order.
  p.meta.attributes = {
      {"Flags", "--a=1 --b \xc3\xa9"}, {"model", "gpt \"tiny\"\nline 2"}, {"empty value", ""}, {"zeta", "last"}};
  std::sort(p.meta.attributes.begin(), p.meta.attributes.end());
  p.ranks = {
      {0, "node-0", 0, 17, "host", 12, 0, "0", 1, 2, "a49163cb-ed7a-4a4c-a5d9-9fccd3f69e41"},
      {1, "host with spaces", kI64Min + 5, kI64Max - 3, "cupti", kI64Max, 9'000'000'000, "0-3,8,10-11", 7, 64,
       std::string(47, 'm')},
      {2, kHost64, -123'456'789'012, 0, "cupti-16-bytes!!", 0, -1, std::string(63, '9'), 0, 0, ""},
  };
  p.strings = test_strings();
  for (int r = 0; r < 3; ++r) p.events.push_back(test_events(r));
  for (std::int32_t r = 0; r < 3; ++r) {
    for (std::int32_t it = -1; it < 2; ++it) {
      BreakdownRow b;
      b.rank = r;
      b.iteration = it * 1'000'000 + r;
      b.start_ns = kI64Min + 1'000 * r + (it + 1);
      b.window_ns = kI64Max - r;
      b.kernel_ns = 1'000'001 + r;
      b.intra_ns = -7 - r;
      b.inter_ns = 300 + it;
      b.comm_ns = 4'000'000'000'000LL + r;
      b.comm_wait_ns = 11 + r;
      b.comm_transfer_ns = 4'000'000'000'000LL - 11;
      b.overlap_ns = -1;
      b.kernels = 2'147'483'647 - r;
      b.communications = -2'147'483'647 + it;
      b.operators = 42 + r;
      b.identity_ok = static_cast<std::uint8_t>(it == 0 ? 1 : it == 1 ? 255 : 0);
      p.breakdown.push_back(b);
    }
    for (std::uint32_t name : {2u, 3u, 4u}) {
      p.operators.push_back({r, name, kI64Max - name, -static_cast<std::int64_t>(name), 1'000'000'000'000LL * name,
                             kI64Min + r, 77 + r, 2'000'000'000'000LL * name + r});
    }
  }
  return p;
}

void expect_profiles_equal(const Profile& got, const Profile& want, bool with_events = true) {
  EXPECT_EQ(got.meta.schema, std::string(kProfileSchema));
  EXPECT_EQ(got.meta.version, want.meta.version);
  EXPECT_EQ(got.meta.command_line, want.meta.command_line);
  EXPECT_EQ(got.meta.clock, want.meta.clock);
  EXPECT_EQ(got.meta.epoch_unix_ns, want.meta.epoch_unix_ns);
  EXPECT_EQ(got.meta.nranks, want.meta.nranks);
  EXPECT_EQ(got.meta.events_layout, want.meta.events_layout);
  EXPECT_EQ(got.meta.event_files, want.meta.event_files);
  EXPECT_EQ(got.meta.attributes, want.meta.attributes);

  ASSERT_EQ(got.ranks.size(), want.ranks.size());
  for (std::size_t i = 0; i < want.ranks.size(); ++i) {
    SCOPED_TRACE("ranks[" + std::to_string(i) + "]");
    EXPECT_EQ(got.ranks[i].rank, want.ranks[i].rank);
    EXPECT_EQ(got.ranks[i].host, want.ranks[i].host);
    EXPECT_EQ(got.ranks[i].clock_offset_ns, want.ranks[i].clock_offset_ns);
    EXPECT_EQ(got.ranks[i].clock_error_ns, want.ranks[i].clock_error_ns);
    EXPECT_EQ(got.ranks[i].backend, want.ranks[i].backend);
    EXPECT_EQ(got.ranks[i].events, want.ranks[i].events);
    EXPECT_EQ(got.ranks[i].dropped_events, want.ranks[i].dropped_events);
    EXPECT_EQ(got.ranks[i].cpus, want.ranks[i].cpus);
    EXPECT_EQ(got.ranks[i].cpu_count, want.ranks[i].cpu_count);
    EXPECT_EQ(got.ranks[i].node_cpus, want.ranks[i].node_cpus);
    EXPECT_EQ(got.ranks[i].machine, want.ranks[i].machine);
  }
  EXPECT_EQ(got.strings, want.strings);

  expect_same_breakdown(got.breakdown, want.breakdown);
  expect_same_operators(got.operators, want.operators);

  if (!with_events) {
    EXPECT_TRUE(got.events.empty());
    return;
  }
  ASSERT_EQ(got.events.size(), want.events.size());
  for (std::size_t r = 0; r < want.events.size(); ++r) {
    ASSERT_EQ(got.events[r].size(), want.events[r].size()) << "rank " << r;
    for (std::size_t i = 0; i < want.events[r].size(); ++i) {
      SCOPED_TRACE("events[" + std::to_string(r) + "][" + std::to_string(i) + "]");
      const Event& g = got.events[r][i];
      const Event& w = want.events[r][i];
      EXPECT_EQ(g.start_ns, w.start_ns);
      EXPECT_EQ(g.end_ns, w.end_ns);
      EXPECT_EQ(g.id, w.id);
      EXPECT_EQ(g.parent, w.parent);
      EXPECT_EQ(g.correlation, w.correlation);
      EXPECT_EQ(g.bytes, w.bytes);
      EXPECT_EQ(g.seq, w.seq);
      EXPECT_EQ(g.iteration, w.iteration);
      EXPECT_EQ(g.name, w.name);
      EXPECT_EQ(g.detail, w.detail);
      EXPECT_EQ(g.track, w.track);
      EXPECT_EQ(g.device, w.device);
      EXPECT_EQ(g.kind, w.kind);
      EXPECT_EQ(g.track_kind, w.track_kind);
    }
  }
}

std::vector<char> read_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

void write_bytes(const std::string& path, const char* data, std::size_t size) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(data, static_cast<std::streamsize>(size));
}

class ProfileFileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const char* base = std::getenv("COMMSCOPE_TEST_TMP");
    std::string pattern = (fs::path(base != nullptr && *base != '\0' ? base : "/tmp") / "profile_file_XXXXXX").string();
    ASSERT_NE(mkdtemp(pattern.data()), nullptr) << pattern;
    dir_ = pattern;
  }
  void TearDown() override {
    std::error_code ignored;
    if (!HasFailure()) fs::remove_all(dir_, ignored);
  }
  std::string file(const std::string& name) const { return (dir_ / name).string(); }

  // Writes `p` in the single layout (rank 0's events in two pieces), returns the path.
  std::string write_single(const Profile& p, const std::string& name) {
    const std::string path = file(name);
    ProfileWriter writer(path, p.meta, p.ranks, p.strings);
    const std::span<const Event> rank0(p.events[0]);
    writer.append_events(0, rank0.first(5));
    writer.write_operators(p.operators);
    writer.append_events(0, rank0.subspan(5));
    for (int r = 1; r < static_cast<int>(p.events.size()); ++r)
      writer.append_events(r, p.events[static_cast<std::size_t>(r)]);
    writer.write_breakdown(p.breakdown);
    writer.close();
    return path;
  }

  // Writes `p` in the per-rank layout: one rank file per rank, then the main file.
  std::string write_per_rank(Profile& p, const std::string& name) {
    const std::string path = file(name);
    p.meta.events_layout = "per-rank";
    p.meta.event_files.clear();
    for (int r = 0; r < p.meta.nranks; ++r) {
      const std::string rank_path = rank_event_file_name(path, r);
      p.meta.event_files.push_back(fs::path(rank_path).filename().string());
      write_rank_event_file(rank_path, p.meta, r, p.strings, p.events[static_cast<std::size_t>(r)]);
      EXPECT_TRUE(fs::exists(rank_path));
      EXPECT_FALSE(fs::exists(rank_path + ".partial"));
    }
    ProfileWriter writer(path, p.meta, p.ranks, p.strings);
    writer.write_breakdown(p.breakdown);
    writer.write_operators(p.operators);
    writer.close();
    return path;
  }

  // read_profile(path) must throw a ProfileFileError: one line, naming `names_file`, containing `needle`.
  void expect_error(const std::string& path, const std::string& needle, const std::string& names_file = "") {
    const std::string named = names_file.empty() ? path : names_file;
    try {
      (void)read_profile(path);
      ADD_FAILURE() << "no ProfileFileError for " << path;
    } catch (const ProfileFileError& e) {
      const std::string what = e.what();
      EXPECT_NE(what.find(named), std::string::npos) << what;
      EXPECT_NE(what.find(needle), std::string::npos) << "expected '" << needle << "' in: " << what;
      EXPECT_EQ(what.find('\n'), std::string::npos) << what;
    } catch (const std::exception& e) {
      ADD_FAILURE() << "not a ProfileFileError: " << e.what();
    }
  }

  fs::path dir_;
};

TEST(RankEventFileName, FollowsTheDocumentedPattern) {
  EXPECT_EQ(rank_event_file_name("dir/run.h5", 3), "dir/run.rank00003.h5");
  EXPECT_EQ(rank_event_file_name("/abs/x.y/run.h5", 0), "/abs/x.y/run.rank00000.h5");
  EXPECT_EQ(rank_event_file_name("run", 12), "run.rank00012.h5");
  EXPECT_EQ(rank_event_file_name("run.hdf5", 1), "run.hdf5.rank00001.h5");
  EXPECT_EQ(rank_event_file_name("run.h5", 1023), "run.rank01023.h5");
  EXPECT_EQ(rank_event_file_name("run.h5", 123456), "run.rank123456.h5");
  EXPECT_THROW((void)rank_event_file_name("run.h5", -1), std::invalid_argument);
}

TEST_F(ProfileFileTest, SingleLayoutRoundTripsEveryField) {
  const Profile want = test_profile("single");
  const std::string path = write_single(want, "single.h5");
  const Profile got = read_profile(path);
  expect_profiles_equal(got, want);

  // The layout as documented, seen through plain commscope::h5.
  h5::File f = h5::File::open(path);
  h5::Group meta = f.open_group("meta");
  EXPECT_EQ(meta.attr_string("schema"), "commscope.profile/1");
  EXPECT_EQ(meta.attr_int("nranks"), 3);
  EXPECT_FALSE(meta.has_attr("event_files"));
  EXPECT_EQ(meta.open_group("attributes").attr_string("zeta"), "last");
  EXPECT_TRUE(f.exists("/events/rank00000"));
  EXPECT_TRUE(f.exists("/events/rank00002"));
  EXPECT_EQ(f.open_dataset("/events/rank00000").size(), want.events[0].size());
  EXPECT_EQ(f.open_dataset("/events/rank00000").attr_string("units"), "ns");
  EXPECT_EQ(h5::read_strings(f, "strings"), want.strings);
  EXPECT_EQ(f.open_dataset("ranks").size(), 3u);
}

// Files written before /ranks had the CPUs read, with the CPUs unknown ("", 0, 0).
TEST_F(ProfileFileTest, RanksWithoutPlacementReadAsUnknown) {
  const Profile want = test_profile("single");
  const std::string path = write_single(want, "no-placement.h5");
  struct OldRankRow {
    std::int32_t rank;
    char host[64];
    std::int64_t clock_offset_ns, clock_error_ns;
    char backend[16];
    std::int64_t events, dropped_events;
  };
  {
    h5::File f = h5::File::open_rw(path);
    ASSERT_GE(H5Ldelete(f.id(), "ranks", H5P_DEFAULT), 0);
    h5::CompoundType<OldRankRow> t;
    t.add("rank", &OldRankRow::rank)
        .add("host", &OldRankRow::host)
        .add("clock_offset_ns", &OldRankRow::clock_offset_ns)
        .add("clock_error_ns", &OldRankRow::clock_error_ns)
        .add("backend", &OldRankRow::backend)
        .add("events", &OldRankRow::events)
        .add("dropped_events", &OldRankRow::dropped_events);
    std::vector<OldRankRow> rows(want.ranks.size());
    for (std::size_t i = 0; i < rows.size(); ++i) {
      const RankInfo& r = want.ranks[i];
      rows[i] = {r.rank, {}, r.clock_offset_ns, r.clock_error_ns, {}, r.events, r.dropped_events};
      h5::set_fixed(rows[i].host, r.host);
      h5::set_fixed(rows[i].backend, r.backend);
    }
    h5::Table<OldRankRow>::create(f, "ranks", t).append(rows);
    f.close();
  }
  const Profile got = read_profile(path);
  ASSERT_EQ(got.ranks.size(), want.ranks.size());
  for (std::size_t i = 0; i < got.ranks.size(); ++i) {
    EXPECT_EQ(got.ranks[i].host, want.ranks[i].host);
    EXPECT_EQ(got.ranks[i].events, want.ranks[i].events);
    EXPECT_EQ(got.ranks[i].cpus, "");
    EXPECT_EQ(got.ranks[i].cpu_count, 0);
    EXPECT_EQ(got.ranks[i].node_cpus, 0);
    EXPECT_EQ(got.ranks[i].machine, "");
  }
}

// Files written before /operators had total_ns read with the total unknown.
TEST_F(ProfileFileTest, OperatorsWithoutTotalReadAsUnknown) {
  const Profile want = test_profile("single");
  const std::string path = write_single(want, "no-total.h5");
  struct OldOperatorRow {
    std::int32_t rank;
    std::uint32_t name;
    std::int64_t calls, host_ns, kernel_ns, comm_ns, intra_ns;
  };
  {
    h5::File f = h5::File::open_rw(path);
    ASSERT_GE(H5Ldelete(f.id(), "operators", H5P_DEFAULT), 0);
    h5::CompoundType<OldOperatorRow> t;
    t.add("rank", &OldOperatorRow::rank)
        .add("name", &OldOperatorRow::name)
        .add("calls", &OldOperatorRow::calls)
        .add("host_ns", &OldOperatorRow::host_ns)
        .add("kernel_ns", &OldOperatorRow::kernel_ns)
        .add("comm_ns", &OldOperatorRow::comm_ns)
        .add("intra_ns", &OldOperatorRow::intra_ns);
    std::vector<OldOperatorRow> rows;
    for (const OperatorTotalRow& o : want.operators)
      rows.push_back({o.rank, o.name, o.calls, o.host_ns, o.kernel_ns, o.comm_ns, o.intra_ns});
    h5::Table<OldOperatorRow>::create(f, "operators", t).append(rows);
    f.close();
  }
  const Profile got = read_profile(path);
  ASSERT_EQ(got.operators.size(), want.operators.size());
  for (std::size_t i = 0; i < got.operators.size(); ++i) {
    EXPECT_EQ(got.operators[i].host_ns, want.operators[i].host_ns);
    EXPECT_EQ(got.operators[i].intra_ns, want.operators[i].intra_ns);
    EXPECT_EQ(got.operators[i].total_ns, commscope::profiler::kUnknownTotal);
  }
}

TEST_F(ProfileFileTest, WithoutEventsReadsEverythingElse) {
  const Profile want = test_profile("single");
  const std::string path = write_single(want, "no_events.h5");
  expect_profiles_equal(read_profile(path, false), want, false);
}

TEST_F(ProfileFileTest, RankWithoutEventsTableReadsAsEmpty) {
  Profile want = test_profile("single");
  const std::string path = file("sparse.h5");
  {
    ProfileWriter writer(path, want.meta, want.ranks, want.strings);
    writer.append_events(1, want.events[1]);
    writer.close();  // /breakdown and /operators are created empty
  }
  want.events[0].clear();
  want.events[2].clear();
  want.breakdown.clear();
  want.operators.clear();
  const Profile got = read_profile(path);
  ASSERT_EQ(got.events.size(), 3u);
  expect_profiles_equal(got, want);
}

TEST_F(ProfileFileTest, AttributesComeBackInNameOrder) {
  Profile p = test_profile("single");
  p.meta.attributes = {{"b", "2"}, {"a", "1"}, {"c", "3"}, {"a", "again"}};
  const Profile got = read_profile(write_single(p, "attrs.h5"));
  const std::vector<std::pair<std::string, std::string>> want{{"a", "again"}, {"b", "2"}, {"c", "3"}};
  EXPECT_EQ(got.meta.attributes, want);
}

TEST_F(ProfileFileTest, PerRankLayoutRoundTripsEveryField) {
  Profile want = test_profile("per-rank");
  const std::string path = write_per_rank(want, "run.h5");
  ASSERT_EQ(want.meta.event_files,
            (std::vector<std::string>{"run.rank00000.h5", "run.rank00001.h5", "run.rank00002.h5"}));
  expect_profiles_equal(read_profile(path), want);
  expect_profiles_equal(read_profile(path, false), want, false);

  h5::File main = h5::File::open(path);
  EXPECT_FALSE(main.exists("events"));
  EXPECT_EQ(main.open_group("meta").attr_strings("event_files"), want.meta.event_files);
  h5::File rank_file = h5::File::open(file("run.rank00002.h5"));
  h5::Group meta = rank_file.open_group("meta");
  EXPECT_EQ(meta.attr_string("schema"), "commscope.profile/1");
  EXPECT_EQ(meta.attr_int("rank"), 2);
  EXPECT_EQ(meta.attr_int("nranks"), 3);
  EXPECT_EQ(meta.attr_string("main_file"), "run.h5");
  EXPECT_EQ(h5::read_strings(rank_file, "strings"), want.strings);
  EXPECT_EQ(rank_file.open_dataset("events").size(), want.events[2].size());

  // Rank files are read relative to the main file's folder, not the working directory.
  const fs::path moved = dir_ / "moved";
  fs::create_directory(moved);
  for (const char* name : {"run.h5", "run.rank00000.h5", "run.rank00001.h5", "run.rank00002.h5"}) {
    fs::copy_file(dir_ / name, moved / name);
  }
  expect_profiles_equal(read_profile((moved / "run.h5").string()), want);
}

TEST_F(ProfileFileTest, PerRankStringTablesThatDifferAreMapped) {
  Profile want = test_profile("per-rank");
  const std::string path = write_per_rank(want, "remap.h5");
  // Rewrite rank 1's file with its own string table: the same names under other ids.
  std::vector<std::string> own{"", "extra only in rank 1"};
  for (std::size_t i = want.strings.size() - 1; i > 0; --i) own.push_back(want.strings[i]);
  std::vector<Event> events = want.events[1];
  for (Event& e : events) {
    e.name = e.name == 0 ? 0 : static_cast<std::uint32_t>(own.size() - e.name);
    e.detail = e.detail == 0 ? 0 : static_cast<std::uint32_t>(own.size() - e.detail);
  }
  write_rank_event_file(file("remap.rank00001.h5"), want.meta, 1, own, events);
  const Profile got = read_profile(path);
  ASSERT_EQ(got.strings.size(), want.strings.size() + 1);
  EXPECT_EQ(got.strings.back(), "extra only in rank 1");
  ASSERT_EQ(got.events[1].size(), want.events[1].size());
  for (std::size_t i = 0; i < got.events[1].size(); ++i) {
    EXPECT_EQ(got.strings.at(got.events[1][i].name), want.strings.at(want.events[1][i].name)) << i;
    EXPECT_EQ(got.strings.at(got.events[1][i].detail), want.strings.at(want.events[1][i].detail)) << i;
  }
}

TEST_F(ProfileFileTest, PartialUntilClosed) {
  const Profile p = test_profile("single");
  const std::string path = file("partial.h5");
  {
    ProfileWriter writer(path, p.meta, p.ranks, p.strings);
    EXPECT_TRUE(fs::exists(path + ".partial"));
    EXPECT_FALSE(fs::exists(path));
    writer.append_events(0, p.events[0]);
    writer.write_breakdown(p.breakdown);
    EXPECT_TRUE(fs::exists(path + ".partial"));
    EXPECT_FALSE(fs::exists(path));
    writer.close();
    EXPECT_FALSE(fs::exists(path + ".partial"));
    EXPECT_TRUE(fs::exists(path));
    writer.close();  // idempotent
    EXPECT_THROW(writer.append_events(0, p.events[0]), std::logic_error);
  }
  EXPECT_TRUE(fs::exists(path));
}

// Session's stream: the tables grow and change between flushes; after each flush the .partial
// file reads as a profile of what it holds, and the closed file as the whole.
TEST_F(ProfileFileTest, AppendedStepByStepReadsBackAfterEachFlush) {
  const Profile want = test_profile("single");
  const std::string path = file("stream.h5");
  const std::vector<std::string> first(want.strings.begin(), want.strings.begin() + 5);
  std::vector<RankInfo> ranks = want.ranks;
  for (RankInfo& r : ranks) r.events = 0;
  ProfileWriter writer(path, want.meta, ranks, {""}, 4);  // 4-row event chunks: appends cross them
  // What a stop would publish now (a copy: this process has the file open for writing).
  const auto published = [&] {
    const std::string copy = file("published.h5");
    fs::copy_file(path + ".partial", copy, fs::copy_options::overwrite_existing);
    return read_profile(copy);
  };
  writer.flush();
  const Profile empty = published();
  EXPECT_TRUE(empty.breakdown.empty());
  EXPECT_TRUE(empty.operators.empty());
  // Step 1: the first strings, half of every rank's events, the first rows.
  writer.replace_strings(first);
  std::vector<BreakdownRow> rows;
  for (int r = 0; r < 3; ++r) {
    const std::vector<Event>& e = want.events[static_cast<std::size_t>(r)];
    std::vector<Event> half(e.begin(), e.begin() + static_cast<std::ptrdiff_t>(e.size() / 2));
    std::erase_if(half, [&](const Event& x) {
      return x.name >= first.size() || x.detail >= first.size() || x.communicator >= first.size();
    });
    writer.append_events(r, half);
    ranks[static_cast<std::size_t>(r)].events = static_cast<std::int64_t>(half.size());
  }
  rows.push_back(want.breakdown[0]);
  writer.write_breakdown(std::span<const BreakdownRow>(rows));
  writer.replace_operators(std::span<const OperatorTotalRow>(want.operators).first(1));
  writer.replace_ranks(ranks);
  writer.flush();
  const Profile step1 = published();
  EXPECT_EQ(step1.strings, first);
  ASSERT_EQ(step1.breakdown.size(), 1u);
  EXPECT_EQ(std::memcmp(&step1.breakdown[0], &want.breakdown[0], sizeof(BreakdownRow)), 0);
  EXPECT_EQ(step1.operators.size(), 1u);
  for (int r = 0; r < 3; ++r)
    EXPECT_EQ(step1.events[static_cast<std::size_t>(r)].size(),
              static_cast<std::size_t>(ranks[static_cast<std::size_t>(r)].events));
  EXPECT_THROW(writer.replace_strings({""}), std::invalid_argument);  // ids never go away
  // The rest: every string, the whole tables.
  writer.replace_strings(want.strings);
  writer.replace_breakdown(want.breakdown);
  writer.replace_operators(want.operators);
  writer.replace_ranks(want.ranks);
  writer.flush();
  writer.close();
  EXPECT_FALSE(fs::exists(path + ".partial"));
  const Profile got = read_profile(path, false);
  expect_profiles_equal(got, want, false);
}

TEST_F(ProfileFileTest, DestroyedWithoutCloseLeavesThePartialFile) {
  const Profile p = test_profile("single");
  const std::string path = file("abandoned.h5");
  {
    ProfileWriter writer(path, p.meta, p.ranks, p.strings);
    writer.append_events(0, p.events[0]);
  }
  EXPECT_FALSE(fs::exists(path));
  ASSERT_TRUE(fs::exists(path + ".partial"));
  // It is a readable HDF5 file, but not a complete profile: no /breakdown yet.
  expect_error(path + ".partial", "missing table 'breakdown'");
}

TEST_F(ProfileFileTest, WriterRefusesWhatTheReaderWouldReject) {
  Profile p = test_profile("single");
  const std::string path = file("refused.h5");
  {
    ProfileWriter writer(path, p.meta, p.ranks, p.strings);
    std::vector<Event> bad = p.events[0];
    bad[3].name = static_cast<std::uint32_t>(p.strings.size());
    EXPECT_THROW(writer.append_events(0, bad), std::invalid_argument);
    bad[3].name = 1;
    bad[4].kind = static_cast<EventKind>(kEventKindCount);
    EXPECT_THROW(writer.append_events(0, bad), std::invalid_argument);
    EXPECT_THROW(writer.append_events(3, p.events[0]), std::invalid_argument);
    EXPECT_THROW(writer.append_events(-1, p.events[0]), std::invalid_argument);
    std::vector<OperatorTotalRow> ops = p.operators;
    ops[1].name = 1000;
    EXPECT_THROW(writer.write_operators(ops), std::invalid_argument);
    writer.close();
  }
  EXPECT_EQ(read_profile(path).events[0].size(), 0u);  // nothing of the refused calls was written

  ProfileMeta meta = p.meta;
  EXPECT_THROW(ProfileWriter(file("a.h5"), meta, {}, p.strings), std::invalid_argument);  // 0 RankInfo, 3 ranks
  EXPECT_THROW(ProfileWriter(file("b.h5"), meta, p.ranks, {"not empty first"}), std::invalid_argument);
  meta.events_layout = "sideways";
  EXPECT_THROW(ProfileWriter(file("c.h5"), meta, p.ranks, p.strings), std::invalid_argument);
  meta.events_layout = "per-rank";  // without event_files
  EXPECT_THROW(ProfileWriter(file("d.h5"), meta, p.ranks, p.strings), std::invalid_argument);
  meta.event_files = {"x", "y", "z"};
  {
    ProfileWriter writer(file("e.h5"), meta, p.ranks, p.strings);
    EXPECT_THROW(writer.append_events(0, p.events[0]), std::logic_error);  // events go to rank files
    writer.close();
  }
  EXPECT_THROW(write_rank_event_file(file("f.h5"), meta, 3, p.strings, p.events[0]), std::invalid_argument);
  for (const char* name : {"a.h5", "b.h5", "c.h5", "d.h5", "f.h5"}) {
    EXPECT_FALSE(fs::exists(file(name)) || fs::exists(file(std::string(name) + ".partial"))) << name;
  }
}

// --- bad files: each a ProfileFileError naming the file, on one line

TEST_F(ProfileFileTest, MissingFile) {
  expect_error(file("nope.h5"), "no such file");
  expect_error(dir_.string(), "directory");
}

TEST_F(ProfileFileTest, NotAnHdf5File) {
  std::mt19937 random(12345);
  std::vector<char> bytes(4096);
  for (char& b : bytes) b = static_cast<char>(random() & 0xff);
  write_bytes(file("random.h5"), bytes.data(), bytes.size());
  expect_error(file("random.h5"), "not an HDF5 file");
  write_bytes(file("empty.h5"), "", 0);
  expect_error(file("empty.h5"), "not an HDF5 file");
  const std::string json = "{\"traceEvents\":[]}\n";
  write_bytes(file("trace.json"), json.data(), json.size());
  expect_error(file("trace.json"), "not an HDF5 file");
  // The signature followed by garbage: HDF5 itself refuses it.
  const char signature[8] = {'\x89', 'H', 'D', 'F', '\r', '\n', '\x1a', '\n'};
  std::copy(signature, signature + 8, bytes.begin());
  write_bytes(file("signature_then_garbage.h5"), bytes.data(), bytes.size());
  expect_error(file("signature_then_garbage.h5"), "corrupted");
}

TEST_F(ProfileFileTest, TruncatedFiles) {
  const std::string path = write_single(test_profile("single"), "whole.h5");
  const std::vector<char> bytes = read_bytes(path);
  ASSERT_GT(bytes.size(), 4096u);
  for (std::size_t length :
       {std::size_t{7}, std::size_t{8}, std::size_t{64}, std::size_t{511}, std::size_t{512}, std::size_t{2048},
        bytes.size() / 4, bytes.size() / 2, bytes.size() * 3 / 4, bytes.size() - 100, bytes.size() - 1}) {
    SCOPED_TRACE("length " + std::to_string(length));
    const std::string cut = file("cut_" + std::to_string(length) + ".h5");
    write_bytes(cut, bytes.data(), length);
    expect_error(cut, length < 8 ? "not an HDF5 file" : "HDF5");
  }
}

TEST_F(ProfileFileTest, Hdf5FilesThatAreNotProfiles) {
  {
    h5::File f = h5::File::create(file("no_meta.h5"));
    f.create_group("other").set_attr("schema", kProfileSchema);
  }
  expect_error(file("no_meta.h5"), "not a commscope profile");
  {
    h5::File f = h5::File::create(file("no_schema.h5"));
    f.create_group("meta").set_attr("tool", "something");
  }
  expect_error(file("no_schema.h5"), "not a commscope profile");
  {
    // A results file of the bench schema, as commscope-bench writes it (its /meta and a table).
    struct BenchRow {
      std::int64_t row;
      char collective[16];
      double time_us;
    };
    h5::File f = h5::File::create(file("bench.h5"));
    h5::Group meta = f.create_group("meta");
    meta.set_attr("schema", "commscope.bench/1");
    meta.set_attr("tool", "commscope-bench");
    meta.set_attr("nranks", 4);
    auto type = h5::CompoundType<BenchRow>{}
                    .add("row", &BenchRow::row)
                    .add("collective", &BenchRow::collective)
                    .add("time_us", &BenchRow::time_us);
    BenchRow row{};
    row.row = 1;
    h5::set_fixed(row.collective, "allreduce");
    row.time_us = 12.5;
    h5::Table<BenchRow>::create(f, "results", type).append(row);
  }
  expect_error(file("bench.h5"), "schema 'commscope.bench/1', expected 'commscope.profile/1'");
}

TEST_F(ProfileFileTest, AnotherSchemaVersion) {
  const std::string path = write_single(test_profile("single"), "v2.h5");
  h5::File::open_rw(path).open_group("meta").set_attr("schema", "commscope.profile/2");
  expect_error(path, "schema 'commscope.profile/2', expected 'commscope.profile/1'");
}

TEST_F(ProfileFileTest, MissingAttributeTableOrGroup) {
  const Profile p = test_profile("single");
  // A writer abandoned before close(): /breakdown and /operators were never created.
  { ProfileWriter writer(file("short.h5"), p.meta, p.ranks, p.strings); }
  fs::rename(file("short.h5.partial"), file("short.h5"));
  expect_error(file("short.h5"), "missing table 'breakdown'");

  // Hand-made files: /meta without its version; a file without /ranks.
  const auto make = [&](const std::string& name, bool version) {
    const std::string path = file(name);
    h5::File f = h5::File::create(path);
    h5::Group meta = f.create_group("meta");
    meta.set_attr("schema", kProfileSchema);
    if (version) meta.set_attr("version", "1");
    meta.set_attr("command_line", "");
    meta.set_attr("clock", "tsc");
    meta.set_attr("epoch_unix_ns", std::int64_t{1});
    meta.set_attr("nranks", 0);
    meta.set_attr("events_layout", "single");
    h5::write_strings(f, "strings", {""});
    f.create_group("events");
    return path;
  };
  expect_error(make("no_version.h5", false), "missing attribute 'version'");
  expect_error(make("no_ranks.h5", true), "missing table 'ranks'");

  ProfileMeta empty;
  empty.nranks = 0;
  {
    ProfileWriter writer(file("empty.h5"), empty, {}, {""});
    writer.close();
  }
  const Profile got = read_profile(file("empty.h5"));
  EXPECT_EQ(got.meta.nranks, 0);
  EXPECT_EQ(got.meta.events_layout, "single");
  EXPECT_TRUE(got.events.empty());
}

TEST_F(ProfileFileTest, StringIdOutOfRangeAndBadKinds) {
  const Profile p = test_profile("single");
  const auto forge = [&](const std::string& name, Event bad) {
    const std::string path = write_single(p, name);
    h5::File f = h5::File::open_rw(path);
    h5::Table<Event>::open(f.open_group("events"), "rank00001", event_columns().all()).append(bad);
    return path;
  };
  Event bad = p.events[1][0];
  bad.name = static_cast<std::uint32_t>(p.strings.size());
  expect_error(forge("bad_name.h5", bad), "string id 12 out of range");
  bad = p.events[1][0];
  bad.detail = 0xFFFF'FFFFu;
  expect_error(forge("bad_detail.h5", bad), "string id 4294967295 out of range");
  bad = p.events[1][0];
  bad.kind = static_cast<EventKind>(42);
  expect_error(forge("bad_kind.h5", bad), "invalid kind 42");
  bad = p.events[1][0];
  bad.track_kind = static_cast<TrackKind>(2);
  expect_error(forge("bad_track_kind.h5", bad), "invalid track_kind 2");
}

TEST_F(ProfileFileTest, PerRankFileErrors) {
  Profile p = test_profile("per-rank");
  const std::string path = write_per_rank(p, "pr.h5");
  const std::string rank1 = file("pr.rank00001.h5");

  // Reading a rank file as if it were the main file.
  expect_error(rank1, "a rank events file");

  // A rank file of another rank under rank 1's name.
  fs::rename(rank1, file("saved.h5"));
  fs::copy_file(file("pr.rank00002.h5"), rank1);
  expect_error(path, "holds rank 2, expected 1", rank1);

  // A missing rank file: named, and so is the main file.
  fs::remove(rank1);
  expect_error(path, "no such file", rank1);
  expect_error(path, "rank 1's events file of '" + path + "'");
  EXPECT_NO_THROW((void)read_profile(path, false));  // without events the rank files are not needed

  // A rank file of another run (another epoch).
  ProfileMeta other = p.meta;
  other.epoch_unix_ns += 1;
  write_rank_event_file(rank1, other, 1, p.strings, p.events[1]);
  expect_error(path, "another run", rank1);

  // A rank file that is not HDF5.
  write_bytes(rank1, "garbage", 7);
  expect_error(path, "not an HDF5 file", rank1);

  // A rank file whose events name strings it does not have.
  std::vector<std::string> short_table{""};
  {
    h5::File f = h5::File::create(rank1);
    h5::Group meta = f.create_group("meta");
    meta.set_attr("schema", kProfileSchema);
    meta.set_attr("rank", 1);
    meta.set_attr("nranks", 3);
    meta.set_attr("main_file", "pr.h5");
    h5::write_strings(f, "strings", short_table);
    h5::Table<Event>::create(f, "events", event_columns().all()).append(p.events[1]);
  }
  expect_error(path, "out of range", rank1);

  fs::remove(rank1);
  fs::rename(file("saved.h5"), rank1);
  expect_profiles_equal(read_profile(path), p);
}

}  // namespace
