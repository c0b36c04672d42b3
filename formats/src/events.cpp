#include "commscope/formats/events.hpp"

#include <optional>
#include <stdexcept>

namespace commscope::profiler {

std::string_view communication_group(std::string_view name) {
  const std::string_view prefix = name.substr(0, name.find('.'));
  if (prefix.size() < name.size()) {
    if (prefix == "tp" || prefix == "pp" || prefix == "embedding") return prefix;
  }
  return "dp";
}

GridPlace grid_place(int rank, int nranks, int tp, int pp) {
  const std::optional<GridShape> shape = GridShape::of(nranks, tp, pp);
  return shape ? shape->place(rank) : GridPlace{};
}

std::string_view to_string(EventKind kind) {
  switch (kind) {
    case EventKind::kIteration:
      return "iteration";
    case EventKind::kOperator:
      return "operator";
    case EventKind::kKernel:
      return "kernel";
    case EventKind::kMemcpy:
      return "memcpy";
    case EventKind::kMemset:
      return "memset";
    case EventKind::kCommunication:
      return "communication";
    case EventKind::kRuntime:
      return "runtime";
    case EventKind::kSync:
      return "sync";
  }
  return "unknown";
}

StringTable::StringTable() {
  strings_.emplace_back();
  index_.emplace(std::string(), 0);
}

StringTable::StringTable(const StringTable& other) {
  std::lock_guard lock(other.mutex_);
  strings_ = other.strings_;
  index_ = other.index_;
}

StringTable& StringTable::operator=(const StringTable& other) {
  if (this == &other) return *this;
  std::scoped_lock lock(mutex_, other.mutex_);
  strings_ = other.strings_;
  index_ = other.index_;
  return *this;
}

std::uint32_t StringTable::intern(std::string_view s) {
  std::lock_guard lock(mutex_);
  auto it = index_.find(std::string(s));
  if (it != index_.end()) return it->second;
  const auto id = static_cast<std::uint32_t>(strings_.size());
  strings_.emplace_back(s);
  index_.emplace(strings_.back(), id);
  return id;
}

std::string StringTable::at(std::uint32_t id) const {
  std::lock_guard lock(mutex_);
  if (id >= strings_.size())
    throw std::out_of_range("string id " + std::to_string(id) + " not in a table of " +
                            std::to_string(strings_.size()));
  return strings_[id];
}

std::size_t StringTable::size() const {
  std::lock_guard lock(mutex_);
  return strings_.size();
}

std::vector<std::string> StringTable::strings() const {
  std::lock_guard lock(mutex_);
  return strings_;
}

StringTable StringTable::from(const std::vector<std::string>& strings) {
  StringTable table;
  table.strings_.clear();
  table.index_.clear();
  if (strings.empty() || !strings.front().empty())
    throw std::invalid_argument("a string table must start with the empty string");
  for (const auto& s : strings) {
    table.index_.emplace(s, static_cast<std::uint32_t>(table.strings_.size()));
    table.strings_.push_back(s);
  }
  return table;
}

}  // namespace commscope::profiler
