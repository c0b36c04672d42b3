// The printed table: nccl-tests' columns, the optional ones, and the footer.
#include <gtest/gtest.h>

#include <cstdio>
#include <sstream>
#include <string>
#include <vector>

#include "results.hpp"
#include "table.hpp"

using namespace commscope;
using namespace commscope::bench;

namespace {

// A result row with its names set.
ResultRow named_row(const char* collective, const char* algorithm, const char* op) {
  ResultRow r{};
  set_text(r.collective, collective);
  set_text(r.algorithm, algorithm);
  set_text(r.type, "f32");
  set_text(r.op, op);
  return r;
}

// What a table of `style` prints for what `print` does with it.
template <class Print>
std::string printed(TableStyle style, Print print) {
  char buf[8192] = {};
  std::FILE* f = fmemopen(buf, sizeof buf - 1, "w");
  if (!f) return "fmemopen failed";
  Table t(f, style);
  print(t);
  std::fclose(f);
  return buf;
}

}  // namespace

TEST(Table, NcclTestsOptionalColumns) {
  ResultRow a = named_row("allgather", "mpi", "none");
  a.time_us = 100;
  a.cpu_time_us = 12.5;
  a.mean_us = 10;
  a.stdev_us = 2.5;  // cv 25 %
  a.check_iters = 0;
  const std::string s =
      printed(TableStyle{.per_iter = true, .cputime = true, .timestamps = true}, [&](Table& t) { t.row(&a, &a); });
  for (const char* want : {"cputime", "i_min", "i_max", "i_p99", "i_cv%", "timestamp", "%Y-%m-%d %H:%M:%S",
                           "       12.50", "  25.00", "   N/A"})
    EXPECT_NE(s.find(want), std::string::npos) << want << "\n" << s;
  EXPECT_EQ(s.find("100.00"), std::string::npos) << "-C shows the cpu time, not the time\n" << s;
}

TEST(Table, PrintsNcclTestsColumnsAndFooter) {
  ResultRow a = named_row("allreduce", "ring", "sum");
  a.bytes = 1048576;
  a.count = 262144;
  a.time_us = 100;
  a.algbw_GBps = 10.48576;
  a.busbw_GBps = 15.72864;
  a.check_iters = 1;
  ResultRow b = a;
  b.in_place = 1;
  b.nwrong = 2;
  const std::string s = printed(TableStyle{.stats = true}, [&](Table& t) {
    t.row(&a, &b);
    t.row(&a, nullptr);
    EXPECT_EQ(t.footer(), 2u);
  });
  for (const char* want : {"size",
                           "(B)",
                           "count",
                           "type",
                           "redop",
                           "root",
                           "algorithm ring",
                           "time",
                           "(us)",
                           "algbw",
                           "busbw",
                           "#wrong",
                           "p50",
                           "p99",
                           "skew",
                           "out-of-place",
                           "in-place",
                           "1048576",
                           "262144",
                           "15.729",
                           "n/a",
                           "Out of bounds values : 2 FAILED",
                           "Avg bus bandwidth",
                           "ring"})
    EXPECT_NE(s.find(want), std::string::npos) << want << "\n" << s;
}

namespace {

// The whitespace-separated fields of each result line (lines not starting with '#').
std::vector<std::vector<std::string>> result_fields(const std::string& table) {
  std::vector<std::vector<std::string>> lines;
  std::istringstream in(table);
  for (std::string line; std::getline(in, line);) {
    if (line.empty() || line[0] == '#') continue;
    std::istringstream words(line);
    std::vector<std::string> fields;
    for (std::string w; words >> w;) fields.push_back(w);
    lines.push_back(fields);
  }
  return lines;
}

}  // namespace

// Several algorithms keep nccl-tests' columns where nccl-tests has them (size 1, type 3, busbw 8,
// in-place #wrong 13; -S's date and time 14 and 15) and name the algorithm after them; the
// header's titles stand over the same fields. The comparison layout put an algo column at 6 and
// f32 at 3, which moved every nccl-tests column after the root by one.
TEST(Table, SeveralAlgorithmsKeepNcclTestsColumns) {
  ResultRow ring = named_row("allreduce", "ring", "sum");
  ring.bytes = 1048576;
  ring.count = 262144;
  ring.root = -1;
  ring.time_us = 100;
  ring.algbw_GBps = 10.48576;
  ring.busbw_GBps = 15.72864;
  ring.check_iters = 1;
  ResultRow rhd = ring;
  set_text(rhd.algorithm, "rhd");
  rhd.busbw_GBps = 7.5;
  for (const bool timestamps : {false, true}) {
    const std::string one = printed(TableStyle{.timestamps = timestamps}, [&](Table& t) { t.row(&ring, &ring); });
    const std::string several = printed(TableStyle{.timestamps = timestamps, .algo_column = true}, [&](Table& t) {
      t.row(&ring, &ring);
      t.row(&rhd, &rhd);
    });
    const auto base = result_fields(one);
    const auto lines = result_fields(several);
    const std::size_t nccl_fields = timestamps ? 15 : 13;
    ASSERT_EQ(base.size(), 1u) << one;
    ASSERT_EQ(base[0].size(), nccl_fields) << one;
    ASSERT_EQ(lines.size(), 2u) << several;
    for (const auto& fields : lines) {
      ASSERT_EQ(fields.size(), nccl_fields + 1) << several;
      EXPECT_EQ(fields[0], "1048576");
      EXPECT_EQ(fields[2], "float");
      EXPECT_EQ(fields[4], "-1");
    }
    EXPECT_EQ(lines[0][7], "15.729") << several;  // busbw, out of place: nccl-tests' column 8
    EXPECT_EQ(lines[1][7], "7.500") << several;
    EXPECT_EQ(lines[0].back(), "ring");
    EXPECT_EQ(lines[1].back(), "rhd");
    for (std::size_t i = 0; i < nccl_fields; ++i) {
      if (i != 7 && i != 11) {
        EXPECT_EQ(lines[1][i], base[0][i]) << "field " << i + 1 << "\n" << several;
      }
    }
    // The title line: nccl-tests' titles in its order (its '#' first), then the algorithm's.
    std::istringstream in(several);
    std::string title;
    while (std::getline(in, title) && title.find(" size ") == std::string::npos) {
    }
    std::istringstream words(title);
    std::vector<std::string> t;
    for (std::string w; words >> w;) t.push_back(w);
    ASSERT_GE(t.size(), 14u) << title;
    EXPECT_EQ(t[1], "size");
    EXPECT_EQ(t[8], "busbw");
    EXPECT_EQ(t[13], "#wrong");
    EXPECT_EQ(t.back(), "algo");
    EXPECT_NE(several.find("\n# allreduce\n"), std::string::npos) << several;
  }
}
