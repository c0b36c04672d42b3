#pragma once
// Chakra execution traces (MLCommons Chakra, schema/protobuf/et_def.proto as of commit
// 21585d8f2d65603d791d2121e3d4632351120262, 2026-05-20; package ChakraProtoMsg): the messages and
// fields commscope reads and writes, with Chakra's field numbers so that the bytes are Chakra's.
// A file (one per rank, PREFIX.N.et) is a GlobalMetadata message, then Node messages, each
// preceded by its length as a varint. Fields this code does not use (IOInfo inputs/outputs,
// attribute lists, Tensor) are skipped when read and never written.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

namespace commscope::profiler::chakra {

// NodeType (et_def.proto; 8-10 added to Chakra's schema after the commit above).
enum class NodeType : std::uint32_t {
  kInvalid = 0,
  kMetadata = 1,
  kMemLoad = 2,
  kMemStore = 3,
  kComp = 4,
  kCommSend = 5,
  kCommRecv = 6,
  kCommColl = 7,
  kStorage = 8,
  kBatch = 9,
  kCheckpoint = 10,
};
inline constexpr std::uint32_t kNodeTypeCount = 11;
std::string_view node_type_name(NodeType t);  // "COMP_NODE", ...

// CollectiveCommType (et_def.proto).
enum class CommType : std::int64_t {
  kAllReduce = 0,
  kReduce = 1,
  kAllGather = 2,
  kGather = 3,
  kScatter = 4,
  kBroadcast = 5,
  kAllToAll = 6,
  kReduceScatter = 7,
  kReduceScatterBlock = 8,
  kBarrier = 9,
};
inline constexpr std::int64_t kCommTypeCount = 10;

// An AttributeProto: its name and one value. Signed 32-bit kinds (int32, sint32, sfixed32) read
// as int32, the 64-bit ones as int64, unsigned kinds as uint64, float as double, bytes as string;
// a list value reads as std::monostate (commscope uses none). Written: int32 as int32_val (what
// Chakra's feeder reads comm_src, comm_dst and comm_tag from), int64 as int64_val (comm_type,
// comm_size), uint64 as uint64_val, double as double_val, bool as bool_val, string as string_val.
struct Attribute {
  std::string name;
  std::variant<std::monostate, std::int32_t, std::int64_t, std::uint64_t, double, bool, std::string> value;
};

// An integer attribute of any integer kind (or bool); nullopt for none or another kind.
std::optional<std::int64_t> integer_value(const Attribute& a);
const Attribute* find_attribute(const std::vector<Attribute>& attrs, std::string_view name);

// A Node (et_def.proto): start_time_micros and duration_micros are in microseconds.
struct Node {
  std::uint64_t id = 0;
  std::string name;
  NodeType type = NodeType::kInvalid;
  std::vector<std::uint64_t> ctrl_deps;
  std::vector<std::uint64_t> data_deps;
  std::uint64_t start_time_micros = 0;
  std::uint64_t duration_micros = 0;
  bool has_start_time = false;  // the field was present (proto3 leaves a zero out)
  std::vector<Attribute> attrs;
};

struct GlobalMetadata {
  std::string version;
  std::vector<Attribute> attrs;
};

struct EtTrace {
  GlobalMetadata metadata;
  std::vector<Node> nodes;  // in file order
};

// Encodes one message's bytes (without the length prefix).
std::string encode(const GlobalMetadata& m);
std::string encode(const Node& n);
// Decodes one message; ChakraError naming `what` when the bytes are not that message.
GlobalMetadata decode_metadata(std::string_view bytes, const std::string& what);
Node decode_node(std::string_view bytes, const std::string& what);

// The file's bytes as a trace. ChakraError (one line, without the file's name) when they are not
// a Chakra execution trace: empty, still gzip-compressed, a length past the end, a message that
// is not GlobalMetadata or Node, a node type outside NodeType.
EtTrace parse_et(std::string_view data);
// Reads a file, plain or gzip-compressed (as Chakra's protolib does); ChakraError naming the file.
EtTrace read_et_file(const std::string& path);
// Writes path.partial and renames it to path when complete; ChakraError naming the file.
void write_et_file(const std::string& path, const EtTrace& trace);

}  // namespace commscope::profiler::chakra
