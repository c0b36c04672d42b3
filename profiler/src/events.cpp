#include "commscope/profiler/events.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <climits>
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

namespace {

constexpr int kMaxLabelRanks = 1 << 24;  // a range longer than any job's: refused, not allocated

// The ranks of a label, "0,1,4" or "0:62:2", appended (ascending; more than four in steps of one
// stride as first:last:step). Built by appending: GCC 12 warns falsely (-Wrestrict) about "," +
// std::to_string(...).
void append_ranks(std::string& out, std::vector<int> ranks) {
  std::sort(ranks.begin(), ranks.end());
  const std::size_t n = ranks.size();
  const int step = n > 1 ? ranks[1] - ranks[0] : 0;
  bool arithmetic = n > 4 && step > 0;
  for (std::size_t i = 1; arithmetic && i < n; ++i) arithmetic = ranks[i] - ranks[i - 1] == step;
  if (arithmetic) {
    for (const int x : {ranks.front(), ranks.back()}) out.append(std::to_string(x)).push_back(':');
    out += std::to_string(step);
    return;
  }
  for (std::size_t i = 0; i < n; ++i) {
    if (i > 0) out += ',';
    out += std::to_string(ranks[i]);
  }
}

void append_instance(std::string& out, int instance) {
  if (instance > 0) out.append("#").append(std::to_string(instance));
}

// Pieces appended (GCC 12 warns falsely, -Wrestrict, about "'" + std::string(...)).
template <class... Pieces>
std::string cat(const Pieces&... pieces) {
  std::string out;
  (out.append(std::string_view(pieces)), ...);
  return out;
}

bool fail(std::string* why, std::string reason) {
  if (why != nullptr) *why = std::move(reason);
  return false;
}

bool parse_number(std::string_view text, int& value) {
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  return ec == std::errc() && end == text.data() + text.size() && value >= 0;
}

bool parse_rank(std::string_view text, std::vector<int>& out, std::string* why) {
  int value = -1;
  if (!parse_number(text, value)) return fail(why, cat("'", text, "' is not a rank"));
  out.push_back(value);
  return true;
}

// "0,1,4" or "0:62:2" (first:last:step), appended to out.
bool parse_ranks(std::string_view body, std::vector<int>& out, std::string* why) {
  if (const auto colon = body.find(':'); colon != std::string_view::npos) {
    const auto second = body.find(':', colon + 1);
    int first = -1, last = -1, step = -1;
    if (second == std::string_view::npos) return fail(why, "expected first:last:step");
    if (!parse_number(body.substr(0, colon), first) ||
        !parse_number(body.substr(colon + 1, second - colon - 1), last) || !parse_number(body.substr(second + 1), step))
      return fail(why, cat("'", body, "' is not first:last:step"));
    if (step <= 0 || last < first) return fail(why, "empty range");
    const std::int64_t n = (std::int64_t{last} - first) / step + 1;
    if (n > kMaxLabelRanks) return fail(why, cat("more than ", std::to_string(kMaxLabelRanks), " ranks"));
    for (int i = 0; i < static_cast<int>(n); ++i) out.push_back(first + i * step);
    return true;
  }
  std::size_t at = 0;
  while (at <= body.size()) {
    const auto comma = std::min(body.find(',', at), body.size());
    if (!parse_rank(body.substr(at, comma - at), out, why)) return false;
    at = comma + 1;
  }
  return true;
}

}  // namespace

std::string communicator_label(std::string_view kind, std::vector<int> world_ranks, int instance) {
  std::string out(kind);
  out += '[';
  append_ranks(out, std::move(world_ranks));
  out += ']';
  append_instance(out, instance);
  return out;
}

std::string intercommunicator_label(std::string_view kind, std::vector<int> a, std::vector<int> b, int instance) {
  const auto lowest = [](const std::vector<int>& g) {
    return g.empty() ? INT_MAX : *std::min_element(g.begin(), g.end());
  };
  if (lowest(b) < lowest(a)) std::swap(a, b);
  std::string out(kind);
  out += '[';
  append_ranks(out, std::move(a));
  out += '|';
  append_ranks(out, std::move(b));
  out += ']';
  append_instance(out, instance);
  return out;
}

std::string link_label(std::string_view kind, int from, int to) {
  std::string out(kind);
  out += '[';
  out += std::to_string(from);
  out += '>';
  out += std::to_string(to);
  out += ']';
  return out;
}

std::optional<ParsedLabel> parse_label(std::string_view label, std::string* why) {
  const std::size_t open = label.find('['), close = label.rfind(']');
  if (open == 0 || open == std::string_view::npos || close == std::string_view::npos || close < open) {
    fail(why, "not a label of the form kind[ranks]");
    return std::nullopt;
  }
  ParsedLabel out;
  out.kind = std::string(label.substr(0, open));
  for (const char c : out.kind)
    if (std::isalnum(static_cast<unsigned char>(c)) == 0 && c != '_') {
      fail(why, cat("its kind '", out.kind, "' is not a word"));
      return std::nullopt;
    }
  if (const std::string_view suffix = label.substr(close + 1); !suffix.empty()) {
    if (suffix[0] != '#' || !parse_number(suffix.substr(1), out.instance) || out.instance == 0) {
      fail(why, cat("'", suffix, "' after its ranks is not #k, the k-th communicator with them (k >= 1)"));
      return std::nullopt;
    }
  }
  const std::string_view body = label.substr(open + 1, close - open - 1);
  bool ok = true;
  if (const auto arrow = body.find('>'); arrow != std::string_view::npos) {
    out.link = true;
    ok = parse_rank(body.substr(0, arrow), out.members, why) && parse_rank(body.substr(arrow + 1), out.members, why);
    if (ok && out.instance > 0) ok = fail(why, "a link has no instance");
    return ok ? std::optional<ParsedLabel>(std::move(out)) : std::nullopt;
  }
  if (const auto bar = body.find('|'); bar != std::string_view::npos) {
    out.inter = true;
    ok = parse_ranks(body.substr(0, bar), out.members, why) && parse_ranks(body.substr(bar + 1), out.members, why);
  } else {
    ok = parse_ranks(body, out.members, why);
  }
  std::sort(out.members.begin(), out.members.end());
  if (ok && std::adjacent_find(out.members.begin(), out.members.end()) != out.members.end())
    ok = fail(why, "a rank named twice");
  return ok ? std::optional<ParsedLabel>(std::move(out)) : std::nullopt;
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
