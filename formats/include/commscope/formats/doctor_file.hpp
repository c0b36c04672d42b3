// The file commscope-doctor writes, schema commscope.doctor/1 (common/.../schemas.hpp; written
// commscope-doctor/1 before, still read; docs/doctor.md): /meta attributes and three appendable
// tables, each flushed when rows are added, so that a run cut short keeps what it measured. The
// rows, their columns, the writer and the reader are here and nowhere else: commscope-doctor
// writes with them, commscope-report and the report's tests with known answers read and write
// with them. Needs HDF5 only.
#pragma once

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "commscope/formats/columns.hpp"
#include "commscope/h5/h5.hpp"

namespace commscope::formats::doctor {

struct PairRow {  // one direction of one pair in one pass
  std::int64_t src = 0, dst = 0, pass = 0, round = 0;
  char src_host[64]{}, dst_host[64]{};
  double latency_us = std::numeric_limits<double>::quiet_NaN();      // half a round trip, the same in both rows
  double bandwidth_GBps = std::numeric_limits<double>::quiet_NaN();  // src -> dst, 1e9 bytes/s
};
struct RankRow {
  std::int64_t rank = 0, node = 0;
  char host[64]{};
  double sgemm_gflops = std::numeric_limits<double>::quiet_NaN();
  double memcpy_GBps = std::numeric_limits<double>::quiet_NaN();
};
struct NodeRow {
  std::int64_t node = 0, ranks = 0, bytes = 0;
  char host[64]{};
  double allreduce_us = std::numeric_limits<double>::quiet_NaN();
  double busbw_GBps = std::numeric_limits<double>::quiet_NaN();
};

// The columns of /pairs, /ranks and /nodes, in file order, with their units. A reader needs the
// required ones; the optional ones (pass, round, node) read as the row's defaults where absent.
const Columns<PairRow>& pair_columns();
const Columns<RankRow>& rank_columns();
const Columns<NodeRow>& node_columns();

class File {
 public:
  // Creates PATH.partial (renamed to PATH by finish) with /meta (schema, tool, nranks, nnodes)
  // and the empty tables; callers add their own /meta attributes through meta().
  File(const std::string& path, std::int64_t nranks, std::int64_t nnodes);
  h5::Group meta() const { return file_.open_group("meta"); }
  const h5::File& h5() const { return file_; }
  void add(const std::vector<PairRow>& rows);
  void add(const std::vector<RankRow>& rows);
  void add(const std::vector<NodeRow>& rows);
  // Records /meta status ("complete", or why the run stopped) and publishes the file.
  void finish(const std::string& status);

 private:
  h5::File file_;
  h5::Table<PairRow> pairs_;
  h5::Table<RankRow> ranks_;
  h5::Table<NodeRow> nodes_;
};

// The tables of an open file, by column name (file_bytes: the file's size, which bounds the rows
// a damaged table may claim). Throws FormatError, or h5::Error for a table HDF5 cannot read.
std::vector<PairRow> read_pairs(const h5::Group& file, std::uintmax_t file_bytes);
std::vector<RankRow> read_ranks(const h5::Group& file, std::uintmax_t file_bytes);
std::vector<NodeRow> read_nodes(const h5::Group& file, std::uintmax_t file_bytes);

// A whole file (tests).
struct Contents {
  std::string schema;
  std::string status;  // /meta status; "" where absent
  std::int64_t nranks = 0, nnodes = 0;
  std::vector<PairRow> pairs;
  std::vector<RankRow> ranks;
  std::vector<NodeRow> nodes;
};
Contents read(const std::string& path);

}  // namespace commscope::formats::doctor
