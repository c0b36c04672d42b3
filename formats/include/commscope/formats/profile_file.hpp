#pragma once
// Profile files (HDF5, schema commscope.profile/1, docs/profile-format.md): the reader and the
// writer, here and nowhere else (the profiler's Session, the importers and the tests write with
// them; the report, the replay and the trace export read with them). A file is written under
// NAME.partial and renamed to NAME when it is complete. Namespace commscope::profiler: the
// profile's vocabulary (events.hpp, profile.hpp) is the profiler's.

#include <cstddef>
#include <memory>
#include <span>
#include <stdexcept>
#include <string>

#include "commscope/formats/columns.hpp"
#include "commscope/formats/profile.hpp"
#include "commscope/h5/h5.hpp"

namespace commscope::profiler {

// A file that is missing, not HDF5, of another schema or version, or truncated. what() is one
// line naming the file and the problem.
class ProfileFileError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// The columns of the events, /breakdown and /operators tables, in file order (Event's and the
// rows' members under their own names; kind and track_kind as uint8; /ranks': rank_row.hpp). The
// writer creates a table with all(), the reader reads it with in(table): the columns added after
// the first files are optional (an event's communicator, an operator's total_ns), read as the
// row's default where absent (total_ns: kUnknownTotal); a table without a required one is refused.
const formats::Columns<Event>& event_columns();
const formats::Columns<BreakdownRow>& breakdown_columns();
const formats::Columns<OperatorTotalRow>& operator_columns();

// "run.h5", rank 3 -> "run.rank00003.h5" (same folder). Names without ".h5" get ".rank00003.h5" appended.
std::string rank_event_file_name(const std::string& main_path, int rank);

// Writes the main file. Construction creates NAME.partial and writes /meta and /strings; the
// tables follow in any order; close() renames. Destroying it without close() leaves the
// .partial file. Throws h5::Error on HDF5 failures. event_chunk_rows: the events tables' HDF5
// chunk (0: 16,384 rows, ~1.3 MB before compression); each append recompresses the chunk it
// ends in, so a file appended step by step takes smaller ones.
class ProfileWriter {
 public:
  ProfileWriter(const std::string& path, const ProfileMeta& meta, const std::vector<RankInfo>& ranks,
                const std::vector<std::string>& strings, std::size_t event_chunk_rows = 0);
  ~ProfileWriter();
  ProfileWriter(const ProfileWriter&) = delete;
  ProfileWriter& operator=(const ProfileWriter&) = delete;

  // Appends to /events/rankNNNNN (created on the first call for that rank; call it in pieces
  // for large ranks). Only for the "single" layout.
  void append_events(int rank, std::span<const Event> events);
  void write_breakdown(std::span<const BreakdownRow> rows);
  void write_operators(std::span<const OperatorTotalRow> rows);
  // A file written step by step (Session's stream): the string table, /ranks and /operators as
  // they are now (they grow and change), and flush(), after which the .partial file is a valid
  // profile of what it holds (every table present) even if the process is then killed.
  void replace_strings(const std::vector<std::string>& strings);
  void replace_ranks(const std::vector<RankInfo>& ranks);
  void replace_operators(std::span<const OperatorTotalRow> rows);
  void replace_breakdown(std::span<const BreakdownRow> rows);
  void flush();
  // NAME.partial, where the file is until close().
  const std::string& partial_path() const noexcept;
  void close();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// The per-rank layout: one file per rank with /meta (schema, rank, main file name), /strings
// and /events. Written under NAME.partial, renamed on return.
void write_rank_event_file(const std::string& path, const ProfileMeta& meta, int rank,
                           const std::vector<std::string>& strings, std::span<const Event> events);

// Writes a whole profile held in memory (single layout: every rank's events that are not empty)
// to `path`, as path.partial renamed when complete. Throws h5::Error / std::invalid_argument.
void write_profile_file(const Profile& profile, const std::string& path);

// Reads a profile file (and, with `with_events` and the per-rank layout, its rank files).
// Throws ProfileFileError.
Profile read_profile(const std::string& path, bool with_events = true);

}  // namespace commscope::profiler
