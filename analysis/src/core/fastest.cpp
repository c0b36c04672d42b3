#include "commscope/analysis/fastest.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "commscope/common/stats.hpp"
#include "commscope/model/format.hpp"

namespace commscope::analysis {

std::optional<Interval> p10_p90(std::vector<double> values) {
  if (values.size() < kMinSpreadValues) return std::nullopt;
  std::sort(values.begin(), values.end());
  return Interval{stats::nearest_rank(values, 0.10), stats::nearest_rank(values, 0.90)};
}

std::optional<Interval> hull(const std::optional<Interval>& a, const std::optional<Interval>& b) {
  if (!a) return b;
  if (!b) return a;
  return Interval{std::min(a->lo, b->lo), std::max(a->hi, b->hi)};
}

bool clearly_faster(const Timed& a, const Timed& b) {
  if (!(a.time_us < b.time_us)) return false;
  if (a.spread && b.spread) return a.spread->hi < b.spread->lo;
  return b.time_us >= kUnknownSpreadFactor * a.time_us;
}

Verdict fastest(std::span<const Timed> candidates) {
  if (candidates.empty()) throw std::invalid_argument("fastest: no candidates");
  std::vector<Timed> timed;
  std::vector<std::string> untimed;
  for (const Timed& c : candidates)
    if (std::isnan(c.time_us))
      untimed.push_back(c.name);
    else
      timed.push_back(c);
  if (!untimed.empty() && timed.size() < 2) return Verdict{Verdict::Kind::unknown, untimed, {}};
  Verdict v;
  v.left_out = untimed;
  const auto best = std::min_element(timed.begin(), timed.end(),
                                     [](const Timed& a, const Timed& b) { return a.time_us < b.time_us; });
  for (auto it = timed.begin(); it != timed.end(); ++it)
    if (it == best || !clearly_faster(*best, *it)) v.names.push_back(it->name);
  v.kind = v.names.size() == 1 ? Verdict::Kind::winner : Verdict::Kind::tie;
  return v;
}

std::string verdict_text(const Verdict& v) {
  const auto join = [](const std::vector<std::string>& list) {
    std::string s;
    for (const std::string& n : list) s += (s.empty() ? "" : ", ") + n;
    return s;
  };
  const std::string names = join(v.names);
  const std::string without = v.left_out.empty() ? "" : " (" + join(v.left_out) + " not judged: no fit)";
  switch (v.kind) {
    case Verdict::Kind::winner:
      return names + without;
    case Verdict::Kind::tie:
      return "tie (" + names + ")" + without;
    case Verdict::Kind::unknown:
      return "unknown (no fit for " + names + ")";
  }
  return names;
}

std::string describe_verdicts(std::span<const double> sizes, std::span<const Verdict> verdicts) {
  if (sizes.empty() || sizes.size() != verdicts.size())
    throw std::invalid_argument("describe_verdicts: need as many sizes as verdicts, at least one");
  for (std::size_t i = 1; i < sizes.size(); ++i)
    if (!(sizes[i] > sizes[i - 1])) throw std::invalid_argument("describe_verdicts: sizes must be ascending");
  std::vector<std::size_t> changes;  // indices where the verdict differs from the one before
  for (std::size_t i = 1; i < verdicts.size(); ++i)
    if (!(verdicts[i] == verdicts[i - 1])) changes.push_back(i);
  if (changes.empty()) {
    const Verdict& only = verdicts.front();
    return verdict_text(only) + (only.kind == Verdict::Kind::winner ? " fastest at all sizes" : " at all sizes");
  }
  std::string text = verdict_text(verdicts.front()) + " below " + format_bytes(sizes[changes.front()]);
  for (std::size_t k = 1; k < changes.size(); ++k)
    text += ", " + verdict_text(verdicts[changes[k - 1]]) + " from " + format_bytes(sizes[changes[k - 1]]) + " to " +
            format_bytes(sizes[changes[k]]);
  // The last verdict holds up to the largest size measured, not beyond it.
  const std::string largest = format_bytes(sizes.back()) + ", the largest size";
  if (changes.back() + 1 == sizes.size()) return text + ", " + verdict_text(verdicts.back()) + " at " + largest;
  return text + ", " + verdict_text(verdicts.back()) + " from " + format_bytes(sizes[changes.back()]) + " (to " +
         largest + ")";
}

}  // namespace commscope::analysis
