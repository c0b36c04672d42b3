// The printed table: nccl-tests' columns, the optional ones, and the footer.
#include <gtest/gtest.h>

#include <cstdio>
#include <string>

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
  for (const char* want : {"cputime(us)", "i_min", "i_max", "i_p99", "i_cv%", "timestamp", "%Y-%m-%d %H:%M:%S",
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
  for (const char* want : {"size(B)",
                           "count",
                           "type",
                           "redop",
                           "root",
                           "algo",
                           "time(us)",
                           "algbw",
                           "busbw",
                           "#wrong",
                           "p50(us)",
                           "p99(us)",
                           "skew(us)",
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
