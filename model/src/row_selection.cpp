#include "commscope/model/row_selection.hpp"

#include <algorithm>

namespace commscope::analysis {

bool RowSelection::take(std::string_view collective, std::string_view type, std::string_view op, bool in_place,
                        double bytes, double time_us, std::vector<std::string>* left_out) {
  if (in_place || bytes == 0 || !(time_us > 0)) return false;
  auto it = first_.find(collective);
  if (it == first_.end()) it = first_.emplace(std::string(collective), std::pair{std::string(type), std::string(op)}).first;
  if (it->second.first == type && it->second.second == op) return true;
  if (left_out) {
    std::string what = std::string(collective) + " " + std::string(type) + " " + std::string(op);
    if (std::find(left_out->begin(), left_out->end(), what) == left_out->end()) left_out->push_back(std::move(what));
  }
  return false;
}

}  // namespace commscope::analysis
