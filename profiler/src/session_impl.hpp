#pragma once
// Session's state (internal to the profiler library), shared by session.cpp (start, clocks,
// breakdown, finish) and session_stream.cpp (the file written step by step).

#include <mpi.h>

#include <cstdio>
#include <map>
#include <memory>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "commscope/common/stop_signals.hpp"
#include "commscope/formats/profile_file.hpp"
#include "commscope/profiler/breakdown.hpp"
#include "commscope/profiler/clock.hpp"
#include "commscope/profiler/device_records.hpp"
#include "commscope/profiler/session.hpp"
#include "cupti_backend.hpp"

namespace commscope::profiler {

namespace session_detail {

template <class... Args>
void warn(const char* fmt, Args... args) {
  std::fprintf(stderr, "commscope profiler: ");
  std::fprintf(stderr, fmt, args...);
  std::fputc('\n', stderr);
}

}  // namespace session_detail

// SessionOptions::stream's file: NAME.partial, extended at every append_so_far() with what the
// ranks finished since, flushed, and published by a stop (commscope/common/stop_signals.hpp) as
// the last append left it; finish() appends the rest and closes it.
struct SessionStream {
  bool started = false;    // every rank alike: the file was made
  bool active = false;     // every rank alike: appending (false after a failure or a stop's publishing)
  bool published = false;  // rank 0: a stop published the file (what it holds is the run's profile)
  // Every rank.
  std::vector<std::size_t> taken;                           // per thread buffer: the events appended so far
  std::vector<std::uint32_t> name_map;                      // this rank's name ids -> the file's
  RankInfo me;                                              // this rank's row of /ranks (its events so far)
  std::vector<BreakdownRow> own_rows;                       // this rank's rows so far (finish()'s profile)
  std::map<std::uint32_t, OperatorTotalRow> own_operators;  // by name
  // Rank 0.
  StringTable names;              // the file's string table: ids never change, new names are added
  std::size_t written_names = 0;  // names.size() when /strings was last written
  std::unique_ptr<ProfileWriter> writer;
  std::unique_ptr<stop::TrackedFile> tracked;
  std::vector<RankInfo> ranks;
  std::vector<BreakdownRow> rows;                                                // every rank's, as written
  std::map<std::pair<std::int32_t, std::uint32_t>, OperatorTotalRow> operators;  // by (rank, name)
  std::uint64_t steps = 0;                                                       // rank 0's iterations written
};

struct Session::Impl {
  MPI_Comm comm = MPI_COMM_NULL;
  int rank = 0, size = 1;
  SessionOptions options;
  TickConverter clock;
  std::int64_t epoch_unix_ns = 0;
  std::vector<std::int64_t> offsets, errors;  // every rank's
  std::unique_ptr<detail::DeviceTracer> tracer;
  bool finished = false;
  bool written = false;
  SessionStream stream;
  // The flight recorder's ring of the session's communicator (flight.hpp; -1: none) and its
  // sections' numbers: a rank stuck in the profile's gather of a step says so in its record.
  int flight_ring = -1;
  std::int64_t flight_seq = 0;
  std::uint32_t flight_finish = 0, flight_write = 0, flight_append = 0;

  void estimate_offsets();
  void stop_recording();
  // After stop_recording(): stops the device tracer and returns this rank's events in ns since
  // the epoch, device records included, those still open ending at close_ticks; `dropped`
  // counts the events lost to full buffers.
  std::vector<Event> collect(std::int64_t close_ticks, std::int64_t& dropped);
  // The host tracer's events so far in ns since the epoch (a copy: recording goes on), those
  // still open ending at close_ticks.
  std::vector<Event> host_events(std::int64_t close_ticks, std::int64_t& dropped);
  // Host events' raw ticks -> ns since the epoch.
  void to_ns(std::vector<Event>& events) const;
  // Collective: every rank's rows gathered to rank 0 and, when options.output is set, the file
  // written (`written`). The returned profile holds no events.
  Profile assemble(std::vector<Event>& events, std::int64_t dropped);
  // The rank's breakdown rows (numbered `row_rank`) and operator totals. across_ranks: collective,
  // the latest arrival of every numbered collective instance over all ranks splits communication
  // into wait and transfer; otherwise no arrival is known and all communication is transfer.
  // communicators: a bound on the events' communicator ids, the same on every rank (0: unknown).
  RankBreakdown breakdown(std::int32_t row_rank, const std::vector<Event>& events, bool across_ranks,
                          std::size_t communicators = 0);
  RankInfo info(std::int32_t row_rank, std::int64_t events, std::int64_t dropped) const;
  // Collective: every rank's `me` on rank 0, by rank (empty elsewhere).
  std::vector<RankInfo> gather_infos(const RankInfo& me) const;
  ProfileMeta meta(std::int32_t nranks) const;
  bool write(Profile& profile, const std::vector<Event>& events);

  // session_stream.cpp. Collective: rank 0 creates the stream's file (active on every rank when
  // it could, and every rank records with the host tracer).
  void start_stream();
  // Collective: appends what the ranks finished since the last call (`last`: everything, the
  // events still open closed at close_ticks) and flushes; false on every rank when nothing was
  // appended (a stop published the file, or a failure ended the stream).
  bool append_stream(std::int64_t close_ticks, bool last);
  // Collective, for finish(): the last append, the file closed; the profile of what was streamed.
  Profile finish_stream(std::int64_t close_ticks);
  // Collective, for write_so_far(): an append, then NAME as NAME.partial is now (a copy).
  bool write_stream_so_far();
};

}  // namespace commscope::profiler
