// The file commscope-doctor writes (schema commscope.doctor/1, schemas.hpp; docs/doctor.md): /meta
// attributes and three appendable tables, each flushed when rows are added, so that a run cut
// short keeps what it measured. Also written by the report's tests with known answers.
#pragma once

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "commscope/h5/h5.hpp"

namespace commscope::doctor {

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

}  // namespace commscope::doctor
