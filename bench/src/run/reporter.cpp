#include "run/reporter.hpp"

#include <algorithm>
#include <utility>

namespace commscope::bench {

Reporter::Reporter(const std::vector<Case>& cases, Table& table, ResultsFile* file, JsonResults* json,
                   RunExpectations& expected)
    : cases_(cases), table_(table), file_(file), json_(json), expected_(expected) {
  for (const Case& c : cases_) by_name_[c.name] = &c;
}

void Reporter::start_cycle(int cycle) {
  flush_pending();
  const std::int64_t lines = cases_.empty() ? 0 : cases_.back().row + 1;
  row_offset_ = cycle * lines;
}

void Reporter::stash(const Case& c, const ResultRow& row, Samples samples) {
  stash_[c.id].push_back({row, std::move(samples)});
}

void Reporter::ReportRuns(const std::vector<Run>& runs) {
  bool line_done = false;
  for (const Run& run : runs) {
    if (run.run_type != Run::RT_Iteration) continue;  // mean/median/stddev of repetitions
    auto it = by_name_.find(run.run_name.function_name);
    if (it == by_name_.end()) continue;
    const Case& c = *it->second;
    auto& entries = stash_[c.id];
    std::size_t& next = consumed_[c.id];
    while (next < entries.size() && entries[next].row.iterations != run.iterations) ++next;
    if (next == entries.size()) continue;
    Entry e = std::move(entries[next]);
    // Earlier calls of this case (Google Benchmark's search for the count) are done with.
    entries.erase(entries.begin(), entries.begin() + static_cast<std::ptrdiff_t>(next) + 1);
    next = 0;
    if (c.row != pending_row_) flush_pending();
    pending_row_ = c.row;
    e.row.row += row_offset_;
    pending_[c.in_place].push_back(std::move(e));
    line_done = c.in_place || !has_in_place(c.coll);
  }
  // The in-place side closes a line (it runs second); alltoallv has none.
  if (pending_row_ >= 0 && line_done) flush_pending();
}

void Reporter::flush_pending() {
  const std::size_t n = std::max(pending_[0].size(), pending_[1].size());
  for (std::size_t i = 0; i < n; ++i) {
    Entry* oop = i < pending_[0].size() ? &pending_[0][i] : nullptr;
    Entry* ip = i < pending_[1].size() ? &pending_[1][i] : nullptr;
    for (Entry* e : {oop, ip})
      if (e) expected_.judge(e->row);
    table_.row(oop ? &oop->row : nullptr, ip ? &ip->row : nullptr);
    if (json_)
      json_->line(oop ? &oop->row : nullptr, oop ? &oop->samples : nullptr, ip ? &ip->row : nullptr,
                  ip ? &ip->samples : nullptr);
    if (file_) {
      if (oop) file_->append(oop->row, oop->samples);
      if (ip) file_->append(ip->row, ip->samples);
    }
  }
  if (file_ && n) file_->flush();
  pending_[0].clear();
  pending_[1].clear();
  pending_row_ = -1;
}

}  // namespace commscope::bench
