// The profile written step by step (SessionOptions::stream). At each append_so_far() every rank's
// events finished since the last one, their breakdown rows (each rank its own, with the latest
// arrivals over the ranks, as finish() does) and operator totals go to rank 0, which appends
// them to NAME.partial and flushes it under a stop::WriteGuard. A stop then publishes the file as
// the last append left it at once (commscope/common/stop_signals.hpp), whatever the ranks are
// doing: Open MPI's mpirun SIGKILLs the ranks about 1 s after the SIGTERM it forwards at a
// Ctrl-C, while a CPU step may take seconds, and a profile written at the step's end was lost.
#include <mpi.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <limits>
#include <string>
#include <system_error>
#include <type_traits>
#include <utility>
#include <vector>

#include "commscope/profiler/recorder.hpp"
#include "registry.hpp"
#include "session_impl.hpp"

namespace commscope::profiler {

using session_detail::warn;

namespace {

// The events tables' HDF5 chunk: each append recompresses the chunk it ends in, 80 KB here (a
// finished file's 1.3 MB chunks took 160-200 ms per append of a tiny model's step on 2 busy
// cores, 1,024-row ones 2-3 ms; the file is 10-20% larger).
constexpr std::size_t kEventChunkRows = 256;

// Byte buffers to rank 0, by rank (nothing elsewhere): their sizes, then one MPI_Gatherv, or
// point to point in pieces when they add up to more than an int counts.
std::vector<std::vector<char>> gather_bytes(MPI_Comm comm, int rank, int size, const std::vector<char>& mine) {
  const auto n = static_cast<std::int64_t>(mine.size());
  std::vector<std::int64_t> sizes(static_cast<std::size_t>(size));
  MPI_Gather(&n, 1, MPI_INT64_T, sizes.data(), 1, MPI_INT64_T, 0, comm);
  std::int64_t total = 0;
  for (std::int64_t b : sizes) total += b;
  MPI_Bcast(&total, 1, MPI_INT64_T, 0, comm);
  std::vector<std::vector<char>> all(rank == 0 ? static_cast<std::size_t>(size) : 0);
  if (total <= std::numeric_limits<int>::max()) {
    std::vector<int> counts(sizes.begin(), sizes.end()), displs(counts.size(), 0);
    for (std::size_t r = 1; r < displs.size(); ++r) displs[r] = displs[r - 1] + counts[r - 1];
    std::vector<char> joined(rank == 0 ? static_cast<std::size_t>(total) : 0);
    MPI_Gatherv(mine.data(), static_cast<int>(n), MPI_BYTE, joined.data(), counts.data(), displs.data(), MPI_BYTE, 0,
                comm);
    for (std::size_t r = 0; r < all.size(); ++r)
      all[r].assign(joined.begin() + displs[r], joined.begin() + displs[r] + counts[r]);
    return all;
  }
  constexpr std::int64_t kPiece = std::int64_t{1} << 30;
  if (rank != 0) {
    for (std::int64_t done = 0; done < n; done += kPiece)
      MPI_Send(mine.data() + done, static_cast<int>(std::min(n - done, kPiece)), MPI_BYTE, 0, 84, comm);
    return all;
  }
  all[0] = mine;
  for (int r = 1; r < size; ++r) {
    std::vector<char>& theirs = all[static_cast<std::size_t>(r)];
    theirs.resize(static_cast<std::size_t>(sizes[static_cast<std::size_t>(r)]));
    const auto m = static_cast<std::int64_t>(theirs.size());
    for (std::int64_t done = 0; done < m; done += kPiece)
      MPI_Recv(theirs.data() + done, static_cast<int>(std::min(m - done, kPiece)), MPI_BYTE, r, 84, comm,
               MPI_STATUS_IGNORE);
  }
  return all;
}

// A vector of trivially copyable T in a byte buffer: its count, then its bytes.
template <class T>
void put(std::vector<char>& out, const std::vector<T>& v) {
  static_assert(std::is_trivially_copyable_v<T>);
  const auto n = static_cast<std::uint64_t>(v.size());
  const auto* c = reinterpret_cast<const char*>(&n);
  out.insert(out.end(), c, c + sizeof n);
  const auto* d = reinterpret_cast<const char*>(v.data());
  out.insert(out.end(), d, d + v.size() * sizeof(T));
}

template <class T>
std::vector<T> take(const std::vector<char>& in, std::size_t& at) {
  std::uint64_t n = 0;
  std::memcpy(&n, in.data() + at, sizeof n);
  at += sizeof n;
  std::vector<T> v(static_cast<std::size_t>(n));
  std::memcpy(static_cast<void*>(v.data()), in.data() + at, v.size() * sizeof(T));
  at += v.size() * sizeof(T);
  return v;
}

// The names this rank added since the last append go to rank 0, which adds them to the file's
// table (ids never change) and answers each rank with `go` (rank 0's: the file is still the
// writer's), the table's size, and the new names' ids, which extend name_map. Returns go and
// the table's size. Collective: a gather and one MPI_Scatterv.
std::pair<bool, std::size_t> map_new_names(MPI_Comm comm, int rank, int size, SessionStream& st, bool go) {
  const std::vector<std::string> local = process_names().strings();
  const std::size_t known = st.name_map.size(), added = local.size() - known;
  std::vector<char> packed;
  for (std::size_t i = known; i < local.size(); ++i) {
    packed.insert(packed.end(), local[i].begin(), local[i].end());
    packed.push_back('\0');
  }
  const std::vector<std::vector<char>> all = gather_bytes(comm, rank, size, packed);
  std::vector<std::int64_t> answers;  // rank 0: per rank go, table size, ids
  std::vector<int> counts(all.size()), displs(all.size());
  for (std::size_t r = 0; r < all.size(); ++r) {
    displs[r] = static_cast<int>(answers.size());
    answers.push_back(go ? 1 : 0);
    answers.push_back(0);  // the table's size, below
    for (const char* p = all[r].data(); p < all[r].data() + all[r].size(); p += std::strlen(p) + 1)
      answers.push_back(st.names.intern(p));
    counts[r] = static_cast<int>(answers.size()) - displs[r];
  }
  for (int d : displs) answers[static_cast<std::size_t>(d) + 1] = static_cast<std::int64_t>(st.names.size());
  std::vector<std::int64_t> mine(2 + added);
  MPI_Scatterv(answers.data(), counts.data(), displs.data(), MPI_INT64_T, mine.data(), static_cast<int>(mine.size()),
               MPI_INT64_T, 0, comm);
  for (std::size_t i = 0; i < added; ++i) st.name_map.push_back(static_cast<std::uint32_t>(mine[2 + i]));
  return {mine[0] != 0, static_cast<std::size_t>(mine[1])};
}

void map_names(const std::vector<std::uint32_t>& map, std::vector<Event>& events) {
  for (Event& e : events) {
    if (e.name < map.size()) e.name = map[e.name];
    if (e.detail < map.size()) e.detail = map[e.detail];
    if (e.communicator < map.size()) e.communicator = map[e.communicator];
  }
}

// What one rank sends rank 0 at an append.
struct Batch {
  std::vector<std::int64_t> counts;  // events so far, dropped so far
  std::vector<BreakdownRow> rows;
  std::vector<OperatorTotalRow> operators;
  std::vector<Event> events;
};

// Rank 0: every rank's batch into the file, flushed; true when written, false when a stop had
// published the file (`published`) or writing failed (said; the stream ends).
bool write_batches(SessionStream& st, const std::vector<Batch>& batches) {
  const stop::WriteGuard writing;  // a stop publishes the file once this append is whole
  if (!st.tracked->held()) {
    st.published = true;
    return false;
  }
  try {
    ProfileWriter& w = *st.writer;
    if (st.names.size() > st.written_names) w.replace_strings(st.names.strings());
    st.written_names = st.names.size();
    for (std::size_t r = 0; r < batches.size(); ++r) {
      const Batch& b = batches[r];
      if (!b.events.empty()) w.append_events(static_cast<int>(r), b.events);
      w.write_breakdown(b.rows);
      for (const OperatorTotalRow& row : b.operators)
        if (auto [it, fresh] = st.operators.emplace(std::make_pair(row.rank, row.name), row); !fresh)
          add_totals(it->second, row);
      st.ranks[r].events = b.counts[0];
      st.ranks[r].dropped_events = b.counts[1];
    }
    std::vector<OperatorTotalRow> totals;
    for (const auto& [key, row] : st.operators) totals.push_back(row);
    w.replace_operators(totals);
    w.replace_ranks(st.ranks);
    w.flush();
  } catch (const std::exception& e) {
    warn("cannot write %s: %s; the profile is not written", st.writer->partial_path().c_str(), e.what());
    st.tracked.reset();  // a stop must not publish a file half appended
    st.writer.reset();
    return false;
  }
  for (const Batch& b : batches) {
    st.rows.insert(st.rows.end(), b.rows.begin(), b.rows.end());
    for (const BreakdownRow& row : b.rows) st.steps += row.rank == 0 ? 1 : 0;
  }
  st.tracked->set_kept(st.steps);
  return true;
}

}  // namespace

void Session::Impl::start_stream() {
  // Every rank records with the host tracer (CUPTI's records come at its stop only), and rank 0
  // gathers the events (the single layout).
  int can = tracer == nullptr && !options.output.empty() && size <= options.single_file_max_ranks ? 1 : 0;
  MPI_Allreduce(MPI_IN_PLACE, &can, 1, MPI_INT, MPI_MIN, comm);
  if (!can) return;
  stream.me = info(rank, 0, 0);
  const std::vector<RankInfo> infos = gather_infos(stream.me);
  int ok = 0;
  if (rank == 0 && output_problem(options.output).empty()) {  // a problem was said at the start
    try {
      ProfileMeta m = meta(size);
      m.events_layout = "single";
      stream.writer =
          std::make_unique<ProfileWriter>(options.output, m, infos, stream.names.strings(), kEventChunkRows);
      stream.writer->flush();
      stream.tracked = std::make_unique<stop::TrackedFile>(stream.writer->partial_path(), options.output, "steps");
      stream.written_names = stream.names.size();
      stream.ranks = infos;
      ok = 1;
    } catch (const std::exception& e) {
      warn("cannot write %s: %s", options.output.c_str(), e.what());
      stream.tracked.reset();
      stream.writer.reset();
    }
  }
  MPI_Bcast(&ok, 1, MPI_INT, 0, comm);
  stream.started = stream.active = ok != 0;
}

bool Session::Impl::append_stream(std::int64_t close_ticks, bool last) {
  if (!stream.active) return false;
  clock.stop();  // the TSC's rate over the session so far
  std::int64_t dropped = 0;
  std::vector<Event> events = detail::take_finished_events(stream.taken, dropped, last ? close_ticks : 0);
  to_ns(events);
  // Still the writer's? A stop may have published the file (rank 0 knows).
  const bool held = rank == 0 && stream.tracked && stream.tracked->held();
  if (rank == 0 && stream.tracked && !held) stream.published = true;
  const auto [go, names] = map_new_names(comm, rank, size, stream, held);
  if (!go) {
    stream.active = false;
    return false;
  }
  map_names(stream.name_map, events);
  const RankBreakdown mine = breakdown(rank, events, true, names);
  stream.own_rows.insert(stream.own_rows.end(), mine.rows.begin(), mine.rows.end());
  for (const OperatorTotalRow& row : mine.operators)
    if (auto [it, fresh] = stream.own_operators.emplace(row.name, row); !fresh) add_totals(it->second, row);
  stream.me.events += static_cast<std::int64_t>(events.size());
  stream.me.dropped_events = dropped;

  std::vector<char> packed;
  put(packed, std::vector<std::int64_t>{stream.me.events, dropped});
  put(packed, mine.rows);
  put(packed, mine.operators);
  put(packed, events);
  const std::vector<std::vector<char>> all = gather_bytes(comm, rank, size, packed);
  bool appended = rank != 0;
  if (rank == 0) {
    std::vector<Batch> batches(all.size());
    for (std::size_t r = 0; r < all.size(); ++r) {
      std::size_t at = 0;
      batches[r].counts = take<std::int64_t>(all[r], at);
      batches[r].rows = take<BreakdownRow>(all[r], at);
      batches[r].operators = take<OperatorTotalRow>(all[r], at);
      batches[r].events = take<Event>(all[r], at);
    }
    // A stop's publishing or a failure: every rank learns it at the next append (go).
    appended = write_batches(stream, batches);
  }
  // The next step starts together on every rank, as it would have without this append: a rank
  // that went on while rank 0 wrote would count the wait in its next step's first collective.
  MPI_Barrier(comm);
  return appended;
}

Profile Session::Impl::finish_stream(std::int64_t close_ticks) {
  const bool appended = append_stream(close_ticks, true);
  int done = 0;
  if (rank == 0) {
    // The rows as a file written at once holds them, by rank then iteration (appended by step).
    std::stable_sort(stream.rows.begin(), stream.rows.end(),
                     [](const BreakdownRow& a, const BreakdownRow& b) { return a.rank < b.rank; });
    if (appended && stream.tracked->begin_close()) {
      // Closing renames it; a signal meanwhile waits until it has its final name.
      struct Done {
        stop::TrackedFile& tracked;
        ~Done() { tracked.end_close(); }
      } closing{*stream.tracked};
      try {
        stream.writer->replace_breakdown(stream.rows);
        stream.writer->close();
        done = 1;
      } catch (const std::exception& e) {
        warn("cannot write %s: %s", options.output.c_str(), e.what());
      }
    } else {
      done = appended || stream.published ? 1 : 0;  // published by a stop: what it holds is the profile
    }
    stream.tracked.reset();
    stream.writer.reset();  // an unclosed writer leaves the file as it is (closing nothing new)
  }
  MPI_Bcast(&done, 1, MPI_INT, 0, comm);
  written = done != 0;

  // What finish() returns: the rows and totals streamed; this rank's events.
  Profile profile;
  profile.meta = meta(size);
  profile.meta.events_layout = "single";
  std::int64_t dropped = 0;
  std::vector<Event> events = detail::collect_events(close_ticks, dropped);
  to_ns(events);
  // Names recorded since a stop ended the appends (every rank knows it alike): their ids too.
  if (!stream.active) map_new_names(comm, rank, size, stream, false);
  map_names(stream.name_map, events);
  if (rank == 0) {
    profile.strings = stream.names.strings();
    profile.ranks = stream.ranks;
    profile.breakdown = stream.rows;
    for (const auto& [key, row] : stream.operators) profile.operators.push_back(row);
  } else {
    profile.ranks = {stream.me};
    profile.breakdown = stream.own_rows;
    for (const auto& [name, row] : stream.own_operators) profile.operators.push_back(row);
  }
  profile.events.assign(static_cast<std::size_t>(rank == 0 ? size : 1), {});
  profile.events[0] = std::move(events);
  return profile;
}

bool Session::Impl::write_stream_so_far() {
  const bool appended = append_stream(0, false);
  int ok = appended ? 1 : 0;
  if (rank == 0 && appended) {
    // NAME as NAME.partial is now: a copy renamed into place (a reader never sees half of it).
    namespace fs = std::filesystem;
    const std::string copy = options.output + ".so-far.partial";
    std::error_code ec;
    fs::copy_file(stream.writer->partial_path(), copy, fs::copy_options::overwrite_existing, ec);
    if (!ec) fs::rename(copy, options.output, ec);
    if (ec && stream.tracked->held()) {  // else a stop published the file meanwhile: it is NAME
      warn("cannot write %s: %s", options.output.c_str(), ec.message().c_str());
      ok = 0;
    }
    if (ec) fs::remove(copy, ec);
  }
  MPI_Bcast(&ok, 1, MPI_INT, 0, comm);
  return ok != 0;
}

}  // namespace commscope::profiler
