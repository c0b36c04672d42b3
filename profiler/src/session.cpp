#include "commscope/profiler/session.hpp"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <limits>
#include <stdexcept>
#include <thread>

#include "commscope/collectives/clock_offsets.hpp"
#include "commscope/collectives/gather_rows.hpp"
#include "commscope/formats/profile_file.hpp"
#include "commscope/profiler/breakdown.hpp"
#include "commscope/profiler/device_records.hpp"
#include "commscope/profiler/flight.hpp"
#include "commscope/profiler/placement.hpp"
#include "commscope/profiler/vocabulary.hpp"
#include "cupti_backend.hpp"
#include "rank_row.hpp"
#include "registry.hpp"
#include "session_impl.hpp"

namespace commscope::profiler {

using session_detail::warn;

namespace {

std::atomic<bool> g_session_open{false};

std::int64_t realtime_ns() {
  timespec ts{};
  clock_gettime(CLOCK_REALTIME, &ts);
  return static_cast<std::int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

}  // namespace

std::vector<int> world_ranks(MPI_Group group) {
  MPI_Group world = MPI_GROUP_NULL;
  MPI_Comm_group(MPI_COMM_WORLD, &world);
  int n = 0;
  MPI_Group_size(group, &n);
  std::vector<int> mine(static_cast<std::size_t>(n)), out(mine.size());
  for (int i = 0; i < n; ++i) mine[static_cast<std::size_t>(i)] = i;
  MPI_Group_translate_ranks(group, n, mine.data(), world, out.data());
  MPI_Group_free(&world);
  return out;
}

std::vector<int> world_ranks(MPI_Comm comm) {
  MPI_Group group = MPI_GROUP_NULL;
  MPI_Comm_group(comm, &group);
  std::vector<int> out = world_ranks(group);
  MPI_Group_free(&group);
  return out;
}

namespace {

// Numbers every rank's collective instances alike, densely from the first one these events hold
// on any rank, and sets each communication's wait from the latest arrival over the ranks.
// Instances are (communicator, seq), the communicator a string id of the merged table, the same
// on every rank; `communicators` bounds those ids on every rank alike (0: found here). Numbering
// from the first instance here keeps the vectors to these events' instances, not every instance
// since the session began (the stream analyses each step's events alone). Collective: one
// MPI_Allreduce for the instance spans, one for the arrivals (and one for the bound when 0).
void latest_arrivals(MPI_Comm comm, RankTimeline& timeline, std::int64_t clock_offset_ns, std::size_t communicators) {
  constexpr std::int64_t kNone = std::numeric_limits<std::int64_t>::min();
  const auto numbered = [](const Activity& a) { return a.cls == ActivityClass::kCommunication && a.seq >= 0; };
  if (communicators == 0) {
    std::int64_t n = 0;
    for (const Activity& a : timeline.activities)
      if (numbered(a)) n = std::max<std::int64_t>(n, a.communicator + std::int64_t{1});
    MPI_Allreduce(MPI_IN_PLACE, &n, 1, MPI_INT64_T, MPI_MAX, comm);
    communicators = static_cast<std::size_t>(n);
  }
  // Per communicator: minus its least seq and its largest, over the ranks.
  std::vector<std::int64_t> span(2 * communicators, kNone);
  for (const Activity& a : timeline.activities) {
    if (!numbered(a) || a.communicator >= communicators) continue;
    span[2 * a.communicator] = std::max(span[2 * a.communicator], -a.seq);
    span[2 * a.communicator + 1] = std::max(span[2 * a.communicator + 1], a.seq);
  }
  if (!span.empty())
    MPI_Allreduce(MPI_IN_PLACE, span.data(), static_cast<int>(span.size()), MPI_INT64_T, MPI_MAX, comm);
  std::vector<std::int64_t> counts(communicators, 0);
  std::size_t instances = 0;
  for (std::size_t c = 0; c < communicators; ++c)
    if (span[2 * c + 1] != kNone) instances += static_cast<std::size_t>(counts[c] = span[2 * c + 1] + span[2 * c] + 1);
  for (Activity& a : timeline.activities)
    if (numbered(a) && a.communicator < communicators) a.seq += span[2 * a.communicator];
  number_instances(timeline, counts);
  std::vector<std::int64_t> arrivals = collective_arrivals(timeline, clock_offset_ns, instances);
  if (!arrivals.empty())
    MPI_Allreduce(MPI_IN_PLACE, arrivals.data(), static_cast<int>(arrivals.size()), MPI_INT64_T, MPI_MAX, comm);
  apply_latest_arrivals(timeline, arrivals, clock_offset_ns);
}

// Merges every rank's name table into one (rank 0's ids first, so they rarely change) and remaps
// this rank's events to it. Returns the merged table (complete on rank 0 only).
std::vector<std::string> merge_strings(MPI_Comm comm, int rank, int size, std::vector<Event>& events) {
  const std::vector<std::string> local = process_names().strings();
  std::string packed;
  for (const auto& s : local) packed.append(s).push_back('\0');
  const int len = static_cast<int>(packed.size());
  std::vector<int> lens(static_cast<std::size_t>(size)), displs(static_cast<std::size_t>(size));
  MPI_Gather(&len, 1, MPI_INT, lens.data(), 1, MPI_INT, 0, comm);
  std::string all;
  if (rank == 0) {
    std::size_t total = 0;
    for (int r = 0; r < size; ++r)
      displs[static_cast<std::size_t>(r)] = static_cast<int>(total),
      total += static_cast<std::size_t>(lens[static_cast<std::size_t>(r)]);
    all.resize(total);
  }
  MPI_Gatherv(packed.data(), len, MPI_CHAR, all.data(), lens.data(), displs.data(), MPI_CHAR, 0, comm);

  // Rank 0: the merged table and each rank's id map; scattered back.
  StringTable merged;
  std::vector<std::uint32_t> maps;
  std::vector<int> map_counts(static_cast<std::size_t>(size)), map_displs(static_cast<std::size_t>(size));
  if (rank == 0) {
    for (int r = 0; r < size; ++r) {
      map_displs[static_cast<std::size_t>(r)] = static_cast<int>(maps.size());
      const char* p = all.data() + displs[static_cast<std::size_t>(r)];
      const char* end = p + lens[static_cast<std::size_t>(r)];
      while (p < end) {
        const std::size_t n = std::strlen(p);
        maps.push_back(merged.intern(std::string_view(p, n)));
        p += n + 1;
      }
      map_counts[static_cast<std::size_t>(r)] = static_cast<int>(maps.size()) - map_displs[static_cast<std::size_t>(r)];
    }
  }
  std::vector<std::uint32_t> my_map(local.size());
  MPI_Scatterv(maps.data(), map_counts.data(), map_displs.data(), MPI_UINT32_T, my_map.data(),
               static_cast<int>(my_map.size()), MPI_UINT32_T, 0, comm);
  for (Event& e : events) {
    if (e.name < my_map.size()) e.name = my_map[e.name];
    if (e.detail < my_map.size()) e.detail = my_map[e.detail];
    if (e.communicator < my_map.size()) e.communicator = my_map[e.communicator];
  }
  return rank == 0 ? merged.strings() : std::vector<std::string>{};
}

}  // namespace

std::string output_problem(const std::string& path) {
  namespace fs = std::filesystem;
  if (path.empty()) return "empty output path";
  std::error_code ec;
  const fs::path p(path);
  if (fs::is_directory(p, ec)) return "'" + path + "' is a directory";
  const fs::path dir = p.has_parent_path() ? p.parent_path() : fs::path(".");
  if (!fs::is_directory(dir, ec)) return "cannot write '" + path + "': folder '" + dir.string() + "' does not exist";
  if (access(dir.c_str(), W_OK | X_OK) != 0)
    return "cannot write '" + path + "': folder '" + dir.string() + "' is not writable (" + std::strerror(errno) + ")";
  return "";
}

// Cristian's method against rank 0 (commscope/collectives/clock_offsets.hpp), on this
// session's clock.
void Session::Impl::estimate_offsets() {
  ClockOffsets c = estimate_clock_offsets(comm, options.clock_rounds, [this] { return clock.mono_to_ns(mono_ns()); });
  offsets = std::move(c.offset_ns);
  errors = std::move(c.error_ns);
}

void Session::Impl::stop_recording() {
  detail::g_recording.store(false);
  detail::g_iteration.store(-1);
}

// Everyone takes part whatever fails where: the protocol (who sends what to whom) does not depend
// on success, and rank 0 tells everyone at the end whether the file is complete.
bool Session::Impl::write(Profile& profile, const std::vector<Event>& events) {
  const std::string& path = options.output;
  const bool per_rank = profile.meta.events_layout == "per-rank";
  int ok = 1;
  if (per_rank) {
    // Every rank writes its own events file and needs the merged string table.
    std::string packed;
    for (const auto& str : profile.strings) packed.append(str).push_back('\0');
    std::int64_t len = static_cast<std::int64_t>(packed.size());
    MPI_Bcast(&len, 1, MPI_INT64_T, 0, comm);
    packed.resize(static_cast<std::size_t>(len));
    MPI_Bcast(packed.data(), static_cast<int>(len), MPI_CHAR, 0, comm);
    std::vector<std::string> strings;
    for (const char* p = packed.data(); p < packed.data() + len; p += std::strlen(p) + 1) strings.emplace_back(p);
    const std::string file = rank_event_file_name(path, rank);
    try {
      write_rank_event_file(file, profile.meta, rank, strings, events);
    } catch (const std::exception& e) {
      warn("rank %d: cannot write %s: %s", rank, file.c_str(), e.what());
      ok = 0;
    }
    MPI_Allreduce(MPI_IN_PLACE, &ok, 1, MPI_INT, MPI_MIN, comm);
    if (rank == 0)
      for (int r = 0; r < size; ++r)
        profile.meta.event_files.push_back(std::filesystem::path(rank_event_file_name(path, r)).filename().string());
  }

  std::unique_ptr<ProfileWriter> writer;
  auto fail = [&](const std::exception& e) {
    warn("cannot write %s: %s", path.c_str(), e.what());
    writer.reset();
    ok = 0;
  };
  if (rank == 0) {
    try {
      writer = std::make_unique<ProfileWriter>(path, profile.meta, profile.ranks, profile.strings);
    } catch (const std::exception& e) {
      fail(e);
    }
  }
  if (!per_rank) {
    // Rank 0 takes every rank's events in pieces of at most kPiece events (80 B each).
    constexpr std::size_t kPiece = std::size_t{1} << 18;
    if (rank == 0) {
      std::vector<Event> buffer;
      for (int r = 0; r < size; ++r) {
        std::int64_t count = static_cast<std::int64_t>(events.size());
        if (r > 0) MPI_Recv(&count, 1, MPI_INT64_T, r, 81, comm, MPI_STATUS_IGNORE);
        for (std::int64_t done = 0; done < count;) {
          const auto n =
              static_cast<std::size_t>(std::min<std::int64_t>(count - done, static_cast<std::int64_t>(kPiece)));
          const Event* piece = events.data() + done;
          if (r > 0) {
            buffer.resize(n);
            MPI_Recv(buffer.data(), static_cast<int>(n * sizeof(Event)), MPI_BYTE, r, 82, comm, MPI_STATUS_IGNORE);
            piece = buffer.data();
          }
          try {
            if (writer) writer->append_events(r, std::span<const Event>(piece, n));
          } catch (const std::exception& e) {
            fail(e);
          }
          done += static_cast<std::int64_t>(n);
        }
      }
    } else {
      const auto count = static_cast<std::int64_t>(events.size());
      MPI_Send(&count, 1, MPI_INT64_T, 0, 81, comm);
      for (std::size_t done = 0; done < events.size(); done += kPiece) {
        const std::size_t n = std::min(events.size() - done, kPiece);
        MPI_Send(events.data() + done, static_cast<int>(n * sizeof(Event)), MPI_BYTE, 0, 82, comm);
      }
    }
  }
  if (rank == 0 && writer) {
    try {
      writer->write_breakdown(profile.breakdown);
      writer->write_operators(profile.operators);
      if (ok) writer->close();  // an incomplete profile keeps its .partial name
    } catch (const std::exception& e) {
      fail(e);
    }
  }
  if (rank == 0 && !writer) ok = 0;
  MPI_Bcast(&ok, 1, MPI_INT, 0, comm);
  return ok != 0;
}

Session::Session(MPI_Comm comm, SessionOptions options) : impl_(std::make_unique<Impl>()) {
  if (g_session_open.exchange(true)) throw std::logic_error("a profiling session is already open in this process");
  Impl& s = *impl_;
  s.options = std::move(options);
  MPI_Comm_dup(comm, &s.comm);
  MPI_Comm_rank(s.comm, &s.rank);
  MPI_Comm_size(s.comm, &s.size);
  // The calling thread registers now (thread 0) with its buffers preallocated.
  detail::configure_buffers(s.options.chunk_events, s.options.max_events_per_thread, s.options.preallocate_events);

  if (s.rank == 0 && !s.options.output.empty()) {
    const std::string problem = output_problem(s.options.output);
    if (!problem.empty()) warn("%s: the profile will not be written (the run goes on)", problem.c_str());
  }
  MPI_Barrier(s.comm);
  s.clock.start(s.options.allow_tsc);
  s.epoch_unix_ns = realtime_ns();
  MPI_Bcast(&s.epoch_unix_ns, 1, MPI_INT64_T, 0, s.comm);  // the run's epoch is rank 0's
  s.estimate_offsets();

  if (s.options.backend != BackendChoice::kHost) {
    std::string why;
    s.tracer = detail::start_cupti(s.clock, why);
    if (!s.tracer && s.options.backend == BackendChoice::kCupti)
      warn("rank %d: CUPTI unavailable (%s); using the host tracer", s.rank, why.c_str());
  }
  detail::g_comm_seq.store(0);
  detail::g_session_generation.fetch_add(1);
  detail::g_iteration.store(-1);
  if (s.options.stream) s.start_stream();
  if (flight::on()) {  // a tool's recorder (a library's starts after its session: none then)
    std::vector<int> members = world_ranks(s.comm);
    const NameId label = name_id(communicator_label("profiler", members));
    s.flight_ring = flight::open_ring(label, std::move(members));
    s.flight_finish = name_id("profile.finish"), s.flight_write = name_id("profile.write");
    s.flight_append = name_id("profile.append");
  }
  MPI_Barrier(s.comm);
  detail::g_recording.store(true);
}

Session::~Session() {
  if (!impl_->finished) {
    impl_->stop_recording();
    if (impl_->tracer) impl_->tracer->stop();
  }
  if (impl_->comm != MPI_COMM_NULL) {
    int finalized = 0;
    MPI_Finalized(&finalized);
    if (!finalized) MPI_Comm_free(&impl_->comm);
  }
  g_session_open.store(false);
}

int Session::rank() const noexcept {
  return impl_->rank;
}
int Session::size() const noexcept {
  return impl_->size;
}
const char* Session::backend() const noexcept {
  return impl_->tracer ? "cupti" : "host";
}
std::int64_t Session::clock_offset_ns() const noexcept {
  return impl_->offsets[static_cast<std::size_t>(impl_->rank)];
}
std::int64_t Session::now_ns() const noexcept {
  return impl_->clock.mono_to_ns(mono_ns());
}
bool Session::written() const noexcept {
  return impl_->written;
}

std::vector<Event> Session::Impl::collect(std::int64_t close_ticks, std::int64_t& dropped) {
  std::vector<DeviceRecord> records;
  if (tracer) records = tracer->stop();
  clock.stop();

  std::vector<Event> events = host_events(close_ticks, dropped);
  if (tracer) {
    RecordProcessor processor(process_names(), tracer->cupti_minus_host_ns());
    processor.add(records);
    std::vector<Event> device = processor.finish(events);
    events.insert(events.end(), device.begin(), device.end());
    dropped += tracer->dropped();
  }
  if (dropped > 0)
    warn("rank %d: %lld events dropped (buffers full; raise SessionOptions::max_events_per_thread)", rank,
         static_cast<long long>(dropped));
  return events;
}

std::vector<Event> Session::Impl::host_events(std::int64_t close_ticks, std::int64_t& dropped) {
  std::vector<Event> events = detail::collect_events(close_ticks, dropped);
  to_ns(events);
  return events;
}

void Session::Impl::to_ns(std::vector<Event>& events) const {
  for (Event& e : events) {
    e.start_ns = clock.to_ns(e.start_ns);
    e.end_ns = std::max(e.start_ns, clock.to_ns(e.end_ns));
  }
}

RankBreakdown Session::Impl::breakdown(std::int32_t row_rank, const std::vector<Event>& events, bool across_ranks,
                                       std::size_t communicators) {
  const std::int64_t offset = offsets[static_cast<std::size_t>(rank)];
  RankTimeline timeline = build_timeline(events, tracer ? Timeline::kDevice : Timeline::kHost);
  if (across_ranks) latest_arrivals(comm, timeline, offset, communicators);  // -> wait and transfer
  RankBreakdown mine = analyze_rank(row_rank, events, timeline, offset);
  for (const BreakdownRow& r : mine.rows)
    if (r.identity_ok == 0)
      warn(
          "BUG: breakdown identity violated on rank %d iteration %d: kernel %lld + intra %lld + inter %lld + "
          "comm %lld != window %lld ns",
          rank, r.iteration, static_cast<long long>(r.kernel_ns), static_cast<long long>(r.intra_ns),
          static_cast<long long>(r.inter_ns), static_cast<long long>(r.comm_ns), static_cast<long long>(r.window_ns));
  return mine;
}

RankInfo Session::Impl::info(std::int32_t row_rank, std::int64_t events, std::int64_t dropped) const {
  char host[256] = {};
  gethostname(host, sizeof host - 1);
  const CpuPlacement where = this_process_cpus();
  return RankInfo{row_rank,
                  host,
                  offsets[static_cast<std::size_t>(rank)],
                  errors[static_cast<std::size_t>(rank)],
                  tracer ? "cupti" : "host",
                  events,
                  dropped,
                  where.cpus,
                  where.cpu_count,
                  where.node_cpus,
                  where.machine};
}

ProfileMeta Session::Impl::meta(std::int32_t nranks) const {
  ProfileMeta m;
  m.version = COMMSCOPE_VERSION;
  m.command_line = options.command_line;
  m.clock = clock.source();
  m.epoch_unix_ns = epoch_unix_ns;
  m.nranks = nranks;
  m.attributes = options.attributes;
  return m;
}

Profile Session::Impl::assemble(std::vector<Event>& events, std::int64_t dropped) {
  Profile profile;
  profile.strings = merge_strings(comm, rank, size, events);
  RankBreakdown mine = breakdown(rank, events, true);

  profile.ranks = gather_infos(info(rank, static_cast<std::int64_t>(events.size()), dropped));
  profile.breakdown = gather_rows(comm, mine.rows);
  profile.operators = gather_rows(comm, mine.operators);

  profile.meta = meta(size);
  if (rank != 0) {
    profile.breakdown = mine.rows;
    profile.operators = mine.operators;
  }

  const bool per_rank = size > options.single_file_max_ranks;
  profile.meta.events_layout = per_rank ? "per-rank" : "single";
  if (!options.output.empty()) written = write(profile, events);
  return profile;
}

std::vector<RankInfo> Session::Impl::gather_infos(const RankInfo& me) const {
  // One fixed-size row a rank (rank_row.hpp, the /ranks table's row too).
  const auto rows = gather_rows(comm, std::vector<RankRow>{rank_row(me)});
  if (rank != 0) return {me};
  std::vector<RankInfo> infos;
  infos.reserve(rows.size());
  for (const RankRow& row : rows) infos.push_back(rank_info(row));
  return infos;
}

Profile Session::finish() {
  Impl& s = *impl_;
  if (s.finished) throw std::logic_error("Session::finish() called twice");
  s.finished = true;
  const flight::Section flown(s.flight_ring, s.flight_seq++, s.flight_finish);
  const std::int64_t close_ticks = ticks();
  s.stop_recording();
  if (s.stream.started) return s.finish_stream(close_ticks);
  std::int64_t dropped = 0;
  std::vector<Event> events = s.collect(close_ticks, dropped);
  Profile profile = s.assemble(events, dropped);
  // The returned profile holds this rank's events only (the file holds every rank's).
  profile.events.assign(static_cast<std::size_t>(s.rank == 0 ? s.size : 1), {});
  profile.events[0] = std::move(events);
  return profile;
}

bool Session::write_so_far() {
  Impl& s = *impl_;
  if (s.finished) throw std::logic_error("Session::write_so_far() after the session finished");
  const flight::Section flown(s.flight_ring, s.flight_seq++, s.flight_write);
  if (s.stream.started) return s.write_stream_so_far();
  // Every rank must take part or none: a rank with CUPTI (whose records come at stop) declines.
  int can = s.tracer == nullptr && !s.options.output.empty() ? 1 : 0;
  MPI_Allreduce(MPI_IN_PLACE, &can, 1, MPI_INT, MPI_MIN, s.comm);
  if (!can) return false;
  const std::int64_t close_ticks = ticks();
  s.clock.stop();  // the TSC's rate over the session so far; finish() measures it again
  std::int64_t dropped = 0;
  std::vector<Event> events = s.host_events(close_ticks, dropped);
  s.assemble(events, dropped);
  return s.written;
}

bool Session::append_so_far() {
  Impl& s = *impl_;
  if (s.finished) throw std::logic_error("Session::append_so_far() after the session finished");
  if (!s.stream.started) return false;
  const flight::Section flown(s.flight_ring, s.flight_seq++, s.flight_append);
  return s.append_stream(0, false);
}

bool Session::finish_local(const std::string& path,
                           const std::vector<std::pair<std::string, std::string>>& attributes) {
  Impl& s = *impl_;
  if (s.finished) throw std::logic_error("Session::finish_local() after the session finished");
  s.finished = true;
  const std::int64_t close_ticks = ticks();
  s.stop_recording();
  // Other threads may be opening an event right now (they checked recording() a moment ago):
  // a grace period lets them finish writing it before the buffers are read.
  std::this_thread::sleep_for(std::chrono::milliseconds(2));
  std::int64_t dropped = 0;
  std::vector<Event> events = s.collect(close_ticks, dropped);

  RankBreakdown mine = s.breakdown(0, events, false);
  // Rank 0 of its own file; the job rank is /meta's job_rank. The process-wide name table is
  // this rank's: no merge needed.
  Profile profile;
  profile.meta = s.meta(1);
  profile.meta.events_layout = "single";
  profile.meta.attributes.emplace_back("job_rank", std::to_string(s.rank));
  profile.meta.attributes.emplace_back("job_nranks", std::to_string(s.size));
  for (const auto& a : attributes) profile.meta.attributes.push_back(a);
  profile.ranks = {s.info(0, static_cast<std::int64_t>(events.size()), dropped)};
  profile.strings = process_names().strings();
  profile.breakdown = std::move(mine.rows);
  profile.operators = std::move(mine.operators);
  profile.events.push_back(std::move(events));
  try {
    write_profile_file(profile, path);
    s.written = true;
  } catch (const std::exception& e) {
    warn("rank %d: cannot write %s: %s", s.rank, path.c_str(), e.what());
  }
  return s.written;
}

}  // namespace commscope::profiler
