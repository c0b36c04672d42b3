// The file commscope-doctor writes, schema commscope.doctor/1 (common/.../schemas.hpp; written
// commscope-doctor/1 before, still read; docs/doctor.md): /meta attributes and three appendable
// tables, and on GPU nodes (--device cuda) two more, /gpus and /peers, made when their first rows
// are added (a CPU run's file has none, and reads as before); each is flushed when rows are added,
// so that a run cut short keeps what it measured. The rows, their columns, the writer and the
// reader are here and nowhere else: commscope-doctor writes with them, commscope-report and the
// report's tests with known answers read and write with them. Needs HDF5 only.
#pragma once

#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "commscope/formats/columns.hpp"
#include "commscope/h5/h5.hpp"

namespace commscope::formats::doctor {

struct PairRow {  // one direction of one pair in one pass
  std::int64_t src = 0, dst = 0, pass = 0, round = 0;
  std::int64_t wave = 0;  // the round's wave its stream ran in: no node's link carries two streams of one wave
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

// One GPU of one rank (--device cuda): each rate measured against the peak its properties give
// (model/gpu_peaks.hpp; NaN where the architecture or a property is not known).
struct GpuRow {
  std::int64_t rank = 0, node = 0, device = 0;  // device: the CUDA device index on its node
  char host[64]{}, name[64]{};                  // name: "NVIDIA H100 80GB HBM3"
  double gemm_fp32_gflops = std::numeric_limits<double>::quiet_NaN();
  double gemm_fp32_peak_gflops = std::numeric_limits<double>::quiet_NaN();
  double gemm_bf16_gflops = std::numeric_limits<double>::quiet_NaN();
  double gemm_bf16_peak_gflops = std::numeric_limits<double>::quiet_NaN();
  double d2d_GBps = std::numeric_limits<double>::quiet_NaN();       // device to device copy
  double d2d_peak_GBps = std::numeric_limits<double>::quiet_NaN();  // half the memory's: a copy reads and writes
  double h2d_GBps = std::numeric_limits<double>::quiet_NaN();       // pinned host to device
  double d2h_GBps = std::numeric_limits<double>::quiet_NaN();
  double host_link_GBps = std::numeric_limits<double>::quiet_NaN();  // the host link's rate, per direction
  char host_link[64]{};  // "PCIe gen 5 x16 (nvidia-smi: max gen, width now)"
  char bus_id[16]{};     // its PCI bus id, "0000:1B:00.0" (the GPU on the machine: nvidia-smi's); "" in files before it
};
// One ordered pair of GPUs of one node (--device cuda, 2 or more GPUs on a node): the peer copy
// from src to dst alone, and both directions at once (the sum of the two).
struct PeerRow {
  std::int64_t node = 0, src = 0, dst = 0;  // src, dst: CUDA device indices on the node
  char host[64]{};
  double oneway_GBps = std::numeric_limits<double>::quiet_NaN();
  double bidir_GBps = std::numeric_limits<double>::quiet_NaN();
};

// The columns of /pairs, /ranks and /nodes (and /gpus and /peers), in file order, with their
// units. A reader needs the required ones; the optional ones (pass, round, node) read as the
// row's defaults where absent.
const Columns<PairRow>& pair_columns();
const Columns<RankRow>& rank_columns();
const Columns<NodeRow>& node_columns();
const Columns<GpuRow>& gpu_columns();
const Columns<PeerRow>& peer_columns();

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
  void add(const std::vector<GpuRow>& rows);   // the first rows make /gpus
  void add(const std::vector<PeerRow>& rows);  // and /peers
  // Records /meta status ("complete", or why the run stopped) and publishes the file.
  void finish(const std::string& status);

 private:
  h5::File file_;
  h5::Table<PairRow> pairs_;
  h5::Table<RankRow> ranks_;
  h5::Table<NodeRow> nodes_;
  std::optional<h5::Table<GpuRow>> gpus_;
  std::optional<h5::Table<PeerRow>> peers_;
};

// The tables of an open file, by column name (file_bytes: the file's size, which bounds the rows
// a damaged table may claim). Throws FormatError, or h5::Error for a table HDF5 cannot read.
std::vector<PairRow> read_pairs(const h5::Group& file, std::uintmax_t file_bytes);
std::vector<RankRow> read_ranks(const h5::Group& file, std::uintmax_t file_bytes);
std::vector<NodeRow> read_nodes(const h5::Group& file, std::uintmax_t file_bytes);
// None where the file has no such table (a CPU run, a file written before GPUs were measured).
std::vector<GpuRow> read_gpus(const h5::Group& file, std::uintmax_t file_bytes);
std::vector<PeerRow> read_peers(const h5::Group& file, std::uintmax_t file_bytes);

// A whole file (tests).
struct Contents {
  std::string schema;
  std::string status;  // /meta status; "" where absent
  std::int64_t nranks = 0, nnodes = 0;
  std::vector<PairRow> pairs;
  std::vector<RankRow> ranks;
  std::vector<NodeRow> nodes;
  std::vector<GpuRow> gpus;
  std::vector<PeerRow> peers;
};
Contents read(const std::string& path);

}  // namespace commscope::formats::doctor
