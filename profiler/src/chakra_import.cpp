// import_chakra: Chakra execution traces, one file per rank, as a commscope profile of their
// communication and compute nodes (docs/chakra.md).
#include <algorithm>
#include <cctype>
#include <filesystem>
#include <functional>
#include <map>
#include <queue>
#include <unordered_map>
#include <unordered_set>

#include "chakra/et_trace.hpp"
#include "chakra/names.hpp"
#include "commscope/profiler/breakdown.hpp"
#include "commscope/profiler/chakra.hpp"
#include "commscope/profiler/vocabulary.hpp"

namespace commscope::profiler {

namespace {

namespace ck = chakra;

struct RankInput {
  ck::EtTrace trace;
  ChakraImportRank report;
  bool device_nodes = false;  // some compute or communication node is no CPU operator
};

bool is_cpu_op(const ck::Node& n) {
  const ck::Attribute* a = ck::find_attribute(n.attrs, ck::attr::kIsCpuOp);
  return a != nullptr && ck::integer_value(*a).value_or(0) != 0;
}

bool is_work(const ck::Node& n) {
  return n.type == ck::NodeType::kComp || n.type == ck::NodeType::kCommColl || n.type == ck::NodeType::kCommSend ||
         n.type == ck::NodeType::kCommRecv;
}

std::optional<std::int64_t> int_attr(const ck::Node& n, std::string_view name) {
  const ck::Attribute* a = ck::find_attribute(n.attrs, name);
  return a != nullptr ? ck::integer_value(*a) : std::nullopt;
}

std::optional<std::string> string_attr(const ck::Node& n, std::string_view name) {
  const ck::Attribute* a = ck::find_attribute(n.attrs, name);
  if (a == nullptr) return std::nullopt;
  if (const auto* s = std::get_if<std::string>(&a->value)) return *s;
  return std::nullopt;
}

// Whether a node is imported: compute and communication nodes; of a trace that has device nodes,
// not its CPU operators (their time runs beside the device's, as in Chakra's converter).
bool imported(const RankInput& in, const ck::Node& n) {
  return is_work(n) && !(in.device_nodes && is_cpu_op(n));
}

// Storage, batch (data loading) and checkpoint nodes: time the rank spends on neither compute nor
// communication, kept as a gap (no event) where the times are synthetic.
bool is_gap(const ck::Node& n) {
  return n.type == ck::NodeType::kStorage || n.type == ck::NodeType::kBatch || n.type == ck::NodeType::kCheckpoint;
}

std::string left_out_reason(const RankInput& in, const ck::Node& n) {
  if (is_work(n) && in.device_nodes && is_cpu_op(n)) return "CPU operators beside device nodes";
  if (is_gap(n)) return std::string(ck::node_type_name(n.type)) + " (a gap)";
  return std::string(ck::node_type_name(n.type));
}

// The nodes in dependency order, ties in file order. As in Chakra's feeder (ASTRA-sim's reader),
// data_deps order the nodes and ctrl_deps do not (its converter's ctrl_deps name parents, and
// those of Chakra's own test trace run against the data dependencies). Real traces are not always
// acyclic: a dependency on itself or on a node the file lacks is dropped, and where a cycle leaves
// no node ready the earliest waiting node in file order goes next; each is counted in the rank's
// report.
std::vector<std::size_t> dependency_order(RankInput& in) {
  const std::vector<ck::Node>& nodes = in.trace.nodes;
  std::unordered_map<std::uint64_t, std::size_t> index;
  for (std::size_t i = 0; i < nodes.size(); ++i) index.emplace(nodes[i].id, i);
  std::vector<std::vector<std::size_t>> next(nodes.size());
  std::vector<std::size_t> waiting(nodes.size(), 0);
  for (std::size_t i = 0; i < nodes.size(); ++i)
    for (const std::uint64_t d : nodes[i].data_deps) {
      const auto it = index.find(d);
      if (it == index.end() || it->second == i) {
        ++in.report.left_out[it == index.end() ? "dependencies on missing nodes" : "dependencies on itself"];
        continue;
      }
      next[it->second].push_back(i);
      ++waiting[i];
    }
  std::priority_queue<std::size_t, std::vector<std::size_t>, std::greater<>> ready;
  for (std::size_t i = 0; i < nodes.size(); ++i)
    if (waiting[i] == 0) ready.push(i);
  std::vector<std::size_t> order;
  std::vector<bool> done(nodes.size(), false);
  std::size_t scan = 0;  // the earliest node perhaps not done, for breaking cycles
  while (order.size() < nodes.size()) {
    if (ready.empty()) {
      while (done[scan]) ++scan;
      ++in.report.left_out["dependency cycles broken"];
      waiting[scan] = 0;
      ready.push(scan);
    }
    const std::size_t i = ready.top();
    ready.pop();
    if (done[i]) continue;
    done[i] = true;
    order.push_back(i);
    for (const std::size_t j : next[i])
      if (waiting[j] > 0 && --waiting[j] == 0) ready.push(j);
  }
  return order;
}

struct Placed {
  const ck::Node* node = nullptr;
  std::int64_t start_ns = 0, end_ns = 0;
};

// Each imported node's time: recorded (commscope's ns, else start_time_micros, absent = 0) when
// the traces have start times; else synthetic, the imported nodes one after another in dependency
// order, each for its duration.
std::vector<Placed> place(RankInput& in, bool recorded) {
  std::vector<Placed> out;
  const auto duration = [](const ck::Node& n) {
    return int_attr(n, ck::attr::kDurationNs).value_or(static_cast<std::int64_t>(n.duration_micros) * 1000);
  };
  if (recorded) {
    for (const ck::Node& n : in.trace.nodes) {
      if (!imported(in, n)) continue;
      const std::int64_t start =
          int_attr(n, ck::attr::kStartNs).value_or(static_cast<std::int64_t>(n.start_time_micros) * 1000);
      out.push_back({&n, start, start + duration(n)});
    }
    std::stable_sort(out.begin(), out.end(), [](const Placed& a, const Placed& b) { return a.start_ns < b.start_ns; });
    return out;
  }
  std::int64_t cursor = 0;
  for (const std::size_t i : dependency_order(in)) {
    const ck::Node& n = in.trace.nodes[i];
    if (is_gap(n)) cursor += duration(n);
    if (!imported(in, n)) continue;
    out.push_back({&n, cursor, cursor + duration(n)});
    cursor += duration(n);
  }
  return out;
}

// A foreign process group's label from its members, the ranks whose traces use it: "pg0[0,1]".
std::map<std::string, std::string> group_labels(const std::vector<RankInput>& inputs) {
  std::map<std::string, std::vector<int>> members;
  for (std::size_t r = 0; r < inputs.size(); ++r)
    for (const ck::Node& n : inputs[r].trace.nodes) {
      const std::optional<std::string> pg = string_attr(n, ck::attr::kPgName);
      if (!pg || pg->empty() || parse_label(*pg) || !is_work(n) || n.type == ck::NodeType::kComp) continue;
      std::vector<int>& m = members[*pg];
      if (m.empty() || m.back() != static_cast<int>(r)) m.push_back(static_cast<int>(r));
    }
  std::map<std::string, std::string> out;
  int unnamed = 0;
  for (const auto& [name, ranks] : members) {
    bool word = true;
    for (const char c : name) word &= std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_';
    out[name] = communicator_label("pg" + (word ? name : "_" + std::to_string(unnamed++)), ranks);
  }
  return out;
}

// A collective's bytes (the profile's S, the whole array) from its comm_size: an allgather's or a
// gather's is one rank's part (names.hpp), so times its group's members (`label`'s, or the
// `nranks` traces' for none); commscope's own export says the whole where it did not divide.
std::int64_t collective_bytes(const ck::Node& n, std::optional<ck::CommType> type, const std::string& label,
                              int nranks) {
  const std::int64_t size = int_attr(n, ck::attr::kCommSize).value_or(0);
  if (!type || !ck::per_rank_comm_size(*type)) return size;
  if (const std::optional<std::int64_t> whole = int_attr(n, ck::attr::kBytes)) return *whole;
  return size * (label.empty() ? nranks : ck::label_members(label).value_or(1));
}

// One communication node as an event (start, end and iteration already set).
void communication_event(Event& e, const ck::Node& n, int rank, int nranks,
                         const std::map<std::string, std::string>& groups, StringTable& strings,
                         std::map<std::uint32_t, std::int64_t>& next_seq) {
  e.kind = EventKind::kCommunication;
  e.bytes = int_attr(n, ck::attr::kCommSize).value_or(0);
  const std::optional<std::string> pg = string_attr(n, ck::attr::kPgName);
  // A commscope label is kept; another group name is its members' label (group_labels).
  const bool labelled = pg && parse_label(*pg);
  std::string label = labelled ? *pg : std::string();
  const std::string foreign = pg && !labelled && !pg->empty() ? groups.at(*pg) : std::string();
  std::string name;
  std::optional<ck::CommType> collective;
  if (n.type == ck::NodeType::kCommColl) {
    const std::optional<std::int64_t> type = int_attr(n, ck::attr::kCommType);
    if (type && *type >= 0 && *type < ck::kCommTypeCount) collective = static_cast<ck::CommType>(*type);
    if (!type) {
      if (const std::optional<CallName> call = classify_call(n.name)) collective = ck::comm_type_of(*call);
    }
    name = type                     ? ck::collective_name_of(*type)
           : collective.has_value() ? ck::collective_name_of(static_cast<std::int64_t>(*collective))
                                    : "collective";
  } else {
    const bool send = n.type == ck::NodeType::kCommSend;
    name = send ? "send" : "recv";
    const std::optional<std::int64_t> src = int_attr(n, ck::attr::kCommSrc), dst = int_attr(n, ck::attr::kCommDst);
    // A peer the node names: the link between it and this rank.
    const std::optional<std::int64_t> peer = send ? dst : src;
    if (label.empty() && peer)
      label =
          send ? link_label("p2p", rank, static_cast<int>(*peer)) : link_label("p2p", static_cast<int>(*peer), rank);
  }
  if (label.empty()) label = foreign;
  if (n.type == ck::NodeType::kCommColl) e.bytes = collective_bytes(n, collective, label, nranks);
  e.name = strings.intern(string_attr(n, ck::attr::kName).value_or(name));
  e.detail = strings.intern(string_attr(n, ck::attr::kDetail).value_or(n.name == name ? std::string() : n.name));
  e.communicator = label.empty() ? 0 : strings.intern(label);
  const std::int64_t counted = next_seq[e.communicator]++;
  e.seq = int_attr(n, ck::attr::kSeq).value_or(counted);
}

// Rank r's events: its nodes, then one iteration event per iteration its nodes carry.
std::vector<Event> events_of(RankInput& in, int rank, int nranks, bool recorded,
                             const std::map<std::string, std::string>& groups, StringTable& strings) {
  std::vector<Event> out;
  std::map<std::uint32_t, std::int64_t> next_seq;
  std::map<std::int32_t, std::pair<std::int64_t, std::int64_t>> windows;
  std::uint64_t next_id = 1;
  for (const Placed& p : place(in, recorded)) {
    const ck::Node& n = *p.node;
    Event e;
    e.start_ns = p.start_ns;
    e.end_ns = p.end_ns;
    e.iteration = static_cast<std::int32_t>(int_attr(n, ck::attr::kIteration).value_or(0));
    if (n.type == ck::NodeType::kComp) {
      e.kind = EventKind::kKernel;
      e.name = strings.intern(n.name.empty() ? "compute" : n.name);
      ++in.report.imported["compute"];
    } else {
      e.id = next_id++;
      communication_event(e, n, rank, nranks, groups, strings, next_seq);
      ++in.report.imported[std::string(ck::node_type_name(n.type))];
    }
    if (e.iteration >= 0) {
      auto [it, fresh] = windows.try_emplace(e.iteration, e.start_ns, e.end_ns);
      if (!fresh) it->second = {std::min(it->second.first, e.start_ns), std::max(it->second.second, e.end_ns)};
    }
    out.push_back(e);
  }
  for (const ck::Node& n : in.trace.nodes)
    if (!imported(in, n)) ++in.report.left_out[left_out_reason(in, n)];
  for (const auto& [iteration, span] : windows) {
    Event w;
    w.kind = EventKind::kIteration;
    w.start_ns = span.first;
    w.end_ns = span.second;
    w.iteration = iteration;
    w.name = strings.intern(in.report.exported ? "iteration" : "trace");
    out.push_back(w);
  }
  return out;
}

std::string counts_text(const std::map<std::string, std::int64_t>& m) {
  std::string s;
  for (const auto& [k, v] : m) s += (s.empty() ? "" : "; ") + k + " " + std::to_string(v);
  return s.empty() ? "none" : s;
}

RankInput read_rank(const std::string& path) {
  RankInput in;
  in.trace = ck::read_et_file(path);
  in.report.path = path;
  in.report.version = in.trace.metadata.version;
  if (const ck::Attribute* schema = ck::find_attribute(in.trace.metadata.attrs, "schema");
      in.report.version.empty() && schema != nullptr)
    if (const auto* text = std::get_if<std::string>(&schema->value)) in.report.version = "schema " + *text;
  in.report.nodes = static_cast<std::int64_t>(in.trace.nodes.size());
  const ck::Attribute* source = ck::find_attribute(in.trace.metadata.attrs, "source");
  const auto* text = source != nullptr ? std::get_if<std::string>(&source->value) : nullptr;
  in.report.exported = text != nullptr && *text == ck::kExportSource;
  std::unordered_set<std::uint64_t> ids;
  for (const ck::Node& n : in.trace.nodes) {
    in.device_nodes |= is_work(n) && !is_cpu_op(n);
    if (!ids.insert(n.id).second) throw ChakraError(path + ": node id " + std::to_string(n.id) + " appears twice");
  }
  return in;
}

void describe(ChakraImport& out, const ChakraImportOptions& options, std::size_t nranks) {
  ProfileMeta& meta = out.profile.meta;
  meta.version = COMMSCOPE_VERSION;
  meta.command_line = options.command_line;
  meta.clock = out.synthetic_times ? "chakra (synthetic)" : "chakra (recorded)";
  meta.epoch_unix_ns = 0;
  meta.nranks = static_cast<std::int32_t>(nranks);
  meta.events_layout = "single";
  auto& a = meta.attributes;
  a.emplace_back("source", "commscope-import chakra");
  a.emplace_back("chakra.times",
                 out.synthetic_times
                     ? "synthetic: the traces have no start times; each rank's compute and communication nodes run "
                       "one after another in dependency order, each for its duration_micros"
                     : "recorded: the nodes' start times");
  for (std::size_t r = 0; r < out.ranks.size(); ++r) {
    const ChakraImportRank& rep = out.ranks[r];
    const std::string k = "chakra.rank" + std::to_string(r) + ".";
    a.emplace_back(k + "file", std::filesystem::path(rep.path).filename().string());
    a.emplace_back(k + "version", rep.version);
    a.emplace_back(k + "nodes", std::to_string(rep.nodes));
    a.emplace_back(k + "imported", counts_text(rep.imported));
    a.emplace_back(k + "left_out", counts_text(rep.left_out));
  }
}

}  // namespace

std::vector<std::string> chakra_files_of(const std::string& prefix_or_file) {
  std::error_code ec;
  if (std::filesystem::is_regular_file(prefix_or_file, ec)) return {prefix_or_file};
  std::vector<std::string> out;
  for (int r = 0;; ++r) {
    const std::string path = chakra_rank_file(prefix_or_file, r);
    if (!std::filesystem::is_regular_file(path, ec)) break;
    out.push_back(path);
  }
  if (out.empty())
    throw ChakraError(prefix_or_file + ": no such file, nor " + chakra_rank_file(prefix_or_file, 0) + " (a prefix)");
  return out;
}

ChakraImport import_chakra(const ChakraImportOptions& options) {
  if (options.files.empty()) throw ChakraError("no trace files given");
  std::vector<RankInput> inputs;
  for (const std::string& path : options.files) inputs.push_back(read_rank(path));
  // Start times are recorded when some imported node has one other than 0 (protobuf writes no
  // zero, so a node at 0 has none) or commscope's own.
  ChakraImport out;
  out.synthetic_times = true;
  for (const RankInput& in : inputs)
    for (const ck::Node& n : in.trace.nodes)
      if (imported(in, n) && (n.start_time_micros != 0 || ck::find_attribute(n.attrs, ck::attr::kStartNs) != nullptr))
        out.synthetic_times = false;
  const std::map<std::string, std::string> groups = group_labels(inputs);
  StringTable strings;
  std::vector<std::vector<Event>> events(inputs.size());
  std::int64_t communication = 0;
  for (std::size_t r = 0; r < inputs.size(); ++r) {
    events[r] = events_of(inputs[r], static_cast<int>(r), static_cast<int>(inputs.size()), !out.synthetic_times, groups,
                          strings);
    for (const Event& e : events[r]) communication += e.kind == EventKind::kCommunication;
  }
  if (communication == 0) throw ChakraError("the traces hold no communication nodes");
  const std::vector<std::int64_t> offsets(inputs.size(), 0);
  const std::vector<RankBreakdown> bd = analyze_ranks(events, offsets, Timeline::kHost);
  Profile& p = out.profile;
  for (std::size_t r = 0; r < inputs.size(); ++r) {
    p.breakdown.insert(p.breakdown.end(), bd[r].rows.begin(), bd[r].rows.end());
    p.operators.insert(p.operators.end(), bd[r].operators.begin(), bd[r].operators.end());
    RankInfo info;
    info.rank = static_cast<std::int32_t>(r);
    info.host = std::filesystem::path(inputs[r].report.path).filename().string().substr(0, 63);
    info.clock_error_ns = out.synthetic_times ? kUnknownClockError : 0;
    info.backend = "host";
    info.events = static_cast<std::int64_t>(events[r].size());
    p.ranks.push_back(info);
    out.ranks.push_back(inputs[r].report);
  }
  describe(out, options, inputs.size());
  p.strings = strings.strings();
  p.events = std::move(events);
  return out;
}

}  // namespace commscope::profiler
