#include "nccl_tuning.hpp"

#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>

#include "commscope/model/format.hpp"

namespace commscope::bench {
namespace {

// The word at the front of `s` (up to a blank), taken off it.
std::string_view take_word(std::string_view& s) {
  while (!s.empty() && s.front() == ' ') s.remove_prefix(1);
  const std::size_t end = std::min(s.find(' '), s.size());
  const std::string_view w = s.substr(0, end);
  s.remove_prefix(end);
  return w;
}

bool take(std::string_view& s, std::string_view word) {
  return take_word(s) == word;
}

}  // namespace

std::optional<NcclChoice> parse_nccl_tuning_line(std::string_view line) {
  const std::size_t at = line.find("NCCL INFO ");
  if (at == std::string_view::npos) return std::nullopt;
  std::string_view s = line.substr(at + 10);
  std::string_view func = take_word(s);
  if (func.size() < 2 || func.back() != ':') return std::nullopt;
  func.remove_suffix(1);
  const std::string_view n = take_word(s);
  NcclChoice c;
  const auto [end, ec] = std::from_chars(n.data(), n.data() + n.size(), c.bytes);
  if (ec != std::errc() || end != n.data() + n.size()) return std::nullopt;
  if (!take(s, "Bytes") || !take(s, "->") || !take(s, "Algo")) return std::nullopt;
  c.algorithm = std::string(take_word(s));
  if (!take(s, "proto")) return std::nullopt;
  c.protocol = std::string(take_word(s));
  if (c.algorithm.empty() || c.protocol.empty()) return std::nullopt;
  c.collective = std::string(func);
  return c;
}

std::string summarize_nccl_choices(std::span<const NcclChoice> choices) {
  // collective (in first-seen order) -> bytes -> the distinct "ALGO/PROTO" seen at that size
  std::vector<std::pair<std::string, std::map<std::uint64_t, std::vector<std::string>>>> by;
  for (const NcclChoice& c : choices) {
    auto it = std::find_if(by.begin(), by.end(), [&](const auto& x) { return x.first == c.collective; });
    if (it == by.end()) it = by.insert(by.end(), {c.collective, {}});
    std::vector<std::string>& seen = it->second[c.bytes];
    const std::string pair = c.algorithm + "/" + c.protocol;
    if (std::find(seen.begin(), seen.end(), pair) == seen.end()) seen.push_back(pair);
  }
  std::string out;
  for (const auto& [collective, by_size] : by) {
    // Each size's choices joined once, ascending by size; then runs of equal text.
    std::vector<std::pair<double, std::string>> sizes;
    for (const auto& [bytes, seen] : by_size) {
      std::string what;
      for (const std::string& p : seen) what += (what.empty() ? "" : "+") + p;
      sizes.emplace_back(static_cast<double>(bytes), std::move(what));
    }
    std::string runs;
    for (std::size_t i = 0; i < sizes.size();) {
      std::size_t last = i;
      while (last + 1 < sizes.size() && sizes[last + 1].second == sizes[i].second) ++last;
      runs += (runs.empty() ? "" : ", ") + sizes[i].second + " " +
              analysis::format_size_range(sizes[i].first, sizes[last].first, sizes.back().first);
      i = last + 1;
    }
    out += (out.empty() ? "" : "; ") + collective + ": " + runs;
  }
  return out;
}

void NcclTuningLog::start(const std::string& dir) {
  if (const char* d = std::getenv("NCCL_DEBUG"); d && *d) {
    note_ = std::string("NCCL_DEBUG is set (") + d + "): its tuning lines are the user's, not read";
    return;
  }
  if (const char* f = std::getenv("NCCL_DEBUG_FILE"); f && *f) {
    note_ = "NCCL_DEBUG_FILE is set: the log is the user's, not read";
    return;
  }
  path_ = dir + "/commscope-nccl-" + std::to_string(::getpid()) + ".log";
  ::setenv("NCCL_DEBUG", "INFO", 1);
  ::setenv("NCCL_DEBUG_SUBSYS", "TUNING", 1);
  ::setenv("NCCL_DEBUG_FILE", path_.c_str(), 1);
  note_.clear();
}

std::vector<NcclChoice> NcclTuningLog::read() const {
  std::vector<NcclChoice> out;
  if (path_.empty()) return out;
  std::ifstream in(path_);
  for (std::string line; std::getline(in, line);)
    if (auto c = parse_nccl_tuning_line(line)) out.push_back(std::move(*c));
  return out;
}

NcclTuningLog::~NcclTuningLog() {
  if (!path_.empty()) std::remove(path_.c_str());
}

}  // namespace commscope::bench
