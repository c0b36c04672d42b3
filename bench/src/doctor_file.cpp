#include "doctor_file.hpp"

#include "commscope/common/schemas.hpp"

namespace commscope::doctor {

namespace {

h5::CompoundType<PairRow> pair_type() {
  h5::CompoundType<PairRow> t;
  t.add("src", &PairRow::src).add("dst", &PairRow::dst).add("pass", &PairRow::pass).add("round", &PairRow::round);
  t.add("src_host", &PairRow::src_host).add("dst_host", &PairRow::dst_host);
  t.add("latency_us", &PairRow::latency_us).add("bandwidth_GBps", &PairRow::bandwidth_GBps);
  return t;
}
h5::CompoundType<RankRow> rank_type() {
  h5::CompoundType<RankRow> t;
  t.add("rank", &RankRow::rank).add("node", &RankRow::node).add("host", &RankRow::host);
  t.add("sgemm_gflops", &RankRow::sgemm_gflops).add("memcpy_GBps", &RankRow::memcpy_GBps);
  return t;
}
h5::CompoundType<NodeRow> node_type() {
  h5::CompoundType<NodeRow> t;
  t.add("node", &NodeRow::node).add("host", &NodeRow::host).add("ranks", &NodeRow::ranks);
  t.add("bytes", &NodeRow::bytes).add("allreduce_us", &NodeRow::allreduce_us).add("busbw_GBps", &NodeRow::busbw_GBps);
  return t;
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

File::File(const std::string& path, std::int64_t nranks, std::int64_t nnodes)
    : file_(with_meta(path, nranks, nnodes)),
      pairs_(h5::Table<PairRow>::create(file_, "pairs", pair_type())),
      ranks_(h5::Table<RankRow>::create(file_, "ranks", rank_type())),
      nodes_(h5::Table<NodeRow>::create(file_, "nodes", node_type())) {
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

void File::finish(const std::string& status) {
  meta().set_attr("status", status);
  file_.close();
}

}  // namespace commscope::doctor
