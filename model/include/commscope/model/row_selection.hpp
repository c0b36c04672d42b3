#pragma once
// Which bench rows are judged and fitted, one rule for commscope-report (measurements(), over
// files) and the bench's own verdict lines (over its run): out of place, a size above 0 with a
// time, of the first (type, op) each collective was seen with; of a size's repetitions, the lower
// middle by time.
#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace commscope::analysis {

class RowSelection {
 public:
  // Whether the row is taken. A row of another (type, op) than its collective's first is not,
  // and "COLLECTIVE TYPE OP" goes once into `left_out` where one is given.
  bool take(std::string_view collective, std::string_view type, std::string_view op, bool in_place, double bytes,
            double time_us, std::vector<std::string>* left_out = nullptr);

 private:
  std::map<std::string, std::pair<std::string, std::string>, std::less<>> first_;
};

// The lower middle of ascending `sorted` (non-empty): the median of an odd count, else the lower.
template <class T>
const T& lower_middle(const std::vector<T>& sorted) {
  return sorted[(sorted.size() - 1) / 2];
}

}  // namespace commscope::analysis
