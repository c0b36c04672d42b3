#include "table.hpp"

#include <cmath>

namespace commscope::bench {

void Table::header(const ResultRow& r) {
  const char* stats_head = stats_ ? "   min(us)   p50(us)   p99(us)   max(us)  skew(us)" : "";
  std::fprintf(out_, "#\n# %s\n", text(r.collective).c_str());
  std::fprintf(out_, "# %10s %12s %5s %5s %5s %5s  %-*s  %s\n", "", "", "", "", "", "", stats_ ? 84 : 34,
               "out-of-place", "in-place");
  std::fprintf(out_, "# %10s %12s %5s %5s %5s %5s  %10s %8s %8s %6s%s  %10s %8s %8s %6s%s\n", "size(B)", "count",
               "type", "redop", "root", "algo", "time(us)", "algbw", "busbw", "#wrong", stats_head, "time(us)", "algbw",
               "busbw", "#wrong", stats_head);
  std::fprintf(out_, "# %10s %12s %5s %5s %5s %5s  %10s %8s %8s %6s%s  %10s %8s %8s %6s\n", "", "(elements)", "", "",
               "", "", "", "(GB/s)", "(GB/s)", "", stats_ ? std::string(50, ' ').c_str() : "", "", "(GB/s)", "(GB/s)",
               "");
}

void Table::side(const ResultRow* r) {
  if (!r) {
    std::fprintf(out_, "  %10s %8s %8s %6s", "n/a", "", "", "");
    if (stats_) std::fprintf(out_, "%50s", "");
    return;
  }
  std::fprintf(out_, "  %10.2f %8.3f %8.3f %6llu", r->time_us, r->algbw_GBps, r->busbw_GBps,
               static_cast<unsigned long long>(r->nwrong));
  if (stats_)
    std::fprintf(out_, " %9.2f %9.2f %9.2f %9.2f %9.2f", r->min_us, r->p50_us, r->p99_us, r->max_us, r->skew_us);
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
  if (text(any->collective) != section_) {
    section_ = text(any->collective);
    header(*any);
  }
  std::fprintf(out_, "  %10llu %12llu %5s %5s %5d %5s", static_cast<unsigned long long>(any->bytes),
               static_cast<unsigned long long>(any->count), text(any->type).c_str(), text(any->op).c_str(), any->root,
               text(any->algorithm).c_str());
  side(oop);
  side(ip);
  std::fputc('\n', out_);
  std::fflush(out_);
}

std::uint64_t Table::footer() {
  std::fprintf(out_, "# Out of bounds values : %llu %s\n", static_cast<unsigned long long>(wrong_),
               wrong_ ? "FAILED" : "OK");
  std::fprintf(out_, "# Avg bus bandwidth    : %.4f GB/s over %d results\n",
               busbw_rows_ ? busbw_sum_ / busbw_rows_ : 0.0, busbw_rows_);
  for (const auto& [algo, v] : busbw_)
    std::fprintf(out_, "#   %-6s             : %.4f GB/s over %d results\n", algo.c_str(), v.first / v.second,
                 v.second);
  std::fprintf(out_, "#\n");
  std::fflush(out_);
  return wrong_;
}

}  // namespace commscope::bench
