// Profile files, schema commscope.profile/1 (docs/profile-format.md): the main file (/meta,
// /ranks, /strings, /events/rankNNNNN, /breakdown, /operators) and the per-rank events files.
// Everything goes through commscope::h5; read_profile turns every failure into one
// ProfileFileError line naming the file.
#include "commscope/formats/profile_file.hpp"

#include <algorithm>
#include <cstddef>
#include <cstdio>
#include <exception>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <stdexcept>
#include <string_view>
#include <type_traits>
#include <unordered_map>
#include <utility>

#include "commscope/h5/h5.hpp"
#include "rank_row.hpp"

namespace commscope::profiler {

RankRow rank_row(const RankInfo& info) {
  RankRow row;
  row.rank = info.rank;
  h5::set_fixed(row.host, info.host);
  row.clock_offset_ns = info.clock_offset_ns;
  row.clock_error_ns = info.clock_error_ns;
  h5::set_fixed(row.backend, info.backend);
  row.events = info.events;
  row.dropped_events = info.dropped_events;
  h5::set_fixed(row.cpus, info.cpus);
  row.cpu_count = info.cpu_count;
  row.node_cpus = info.node_cpus;
  h5::set_fixed(row.machine, info.machine);
  return row;
}

RankInfo rank_info(const RankRow& row) {
  return RankInfo{row.rank,           std::string(h5::get_fixed(row.host)),    row.clock_offset_ns,
                  row.clock_error_ns, std::string(h5::get_fixed(row.backend)), row.events,
                  row.dropped_events, std::string(h5::get_fixed(row.cpus)),    row.cpu_count,
                  row.node_cpus,      std::string(h5::get_fixed(row.machine))};
}

namespace {

namespace fs = std::filesystem;

constexpr const char* kSingle = "single";
constexpr const char* kPerRank = "per-rank";
constexpr std::size_t kEventChunkRows = 16384;             // 80 B rows: ~1.3 MB chunks before compression
constexpr std::int64_t kMaxRanks = std::int64_t{1} << 24;  // sanity bound for nranks read from a file

static_assert(std::is_trivially_copyable_v<Event> && std::is_standard_layout_v<Event>,
              "Event is written to HDF5 as it is");
static_assert(sizeof(EventKind) == 1 && sizeof(TrackKind) == 1, "kind and track_kind are stored as uint8");

constexpr formats::Need kOptional = formats::Need::kOptional;

formats::Columns<RankRow> make_rank_columns() {
  formats::Columns<RankRow> c;
  c.add("rank", &RankRow::rank).add("host", &RankRow::host);
  c.add("clock_offset_ns", &RankRow::clock_offset_ns, "ns").add("clock_error_ns", &RankRow::clock_error_ns, "ns");
  c.add("backend", &RankRow::backend).add("events", &RankRow::events).add("dropped_events", &RankRow::dropped_events);
  // Added later: the placement, then the machine.
  c.add("cpus", &RankRow::cpus, "", kOptional).add("cpu_count", &RankRow::cpu_count, "", kOptional);
  c.add("node_cpus", &RankRow::node_cpus, "", kOptional).add("machine", &RankRow::machine, "", kOptional);
  return c;
}

formats::Columns<BreakdownRow> make_breakdown_columns() {
  formats::Columns<BreakdownRow> c;
  c.add("rank", &BreakdownRow::rank).add("iteration", &BreakdownRow::iteration);
  c.add("start_ns", &BreakdownRow::start_ns, "ns").add("window_ns", &BreakdownRow::window_ns, "ns");
  c.add("kernel_ns", &BreakdownRow::kernel_ns, "ns").add("intra_ns", &BreakdownRow::intra_ns, "ns");
  c.add("inter_ns", &BreakdownRow::inter_ns, "ns").add("comm_ns", &BreakdownRow::comm_ns, "ns");
  c.add("comm_wait_ns", &BreakdownRow::comm_wait_ns, "ns");
  c.add("comm_transfer_ns", &BreakdownRow::comm_transfer_ns, "ns").add("overlap_ns", &BreakdownRow::overlap_ns, "ns");
  c.add("kernels", &BreakdownRow::kernels).add("communications", &BreakdownRow::communications);
  c.add("operators", &BreakdownRow::operators).add("identity_ok", &BreakdownRow::identity_ok);
  return c;
}

formats::Columns<OperatorTotalRow> make_operator_columns() {
  formats::Columns<OperatorTotalRow> c;
  c.add("rank", &OperatorTotalRow::rank).add("name", &OperatorTotalRow::name).add("calls", &OperatorTotalRow::calls);
  c.add("host_ns", &OperatorTotalRow::host_ns, "ns").add("kernel_ns", &OperatorTotalRow::kernel_ns, "ns");
  c.add("comm_ns", &OperatorTotalRow::comm_ns, "ns").add("intra_ns", &OperatorTotalRow::intra_ns, "ns");
  c.add("total_ns", &OperatorTotalRow::total_ns, "ns", kOptional);  // added later: kUnknownTotal where absent
  return c;
}

// The enums are one byte each (static_assert above): stored as their uint8 values.
formats::Columns<Event> make_event_columns() {
  formats::Columns<Event> c;
  c.add("start_ns", &Event::start_ns, "ns").add("end_ns", &Event::end_ns, "ns");
  c.add("id", &Event::id).add("parent", &Event::parent).add("correlation", &Event::correlation);
  c.add("bytes", &Event::bytes, "B").add("seq", &Event::seq).add("iteration", &Event::iteration);
  c.add("name", &Event::name).add("detail", &Event::detail).add("track", &Event::track).add("device", &Event::device);
  c.add("communicator", &Event::communicator, "", kOptional);  // added later: 0, the profiled communicator
  c.add("kind", &Event::kind).add("track_kind", &Event::track_kind);
  return c;
}

std::string in_quotes(std::string_view text) {
  std::string out;
  out.reserve(text.size() + 2);
  out += '\'';
  out += text;
  out += '\'';
  return out;
}

// "rank00003"
std::string rank_table_name(int rank) {
  char name[32];
  std::snprintf(name, sizeof name, "rank%05d", rank);
  return name;
}

[[noreturn]] void fail(const std::string& file, const std::string& reason) {
  throw ProfileFileError(h5::one_line(file + ": " + reason));
}

void check_strings_table(const std::vector<std::string>& strings) {
  if (strings.empty() || !strings.front().empty()) {
    throw std::invalid_argument("profile string table must start with the empty string");
  }
}

// Writer-side check: an event whose ids or kinds the reader would refuse.
void check_events(std::span<const Event> events, std::size_t nstrings, int rank) {
  for (std::size_t i = 0; i < events.size(); ++i) {
    const Event& e = events[i];
    if (e.name >= nstrings || e.detail >= nstrings) {
      throw std::invalid_argument("event " + std::to_string(i) + " of rank " + std::to_string(rank) +
                                  ": string id out of range (the table has " + std::to_string(nstrings) + ")");
    }
    if (static_cast<int>(e.kind) >= kEventKindCount || static_cast<int>(e.track_kind) > 1) {
      throw std::invalid_argument("event " + std::to_string(i) + " of rank " + std::to_string(rank) +
                                  ": invalid kind or track_kind");
    }
  }
}

// The main file's name as a rank file names it: "run.rank00003.h5" -> "run.h5"; "" when the
// name does not follow rank_event_file_name's pattern.
std::string main_file_of(const std::string& rank_path) {
  const std::string base = fs::path(rank_path).filename().string();
  const std::string_view suffix = ".h5";
  if (!base.ends_with(suffix)) return {};
  const std::string_view stem = std::string_view(base).substr(0, base.size() - suffix.size());
  const std::size_t dot = stem.rfind(".rank");
  if (dot == std::string_view::npos) return {};
  const std::string_view digits = stem.substr(dot + 5);
  if (digits.size() < 5 || digits.find_first_not_of("0123456789") != std::string_view::npos) return {};
  return std::string(stem.substr(0, dot)) + ".h5";
}

// ------------------------------------------------------------------------------------ reading

h5::File open_profile_file(const std::string& path) {
  if (const std::string problem = h5::file_problem(path, "a profile file"); !problem.empty()) fail(path, problem);
  try {
    return h5::File::open(path);
  } catch (const h5::FileLocked& e) {
    fail(path, e.what());
  } catch (const h5::Error& e) {
    fail(path, std::string("truncated or corrupted HDF5 file: ") + e.what());
  }
}

// The /meta group, after checking that it carries our schema.
h5::Group open_meta(const h5::File& f, const std::string& path) {
  if (!f.exists("meta")) fail(path, "not a commscope profile (no /meta group)");
  h5::Group meta = f.open_group("meta");
  if (!meta.has_attr("schema")) fail(path, "not a commscope profile (no schema attribute in /meta)");
  const std::string schema = meta.attr_string("schema");
  if (schema != kProfileSchema) fail(path, "schema " + in_quotes(schema) + ", expected " + in_quotes(kProfileSchema));
  return meta;
}

void require_attr(const h5::Object& object, const char* name, const std::string& path) {
  if (!object.has_attr(name)) fail(path, "missing attribute " + in_quotes(name) + " of " + object.name());
}

std::string string_attr(const h5::Object& object, const char* name, const std::string& path) {
  require_attr(object, name, path);
  return object.attr_string(name);
}

std::int64_t int_attr(const h5::Object& object, const char* name, const std::string& path) {
  require_attr(object, name, path);
  return object.attr_int(name);
}

// Table `name` of `parent` read with columns.in(table) (formats::read_rows: file_bytes, the size
// of the file holding it, bounds the rows it may claim).
template <class T>
std::vector<T> read_table(const h5::Group& parent, const std::string& name, const formats::Columns<T>& columns,
                          const std::string& path, std::uintmax_t file_bytes) {
  if (!parent.exists(name)) fail(path, "missing table " + in_quotes(name) + " in " + parent.name());
  return formats::read_rows(parent, name, columns, file_bytes);
}

std::vector<std::string> read_string_table(const h5::Group& parent, const std::string& path) {
  if (!parent.exists("strings")) fail(path, "missing the string table /strings");
  std::vector<std::string> strings = h5::read_strings(parent, "strings");
  if (strings.empty() || !strings.front().empty()) fail(path, "string table /strings does not start with \"\"");
  return strings;
}

// Reader-side check of one rank's events: string ids and enum values.
void validate_events(const std::vector<Event>& events, std::size_t nstrings, int rank, const std::string& path) {
  for (std::size_t i = 0; i < events.size(); ++i) {
    const Event& e = events[i];
    const auto where = [&] { return "event " + std::to_string(i) + " of rank " + std::to_string(rank) + ": "; };
    for (const std::uint32_t id : {e.name, e.detail, e.communicator})
      if (id >= nstrings)
        fail(path, where() + "string id " + std::to_string(id) + " out of range (the string table has " +
                       std::to_string(nstrings) + ")");
    if (static_cast<int>(e.kind) >= kEventKindCount) {
      fail(path, where() + "invalid kind " + std::to_string(static_cast<int>(e.kind)));
    }
    if (static_cast<int>(e.track_kind) > 1) {
      fail(path, where() + "invalid track_kind " + std::to_string(static_cast<int>(e.track_kind)));
    }
  }
}

// Rank `rank`'s events from its own file (per-rank layout). Names are mapped into
// profile.strings when the rank file's table differs from the main file's.
std::vector<Event> read_rank_events(const std::string& rank_path, int rank, Profile& profile,
                                    std::unordered_map<std::string, std::uint32_t>& index) {
  h5::File f = open_profile_file(rank_path);
  h5::Group meta = open_meta(f, rank_path);
  if (!meta.has_attr("rank")) fail(rank_path, "not a rank events file (no rank attribute in /meta)");
  const std::int64_t file_rank = meta.attr_int("rank");
  if (file_rank != rank)
    fail(rank_path, "holds rank " + std::to_string(file_rank) + ", expected " + std::to_string(rank));
  const std::int64_t nranks = int_attr(meta, "nranks", rank_path);
  if (nranks != profile.meta.nranks) {
    fail(rank_path,
         "written for " + std::to_string(nranks) + " ranks, the profile has " + std::to_string(profile.meta.nranks));
  }
  if (meta.has_attr("epoch_unix_ns") && meta.attr_int("epoch_unix_ns") != profile.meta.epoch_unix_ns) {
    fail(rank_path, "belongs to another run (epoch_unix_ns differs from the main file's)");
  }
  const std::vector<std::string> strings = read_string_table(f, rank_path);
  std::vector<Event> events = read_table(f, "events", event_columns(), rank_path, fs::file_size(rank_path));
  validate_events(events, strings.size(), rank, rank_path);
  if (strings != profile.strings) {
    if (index.empty()) {
      for (std::size_t i = 0; i < profile.strings.size(); ++i) {
        index.emplace(profile.strings[i], static_cast<std::uint32_t>(i));
      }
    }
    std::vector<std::uint32_t> map(strings.size());
    for (std::size_t i = 0; i < strings.size(); ++i) {
      auto [it, added] = index.emplace(strings[i], static_cast<std::uint32_t>(profile.strings.size()));
      if (added) profile.strings.push_back(strings[i]);
      map[i] = it->second;
    }
    for (Event& e : events) {
      e.name = map[e.name];
      e.detail = map[e.detail];
      e.communicator = map[e.communicator];
    }
  }
  return events;
}

Profile read_main(const std::string& path, bool with_events) {
  h5::File f = open_profile_file(path);
  h5::Group meta = open_meta(f, path);
  if (meta.has_attr("main_file")) {
    fail(path, "a rank events file (of " + in_quotes(meta.attr_string("main_file")) + "), not a profile's main file");
  }
  Profile p;
  p.meta.schema = kProfileSchema;
  p.meta.version = string_attr(meta, "version", path);
  p.meta.command_line = string_attr(meta, "command_line", path);
  p.meta.clock = string_attr(meta, "clock", path);
  p.meta.epoch_unix_ns = int_attr(meta, "epoch_unix_ns", path);
  const std::int64_t nranks = int_attr(meta, "nranks", path);
  if (nranks < 0 || nranks > kMaxRanks) fail(path, "nranks " + std::to_string(nranks) + " out of range");
  p.meta.nranks = static_cast<std::int32_t>(nranks);
  p.meta.events_layout = string_attr(meta, "events_layout", path);
  const bool per_rank = p.meta.events_layout == kPerRank;
  if (!per_rank && p.meta.events_layout != kSingle) {
    fail(path, "events_layout " + in_quotes(p.meta.events_layout) + ", expected 'single' or 'per-rank'");
  }
  if (per_rank) {
    require_attr(meta, "event_files", path);
    p.meta.event_files = meta.attr_strings("event_files");
    if (p.meta.event_files.size() != static_cast<std::size_t>(nranks)) {
      fail(path, "lists " + std::to_string(p.meta.event_files.size()) + " event_files for " + std::to_string(nranks) +
                     " ranks");
    }
  }
  if (meta.exists("attributes")) {
    const h5::Group attributes = meta.open_group("attributes");
    for (std::string& key : attributes.attr_names()) {
      std::string value = attributes.attr_string(key);
      p.meta.attributes.emplace_back(std::move(key), std::move(value));
    }
  }

  const std::uintmax_t bytes = fs::file_size(path);
  for (const RankRow& row : read_table(f, "ranks", rank_columns(), path, bytes)) p.ranks.push_back(rank_info(row));
  if (p.ranks.size() != static_cast<std::size_t>(nranks)) {
    fail(path, "/ranks has " + std::to_string(p.ranks.size()) + " rows for " + std::to_string(nranks) + " ranks");
  }
  p.strings = read_string_table(f, path);
  p.breakdown = read_table(f, "breakdown", breakdown_columns(), path, bytes);
  p.operators = read_table(f, "operators", operator_columns(), path, bytes);
  if (!f.open_dataset("operators").has_field("total_ns"))
    for (OperatorTotalRow& o : p.operators) o.total_ns = kUnknownTotal;
  for (std::size_t i = 0; i < p.operators.size(); ++i) {
    if (p.operators[i].name >= p.strings.size()) {
      fail(path, "/operators row " + std::to_string(i) + ": string id " + std::to_string(p.operators[i].name) +
                     " out of range (the string table has " + std::to_string(p.strings.size()) + ")");
    }
  }
  if (!with_events) return p;

  p.events.resize(static_cast<std::size_t>(nranks));
  if (!per_rank) {
    if (!f.exists("events")) fail(path, "missing group /events");
    const h5::Group events = f.open_group("events");
    for (int r = 0; r < p.meta.nranks; ++r) {
      const std::string name = rank_table_name(r);
      if (!events.exists(name)) continue;  // a rank without events
      p.events[static_cast<std::size_t>(r)] = formats::read_rows(f, "events/" + name, event_columns(), bytes);
      validate_events(p.events[static_cast<std::size_t>(r)], p.strings.size(), r, path);
    }
    return p;
  }
  const fs::path folder = fs::path(path).parent_path();
  std::unordered_map<std::string, std::uint32_t> index;
  for (int r = 0; r < p.meta.nranks; ++r) {
    const std::string rank_path = (folder / p.meta.event_files[static_cast<std::size_t>(r)]).string();
    const std::string context = " (rank " + std::to_string(r) + "'s events file of " + in_quotes(path) + ")";
    try {
      p.events[static_cast<std::size_t>(r)] = read_rank_events(rank_path, r, p, index);
    } catch (const ProfileFileError& e) {
      throw ProfileFileError(e.what() + context);
    } catch (const std::exception& e) {
      fail(rank_path, std::string("cannot read the rank events file: ") + e.what() + context);
    }
  }
  return p;
}

}  // namespace

const formats::Columns<RankRow>& rank_columns() {
  static const formats::Columns<RankRow> columns = make_rank_columns();
  return columns;
}
const formats::Columns<BreakdownRow>& breakdown_columns() {
  static const formats::Columns<BreakdownRow> columns = make_breakdown_columns();
  return columns;
}
const formats::Columns<OperatorTotalRow>& operator_columns() {
  static const formats::Columns<OperatorTotalRow> columns = make_operator_columns();
  return columns;
}
const formats::Columns<Event>& event_columns() {
  static const formats::Columns<Event> columns = make_event_columns();
  return columns;
}

std::string rank_event_file_name(const std::string& main_path, int rank) {
  if (rank < 0) throw std::invalid_argument("rank_event_file_name: negative rank");
  // Built by appending: GCC 12 warns falsely (-Wrestrict) about "." + std::string(...).
  std::string name = main_path.ends_with(".h5") ? main_path.substr(0, main_path.size() - 3) : main_path;
  name += '.';
  name += rank_table_name(rank);
  name += ".h5";
  return name;
}

// ------------------------------------------------------------------------------------ writing

namespace {

std::vector<RankRow> rank_rows(const std::vector<RankInfo>& ranks) {
  std::vector<RankRow> rows;
  rows.reserve(ranks.size());
  for (const RankInfo& r : ranks) rows.push_back(rank_row(r));
  return rows;
}

void check_operator_names(std::span<const OperatorTotalRow> rows, std::size_t nstrings, const char* where) {
  for (std::size_t i = 0; i < rows.size(); ++i) {
    if (rows[i].name >= nstrings) {
      throw std::invalid_argument(std::string("ProfileWriter::") + where + ": row " + std::to_string(i) +
                                  ": string id out of range");
    }
  }
}

}  // namespace

struct ProfileWriter::Impl {
  explicit Impl(h5::File f) : file(std::move(f)) {}

  h5::File file;
  std::int32_t nranks = 0;
  bool single = true;
  std::size_t nstrings = 0;
  std::size_t event_chunk_rows = kEventChunkRows;
  bool closed = false;
  h5::CompoundType<Event> events_type = event_columns().all();
  std::map<int, h5::Table<Event>> events;
  std::optional<h5::Table<BreakdownRow>> breakdown;
  std::optional<h5::Table<OperatorTotalRow>> operators;

  void check_open(const char* what) const {
    if (closed) throw std::logic_error(std::string("ProfileWriter::") + what + " after close()");
  }
  void ensure_breakdown() {
    if (breakdown) return;
    breakdown.emplace(h5::Table<BreakdownRow>::create(file, "breakdown", breakdown_columns().all(), 1024));
    breakdown->set_attr("units", "ns");
    breakdown->set_attr("description",
                        "one row per (rank, iteration): kernel_ns + intra_ns + inter_ns + comm_ns == window_ns; "
                        "start_ns on rank 0's clock");
  }
  void ensure_operators() {
    if (operators) return;
    operators.emplace(h5::Table<OperatorTotalRow>::create(file, "operators", operator_columns().all(), 1024));
    operators->set_attr("units", "ns");
    operators->set_attr("description", "one row per (rank, operator name): totals over the run; name = /strings id");
  }
};

ProfileWriter::ProfileWriter(const std::string& path, const ProfileMeta& meta, const std::vector<RankInfo>& ranks,
                             const std::vector<std::string>& strings, std::size_t event_chunk_rows) {
  if (!meta.schema.empty() && meta.schema != kProfileSchema) {
    throw std::invalid_argument("ProfileWriter writes " + std::string(kProfileSchema) + ", not " + meta.schema);
  }
  if (meta.nranks < 0) throw std::invalid_argument("ProfileWriter: negative nranks");
  if (ranks.size() != static_cast<std::size_t>(meta.nranks)) {
    throw std::invalid_argument("ProfileWriter: " + std::to_string(ranks.size()) + " RankInfo for " +
                                std::to_string(meta.nranks) + " ranks");
  }
  check_strings_table(strings);
  const std::string layout = meta.events_layout.empty() ? kSingle : meta.events_layout;
  if (layout != kSingle && layout != kPerRank) {
    throw std::invalid_argument("ProfileWriter: events_layout '" + layout + "', expected 'single' or 'per-rank'");
  }
  if (layout == kPerRank && meta.event_files.size() != ranks.size()) {
    throw std::invalid_argument("ProfileWriter: the per-rank layout needs one event file per rank");
  }

  impl_ = std::make_unique<Impl>(h5::File::create(path));
  Impl& w = *impl_;
  w.nranks = meta.nranks;
  w.single = layout == kSingle;
  w.nstrings = strings.size();
  w.event_chunk_rows = event_chunk_rows > 0 ? event_chunk_rows : kEventChunkRows;
  try {
    h5::Group m = w.file.create_group("meta");
    m.set_attr("schema", kProfileSchema);
    m.set_attr("version", meta.version);
    m.set_attr("command_line", meta.command_line);
    m.set_attr("clock", meta.clock);
    m.set_attr("epoch_unix_ns", meta.epoch_unix_ns);
    m.set_attr("nranks", static_cast<std::int64_t>(meta.nranks));
    m.set_attr("events_layout", layout);
    if (!w.single) m.set_attr("event_files", meta.event_files);
    h5::Group attributes = m.create_group("attributes");
    for (const auto& [key, value] : meta.attributes) attributes.set_attr(key, value);

    auto rank_table = h5::Table<RankRow>::create(w.file, "ranks", rank_columns().all(), 256);
    rank_table.set_attr("units", "ns");
    rank_table.set_attr("description", "one row per rank; clock_offset_ns: add it to the rank's times");
    rank_table.append(rank_rows(ranks));

    h5::write_strings(w.file, "strings", strings);
    if (w.single) {
      h5::Group events = w.file.create_group("events");
      events.set_attr("units", "ns");
      events.set_attr("description", "one table per rank (rankNNNNN); times in ns since the rank's epoch");
    }
    w.file.flush();
  } catch (...) {
    try {
      w.file.close_partial();
    } catch (...) {  // the original failure is the one to report
    }
    throw;
  }
}

ProfileWriter::~ProfileWriter() {
  if (!impl_ || impl_->closed) return;
  impl_->events.clear();
  impl_->breakdown.reset();
  impl_->operators.reset();
  try {
    impl_->file.close_partial();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "commscope profiler: closing '%s' failed: %s\n", impl_->file.partial_path().c_str(), e.what());
  }
}

void ProfileWriter::append_events(int rank, std::span<const Event> events) {
  Impl& w = *impl_;
  w.check_open("append_events");
  if (!w.single) throw std::logic_error("ProfileWriter::append_events: the events are in per-rank files");
  if (rank < 0 || rank >= w.nranks) {
    throw std::invalid_argument("ProfileWriter::append_events: rank " + std::to_string(rank) + " not in [0, " +
                                std::to_string(w.nranks) + ")");
  }
  check_events(events, w.nstrings, rank);
  auto it = w.events.find(rank);
  if (it == w.events.end()) {
    h5::Group group = w.file.open_group("events");
    h5::Table<Event> table = h5::Table<Event>::create(group, rank_table_name(rank), w.events_type, w.event_chunk_rows);
    table.set_attr("units", "ns");
    it = w.events.emplace(rank, std::move(table)).first;
  }
  it->second.append(events);
}

void ProfileWriter::write_breakdown(std::span<const BreakdownRow> rows) {
  impl_->check_open("write_breakdown");
  impl_->ensure_breakdown();
  impl_->breakdown->append(rows);
}

void ProfileWriter::write_operators(std::span<const OperatorTotalRow> rows) {
  impl_->check_open("write_operators");
  check_operator_names(rows, impl_->nstrings, "write_operators");
  impl_->ensure_operators();
  impl_->operators->append(rows);
}

void ProfileWriter::replace_strings(const std::vector<std::string>& strings) {
  Impl& w = *impl_;
  w.check_open("replace_strings");
  check_strings_table(strings);
  if (strings.size() < w.nstrings) throw std::invalid_argument("ProfileWriter::replace_strings: the table shrank");
  // Fixed-length strings as wide as the longest: a longer string needs a new dataset.
  w.file.remove("strings");
  h5::write_strings(w.file, "strings", strings);
  w.nstrings = strings.size();
}

void ProfileWriter::replace_ranks(const std::vector<RankInfo>& ranks) {
  Impl& w = *impl_;
  w.check_open("replace_ranks");
  if (ranks.size() != static_cast<std::size_t>(w.nranks)) {
    throw std::invalid_argument("ProfileWriter::replace_ranks: " + std::to_string(ranks.size()) + " RankInfo for " +
                                std::to_string(w.nranks) + " ranks");
  }
  h5::Table<RankRow>::open(w.file, "ranks", rank_columns().all()).replace(rank_rows(ranks));
}

void ProfileWriter::replace_operators(std::span<const OperatorTotalRow> rows) {
  impl_->check_open("replace_operators");
  check_operator_names(rows, impl_->nstrings, "replace_operators");
  impl_->ensure_operators();
  impl_->operators->replace(rows);
}

void ProfileWriter::replace_breakdown(std::span<const BreakdownRow> rows) {
  impl_->check_open("replace_breakdown");
  impl_->ensure_breakdown();
  impl_->breakdown->replace(rows);
}

void ProfileWriter::flush() {
  Impl& w = *impl_;
  w.check_open("flush");
  w.ensure_breakdown();  // every table exists, possibly empty
  w.ensure_operators();
  w.file.flush();
}

const std::string& ProfileWriter::partial_path() const noexcept {
  return impl_->file.partial_path();
}

void ProfileWriter::close() {
  Impl& w = *impl_;
  if (w.closed) return;
  w.ensure_breakdown();  // every table exists, possibly empty
  w.ensure_operators();
  w.events.clear();
  w.breakdown.reset();
  w.operators.reset();
  w.closed = true;
  w.file.close();
}

void write_rank_event_file(const std::string& path, const ProfileMeta& meta, int rank,
                           const std::vector<std::string>& strings, std::span<const Event> events) {
  if (rank < 0 || rank >= meta.nranks) {
    throw std::invalid_argument("write_rank_event_file: rank " + std::to_string(rank) + " not in [0, " +
                                std::to_string(meta.nranks) + ")");
  }
  check_strings_table(strings);
  check_events(events, strings.size(), rank);
  h5::File f = h5::File::create(path);
  try {
    h5::Group m = f.create_group("meta");
    m.set_attr("schema", kProfileSchema);
    m.set_attr("rank", rank);
    m.set_attr("nranks", static_cast<std::int64_t>(meta.nranks));
    m.set_attr("main_file", main_file_of(path));
    m.set_attr("version", meta.version);
    m.set_attr("epoch_unix_ns", meta.epoch_unix_ns);
    h5::write_strings(f, "strings", strings);
    auto table = h5::Table<Event>::create(f, "events", event_columns().all(), kEventChunkRows);
    table.set_attr("units", "ns");
    table.append(events);
  } catch (...) {
    try {
      f.close_partial();
    } catch (...) {  // the original failure is the one to report
    }
    throw;
  }
  f.close();
}

Profile read_profile(const std::string& path, bool with_events) {
  try {
    return read_main(path, with_events);
  } catch (const ProfileFileError&) {
    throw;
  } catch (const std::exception& e) {
    fail(path, std::string("cannot read the profile: ") + e.what());
  }
}

void write_profile_file(const Profile& profile, const std::string& path) {
  ProfileWriter writer(path, profile.meta, profile.ranks, profile.strings);
  for (std::size_t r = 0; r < profile.events.size(); ++r)
    if (!profile.events[r].empty()) writer.append_events(static_cast<int>(r), profile.events[r]);
  writer.write_breakdown(profile.breakdown);
  writer.write_operators(profile.operators);
  writer.close();
}

}  // namespace commscope::profiler
