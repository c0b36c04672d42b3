#include "table.hpp"

#include <cmath>
#include <ctime>

#include "commscope/bench/options.hpp"

namespace commscope::bench {
namespace {
constexpr int kTimestampWidth = 19;  // "2025-01-31 12:00:00"
}  // namespace

std::string timestamp_text() {
  const std::time_t t = std::time(nullptr);
  std::tm tm{};
  localtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%d %H:%M:%S", &tm);
  return buf;
}

Table::Table(std::FILE* out, TableStyle style) : out_(out), style_(style) {
  const bool cpu = style.cputime;
  columns_.push_back(
      {cpu ? "cputime(us)" : "time(us)", "", cpu ? 11 : 10, 2,
       cpu ? +[](const ResultRow& r) { return r.cpu_time_us; } : +[](const ResultRow& r) { return r.time_us; }});
  columns_.push_back({"algbw", "(GB/s)", 8, 3, [](const ResultRow& r) { return r.algbw_GBps; }});
  columns_.push_back({"busbw", "(GB/s)", 8, 3, [](const ResultRow& r) { return r.busbw_GBps; }});
  columns_.push_back({"#wrong", "", 6, 0, [](const ResultRow& r) { return static_cast<double>(r.nwrong); }, true});
  if (style.per_iter) {
    columns_.push_back({"i_min", "(us)", 9, 2, [](const ResultRow& r) { return r.min_us; }});
    columns_.push_back({"i_max", "(us)", 9, 2, [](const ResultRow& r) { return r.max_us; }});
    columns_.push_back({"i_p99", "(us)", 9, 2, [](const ResultRow& r) { return r.p99_us; }});
    columns_.push_back(
        {"i_cv%", "(%)", 7, 2, [](const ResultRow& r) { return r.mean_us > 0 ? r.stdev_us / r.mean_us * 100 : 0.0; }});
  }
  if (style.stats) {
    columns_.push_back({"min(us)", "", 9, 2, [](const ResultRow& r) { return r.min_us; }});
    columns_.push_back({"p50(us)", "", 9, 2, [](const ResultRow& r) { return r.p50_us; }});
    columns_.push_back({"p99(us)", "", 9, 2, [](const ResultRow& r) { return r.p99_us; }});
    columns_.push_back({"max(us)", "", 9, 2, [](const ResultRow& r) { return r.max_us; }});
    columns_.push_back({"skew(us)", "", 9, 2, [](const ResultRow& r) { return r.skew_us; }});
  }
}

int Table::side_width() const {
  int w = 1;  // two leading spaces, one space fewer than columns
  for (const Column& c : columns_) w += 1 + c.width;
  return w;
}

// nccl-tests' header: the id columns as its common.cu spaces them; the algorithm in the comment,
// or, with several, a last column titled "algo".
void Table::header(const ResultRow& r) {
  std::string what = text(r.collective);
  if (!style_.algo_column) what.append(", algorithm ").append(text(r.algorithm));
  // --from-profile's calls on smaller communicators: their group's size ("groups" line above).
  if (style_.ranks > 0 && r.nranks != style_.ranks) what.append(", on groups of ").append(std::to_string(r.nranks));
  std::fprintf(out_, "#\n# %s\n", what.c_str());
  std::fprintf(out_, "# %10s  %12s  %8s  %6s  %6s  %-*s  %s\n", "", "", "", "", "", side_width() - 2, "out-of-place",
               "in-place");
  const char* ids[2][5] = {{"size", "count", "type", "redop", "root"}, {"(B)", "(elements)", "", "", ""}};
  for (int line = 0; line < 2; ++line) {
    std::fprintf(out_, "# %10s  %12s  %8s  %6s  %6s", ids[line][0], ids[line][1], ids[line][2], ids[line][3],
                 ids[line][4]);
    for (int s = 0; s < 2; ++s) {
      std::fputs("  ", out_);
      for (std::size_t i = 0; i < columns_.size(); ++i) {
        std::string title = line == 0 ? columns_[i].title : columns_[i].unit;
        // nccl-tests: "time" over "(us)"; ours carries the unit in the title.
        if (const std::size_t paren = title.find("(us)"); line == 0 && paren != std::string::npos && paren > 0)
          title.erase(paren);
        else if (line == 1 && columns_[i].unit.empty() && columns_[i].title.ends_with("(us)"))
          title = "(us)";
        std::fprintf(out_, "%s%*s", i ? " " : "", columns_[i].width, title.c_str());
      }
    }
    if (style_.timestamps) std::fprintf(out_, "  %*s", kTimestampWidth, line == 0 ? "timestamp" : "%Y-%m-%d %H:%M:%S");
    if (style_.algo_column && line == 0) std::fputs("  algo", out_);
    std::fputc('\n', out_);
  }
}

void Table::side(const ResultRow* r) {
  std::fputs("  ", out_);
  if (!r) {
    std::fprintf(out_, "%*s%*s", columns_[0].width, "n/a", side_width() - 2 - columns_[0].width, "");
    return;
  }
  for (std::size_t i = 0; i < columns_.size(); ++i) {
    const Column& c = columns_[i];
    if (i) std::fputc(' ', out_);
    if (c.checked && r->check_iters == 0)
      std::fprintf(out_, "%*s", c.width, "N/A");
    else
      std::fprintf(out_, "%*.*f", c.width, c.precision, c.value(*r));
  }
  wrong_ += r->nwrong;
  auto& [sum, n] = busbw_[text(r->algorithm)];
  sum += r->busbw_GBps;
  ++n;
  busbw_sum_ += r->busbw_GBps;
  ++busbw_rows_;
}

void Table::row(const ResultRow* oop, const ResultRow* ip) {
  const ResultRow* any = oop ? oop : ip;
  if (!any) return;
  std::string section = text(any->collective);
  if (any->nranks != style_.ranks) section.append("/").append(std::to_string(any->nranks));
  if (section != section_) {
    section_ = section;
    header(*any);
  }
  std::fprintf(out_, "  %10llu  %12llu  %8s  %6s  %6d", static_cast<unsigned long long>(any->bytes),
               static_cast<unsigned long long>(any->count),
               std::string(nccl_tests_name(parse_datatype(text(any->type)))).c_str(), text(any->op).c_str(), any->root);
  side(oop);
  side(ip);
  if (style_.timestamps) std::fprintf(out_, "  %*s", kTimestampWidth, timestamp_text().c_str());
  if (style_.algo_column) std::fprintf(out_, "  %s", text(any->algorithm).c_str());
  std::fputc('\n', out_);
  std::fflush(out_);
}

std::uint64_t Table::footer() {
  if (style_.checked)
    std::fprintf(out_, "# Out of bounds values : %llu %s\n", static_cast<unsigned long long>(wrong_),
                 wrong_ ? "FAILED" : "OK");
  else  // nothing was compared (-c 0): no count to claim, as nccl-tests prints it
    std::fprintf(out_, "# Out of bounds values : N/A (not checked: -c 0)\n");
  std::fprintf(out_, "# Avg bus bandwidth    : %.4f GB/s over %d results\n", average_busbw(), busbw_rows_);
  for (const auto& [algo, v] : busbw_)
    std::fprintf(out_, "#   %-6s             : %.4f GB/s over %d results\n", algo.c_str(), v.first / v.second,
                 v.second);
  std::fprintf(out_, "#\n");
  std::fflush(out_);
  return wrong_;
}

}  // namespace commscope::bench
