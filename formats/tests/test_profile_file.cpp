// The profile's tables through their columns: a file written before the columns added later
// (/ranks' placement and machine, an event's communicator, an operator's total_ns) still reads,
// those at their defaults; a table without a required column is refused in one line naming it;
// each column's unit agrees with its name. Files built with h5 directly, as an older writer did.
#include <gtest/gtest.h>

#include <cstdint>
#include <initializer_list>
#include <string>
#include <string_view>
#include <vector>

#include "commscope/formats/profile_file.hpp"
#include "commscope/h5/h5.hpp"
#include "rank_row.hpp"
#include "temp_path.hpp"

using namespace commscope;
using namespace commscope::profiler;

namespace {

// The type of `columns` without the named ones.
template <class Row>
h5::CompoundType<Row> without(const formats::Columns<Row>& columns, std::initializer_list<std::string_view> names) {
  h5::CompoundType<Row> t;
  for (const auto& c : columns.list()) {
    bool dropped = false;
    for (const std::string_view name : names) dropped = dropped || name == c.name;
    if (!dropped) c.add_to(t);
  }
  return t;
}

// What each table's type leaves out: the columns of a file written before they were added, or
// one required column.
struct Dropped {
  std::initializer_list<std::string_view> ranks, events, breakdown, operators;
};
const Dropped kOldFile{{"cpus", "cpu_count", "node_cpus", "machine"}, {"communicator"}, {}, {"total_ns"}};

RankRow rank_row_of(int rank) {
  RankRow r;
  r.rank = rank;
  h5::set_fixed(r.host, "node-" + std::to_string(rank));
  r.clock_offset_ns = 100 * rank;
  r.clock_error_ns = 7;
  h5::set_fixed(r.backend, "host");
  r.events = 1;
  h5::set_fixed(r.cpus, "0-3");  // written only where the type has the column
  r.cpu_count = 4, r.node_cpus = 8;
  h5::set_fixed(r.machine, "boot-id");
  return r;
}

Event event_of() {
  Event e;
  e.start_ns = 10, e.end_ns = 25, e.id = 3, e.bytes = 4096, e.seq = 0, e.iteration = 1;
  e.name = 1, e.communicator = 2;  // the communicator written only where the type has it
  e.kind = EventKind::kCommunication;
  return e;
}

// A single-layout main file of 2 ranks, one event on rank 0, one breakdown and one operator row.
void write_file(const std::string& path, const Dropped& dropped) {
  h5::File f = h5::File::create(path);
  h5::Group meta = f.create_group("meta");
  meta.set_attr("schema", kProfileSchema);
  meta.set_attr("version", std::string("0.1.0"));
  meta.set_attr("command_line", std::string("old-writer"));
  meta.set_attr("clock", std::string("steady_clock"));
  meta.set_attr("epoch_unix_ns", std::int64_t{1000});
  meta.set_attr("nranks", std::int64_t{2});
  meta.set_attr("events_layout", std::string("single"));
  h5::Table<RankRow>::create(f, "ranks", without(rank_columns(), dropped.ranks))
      .append(std::vector<RankRow>{rank_row_of(0), rank_row_of(1)});
  h5::write_strings(f, "strings", {"", "allreduce", "tp[0,1]"});
  h5::Group events = f.create_group("events");
  h5::Table<Event>::create(events, "rank00000", without(event_columns(), dropped.events))
      .append(std::vector<Event>{event_of()});
  BreakdownRow b;
  b.iteration = 1, b.window_ns = 15, b.comm_ns = 15, b.identity_ok = 1;
  h5::Table<BreakdownRow>::create(f, "breakdown", without(breakdown_columns(), dropped.breakdown))
      .append(std::vector<BreakdownRow>{b});
  OperatorTotalRow o;
  o.rank = 1, o.name = 1, o.calls = 2, o.host_ns = 30, o.total_ns = 40;
  h5::Table<OperatorTotalRow>::create(f, "operators", without(operator_columns(), dropped.operators))
      .append(std::vector<OperatorTotalRow>{o});
  f.close();
}

// read_profile's error for `path`, "" when it reads.
std::string read_error(const std::string& path) {
  try {
    read_profile(path);
  } catch (const ProfileFileError& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST(ProfileFile, AFileWithoutTheLaterColumnsStillReads) {
  const std::string path = temp_path("profile-old.h5");
  write_file(path, kOldFile);
  const Profile p = read_profile(path);
  ASSERT_EQ(p.ranks.size(), 2u);
  EXPECT_EQ(p.ranks[1].host, "node-1");
  EXPECT_EQ(p.ranks[1].clock_offset_ns, 100);
  EXPECT_EQ(p.ranks[1].backend, "host");
  EXPECT_EQ(p.ranks[1].cpus, "");  // the placement and the machine unknown
  EXPECT_EQ(p.ranks[1].cpu_count, 0);
  EXPECT_EQ(p.ranks[1].node_cpus, 0);
  EXPECT_EQ(p.ranks[1].machine, "");
  ASSERT_EQ(p.events.size(), 2u);
  ASSERT_EQ(p.events[0].size(), 1u);
  EXPECT_TRUE(p.events[1].empty());
  const Event& e = p.events[0][0];
  EXPECT_EQ(e.end_ns, 25);
  EXPECT_EQ(e.bytes, 4096);
  EXPECT_EQ(e.kind, EventKind::kCommunication);
  EXPECT_EQ(e.communicator, 0u);  // the profiled communicator, as events were numbered then
  ASSERT_EQ(p.breakdown.size(), 1u);
  EXPECT_EQ(p.breakdown[0].window_ns, 15);
  ASSERT_EQ(p.operators.size(), 1u);
  EXPECT_EQ(p.operators[0].host_ns, 30);
  EXPECT_EQ(p.operators[0].total_ns, kUnknownTotal);
}

TEST(ProfileFile, TheSameFileWithEveryColumnReadsThemAll) {
  const std::string path = temp_path("profile-now.h5");
  write_file(path, Dropped{});
  const Profile p = read_profile(path);
  ASSERT_EQ(p.ranks.size(), 2u);
  EXPECT_EQ(p.ranks[1].cpus, "0-3");
  EXPECT_EQ(p.ranks[1].cpu_count, 4);
  EXPECT_EQ(p.ranks[1].node_cpus, 8);
  EXPECT_EQ(p.ranks[1].machine, "boot-id");
  ASSERT_EQ(p.events[0].size(), 1u);
  EXPECT_EQ(p.events[0][0].communicator, 2u);
  ASSERT_EQ(p.operators.size(), 1u);
  EXPECT_EQ(p.operators[0].total_ns, 40);
}

// One required column missing from each table in turn: refused, one line naming the file, the
// table and the column.
TEST(ProfileFile, ATableWithoutARequiredColumnIsRefused) {
  struct Case {
    const char* name;
    Dropped dropped;
    std::string table, column;
  };
  const std::vector<Case> cases = {
      {"ranks", {{"host"}, {}, {}, {}}, "ranks", "host"},
      {"events", {{}, {"kind"}, {}, {}}, "rank00000", "kind"},
      {"breakdown", {{}, {}, {"window_ns"}, {}}, "breakdown", "window_ns"},
      {"operators", {{}, {}, {}, {"calls"}}, "operators", "calls"},
  };
  for (const Case& c : cases) {
    const std::string path = temp_path(std::string("profile-no-column-") + c.name + ".h5");
    write_file(path, c.dropped);
    const std::string error = read_error(path);
    EXPECT_NE(error.find(path), std::string::npos) << error;
    EXPECT_NE(error.find(c.table), std::string::npos) << error;
    EXPECT_NE(error.find("'" + c.column + "'"), std::string::npos) << error;
    EXPECT_EQ(error.find('\n'), std::string::npos) << error;
  }
}

TEST(ProfileFile, EachUnitAgreesWithItsName) {
  auto check = [](const auto& columns) {
    for (const auto& c : columns.list()) {
      const std::string name = c.name;
      const std::string unit = c.unit;
      if (name.ends_with("_ns")) {
        EXPECT_EQ(unit, "ns") << name;
      } else if (name == "bytes") {
        EXPECT_EQ(unit, "B") << name;
      } else {
        EXPECT_EQ(unit, "") << name;
      }
    }
  };
  check(rank_columns());
  check(event_columns());
  check(breakdown_columns());
  check(operator_columns());
}
