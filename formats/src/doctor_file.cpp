#include "commscope/formats/doctor_file.hpp"

#include <filesystem>

#include "commscope/common/schemas.hpp"

namespace commscope::formats::doctor {

namespace {

constexpr Need kOptional = Need::kOptional;

Columns<PairRow> make_pair_columns() {
  Columns<PairRow> c;
  c.add("src", &PairRow::src).add("dst", &PairRow::dst);
  c.add("pass", &PairRow::pass, "", kOptional).add("round", &PairRow::round, "", kOptional);
  c.add("wave", &PairRow::wave, "", kOptional);
  c.add("src_host", &PairRow::src_host).add("dst_host", &PairRow::dst_host);
  c.add("latency_us", &PairRow::latency_us, "us").add("bandwidth_GBps", &PairRow::bandwidth_GBps, "GB/s");
  return c;
}
Columns<RankRow> make_rank_columns() {
  Columns<RankRow> c;
  c.add("rank", &RankRow::rank).add("node", &RankRow::node, "", kOptional).add("host", &RankRow::host);
  c.add("sgemm_gflops", &RankRow::sgemm_gflops, "GFLOP/s").add("memcpy_GBps", &RankRow::memcpy_GBps, "GB/s");
  return c;
}
Columns<NodeRow> make_node_columns() {
  Columns<NodeRow> c;
  c.add("node", &NodeRow::node, "", kOptional).add("host", &NodeRow::host).add("ranks", &NodeRow::ranks);
  c.add("bytes", &NodeRow::bytes, "B").add("allreduce_us", &NodeRow::allreduce_us, "us");
  c.add("busbw_GBps", &NodeRow::busbw_GBps, "GB/s");
  return c;
}

Columns<GpuRow> make_gpu_columns() {
  Columns<GpuRow> c;
  c.add("rank", &GpuRow::rank).add("node", &GpuRow::node).add("host", &GpuRow::host);
  c.add("device", &GpuRow::device).add("name", &GpuRow::name);
  c.add("gemm_fp32_gflops", &GpuRow::gemm_fp32_gflops, "GFLOP/s");
  c.add("gemm_fp32_peak_gflops", &GpuRow::gemm_fp32_peak_gflops, "GFLOP/s");
  c.add("gemm_bf16_gflops", &GpuRow::gemm_bf16_gflops, "GFLOP/s");
  c.add("gemm_bf16_peak_gflops", &GpuRow::gemm_bf16_peak_gflops, "GFLOP/s");
  c.add("d2d_GBps", &GpuRow::d2d_GBps, "GB/s").add("d2d_peak_GBps", &GpuRow::d2d_peak_GBps, "GB/s");
  c.add("h2d_GBps", &GpuRow::h2d_GBps, "GB/s").add("d2h_GBps", &GpuRow::d2h_GBps, "GB/s");
  c.add("host_link_GBps", &GpuRow::host_link_GBps, "GB/s").add("host_link", &GpuRow::host_link);
  c.add("bus_id", &GpuRow::bus_id, "", kOptional);
  return c;
}
Columns<PeerRow> make_peer_columns() {
  Columns<PeerRow> c;
  c.add("node", &PeerRow::node).add("host", &PeerRow::host).add("src", &PeerRow::src).add("dst", &PeerRow::dst);
  c.add("oneway_GBps", &PeerRow::oneway_GBps, "GB/s").add("bidir_GBps", &PeerRow::bidir_GBps, "GB/s");
  return c;
}

h5::File with_meta(const std::string& path, std::int64_t nranks, std::int64_t nnodes) {
  h5::File f = h5::File::create(path);
  h5::Group meta = f.create_group("meta");
  meta.set_attr("schema", std::string(schemas::kDoctor));
  meta.set_attr("tool", std::string("commscope-doctor"));
  meta.set_attr("nranks", nranks);
  meta.set_attr("nnodes", nnodes);
  return f;
}

}  // namespace

const Columns<PairRow>& pair_columns() {
  static const Columns<PairRow> columns = make_pair_columns();
  return columns;
}
const Columns<RankRow>& rank_columns() {
  static const Columns<RankRow> columns = make_rank_columns();
  return columns;
}
const Columns<NodeRow>& node_columns() {
  static const Columns<NodeRow> columns = make_node_columns();
  return columns;
}

const Columns<GpuRow>& gpu_columns() {
  static const Columns<GpuRow> columns = make_gpu_columns();
  return columns;
}
const Columns<PeerRow>& peer_columns() {
  static const Columns<PeerRow> columns = make_peer_columns();
  return columns;
}

File::File(const std::string& path, std::int64_t nranks, std::int64_t nnodes)
    : file_(with_meta(path, nranks, nnodes)),
      pairs_(h5::Table<PairRow>::create(file_, "pairs", pair_columns().all())),
      ranks_(h5::Table<RankRow>::create(file_, "ranks", rank_columns().all())),
      nodes_(h5::Table<NodeRow>::create(file_, "nodes", node_columns().all())) {
  pairs_.set_attr("units", std::string("latency_us: microseconds (half a ping-pong round trip of 8 B); "
                                       "bandwidth_GBps: 1e9 bytes/s from src to dst"));
  ranks_.set_attr("units", std::string("sgemm_gflops: 1e9 flop/s (2 n^3 per call, one thread); "
                                       "memcpy_GBps: 1e9 bytes copied per second"));
  nodes_.set_attr("units", std::string("allreduce_us: f32 sum allreduce of `bytes` on the node's ranks; "
                                       "busbw_GBps: 2(n-1)/n bytes/time, 1e9 bytes/s"));
  file_.flush();
}

void File::add(const std::vector<PairRow>& rows) {
  pairs_.append(rows);
  file_.flush();
}
void File::add(const std::vector<RankRow>& rows) {
  ranks_.append(rows);
  file_.flush();
}
void File::add(const std::vector<NodeRow>& rows) {
  nodes_.append(rows);
  file_.flush();
}

void File::add(const std::vector<GpuRow>& rows) {
  if (!gpus_) {
    gpus_ = h5::Table<GpuRow>::create(file_, "gpus", gpu_columns().all());
    gpus_->set_attr("units", std::string("gemm_*_gflops: 1e9 flop/s (cuBLAS, 2 m n k per call), their peaks "
                                         "SMs x SM clock x the architecture's rate; *_GBps: 1e9 bytes/s, "
                                         "d2d_peak_GBps bus width x memory clock x 2 / 8, host_link_GBps "
                                         "PCIe width x rate per lane, per direction"));
  }
  gpus_->append(rows);
  file_.flush();
}
void File::add(const std::vector<PeerRow>& rows) {
  if (!peers_) {
    peers_ = h5::Table<PeerRow>::create(file_, "peers", peer_columns().all());
    peers_->set_attr("units", std::string("oneway_GBps: 1e9 bytes/s from src to dst alone; bidir_GBps: both "
                                          "directions at once, the sum"));
  }
  peers_->append(rows);
  file_.flush();
}

void File::finish(const std::string& status) {
  meta().set_attr("status", status);
  file_.close();
}

std::vector<PairRow> read_pairs(const h5::Group& file, std::uintmax_t file_bytes) {
  return read_rows(file, "pairs", pair_columns(), file_bytes);
}
std::vector<RankRow> read_ranks(const h5::Group& file, std::uintmax_t file_bytes) {
  return read_rows(file, "ranks", rank_columns(), file_bytes);
}
std::vector<NodeRow> read_nodes(const h5::Group& file, std::uintmax_t file_bytes) {
  return read_rows(file, "nodes", node_columns(), file_bytes);
}

std::vector<GpuRow> read_gpus(const h5::Group& file, std::uintmax_t file_bytes) {
  if (!file.exists("gpus")) return {};
  return read_rows(file, "gpus", gpu_columns(), file_bytes);
}
std::vector<PeerRow> read_peers(const h5::Group& file, std::uintmax_t file_bytes) {
  if (!file.exists("peers")) return {};
  return read_rows(file, "peers", peer_columns(), file_bytes);
}

Contents read(const std::string& path) {
  const std::uintmax_t bytes = std::filesystem::file_size(path);
  const h5::File f = h5::File::open(path);
  const h5::Group meta = f.open_group("meta");
  Contents d;
  d.schema = meta.attr_string("schema");
  if (meta.has_attr("status")) d.status = meta.attr_string("status");
  d.nranks = meta.attr_int("nranks");
  if (meta.has_attr("nnodes")) d.nnodes = meta.attr_int("nnodes");
  d.pairs = read_pairs(f, bytes);
  d.ranks = read_ranks(f, bytes);
  d.nodes = read_nodes(f, bytes);
  d.gpus = read_gpus(f, bytes);
  d.peers = read_peers(f, bytes);
  return d;
}

}  // namespace commscope::formats::doctor
