// Unit tests of commscope::h5: attributes, compound tables, the .partial/rename protocol, errors,
// and that a flushed file survives SIGKILL.
#include <gtest/gtest.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/file.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <limits>
#include <sstream>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "commscope/h5/h5.hpp"

namespace fs = std::filesystem;
using namespace commscope::h5;

namespace {

// One member of every supported kind.
struct Row {
  std::int8_t i8;
  std::int16_t i16;
  std::int32_t i32;
  std::int64_t i64;
  std::uint8_t u8;
  std::uint16_t u16;
  std::uint32_t u32;
  std::uint64_t u64;
  float f32;
  double f64;
  bool flag;
  char host[16];
  char algo[16];
};

CompoundType<Row> row_type() {
  return CompoundType<Row>{}
      .add("i8", &Row::i8)
      .add("i16", &Row::i16)
      .add("i32", &Row::i32)
      .add("i64", &Row::i64)
      .add("u8", &Row::u8)
      .add("u16", &Row::u16)
      .add("u32", &Row::u32)
      .add("u64", &Row::u64)
      .add("f32", &Row::f32)
      .add("f64", &Row::f64)
      .add("flag", &Row::flag)
      .add("host", &Row::host)
      .add("algo", &Row::algo);
}

constexpr const char* kSixteen = "abcdefghijklmnop";  // exactly fills char[16]: no NUL

Row make_row(std::int64_t i) {
  Row r{};
  r.i8 = static_cast<std::int8_t>(i % 256 - 128);
  r.i16 = static_cast<std::int16_t>(-i * 7);
  r.i32 = static_cast<std::int32_t>(i * 100'003);
  r.i64 = i % 3 == 0 ? std::numeric_limits<std::int64_t>::min() + i : std::numeric_limits<std::int64_t>::max() - i;
  r.u8 = static_cast<std::uint8_t>(i);
  r.u16 = static_cast<std::uint16_t>(i * 13);
  r.u32 = static_cast<std::uint32_t>(4'000'000'000u - static_cast<std::uint32_t>(i));
  r.u64 = std::numeric_limits<std::uint64_t>::max() - static_cast<std::uint64_t>(i);
  r.f32 = 0.5f * static_cast<float>(i);
  r.f64 = 1.0 / (static_cast<double>(i) + 3.0);
  r.flag = i % 2 == 1;
  set_fixed(r.host, i % 5 == 0 ? std::string(kSixteen) : "node" + std::to_string(i));
  set_fixed(r.algo, i % 4 == 0 ? "" : "ring");
  return r;
}

void expect_row_eq(const Row& got, const Row& want, std::size_t index) {
  SCOPED_TRACE("row " + std::to_string(index));
  EXPECT_EQ(got.i8, want.i8);
  EXPECT_EQ(got.i16, want.i16);
  EXPECT_EQ(got.i32, want.i32);
  EXPECT_EQ(got.i64, want.i64);
  EXPECT_EQ(got.u8, want.u8);
  EXPECT_EQ(got.u16, want.u16);
  EXPECT_EQ(got.u32, want.u32);
  EXPECT_EQ(got.u64, want.u64);
  EXPECT_EQ(got.f32, want.f32);
  EXPECT_EQ(got.f64, want.f64);
  EXPECT_EQ(got.flag, want.flag);
  EXPECT_EQ(get_fixed(got.host), get_fixed(want.host));
  EXPECT_EQ(get_fixed(got.algo), get_fixed(want.algo));
}

std::vector<Row> make_rows(std::int64_t first, std::size_t count) {
  std::vector<Row> rows;
  for (std::size_t i = 0; i < count; ++i) rows.push_back(make_row(first + static_cast<std::int64_t>(i)));
  return rows;
}

bool have_h5dump() {
  return std::system("command -v h5dump > /dev/null 2>&1") == 0;
}

// Runs h5dump with `args` on `path`; returns its exit status and puts its stdout in `out`.
int run_h5dump(const std::string& args, const fs::path& path, const fs::path& out) {
  const std::string command = "h5dump " + args + " '" + path.string() + "' > '" + out.string() + "' 2>&1";
  return std::system(command.c_str());
}

std::string read_text(const fs::path& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

class H5Test : public ::testing::Test {
 protected:
  void SetUp() override {
    char pattern[] = "/tmp/commscope_h5_test_XXXXXX";
    ASSERT_NE(mkdtemp(pattern), nullptr);
    dir_ = pattern;
  }
  void TearDown() override {
    std::error_code ignored;
    fs::remove_all(dir_, ignored);
  }
  std::string file(const std::string& name) const { return (dir_ / name).string(); }

  fs::path dir_;
};

// --- attributes

TEST_F(H5Test, EveryAttributeKindRoundTrips) {
  const std::string path = file("attrs.h5");
  {
    File f = File::create(path);
    Group g = f.create_group("meta");
    for (Object* o : {static_cast<Object*>(&f), static_cast<Object*>(&g)}) {
      o->set_attr("s", std::string("héllo wörld"));
      o->set_attr("sv", std::string_view("a view"));
      o->set_attr("literal", "not a bool");
      o->set_attr("empty", std::string());
      o->set_attr("i64", std::numeric_limits<std::int64_t>::min());
      o->set_attr("u64", std::numeric_limits<std::uint64_t>::max());
      o->set_attr("f64", 2.5);
      o->set_attr("int", -7);
      o->set_attr("unsigned", 7u);
      o->set_attr("yes", true);
      o->set_attr("no", false);
      o->set_attr("strings", std::vector<std::string>{"a", "", "ünï"});
      o->set_attr("no_strings", std::vector<std::string>{});
      o->set_attr("doubles", std::vector<double>{1.5, -0.25, 1e300});
      o->set_attr("no_doubles", std::vector<double>{});
      o->set_attr("ints", std::vector<std::int64_t>{-1, 0, std::numeric_limits<std::int64_t>::max()});
      o->set_attr("no_ints", std::vector<std::int64_t>{});
    }
    f.close();
  }
  File f = File::open(path);
  Group g = f.open_group("meta");
  for (const Object* o : {static_cast<const Object*>(&f), static_cast<const Object*>(&g)}) {
    SCOPED_TRACE(o->name());
    EXPECT_EQ(o->attr_string("s"), "héllo wörld");
    EXPECT_EQ(o->attr_string("sv"), "a view");
    EXPECT_EQ(o->attr_string("literal"), "not a bool");
    EXPECT_EQ(o->attr_string("empty"), "");
    EXPECT_EQ(o->attr_int("i64"), std::numeric_limits<std::int64_t>::min());
    EXPECT_EQ(o->attr_uint("u64"), std::numeric_limits<std::uint64_t>::max());
    EXPECT_EQ(o->attr_double("f64"), 2.5);
    EXPECT_EQ(o->attr_int("int"), -7);
    EXPECT_EQ(o->attr_uint("unsigned"), 7u);
    EXPECT_TRUE(o->attr_bool("yes"));
    EXPECT_FALSE(o->attr_bool("no"));
    EXPECT_EQ(o->attr_int("yes"), 1);
    EXPECT_EQ(o->attr_strings("strings"), (std::vector<std::string>{"a", "", "ünï"}));
    EXPECT_TRUE(o->attr_strings("no_strings").empty());
    EXPECT_EQ(o->attr_doubles("doubles"), (std::vector<double>{1.5, -0.25, 1e300}));
    EXPECT_TRUE(o->attr_doubles("no_doubles").empty());
    EXPECT_EQ(o->attr_ints("ints"), (std::vector<std::int64_t>{-1, 0, std::numeric_limits<std::int64_t>::max()}));
    EXPECT_TRUE(o->attr_ints("no_ints").empty());
    // HDF5 converts numbers on reading.
    EXPECT_EQ(o->attr_double("int"), -7.0);
    EXPECT_EQ(o->attr_doubles("ints").at(0), -1.0);
    EXPECT_EQ(o->attr_ints("f64"), (std::vector<std::int64_t>{2}));
    EXPECT_EQ(o->attr_strings("s"), (std::vector<std::string>{"héllo wörld"}));
    EXPECT_TRUE(o->has_attr("s"));
    EXPECT_FALSE(o->has_attr("missing"));
  }
}

TEST_F(H5Test, SettingAnAttributeAgainReplacesIt) {
  const std::string path = file("replace.h5");
  {
    File f = File::create(path);
    f.set_attr("x", 1);
    f.set_attr("x", std::string("now a string"));
    f.set_attr("v", std::vector<double>{1, 2, 3});
    f.set_attr("v", std::vector<double>{});
    f.set_attr("s", std::string("long string value"));
    f.set_attr("s", std::string("short"));
    EXPECT_EQ(f.attr_string("x"), "now a string");
  }
  File f = File::open(path);
  EXPECT_EQ(f.attr_string("x"), "now a string");
  EXPECT_TRUE(f.attr_doubles("v").empty());
  EXPECT_EQ(f.attr_string("s"), "short");
}

TEST_F(H5Test, AttributeErrorsNameTheAttribute) {
  File f = File::create(file("errors.h5"));
  f.set_attr("text", std::string("abc"));
  f.set_attr("number", 3.0);
  f.set_attr("pair", std::vector<double>{1, 2});
  try {
    (void)f.attr_int("absent");
    FAIL() << "no exception";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("'absent'"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("can't locate attribute"), std::string::npos) << e.what();
    EXPECT_FALSE(e.hdf5_stack().empty());
  }
  EXPECT_THROW((void)f.attr_string("absent"), Error);
  EXPECT_THROW((void)f.attr_int("text"), Error);
  EXPECT_THROW((void)f.attr_string("number"), Error);
  EXPECT_THROW((void)f.attr_double("pair"), Error);
  try {
    (void)f.attr_doubles("text");
    FAIL() << "no exception";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("'text'"), std::string::npos) << e.what();
  }
}

// --- groups and plain datasets

TEST_F(H5Test, GroupsAndNestedExists) {
  File f = File::create(file("groups.h5"));
  Group run = f.create_group("runs/0");  // creates "runs" too
  run.create_group("details");
  write_vector(run, "times", std::vector<double>{1.0, 2.0});
  EXPECT_TRUE(f.exists("runs"));
  EXPECT_TRUE(f.exists("runs/0"));
  EXPECT_TRUE(f.exists("/runs/0/details"));
  EXPECT_TRUE(f.exists("runs//0/"));
  EXPECT_TRUE(f.exists("/"));
  EXPECT_FALSE(f.exists(""));
  EXPECT_FALSE(f.exists("runs/1"));
  EXPECT_FALSE(f.exists("nothing/below/here"));
  EXPECT_FALSE(f.exists("runs/0/times/x"));  // a dataset is not a group
  EXPECT_TRUE(run.exists("details"));
  EXPECT_TRUE(run.exists("/runs"));
  EXPECT_EQ(f.open_group("runs").open_group("0").name(), "/runs/0");
  EXPECT_THROW((void)f.open_group("runs/7"), Error);
  EXPECT_THROW((void)f.create_group("runs/0"), Error);
}

TEST_F(H5Test, PlainVectorsRoundTrip) {
  const std::string path = file("vectors.h5");
  const std::vector<double> doubles{0.5, -1e-300, 3.25};
  const std::vector<std::int64_t> ints{std::numeric_limits<std::int64_t>::min(), 0, 42};
  {
    File f = File::create(path);
    write_vector(f, "d", doubles);
    write_vector(f, "i", ints);
    write_vector(f, "empty_d", std::vector<double>{});
    write_vector(f, "empty_i", std::vector<std::int64_t>{});
    Group g = f.create_group("g");
    write_vector(g, "sub/d", doubles);
    f.open_dataset("d").set_attr("units", "s");
    EXPECT_THROW(write_vector(f, "d", doubles), Error);
  }
  File f = File::open(path);
  EXPECT_EQ(read_doubles(f, "d"), doubles);
  EXPECT_EQ(read_ints(f, "i"), ints);
  EXPECT_TRUE(read_doubles(f, "empty_d").empty());
  EXPECT_TRUE(read_ints(f, "empty_i").empty());
  EXPECT_EQ(read_doubles(f, "g/sub/d"), doubles);
  EXPECT_EQ(read_doubles(f, "i").at(2), 42.0);
  EXPECT_EQ(f.open_dataset("d").attr_string("units"), "s");
  EXPECT_EQ(f.open_dataset("d").size(), 3u);
  EXPECT_THROW((void)read_doubles(f, "missing"), Error);
}

TEST_F(H5Test, StringDatasetsRoundTrip) {
  const std::string path = file("strings.h5");
  const std::vector<std::string> strings{"",
                                         "plain",
                                         "with space",
                                         "quote \" and \\ backslash",
                                         "line\nbreak",
                                         "UTF-8: \xc3\xa9t\xc3\xa9 \xe2\x86\x92 \xf0\x9f\x9a\x80"};
  {
    File f = File::create(path);
    write_strings(f, "s", strings);
    write_strings(f, "empty", std::vector<std::string>{});
    write_strings(f, "g/nested", std::vector<std::string>{"x"});
    write_vector(f, "numbers", std::vector<double>{1.0});
    EXPECT_THROW(write_strings(f, "s", strings), Error);
    // A fixed-length, space-padded string dataset written with the C API: the reader accepts it.
    const hid_t type = H5Tcopy(H5T_C_S1);
    H5Tset_size(type, 6);
    H5Tset_strpad(type, H5T_STR_SPACEPAD);
    const hsize_t n = 2;
    const hid_t space = H5Screate_simple(1, &n, nullptr);
    const hid_t dataset = H5Dcreate2(f.id(), "fixed", type, space, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    const char bytes[] = "ab    abcdef";
    ASSERT_GE(H5Dwrite(dataset, type, H5S_ALL, H5S_ALL, H5P_DEFAULT, bytes), 0);
    H5Dclose(dataset);
    H5Sclose(space);
    H5Tclose(type);
  }
  File f = File::open(path);
  EXPECT_EQ(read_strings(f, "s"), strings);
  EXPECT_TRUE(read_strings(f, "empty").empty());
  EXPECT_EQ(read_strings(f, "g/nested"), std::vector<std::string>{"x"});
  EXPECT_EQ(read_strings(f, "fixed"), (std::vector<std::string>{"ab", "abcdef"}));
  EXPECT_EQ(f.open_dataset("s").size(), strings.size());
  EXPECT_THROW((void)read_strings(f, "numbers"), Error);
  EXPECT_THROW((void)read_strings(f, "missing"), Error);
}

TEST_F(H5Test, AttributeNamesComeInNameOrder) {
  const std::string path = file("names.h5");
  {
    File f = File::create(path);
    Group g = f.create_group("g");
    g.set_attr("zeta", "1");
    g.set_attr("alpha", 2);
    g.set_attr("Mid dle", 3.0);
    f.create_group("empty");
  }
  File f = File::open(path);
  EXPECT_EQ(f.open_group("g").attr_names(), (std::vector<std::string>{"Mid dle", "alpha", "zeta"}));
  EXPECT_TRUE(f.open_group("empty").attr_names().empty());
}

// --- tables

TEST_F(H5Test, TableAppendsInBatchesAndReadsBack) {
  const std::string path = file("table.h5");
  std::vector<Row> all;
  {
    File f = File::create(path);
    auto table = Table<Row>::create(f, "rows", row_type(), 64);
    EXPECT_EQ(table.size(), 0u);
    EXPECT_TRUE(table.read_all().empty());
    table.append(std::span<const Row>());  // zero rows: no-op
    EXPECT_EQ(table.size(), 0u);
    all.push_back(make_row(0));
    table.append(all.back());
    EXPECT_EQ(table.size(), 1u);
    const std::vector<Row> batch = make_rows(1, 1000);
    table.append(batch);
    all.insert(all.end(), batch.begin(), batch.end());
    table.append(std::vector<Row>{});
    EXPECT_EQ(table.size(), 1001u);
    table.set_attr("units", "ns");
    const std::vector<Row> got = table.read_all();
    ASSERT_EQ(got.size(), all.size());
    for (std::size_t i = 0; i < got.size(); ++i) expect_row_eq(got[i], all[i], i);
    EXPECT_TRUE(fs::exists(path + ".partial"));
    EXPECT_FALSE(fs::exists(path));
    f.close();
    EXPECT_FALSE(fs::exists(path + ".partial"));
    EXPECT_TRUE(fs::exists(path));
    f.close();                                       // idempotent
    EXPECT_THROW(table.append(make_row(5)), Error);  // closed with its file
  }
  File f = File::open(path);
  auto table = Table<Row>::open(f, "rows", row_type());
  EXPECT_EQ(table.attr_string("units"), "ns");
  const std::vector<Row> got = table.read_all();
  ASSERT_EQ(got.size(), all.size());
  for (std::size_t i = 0; i < got.size(); ++i) expect_row_eq(got[i], all[i], i);
  // The exactly-16-byte string survives without a terminator.
  EXPECT_EQ(get_fixed(got[0].host), kSixteen);
  EXPECT_EQ(get_fixed(got[5].host), kSixteen);
  EXPECT_EQ(get_fixed(got[0].algo), "");
  EXPECT_THROW(table.append(make_row(1)), Error);  // read-only file
}

TEST_F(H5Test, TableReplacedAndDatasetRemoved) {
  const std::string path = file("replace.h5");
  {
    File f = File::create(path);
    auto table = Table<Row>::create(f, "rows", row_type(), 4);
    table.append(make_rows(0, 10));
    table.replace(make_rows(100, 3));  // shrinks
    EXPECT_EQ(table.size(), 3u);
    table.replace(make_rows(200, 9));  // grows, across chunks
    const std::vector<Row> want = make_rows(200, 9), got = table.read_all();
    ASSERT_EQ(got.size(), want.size());
    for (std::size_t i = 0; i < got.size(); ++i) expect_row_eq(got[i], want[i], i);
    table.replace(std::span<const Row>());
    EXPECT_EQ(table.size(), 0u);
    write_strings(f, "names", {"a", "bb"});
    f.remove("names");
    EXPECT_FALSE(f.exists("names"));
    write_strings(f, "names", {"a", "bb", "a longer one"});  // the same name, a wider type
    EXPECT_THROW(f.remove("missing"), Error);
  }
  File f = File::open(path);
  EXPECT_EQ(read_strings(f, "names"), (std::vector<std::string>{"a", "bb", "a longer one"}));
  EXPECT_EQ(Table<Row>::open(f, "rows", row_type()).size(), 0u);
}

TEST_F(H5Test, TableReopenedReadWriteKeepsAppending) {
  const std::string path = file("rw.h5");
  {
    File f = File::create(path);
    Table<Row>::create(f, "rows", row_type()).append(make_rows(0, 10));
  }
  {
    File f = File::open_rw(path);
    EXPECT_TRUE(f.partial_path().empty());
    auto table = Table<Row>::open(f, "rows", row_type());
    table.append(make_rows(10, 5));
  }
  File f = File::open(path);
  const std::vector<Row> got = Table<Row>::open(f, "rows", row_type()).read_all();
  ASSERT_EQ(got.size(), 15u);
  for (std::size_t i = 0; i < got.size(); ++i) expect_row_eq(got[i], make_row(static_cast<std::int64_t>(i)), i);
}

// A reader's struct with a subset of the fields, in another order.
struct Subset {
  char host[16];
  double f64;
  std::int64_t i64;
};

struct WithExtra {
  double f64;
  int not_in_file;
};

TEST_F(H5Test, TableOpenConvertsToAFieldSubset) {
  const std::string path = file("subset.h5");
  {
    File f = File::create(path);
    Table<Row>::create(f, "rows", row_type()).append(make_rows(0, 20));
  }
  File f = File::open(path);
  const auto type = CompoundType<Subset>{}.add("i64", &Subset::i64).add("host", &Subset::host).add("f64", &Subset::f64);
  const std::vector<Subset> got = Table<Subset>::open(f, "rows", type).read_all();
  ASSERT_EQ(got.size(), 20u);
  for (std::size_t i = 0; i < got.size(); ++i) {
    const Row want = make_row(static_cast<std::int64_t>(i));
    EXPECT_EQ(got[i].i64, want.i64);
    EXPECT_EQ(got[i].f64, want.f64);
    EXPECT_EQ(get_fixed(got[i].host), get_fixed(want.host));
  }
  const auto extra = CompoundType<WithExtra>{}.add("f64", &WithExtra::f64).add("not_in_file", &WithExtra::not_in_file);
  try {
    (void)Table<WithExtra>::open(f, "rows", extra);
    FAIL() << "no exception";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("not_in_file"), std::string::npos) << e.what();
  }
}

TEST_F(H5Test, TableOpenOfAMissingDatasetThrows) {
  File f = File::create(file("missing_table.h5"));
  try {
    (void)Table<Row>::open(f, "nope", row_type());
    FAIL() << "no exception";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("'nope'"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("doesn't exist"), std::string::npos) << e.what();
  }
  write_vector(f, "plain", std::vector<double>{1.0});
  EXPECT_THROW((void)Table<Row>::open(f, "plain", row_type()), Error);  // not compound
  EXPECT_THROW((void)Table<Row>::create(f, "zero_chunk", row_type(), 0), Error);
  Table<Row>::create(f, "t", row_type());
  EXPECT_THROW((void)Table<Row>::create(f, "t", row_type()), Error);  // exists
}

TEST_F(H5Test, CompoundTypeErrors) {
  CompoundType<Row> type;
  type.add("i8", &Row::i8);
  EXPECT_THROW(type.add("i8", &Row::i16), Error);  // duplicate name
  EXPECT_EQ(type.size(), sizeof(Row));
}

// --- files

TEST_F(H5Test, PartialFileIsRenamedOnCloseAndOnDestruction) {
  const std::string path = file("renamed.h5");
  {
    File f = File::create(path);
    EXPECT_EQ(f.path(), path);
    EXPECT_EQ(f.partial_path(), path + ".partial");
    f.set_attr("k", 1);
    EXPECT_TRUE(fs::exists(path + ".partial"));
    EXPECT_FALSE(fs::exists(path));
    File moved = std::move(f);  // only `moved` renames
    EXPECT_FALSE(f.valid());
    EXPECT_TRUE(moved.valid());
  }
  EXPECT_FALSE(fs::exists(path + ".partial"));
  ASSERT_TRUE(fs::exists(path));
  EXPECT_EQ(File::open(path).attr_int("k"), 1);

  // create() truncates a stale .partial and replaces an existing final file.
  {
    std::ofstream(path + ".partial") << "garbage";
    File f = File::create(path);
    f.set_attr("k", 2);
  }
  EXPECT_EQ(File::open(path).attr_int("k"), 2);

  // Move assignment closes (and renames) the file assigned over.
  const std::string other = file("other.h5");
  {
    File f = File::create(path);
    f = File::create(other);
    EXPECT_TRUE(fs::exists(path));
    EXPECT_EQ(f.path(), other);
  }
  EXPECT_TRUE(fs::exists(other));
  EXPECT_FALSE(fs::exists(other + ".partial"));
}

TEST_F(H5Test, ClosePartialLeavesThePartialFile) {
  const std::string path = file("given_up.h5");
  {
    File f = File::create(path);
    f.set_attr("a", 1);
    f.close_partial();
    EXPECT_FALSE(f.valid());
    f.close_partial();  // idempotent
    f.close();          // and close() no longer renames
  }
  EXPECT_FALSE(fs::exists(path));
  ASSERT_TRUE(fs::exists(path + ".partial"));
  EXPECT_EQ(File::open(path + ".partial").attr_int("a"), 1);
}

TEST_F(H5Test, OpeningAMissingFileThrowsWithPathAndStack) {
  const std::string path = file("does_not_exist.h5");
  for (auto open : {&File::open, &File::open_rw}) {
    try {
      (void)open(path, File::kWaitForWriter);
      FAIL() << "no exception";
    } catch (const Error& e) {
      const std::string what = e.what();
      EXPECT_NE(what.find(path), std::string::npos) << what;
      EXPECT_NE(what.find("No such file or directory"), std::string::npos) << what;
      EXPECT_FALSE(e.hdf5_stack().empty());
    }
  }
  EXPECT_THROW((void)File::create(file("no/such/dir/x.h5")), Error);
}

// A file another process keeps open for writing holds HDF5's exclusive lock (flock; here a second
// open file description, which flock treats as another holder): File::open and open_rw wait for
// it to let go, and past their wait say so. They failed at once ("Resource temporarily
// unavailable"): the report read a profile that mpirun's stop had published while the rank that
// wrote it still exited, and called it "truncated or corrupted".
TEST_F(H5Test, OpenWaitsForAWriterToLetGo) {
  const std::string path = file("held.h5");
  {
    File f = File::create(path);
    f.set_attr("steps", std::int64_t{3});
  }
  for (auto open : {&File::open, &File::open_rw}) {
    const int fd = ::open(path.c_str(), O_RDWR);
    ASSERT_GE(fd, 0);
    ASSERT_EQ(::flock(fd, LOCK_EX | LOCK_NB), 0);
    std::thread writer([fd] {
      std::this_thread::sleep_for(std::chrono::milliseconds(300));
      ::close(fd);
    });
    try {
      File f = open(path, File::kWaitForWriter);
      EXPECT_EQ(f.attr_int("steps"), 3);
    } catch (const Error& e) {
      ADD_FAILURE() << e.what();
    }
    writer.join();
  }
  const int fd = ::open(path.c_str(), O_RDWR);
  ASSERT_EQ(::flock(fd, LOCK_EX | LOCK_NB), 0);
  try {
    (void)File::open(path, std::chrono::milliseconds(200));
    ADD_FAILURE() << "no exception";
  } catch (const FileLocked& e) {
    EXPECT_EQ(std::string(e.what()), "'" + path +
                                         "' is open for writing in another process (a run still writing it?): "
                                         "waited 0.2 s for it to let go");
  }
  ::close(fd);
}

// The writer lets go between the reader's failed H5Fopen and its look at the lock (here HDF5's own
// error callback, run as H5Fopen fails, closes the writer's descriptor): the open is tried again.
// It was refused with the first failure's "Resource temporarily unavailable", the look finding no
// lock: a CI run's report read a profile as mpirun's kill of its rank 0 let go of it.
TEST_F(H5Test, OpenTriesAgainWhenTheWriterLetsGoMeanwhile) {
  const std::string path = file("let-go.h5");
  {
    File f = File::create(path);  // and this thread's HDF5 printing silenced, once
    f.set_attr("steps", std::int64_t{9});
  }
  int fd = ::open(path.c_str(), O_RDWR);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(::flock(fd, LOCK_EX | LOCK_NB), 0);
  const H5E_auto2_t let_go = [](hid_t, void* data) -> herr_t {
    int& held = *static_cast<int*>(data);
    if (held >= 0) ::close(std::exchange(held, -1));
    return 0;
  };
  ASSERT_GE(H5Eset_auto2(H5E_DEFAULT, let_go, &fd), 0);
  try {
    File f = File::open(path, std::chrono::milliseconds(2000));
    EXPECT_EQ(f.attr_int("steps"), 9);
  } catch (const Error& e) {
    ADD_FAILURE() << e.what();
  }
  H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);
  EXPECT_EQ(fd, -1) << "the open never failed on the lock";
  if (fd >= 0) ::close(fd);
}

TEST_F(H5Test, FileUsesTheEarliestFormat) {
  File f = File::create(file("format.h5"));
  H5F_info2_t info{};
  ASSERT_GE(H5Fget_info2(f.id(), &info), 0);
  EXPECT_EQ(info.super.version, 0u);  // no file-consistency flags
  H5F_libver_t low{}, high{};
  ASSERT_GE(H5Pget_libver_bounds(Handle(H5Fget_access_plist(f.id())).id(), &low, &high), 0);
  EXPECT_EQ(low, H5F_LIBVER_EARLIEST);
}

TEST_F(H5Test, FlushedPartialFileSurvivesSigkill) {
  const std::string path = file("killed.h5");
  const std::vector<Row> rows = make_rows(0, 300);
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    try {
      File f = File::create(path);
      f.set_attr("state", "running");
      auto table = Table<Row>::create(f, "rows", row_type(), 128);
      table.append(std::span(rows).first(100));
      table.append(std::span(rows).subspan(100));
      f.flush();
      raise(SIGKILL);
    } catch (...) {
    }
    _exit(3);
  }
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL) << "child status " << status;
  EXPECT_FALSE(fs::exists(path));
  ASSERT_TRUE(fs::exists(path + ".partial"));

  {
    File f = File::open(path + ".partial");
    EXPECT_EQ(f.attr_string("state"), "running");
    const std::vector<Row> got = Table<Row>::open(f, "rows", row_type()).read_all();
    ASSERT_EQ(got.size(), rows.size());
    for (std::size_t i = 0; i < got.size(); ++i) expect_row_eq(got[i], rows[i], i);
  }
  if (have_h5dump()) {
    const fs::path out = dir_ / "dump.txt";
    EXPECT_EQ(run_h5dump("-H", path + ".partial", out), 0) << read_text(out);
  }
}

TEST_F(H5Test, H5dumpReadsAClosedFile) {
  if (!have_h5dump()) GTEST_SKIP() << "h5dump not on PATH";
  const std::string path = file("dump.h5");
  {
    File f = File::create(path);
    f.set_attr("tool", "commscope");
    auto table = Table<Row>::create(f, "results/rows", row_type());
    table.append(make_rows(0, 10));
    table.set_attr("units", "us");
    write_vector(f, "times", std::vector<double>{1, 2, 3});
  }
  const fs::path out = dir_ / "dump.txt";
  ASSERT_EQ(run_h5dump("-H", path, out), 0) << read_text(out);
  const std::string header = read_text(out);
  EXPECT_NE(header.find("H5T_COMPOUND"), std::string::npos) << header;
  EXPECT_NE(header.find("H5T_STR_NULLPAD"), std::string::npos) << header;
  EXPECT_NE(header.find("H5S_UNLIMITED"), std::string::npos) << header;
  EXPECT_NE(header.find("H5T_CSET_UTF8"), std::string::npos) << header;  // the string attribute
  ASSERT_EQ(run_h5dump("-p -d /results/rows", path, out), 0) << read_text(out);
  const std::string properties = read_text(out);
  EXPECT_NE(properties.find("SHUFFLE"), std::string::npos) << properties;
  EXPECT_NE(properties.find("DEFLATE"), std::string::npos) << properties;
  EXPECT_NE(properties.find("abcdefghijklmnop"), std::string::npos) << properties;
}

}  // namespace

TEST(OneLine, KeepsPrintableTextAndUtf8) {
  EXPECT_EQ(commscope::h5::one_line("schema 'commscope.bench/1'"), "schema 'commscope.bench/1'");
  EXPECT_EQ(commscope::h5::one_line("caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80"),
            "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80");
  EXPECT_EQ(commscope::h5::one_line(""), "");
}

TEST(OneLine, EscapesWhatCouldBreakTheLine) {
  EXPECT_EQ(commscope::h5::one_line("a\nb\r\nc"), "a b  c");
  EXPECT_EQ(commscope::h5::one_line("benZ.\xd5\x0c"), "benZ.\\xd5\\x0c");  // truncated UTF-8, form feed
  EXPECT_EQ(commscope::h5::one_line(std::string("a\0b\x1b\x7f", 5)), "a\\x00b\\x1b\\x7f");
  EXPECT_EQ(commscope::h5::one_line("\x1c\x1d\x1e\v\t"), "\\x1c\\x1d\\x1e\\x0b\\x09");
  EXPECT_EQ(commscope::h5::one_line("\xc2\x85|\xe2\x80\xa8|\xe2\x80\xa9"),
            "\\xc2\\x85|\\xe2\\x80\\xa8|\\xe2\\x80\\xa9");
  EXPECT_EQ(commscope::h5::one_line("\xc0\xaf \xed\xa0\x80 \xf4\x90\x80\x80 \xff"),  // overlong, surrogate, > U+10FFFF
            "\\xc0\\xaf \\xed\\xa0\\x80 \\xf4\\x90\\x80\\x80 \\xff");
}
