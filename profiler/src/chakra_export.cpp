// export_chakra: a profile's communication as Chakra execution traces, one file per rank
// (docs/chakra.md).
#include <algorithm>
#include <limits>
#include <unordered_map>
#include <unordered_set>

#include "chakra/et_trace.hpp"
#include "chakra/names.hpp"
#include "commscope/profiler/breakdown.hpp"  // Window
#include "commscope/profiler/chakra.hpp"
#include "commscope/profiler/vocabulary.hpp"

namespace commscope::profiler {

namespace {

namespace ck = chakra;

// One rank's communication: one event per instance (a host call and the NCCL kernel of one scope
// share its id), by start time.
std::vector<const Event*> communication_of(const std::vector<Event>& events) {
  std::vector<const Event*> out;
  std::unordered_set<std::uint64_t> seen;
  for (const Event& e : events) {
    if (e.kind != EventKind::kCommunication) continue;
    if (e.id != 0 && !seen.insert(e.id).second) continue;
    out.push_back(&e);
  }
  std::stable_sort(out.begin(), out.end(), [](const Event* a, const Event* b) { return a->start_ns < b->start_ns; });
  return out;
}

std::vector<Window> windows_of(const std::vector<Event>& events) {
  std::vector<Window> out;
  for (const Event& e : events)
    if (e.kind == EventKind::kIteration) out.push_back({e.iteration, e.start_ns, e.end_ns});
  std::sort(out.begin(), out.end(), [](const Window& a, const Window& b) { return a.start_ns < b.start_ns; });
  return out;
}

// The span a rank's nodes cover, on its own clock: its windows and its communication.
std::pair<std::int64_t, std::int64_t> span_of(const std::vector<Window>& windows,
                                              const std::vector<const Event*>& comm) {
  std::int64_t lo = std::numeric_limits<std::int64_t>::max(), hi = std::numeric_limits<std::int64_t>::min();
  for (const Window& w : windows) lo = std::min(lo, w.start_ns), hi = std::max(hi, w.end_ns);
  for (const Event* e : comm) lo = std::min(lo, e->start_ns), hi = std::max(hi, e->end_ns);
  return {lo, hi};
}

ck::Attribute attribute(std::string_view name, decltype(ck::Attribute::value) value) {
  return ck::Attribute{std::string(name), std::move(value)};
}

// Builds one rank's nodes in order, each a data dependency of the next.
class RankNodes {
 public:
  RankNodes(std::int64_t shift_ns, const std::vector<Window>& windows) : shift_ns_(shift_ns), windows_(windows) {}

  // A node from start_ns to end_ns on the rank's clock.
  void add(ck::Node n, std::int64_t start_ns, std::int64_t end_ns, std::int32_t iteration) {
    n.id = trace.nodes.size();
    if (n.id > 0) n.data_deps.push_back(n.id - 1);
    const std::int64_t start = start_ns + shift_ns_, duration = end_ns - start_ns;
    n.has_start_time = true;
    n.start_time_micros = static_cast<std::uint64_t>(start / 1000);
    n.duration_micros = static_cast<std::uint64_t>(duration / 1000);
    n.attrs.push_back(attribute(ck::attr::kIsCpuOp, false));
    n.attrs.push_back(attribute(ck::attr::kIteration, std::int64_t{iteration}));
    n.attrs.push_back(attribute(ck::attr::kStartNs, start));
    n.attrs.push_back(attribute(ck::attr::kDurationNs, duration));
    trace.nodes.push_back(std::move(n));
  }

  // The gap [a, b) as compute nodes, cut where an iteration starts or ends inside it; each piece
  // carries the iteration it lies in (-1: outside every iteration).
  std::int64_t add_gap(std::int64_t a, std::int64_t b) {
    std::vector<std::int64_t> cuts{a, b};
    for (const Window& w : windows_)
      for (const std::int64_t t : {w.start_ns, w.end_ns})
        if (t > a && t < b) cuts.push_back(t);
    std::sort(cuts.begin(), cuts.end());
    cuts.erase(std::unique(cuts.begin(), cuts.end()), cuts.end());
    std::int64_t pieces = 0;
    for (std::size_t i = 0; i + 1 < cuts.size(); ++i) {
      ck::Node n;
      n.name = "compute gap";
      n.type = ck::NodeType::kComp;
      add(std::move(n), cuts[i], cuts[i + 1], iteration_at(cuts[i]));
      ++pieces;
    }
    return pieces;
  }

  ck::EtTrace trace;

 private:
  std::int32_t iteration_at(std::int64_t t) const {
    for (const Window& w : windows_)
      if (t >= w.start_ns && t < w.end_ns) return w.iteration;
    return -1;
  }
  std::int64_t shift_ns_;
  const std::vector<Window>& windows_;
};

// By communicator (string id), how many ranks it has: its label's members ("tp[0,1]": 2), else the
// ranks whose events use it; the profiled communicator (0) has all of the profile's ranks.
std::unordered_map<std::uint32_t, int> group_sizes(const Profile& profile) {
  std::unordered_map<std::uint32_t, std::unordered_set<std::size_t>> users;
  for (std::size_t r = 0; r < profile.events.size(); ++r)
    for (const Event& e : profile.events[r])
      if (e.kind == EventKind::kCommunication && e.communicator != 0) users[e.communicator].insert(r);
  std::unordered_map<std::uint32_t, int> out{{0, std::max(1, profile.meta.nranks)}};
  for (const auto& [id, ranks] : users)
    out[id] = std::max(1, ck::label_members(profile.strings.at(id)).value_or(static_cast<int>(ranks.size())));
  return out;
}

// The node of one communication event, or nullopt when Chakra has no node for it (its name is
// then counted as left out). `members`: its communicator's ranks (group_sizes).
std::optional<ck::Node> communication_node(const Event& e, const std::vector<std::string>& strings, int rank,
                                           int members, ChakraExportRank& rep) {
  const std::string& name = strings.at(e.name);
  const std::string label = e.communicator != 0 ? strings.at(e.communicator) : std::string();
  ck::Node n;
  n.name = name;
  const std::optional<CallName> call = classify_call(name);
  if (call && (call->kind == CallKind::kSend || call->kind == CallKind::kRecv)) {
    const bool send = call->kind == CallKind::kSend;
    n.type = send ? ck::NodeType::kCommSend : ck::NodeType::kCommRecv;
    ++(send ? rep.sends : rep.recvs);
    // The peer, where the profile names it: a link label "pp[0>2]" (from 0 to 2).
    if (const std::optional<ParsedLabel> link = parse_label(label); link && link->link) {
      const int from = link->members[0], to = link->members[1];
      n.attrs.push_back(attribute(ck::attr::kCommSrc, std::int32_t{from}));
      n.attrs.push_back(attribute(ck::attr::kCommDst, std::int32_t{to}));
      if (from != rank && to != rank)
        throw ChakraError("rank " + std::to_string(rank) + "'s message '" + name + "' on link " + label +
                          " is none of its own");
    }
    if (e.seq >= 0 && e.seq <= std::numeric_limits<std::int32_t>::max())
      n.attrs.push_back(attribute(ck::attr::kCommTag, static_cast<std::int32_t>(e.seq)));
  } else if (const std::optional<ck::CommType> type = call ? ck::comm_type_of(*call) : std::nullopt) {
    n.type = ck::NodeType::kCommColl;
    n.attrs.push_back(attribute(ck::attr::kCommType, static_cast<std::int64_t>(*type)));
    ++rep.collectives;
    // An allgather's or gather's comm_size is one rank's part (names.hpp): the profile's S over
    // the members; the whole S kept as well where it does not divide, so that it imports exactly.
    if (ck::per_rank_comm_size(*type)) {
      n.attrs.push_back(attribute(ck::attr::kCommSize, std::int64_t{e.bytes / members}));
      if (e.bytes % members != 0) n.attrs.push_back(attribute(ck::attr::kBytes, std::int64_t{e.bytes}));
    }
  } else {
    ++rep.left_out[name];
    return std::nullopt;
  }
  if (ck::find_attribute(n.attrs, ck::attr::kCommSize) == nullptr)
    n.attrs.push_back(attribute(ck::attr::kCommSize, std::int64_t{e.bytes}));
  if (!label.empty()) n.attrs.push_back(attribute(ck::attr::kPgName, label));
  n.attrs.push_back(attribute(ck::attr::kName, name));
  if (e.detail != 0) n.attrs.push_back(attribute(ck::attr::kDetail, strings.at(e.detail)));
  n.attrs.push_back(attribute(ck::attr::kSeq, std::int64_t{e.seq}));
  return n;
}

ck::GlobalMetadata metadata_of(const Profile& profile, int rank) {
  ck::GlobalMetadata m;
  m.version = std::string(ck::kSchemaVersion);
  m.attrs.push_back(attribute("source", std::string(ck::kExportSource)));
  m.attrs.push_back(attribute("rank", std::int64_t{rank}));
  m.attrs.push_back(attribute("nranks", std::int64_t{profile.meta.nranks}));
  m.attrs.push_back(attribute("commscope.profile_version", profile.meta.version));
  m.attrs.push_back(attribute("commscope.command_line", profile.meta.command_line));
  return m;
}

}  // namespace

std::string chakra_rank_file(const std::string& prefix, int rank) {
  return prefix + "." + std::to_string(rank) + ".et";
}

std::vector<ChakraExportRank> export_chakra(const Profile& profile, const std::string& prefix) {
  const std::size_t nranks = profile.events.size();
  if (nranks == 0 || static_cast<std::int32_t>(nranks) != profile.meta.nranks)
    throw ChakraError("the profile's events are not loaded (" + std::to_string(nranks) + " of " +
                      std::to_string(profile.meta.nranks) + " ranks)");
  // Every rank's times from one origin on rank 0's clock: the earliest node of any rank at 0.
  std::vector<std::vector<Window>> windows(nranks);
  std::vector<std::vector<const Event*>> comm(nranks);
  std::int64_t origin = std::numeric_limits<std::int64_t>::max();
  for (std::size_t r = 0; r < nranks; ++r) {
    windows[r] = windows_of(profile.events[r]);
    comm[r] = communication_of(profile.events[r]);
    if (windows[r].empty() && comm[r].empty())
      throw ChakraError("rank " + std::to_string(r) + " has neither iterations nor communication to export");
    const std::int64_t offset = r < profile.ranks.size() ? profile.ranks[r].clock_offset_ns : 0;
    origin = std::min(origin, span_of(windows[r], comm[r]).first + offset);
  }
  const std::unordered_map<std::uint32_t, int> sizes = group_sizes(profile);
  std::vector<ChakraExportRank> out(nranks);
  std::vector<ck::EtTrace> traces;
  for (std::size_t r = 0; r < nranks; ++r) {
    const int rank = static_cast<int>(r);
    ChakraExportRank& rep = out[r];
    const std::int64_t offset = r < profile.ranks.size() ? profile.ranks[r].clock_offset_ns : 0;
    RankNodes nodes(offset - origin, windows[r]);
    nodes.trace.metadata = metadata_of(profile, rank);
    const auto [lo, hi] = span_of(windows[r], comm[r]);
    std::int64_t cursor = lo;
    for (const Event* e : comm[r]) {
      std::optional<ck::Node> n = communication_node(*e, profile.strings, rank, sizes.at(e->communicator), rep);
      if (!n) {  // its time stays a hole: neither communication nor compute
        if (e->start_ns > cursor) rep.compute += nodes.add_gap(cursor, e->start_ns);
        cursor = std::max(cursor, e->end_ns);
        continue;
      }
      if (e->start_ns > cursor) rep.compute += nodes.add_gap(cursor, e->start_ns);
      nodes.add(std::move(*n), e->start_ns, std::max(e->start_ns, e->end_ns), e->iteration);
      cursor = std::max(cursor, e->end_ns);
    }
    if (hi > cursor) rep.compute += nodes.add_gap(cursor, hi);
    rep.path = chakra_rank_file(prefix, rank);
    traces.push_back(std::move(nodes.trace));
  }
  // Written once every rank's nodes are made, so that a profile refused is no file at all.
  for (std::size_t r = 0; r < nranks; ++r) ck::write_et_file(out[r].path, traces[r]);
  return out;
}

}  // namespace commscope::profiler
