// The Chakra interop (docs/chakra.md): the protobuf wire format against bytes worked out from
// protobuf's encoding rules, bad files, a profile exported and imported again, and foreign traces
// with the cases real ones have (no start times, CPU operators, process group names, messages,
// cycles).
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>
#include <vector>

#include "chakra/et_trace.hpp"
#include "chakra/names.hpp"
#include "chakra/wire.hpp"
#include "chakra_sequence.hpp"
#include "commscope/profiler/chakra.hpp"
#include "commscope/profiler/vocabulary.hpp"

namespace cp = commscope::profiler;
namespace ck = commscope::profiler::chakra;

namespace {

std::string temp_path(const std::string& name) {
  const char* dir = std::getenv("COMMSCOPE_TEST_TMP");
  return std::string(dir != nullptr ? dir : "/tmp") + "/chakra_" + name;
}

std::string bytes_of(std::initializer_list<int> b) {
  std::string s;
  for (const int x : b) s.push_back(static_cast<char>(x));
  return s;
}

std::string delimited(const std::string& message) {
  std::string out;
  ck::WireWriter::append_varint(out, message.size());
  return out + message;
}

std::string error_of(const std::string& data) {
  try {
    ck::parse_et(data);
  } catch (const cp::ChakraError& e) {
    return e.what();
  }
  return "no error";
}

// --- the wire format

TEST(ChakraWire, VarintsRoundTrip) {
  for (const std::uint64_t v : {0ULL, 1ULL, 127ULL, 128ULL, 300ULL, 1ULL << 32, ~0ULL}) {
    std::string s;
    ck::WireWriter::append_varint(s, v);
    std::size_t pos = 0;
    std::uint64_t back = 0;
    ASSERT_TRUE(ck::WireReader::read_varint(s, pos, back));
    EXPECT_EQ(back, v);
    EXPECT_EQ(pos, s.size());
  }
  std::string s = bytes_of({0xac, 0x02});  // protobuf's own example: 300
  std::size_t pos = 0;
  std::uint64_t v = 0;
  ASSERT_TRUE(ck::WireReader::read_varint(s, pos, v));
  EXPECT_EQ(v, 300u);
  pos = 0;
  EXPECT_FALSE(ck::WireReader::read_varint(bytes_of({0x80, 0x80}), pos, v));  // truncated
}

TEST(ChakraWire, NodeBytesAreChakrasFieldNumbers) {
  ck::Node n;
  n.id = 1;
  n.name = "a";
  n.type = ck::NodeType::kCommColl;
  n.data_deps = {3, 300};
  n.attrs.push_back({"comm_type", std::int64_t{0}});
  n.attrs.push_back({"comm_src", std::int32_t{-1}});
  // id (1, varint), name (2), type (3), data_deps (5, packed), duration_micros (7),
  // attr (10): name (1) and int64_val (9) / int32_val (7, -1 sign-extended to 10 bytes).
  const std::string want = bytes_of({0x08, 0x01, 0x12, 0x01, 'a',  0x18, 0x07, 0x2a, 0x03, 0x03, 0xac, 0x02, 0x38,
                                     0x00, 0x52, 0x0d, 0x0a, 0x09, 'c',  'o',  'm',  'm',  '_',  't',  'y',  'p',
                                     'e',  0x48, 0x00, 0x52, 0x15, 0x0a, 0x08, 'c',  'o',  'm',  'm',  '_',  's',
                                     'r',  'c',  0x38, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01});
  EXPECT_EQ(ck::encode(n), want);
}

TEST(ChakraWire, DecodesEveryFieldFormProtobufWrites) {
  // Unpacked ctrl_deps, packed data_deps, an IOInfo (8) and an unknown field (99) skipped,
  // start_time_micros, and attribute kinds: sint64 -3 (zigzag 5), float 1.5, bool, string.
  std::string n = bytes_of({0x08, 0x2a, 0x18, 0x04, 0x20, 0x05, 0x20, 0x06, 0x2a, 0x02, 0x07, 0x08,
                            0x30, 0x00, 0x38, 0x09, 0x42, 0x02, 0x0a, 0x00, 0x98, 0x06, 0x01});
  n += bytes_of({0x52, 0x06, 0x0a, 0x01, 'x', 0x88, 0x01, 0x05});              // sint64_val (17)
  n += bytes_of({0x52, 0x08, 0x0a, 0x01, 'f', 0x2d, 0x00, 0x00, 0xc0, 0x3f});  // float_val (5)
  n += bytes_of({0x52, 0x06, 0x0a, 0x01, 'b', 0xd8, 0x01, 0x01});              // bool_val (27)
  n += bytes_of({0x52, 0x07, 0x0a, 0x01, 's', 0xea, 0x01, 0x01, 'z'});         // string_val (29)
  const ck::Node node = ck::decode_node(n, "node");
  EXPECT_EQ(node.id, 42u);
  EXPECT_EQ(node.type, ck::NodeType::kComp);
  EXPECT_EQ(node.ctrl_deps, (std::vector<std::uint64_t>{5, 6}));
  EXPECT_EQ(node.data_deps, (std::vector<std::uint64_t>{7, 8}));
  EXPECT_TRUE(node.has_start_time);
  EXPECT_EQ(node.start_time_micros, 0u);
  EXPECT_EQ(node.duration_micros, 9u);
  ASSERT_EQ(node.attrs.size(), 4u);
  EXPECT_EQ(ck::integer_value(node.attrs[0]), -3);
  EXPECT_EQ(std::get<double>(node.attrs[1].value), 1.5);
  EXPECT_EQ(std::get<bool>(node.attrs[2].value), true);
  EXPECT_EQ(std::get<std::string>(node.attrs[3].value), "z");
  // What the writer writes, the reader reads back.
  const ck::Node again = ck::decode_node(ck::encode(node), "again");
  EXPECT_EQ(ck::encode(again), ck::encode(node));
}

// Chakra's type of a name as vocabulary.hpp's classify_call reads it: exact calls and names that
// only mention one alike (Chakra has a type for either); messages, completions and sendrecv none.
TEST(ChakraNames, CollectivesAndMessagesByName) {
  const auto type_of = [](const std::string& name) -> std::optional<ck::CommType> {
    const std::optional<cp::CallName> call = cp::classify_call(name);
    return call ? ck::comm_type_of(*call) : std::nullopt;
  };
  const std::vector<std::pair<std::string, std::optional<ck::CommType>>> collectives = {
      {"tp.allreduce_max", ck::CommType::kAllReduce},
      {"aten::all_reduce.out", ck::CommType::kAllReduce},
      {"_reduce_scatter_base", ck::CommType::kReduceScatter},
      {"allgatherv", ck::CommType::kAllGather},
      {"all_to_allv", ck::CommType::kAllToAll},
      {"alltoallw", ck::CommType::kAllToAll},
      {"ncclKernel_Broadcast_RING_LL", ck::CommType::kBroadcast},
      {"MPI_Bcast", ck::CommType::kBroadcast},
      {"ibarrier", ck::CommType::kBarrier},
      {"reduce", ck::CommType::kReduce},
      {"gatherv", ck::CommType::kGather},
      {"scatter", ck::CommType::kScatter},
      {"scan", std::nullopt},
      {"pp.send", std::nullopt},
      {"wait", std::nullopt},
      {"sendrecv", std::nullopt},
      {"MPI_Sendrecv_replace", std::nullopt}};
  for (const auto& [name, want] : collectives) EXPECT_EQ(type_of(name), want) << name;
}

TEST(ChakraFile, BadFilesAreOneLineErrors) {
  ck::Node n;
  n.type = ck::NodeType::kCommColl;
  const std::string good = delimited(ck::encode(ck::GlobalMetadata{"1.0.0", {}})) + delimited(ck::encode(n));
  EXPECT_EQ(ck::parse_et(good).nodes.size(), 1u);
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"", "empty file"},
      {bytes_of({0x1f, 0x8b, 0x08, 0x00}), "gzip-compressed"},
      {"hello, world\n", "not a Chakra execution trace"},
      {good.substr(0, good.size() - 1), "truncated"},
      {good + delimited(bytes_of({0x18, 0x0b})), "node type 11"},
      {good + delimited(bytes_of({0x0b})), "wire type 3"},
      {good + delimited(bytes_of({0x12, 0x05})), "past the end"},
  };
  for (const auto& [data, want] : cases) {
    const std::string e = error_of(data);
    EXPECT_NE(e.find(want), std::string::npos) << e;
    EXPECT_EQ(e.find('\n'), std::string::npos) << e;
  }
  EXPECT_THROW(ck::read_et_file(temp_path("no-such-file.et")), cp::ChakraError);
}

// --- a profile exported and imported again

struct ProfileBuilder {
  cp::StringTable strings;
  cp::Profile profile;
  std::uint64_t next_id = 1;

  explicit ProfileBuilder(int nranks) {
    profile.meta.nranks = nranks;
    profile.meta.version = "test";
    profile.events.resize(static_cast<std::size_t>(nranks));
    for (int r = 0; r < nranks; ++r) profile.ranks.push_back({r, "host", 0, 0, "host", 0, 0, "", 0, 0, ""});
  }
  cp::Event& add(int rank, cp::EventKind kind, std::int64_t start, std::int64_t end, std::string_view name,
                 int iteration) {
    cp::Event e;
    e.kind = kind, e.start_ns = start, e.end_ns = end, e.iteration = iteration;
    e.name = strings.intern(name);
    if (kind == cp::EventKind::kCommunication) e.id = next_id++;
    auto& ev = profile.events[static_cast<std::size_t>(rank)];
    ev.push_back(e);
    return ev.back();
  }
  cp::Event& comm(int rank, std::int64_t start, std::int64_t end, std::string_view name, std::int64_t bytes,
                  std::string_view label, std::int64_t seq, int iteration) {
    cp::Event& e = add(rank, cp::EventKind::kCommunication, start, end, name, iteration);
    e.bytes = bytes, e.seq = seq;
    e.communicator = label.empty() ? 0 : strings.intern(label);
    e.detail = strings.intern("ring");
    return e;
  }
  cp::Profile done() {
    profile.strings = strings.strings();
    return profile;
  }
};

// A (1,2,2)-shaped job of 4 ranks (tp pairs {0,1} and {2,3}, stage 0 = ranks 0 and 1), 2 steps:
// tensor-parallel sums, pipeline messages, the embedding group, the data-parallel allreduce
// (also as an NCCL kernel of the same instance on a device stream), and a scan Chakra has no
// node for. Rank r's clock is r us behind rank 0's.
cp::Profile four_rank_job() {
  ProfileBuilder b(4);
  for (int r = 0; r < 4; ++r) {
    b.profile.ranks[static_cast<std::size_t>(r)].clock_offset_ns = 1000 * r;
    const std::string tp = r < 2 ? "tp[0,1]" : "tp[2,3]";
    const bool first = r < 2;
    const int peer = first ? r + 2 : r - 2;
    const std::string link = first ? cp::link_label("pp", r, peer) : cp::link_label("pp", peer, r);
    for (int it = 0; it < 2; ++it) {
      const std::int64_t t = 5'000'000 + it * 1'000'000;
      b.add(r, cp::EventKind::kIteration, t, t + 900'000, "step", it);
      b.add(r, cp::EventKind::kKernel, t + 1000, t + 99'000, "gemm", it);
      b.comm(r, t + 100'000, t + 120'123, "tp.allreduce", 4096 * (it + 1), tp, 2 * it, it);
      b.comm(r, t + 130'000, t + 140'000, "tp.allreduce_max", 64, tp, 2 * it + 1, it);
      b.comm(r, t + 200'000, t + 230'000, first ? "pp.send" : "pp.recv", 1 << 20, link, it, it);
      b.comm(r, t + 300'000, t + 310'000, "scan", 8, "", it, it);
      cp::Event& dp = b.comm(r, t + 400'000, t + 500'000, "allreduce", 3 << 20, "", it, it);
      cp::Event kernel = dp;  // the same instance's NCCL kernel: one Chakra node for both
      kernel.track_kind = cp::TrackKind::kDeviceStream, kernel.start_ns += 10, kernel.device = 0;
      b.profile.events[static_cast<std::size_t>(r)].push_back(kernel);
      b.comm(r, t + 600'000, t + 610'000, "embedding.allreduce", 512, r % 2 == 0 ? "embedding[0,2]" : "", it, it);
      b.comm(r, t + 700'000, t + 720'000, "reducescatter", 999, "dp[0,2]", it, it);
    }
  }
  return b.done();
}

TEST(ChakraRoundTrip, SameCommunicationPerRank) {
  const cp::Profile original = four_rank_job();
  const std::string prefix = temp_path("roundtrip");
  const std::vector<cp::ChakraExportRank> out = cp::export_chakra(original, prefix);
  ASSERT_EQ(out.size(), 4u);
  EXPECT_EQ(out[0].path, prefix + ".0.et");
  EXPECT_EQ(out[0].collectives, 10);
  EXPECT_EQ(out[0].sends, 2);
  EXPECT_EQ(out[2].recvs, 2);
  EXPECT_EQ(out[1].left_out.at("scan"), 2);

  cp::ChakraImportOptions options;
  options.files = cp::chakra_files_of(prefix);
  ASSERT_EQ(options.files.size(), 4u);
  const cp::ChakraImport im = cp::import_chakra(options);
  EXPECT_FALSE(im.synthetic_times);
  EXPECT_TRUE(im.ranks[3].exported);
  const auto want = cp::testing::communication_sequence(original);
  const auto got = cp::testing::communication_sequence(im.profile);
  ASSERT_EQ(got.size(), 4u);
  for (std::size_t r = 0; r < 4; ++r) {
    ASSERT_EQ(got[r].size(), 12u) << "rank " << r;
    for (std::size_t i = 0; i < want[r].size(); ++i)
      EXPECT_EQ(got[r][i], want[r][i]) << "rank " << r << " step " << i << ": " << cp::testing::describe(got[r][i]);
  }
  // Times in ns, on rank 0's clock, from the earliest node at 0 (rank 0's first step).
  const cp::Event* first = nullptr;
  for (const cp::Event& e : im.profile.events[3])
    if (e.kind == cp::EventKind::kCommunication && first == nullptr) first = &e;
  ASSERT_NE(first, nullptr);
  EXPECT_EQ(first->start_ns, 100'000 + 3000);
  EXPECT_EQ(first->end_ns - first->start_ns, 20'123);
  EXPECT_EQ(im.profile.strings.at(first->detail), "ring");
  // One breakdown row per (rank, step), the step's window as recorded.
  ASSERT_EQ(im.profile.breakdown.size(), 8u);
  for (const cp::BreakdownRow& row : im.profile.breakdown) {
    EXPECT_EQ(row.window_ns, 900'000) << "rank " << row.rank << " step " << row.iteration;
    EXPECT_EQ(row.identity_ok, 1);
  }
}

TEST(ChakraRoundTrip, ARefusedProfileWritesNoFile) {
  cp::Profile p = four_rank_job();
  // Rank 3's first message on a link between ranks 0 and 2: none of its own.
  for (cp::Event& e : p.events[3])
    if (e.kind == cp::EventKind::kCommunication && p.strings.at(e.name) == "pp.recv") {
      e.communicator = static_cast<std::uint32_t>(p.strings.size());
      p.strings.push_back("pp[0>2]");
      break;
    }
  const std::string prefix = temp_path("refused");
  std::filesystem::remove(prefix + ".0.et");
  EXPECT_THROW(cp::export_chakra(p, prefix), cp::ChakraError);
  EXPECT_FALSE(std::filesystem::exists(prefix + ".0.et"));
}

TEST(ChakraRoundTrip, NodesInRankOrderWithGapsAsCompute) {
  const std::string prefix = temp_path("nodes");
  cp::export_chakra(four_rank_job(), prefix);
  const ck::EtTrace t = ck::read_et_file(prefix + ".0.et");
  EXPECT_EQ(t.metadata.version, "1.0.0");
  ASSERT_FALSE(t.nodes.empty());
  std::int64_t compute_ns = 0;
  for (std::size_t i = 0; i < t.nodes.size(); ++i) {
    const ck::Node& n = t.nodes[i];
    EXPECT_EQ(n.id, i);
    EXPECT_EQ(n.data_deps, i == 0 ? std::vector<std::uint64_t>{} : std::vector<std::uint64_t>{i - 1});
    if (n.type == ck::NodeType::kComp)
      compute_ns += ck::integer_value(*ck::find_attribute(n.attrs, "commscope.duration_ns")).value();
  }
  // Step 0 of rank 0: a gap of 100 us (step start to the first sum), the sum (20.123 us, so 20 us).
  EXPECT_EQ(t.nodes[0].type, ck::NodeType::kComp);
  EXPECT_EQ(t.nodes[0].duration_micros, 100u);
  const ck::Node& sum = t.nodes[1];
  EXPECT_EQ(sum.type, ck::NodeType::kCommColl);
  EXPECT_EQ(sum.duration_micros, 20u);
  EXPECT_EQ(ck::integer_value(*ck::find_attribute(sum.attrs, "comm_type")), 0);  // ALL_REDUCE
  EXPECT_EQ(ck::integer_value(*ck::find_attribute(sum.attrs, "comm_size")), 4096);
  EXPECT_EQ(std::get<std::string>(ck::find_attribute(sum.attrs, "pg_name")->value), "tp[0,1]");
  const ck::Node& send = t.nodes[5];
  EXPECT_EQ(send.type, ck::NodeType::kCommSend);
  EXPECT_EQ(std::get<std::int32_t>(ck::find_attribute(send.attrs, "comm_src")->value), 0);
  EXPECT_EQ(std::get<std::int32_t>(ck::find_attribute(send.attrs, "comm_dst")->value), 2);
  // Everything from the first step's start to the second's end that is not communication.
  EXPECT_EQ(compute_ns, 1'900'000 - 2 * (20'123 + 10'000 + 30'000 + 100'000 + 10'000 + 20'000) - 2 * 10'000);
}

// --- foreign traces: what Chakra's converter writes

ck::Node node(std::uint64_t id, ck::NodeType type, std::string name, std::uint64_t micros,
              std::vector<std::uint64_t> deps = {}) {
  ck::Node n;
  n.id = id, n.type = type, n.name = std::move(name), n.duration_micros = micros, n.data_deps = std::move(deps);
  return n;
}

ck::Node& with(ck::Node& n, std::string name, decltype(ck::Attribute::value) value) {
  n.attrs.push_back({std::move(name), std::move(value)});
  return n;
}

std::string write_trace(const std::string& name, std::vector<ck::Node> nodes) {
  ck::EtTrace t;
  t.metadata.attrs.push_back({"schema", std::string("1.0.2-chakra.0.0.4")});
  t.nodes = std::move(nodes);
  const std::string path = temp_path(name);
  ck::write_et_file(path, t);
  return path;
}

cp::ChakraImport import_files(std::vector<std::string> files) {
  cp::ChakraImportOptions options;
  options.files = std::move(files);
  return cp::import_chakra(options);
}

std::vector<std::string> names_of(const cp::Profile& p, std::size_t rank, cp::EventKind kind) {
  std::vector<std::string> out;
  for (const cp::Event& e : p.events[rank])
    if (e.kind == kind) out.push_back(p.strings.at(e.name));
  return out;
}

TEST(ChakraImport, SyntheticTimesInDependencyOrder) {
  // File order C, A, B; data dependencies A -> B -> C. A's control dependency on C is not an
  // order (Chakra's feeder orders by data_deps alone).
  ck::Node c = node(30, ck::NodeType::kComp, "C", 5, {20});
  ck::Node a = node(10, ck::NodeType::kCommColl, "ncclKernel_AllReduce_RING", 2);
  with(a, "comm_type", std::int64_t{0});
  with(a, "comm_size", std::int64_t{1024});
  a.ctrl_deps = {30};
  ck::Node b = node(20, ck::NodeType::kComp, "B", 3, {10});
  const cp::ChakraImport im = import_files({write_trace("synthetic.0.et", {c, a, b})});
  EXPECT_TRUE(im.synthetic_times);
  EXPECT_EQ(im.ranks[0].version, "schema 1.0.2-chakra.0.0.4");
  const cp::Profile& p = im.profile;
  EXPECT_EQ(p.ranks[0].clock_error_ns, cp::kUnknownClockError);
  std::vector<std::pair<std::string, std::int64_t>> order;
  for (const cp::Event& e : p.events[0])
    if (e.kind != cp::EventKind::kIteration) order.emplace_back(p.strings.at(e.name), e.start_ns);
  EXPECT_EQ(order, (std::vector<std::pair<std::string, std::int64_t>>{{"allreduce", 0}, {"B", 2000}, {"C", 5000}}));
  EXPECT_EQ(names_of(p, 0, cp::EventKind::kIteration), std::vector<std::string>{"trace"});
  ASSERT_EQ(p.breakdown.size(), 1u);
  EXPECT_EQ(p.breakdown[0].window_ns, 10'000);
  EXPECT_EQ(p.breakdown[0].comm_ns, 2'000);
  bool said = false;
  for (const auto& [k, v] : p.meta.attributes) said |= k == "chakra.times" && v.starts_with("synthetic");
  EXPECT_TRUE(said);
}

TEST(ChakraImport, RecordedTimesWithTheFirstNodeAtZero) {
  // As protobuf writes them: the node at 0 us has no start_time_micros field at all.
  ck::Node a = node(1, ck::NodeType::kComp, "gemm", 5);
  ck::Node b = node(2, ck::NodeType::kCommColl, "allreduce", 2);
  b.has_start_time = true, b.start_time_micros = 7;
  with(b, "comm_type", std::int64_t{0});
  const cp::ChakraImport im = import_files({write_trace("recorded.0.et", {b, a})});
  EXPECT_FALSE(im.synthetic_times);
  std::vector<std::pair<std::string, std::int64_t>> order;
  for (const cp::Event& e : im.profile.events[0])
    if (e.kind != cp::EventKind::kIteration) order.emplace_back(im.profile.strings.at(e.name), e.start_ns);
  EXPECT_EQ(order, (std::vector<std::pair<std::string, std::int64_t>>{{"gemm", 0}, {"allreduce", 7000}}));
}

TEST(ChakraImport, CollectiveNamesGroupsAndCpuOperators) {
  // Two ranks as Chakra's PyTorch converter writes them: c10d CPU operators typed COMM_COLL_NODE
  // without attributes beside the NCCL kernels, process groups by name only.
  std::vector<std::vector<ck::Node>> ranks(2);
  for (int r = 0; r < 2; ++r) {
    auto& v = ranks[static_cast<std::size_t>(r)];
    v.push_back(node(1, ck::NodeType::kCommColl, "c10d::allgather_", 7));
    with(v.back(), "is_cpu_op", true);
    v.push_back(node(2, ck::NodeType::kCommColl, "ncclKernel_AllGather_RING_LL", 4, {1}));
    with(v.back(), "is_cpu_op", false), with(v.back(), "comm_size", std::int64_t{100});
    with(v.back(), "pg_name", std::string("0"));
    v.push_back(node(3, ck::NodeType::kCommColl, "ncclDevKernel_ReduceScatter", 4, {2}));
    with(v.back(), "comm_type", std::int64_t{7}), with(v.back(), "comm_size", std::int64_t{200});
    with(v.back(), "pg_name", std::string(r == 0 ? "0" : "my group"));
    v.push_back(node(4, ck::NodeType::kMemLoad, "load", 1, {3}));
  }
  const cp::ChakraImport im =
      import_files({write_trace("groups.0.et", ranks[0]), write_trace("groups.1.et", ranks[1])});
  const auto seq = cp::testing::communication_sequence(im.profile);
  ASSERT_EQ(seq.size(), 2u);
  ASSERT_EQ(seq[0].size(), 2u);
  // The allgather's comm_size is one rank's part (Chakra's converter: the input tensor): the
  // profile's bytes are the whole array, 2 members' parts.
  EXPECT_EQ(seq[0][0], (cp::testing::CommStep{"allgather", 200, "pg0[0,1]", 0, 0}));
  EXPECT_EQ(seq[0][1], (cp::testing::CommStep{"reducescatter", 200, "pg0[0,1]", 1, 0}));
  EXPECT_EQ(seq[1][1], (cp::testing::CommStep{"reducescatter", 200, "pg_0[1]", 0, 0}));
  EXPECT_EQ(im.ranks[0].left_out.at("CPU operators beside device nodes"), 1);
  EXPECT_EQ(im.ranks[0].left_out.at("MEM_LOAD_NODE"), 1);
  EXPECT_EQ(im.ranks[0].imported.at("COMM_COLL_NODE"), 2);
}

TEST(ChakraImport, MessagesOnLinksBetweenPeers) {
  ck::Node send = node(1, ck::NodeType::kCommSend, "send", 3);
  with(send, "comm_src", std::int32_t{0}), with(send, "comm_dst", std::int32_t{1});
  with(send, "comm_size", std::int64_t{64}), with(send, "comm_tag", std::int32_t{7});
  with(send, "pg_name", std::string("0"));  // the link, not the group, is a message's communicator
  ck::Node recv = node(1, ck::NodeType::kCommRecv, "recv", 3);
  with(recv, "comm_src", std::int32_t{0}), with(recv, "comm_dst", std::int32_t{1});
  with(recv, "comm_size", std::int64_t{64});
  const cp::ChakraImport im = import_files({write_trace("p2p.0.et", {send}), write_trace("p2p.1.et", {recv})});
  const auto seq = cp::testing::communication_sequence(im.profile);
  EXPECT_EQ(seq[0], std::vector<cp::testing::CommStep>({{"send", 64, "p2p[0>1]", 0, 0}}));
  EXPECT_EQ(seq[1], std::vector<cp::testing::CommStep>({{"recv", 64, "p2p[0>1]", 0, 0}}));
  // Without its peer, a message is on its process group.
  ck::Node lost = node(1, ck::NodeType::kCommRecv, "recv", 3);
  with(lost, "pg_name", std::string("0"));
  const cp::ChakraImport im2 = import_files({write_trace("nopeer.0.et", {send}), write_trace("nopeer.1.et", {lost})});
  EXPECT_EQ(cp::testing::communication_sequence(im2.profile)[1],
            std::vector<cp::testing::CommStep>({{"recv", 0, "pg0[0,1]", 0, 0}}));
}

TEST(ChakraImport, SelfDependenciesMissingNodesAndCyclesAreCounted) {
  ck::Node a = node(1, ck::NodeType::kCommColl, "allreduce", 1, {1, 99});  // itself, a missing node
  with(a, "comm_type", std::int64_t{0});
  ck::Node b = node(2, ck::NodeType::kComp, "b", 1, {3});  // b and c wait for each other
  ck::Node c = node(3, ck::NodeType::kComp, "c", 1, {2});
  const cp::ChakraImport im = import_files({write_trace("cycle.0.et", {a, b, c})});
  const auto& left = im.ranks[0].left_out;
  EXPECT_EQ(left.at("dependencies on itself"), 1);
  EXPECT_EQ(left.at("dependencies on missing nodes"), 1);
  EXPECT_EQ(left.at("dependency cycles broken"), 1);
  EXPECT_EQ(names_of(im.profile, 0, cp::EventKind::kKernel), (std::vector<std::string>{"b", "c"}));
}

// A profile's allgather and gather bytes are the whole array (the bench's S); Chakra's comm_size of
// those two is one rank's part, as ASTRA-sim's collectives and Chakra's PyTorch converter read it.
TEST(ChakraRoundTrip, GatherCommSizeIsOneRanksPart) {
  ProfileBuilder b(2);
  for (int r = 0; r < 2; ++r) {
    b.add(r, cp::EventKind::kIteration, 0, 100'000, "step", 0);
    b.comm(r, 1000, 2000, "allgather", 8192, "", 0, 0);         // the profiled communicator: 2 ranks
    b.comm(r, 3000, 4000, "MPI_Gather", 6000, "g[0,1]", 0, 0);  // a labelled group of 2
    b.comm(r, 5000, 6000, "allgatherv", 1001, "", 1, 0);        // uneven: 1001 B over 2 ranks
    b.comm(r, 7000, 8000, "allreduce", 4096, "dp[0,1]", 0, 0);  // the whole array, as before
  }
  const std::string prefix = temp_path("gathers");
  const cp::Profile original = b.done();
  cp::export_chakra(original, prefix);
  const ck::EtTrace t = ck::read_et_file(prefix + ".1.et");
  std::vector<std::int64_t> sizes;
  for (const ck::Node& n : t.nodes)
    if (n.type == ck::NodeType::kCommColl)
      sizes.push_back(ck::integer_value(*ck::find_attribute(n.attrs, "comm_size")).value());
  EXPECT_EQ(sizes, (std::vector<std::int64_t>{4096, 3000, 500, 4096}));
  // Imported again, the whole arrays come back (1001 B exactly, from commscope's own attribute).
  cp::ChakraImportOptions options;
  options.files = cp::chakra_files_of(prefix);
  const cp::ChakraImport im = cp::import_chakra(options);
  EXPECT_EQ(cp::testing::communication_sequence(im.profile), cp::testing::communication_sequence(original));
  EXPECT_EQ(ck::label_members("dp[0:62:2]"), 32);
  EXPECT_EQ(ck::label_members("tp[0,1,4]"), 3);
  EXPECT_FALSE(ck::label_members("pp[0>2]"));
}

// Chakra's current schema adds STORAGE_NODE (8), BATCH_NODE (9) and CHECKPOINT_NODE (10): a trace
// with them imports, their time kept as a gap where the times are synthetic, each counted.
TEST(ChakraImport, StorageBatchAndCheckpointNodesAreGaps) {
  ck::Node load = node(1, ck::NodeType::kBatch, "dataloader", 7);
  ck::Node a = node(2, ck::NodeType::kCommColl, "allreduce", 2, {1});
  with(a, "comm_type", std::int64_t{0}), with(a, "comm_size", std::int64_t{64});
  ck::Node save = node(3, ck::NodeType::kCheckpoint, "save", 5, {2});
  ck::Node write = node(4, ck::NodeType::kStorage, "write", 3, {3});
  ck::Node gemm = node(5, ck::NodeType::kComp, "gemm", 1, {4});
  const cp::ChakraImport im = import_files({write_trace("storage.0.et", {load, a, save, write, gemm})});
  std::vector<std::pair<std::string, std::int64_t>> order;
  for (const cp::Event& e : im.profile.events[0])
    if (e.kind != cp::EventKind::kIteration) order.emplace_back(im.profile.strings.at(e.name), e.start_ns);
  EXPECT_EQ(order, (std::vector<std::pair<std::string, std::int64_t>>{{"allreduce", 7000}, {"gemm", 17'000}}));
  const auto& left = im.ranks[0].left_out;
  EXPECT_EQ(left.at("BATCH_NODE (a gap)"), 1);
  EXPECT_EQ(left.at("CHECKPOINT_NODE (a gap)"), 1);
  EXPECT_EQ(left.at("STORAGE_NODE (a gap)"), 1);
}

TEST(ChakraImport, BadTraces) {
  ck::Node a = node(1, ck::NodeType::kCommColl, "allreduce", 1);
  ck::Node compute = node(1, ck::NodeType::kComp, "gemm", 1);
  EXPECT_THROW(import_files({write_trace("twice.0.et", {a, a})}), cp::ChakraError);
  ck::Node timed = a;  // recorded times too
  timed.has_start_time = true;
  EXPECT_THROW(import_files({write_trace("twice-timed.0.et", {timed, timed})}), cp::ChakraError);
  EXPECT_THROW(import_files({write_trace("nocomm.0.et", {compute})}), cp::ChakraError);
  EXPECT_THROW(cp::chakra_files_of(temp_path("no-such-prefix")), cp::ChakraError);
  // A prefix's files run from .0.et up to the first missing rank.
  const std::string prefix = temp_path("gap");
  for (const int r : {0, 1, 3}) write_trace("gap." + std::to_string(r) + ".et", {a});
  EXPECT_EQ(cp::chakra_files_of(prefix), (std::vector<std::string>{prefix + ".0.et", prefix + ".1.et"}));
}

}  // namespace
