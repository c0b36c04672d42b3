#include "commscope/profiler/vocabulary.hpp"

#include <algorithm>
#include <array>
#include <cctype>
#include <charconv>
#include <climits>
#include <optional>
#include <utility>

namespace commscope::profiler {

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

namespace {

// --- communication names

// The words of the collectives, longer first where one holds another ("allreduce" holds
// "reduce", "reducescatter" holds "scatter", "allgather" holds "gather"): a name that only
// mentions one takes the first it contains.
struct Word {
  std::string_view word;
  CallKind kind;
  Collective collective;
};
constexpr std::array<Word, 11> kCollectiveWords = {{
    {"allreduce", CallKind::kCollective, Collective::allreduce},
    {"reducescatter", CallKind::kCollective, Collective::reducescatter},
    {"allgather", CallKind::kCollective, Collective::allgather},
    {"alltoall", CallKind::kCollective, Collective::alltoall},
    {"broadcast", CallKind::kCollective, Collective::broadcast},
    {"bcast", CallKind::kCollective, Collective::broadcast},
    {"barrier", CallKind::kBarrier, Collective::allreduce},
    {"reduce", CallKind::kCollective, Collective::reduce},
    {"gather", CallKind::kCollective, Collective::gather},
    {"scatter", CallKind::kCollective, Collective::scatter},
    {"sendrecv", CallKind::kCollective, Collective::sendrecv},
}};

// What may follow a collective's word in a call's name: allreduce_max, allgatherv, alltoallv,
// reduce_scatter_block, _allgather_base, allreduce_coalesced.
constexpr std::array<std::string_view, 6> kCollectiveSuffixes = {"", "max", "v", "block", "base", "coalesced"};

std::string lower_letters(std::string_view name) {
  std::string out;
  for (const char c : name)
    if (std::isalpha(static_cast<unsigned char>(c)) != 0)
      out += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

// The part of a call's name after the last '.', in lower-case letters, without MPI's, NCCL's or
// c10d's prefix: "tp.allreduce_max" -> "allreducemax", "MPI_Irecv" -> "irecv".
std::string call_word(std::string_view name) {
  const auto dot = name.rfind('.');
  std::string n = lower_letters(dot == std::string_view::npos ? name : name.substr(dot + 1));
  for (const std::string_view prefix : {"mpi", "nccl", "c10d"})
    if (n.starts_with(prefix)) n.erase(0, prefix.size());
  return n;
}

// A call's word as it is: a collective's word (with a suffix), barrier (alone), a completion, a
// send or a receive.
std::optional<CallName> word_call(std::string_view word) {
  for (const Word& w : kCollectiveWords) {
    if (!word.starts_with(w.word)) continue;
    if (w.kind == CallKind::kBarrier && word == w.word) return CallName{w.kind};  // barrier: no suffix
    if (w.kind != CallKind::kCollective) continue;
    for (const std::string_view suffix : kCollectiveSuffixes)
      if (word.substr(w.word.size()) == suffix) return CallName{w.kind, w.collective};
  }
  for (const std::string_view completion :
       {"wait", "waitall", "waitany", "waitsome", "test", "testall", "testany", "testsome"})
    if (word == completion) return CallName{CallKind::kWait};
  if (word == "send" || word == "isend" || word == "ssend" || word == "bsend") return CallName{CallKind::kSend};
  if (word == "recv" || word == "irecv") return CallName{CallKind::kRecv};
  return std::nullopt;
}

// The exact reading: the name's call word, or a nonblocking post of one ("iallreduce" as its
// blocking call).
std::optional<CallName> exact_call(std::string_view name) {
  const std::string n = call_word(name);
  if (std::optional<CallName> call = word_call(n)) return call;
  if (n.size() > 1 && n[0] == 'i' && n != "irecv" && n != "isend") return word_call(std::string_view(n).substr(1));
  return std::nullopt;
}

// The name in lower case without '_' and '-' ("tp.allreduce_max" -> "tp.allreducemax"). A group
// prefix stays: a longer name's words are looked for inside it or at its end, and its last '.' is
// not always a group's ("aten::all_reduce.out").
std::string normalized_name(std::string_view name) {
  std::string out;
  for (const char c : name)
    if (c != '_' && c != '-') out.push_back(static_cast<char>(std::tolower(static_cast<unsigned char>(c))));
  return out;
}

// The reading of a longer name: a message by its end, else the first collective's word it holds.
std::optional<CallName> mentioned_call(std::string_view name) {
  const std::string n = normalized_name(name);
  if (n.find("sendrecv") == std::string::npos) {
    if (n.ends_with("send")) return CallName{CallKind::kSend, Collective::allreduce, false};
    if (n.ends_with("recv")) return CallName{CallKind::kRecv, Collective::allreduce, false};
  }
  for (const Word& w : kCollectiveWords)
    if (n.find(w.word) != std::string::npos) return CallName{w.kind, w.collective, false};
  return std::nullopt;
}

}  // namespace

std::optional<CallName> classify_call(std::string_view name) {
  std::optional<CallName> call = exact_call(name);
  if (!call) return mentioned_call(name);
  // Nonblocking: an 'i' before a call's word ("isend" is "send" posted), a completion excepted.
  const std::string word = call_word(name);
  if (word.size() > 1 && word[0] == 'i') {
    const std::optional<CallName> blocking = exact_call(std::string_view(word).substr(1));
    call->nonblocking = blocking && blocking->kind != CallKind::kWait;
  }
  return call;
}

ProfiledCall profiled_call(const Profile& profile, const Event& e) {
  auto text = [&](std::uint32_t id) { return id < profile.strings.size() ? profile.strings[id] : std::string(); };
  ProfiledCall c;
  c.label = text(e.communicator);
  c.group_size = std::max(1, profile.meta.nranks);
  if (!c.label.empty()) {
    const auto parsed = parse_label(c.label);
    c.group_size = parsed ? static_cast<int>(parsed->members.size()) : 0;
    c.link = parsed && parsed->link;
    c.inter = parsed && parsed->inter;
  }
  c.call = classify_call(text(e.name));
  const std::string detail = text(e.detail);
  const bool nccl_kernel = e.track_kind == TrackKind::kDeviceStream && detail.starts_with("nccl");
  c.algorithm = nccl_kernel ? "nccl" : detail.starts_with("process group ") ? "" : detail;
  c.bytes = std::max<std::int64_t>(0, e.bytes);
  return c;
}

}  // namespace commscope::profiler
