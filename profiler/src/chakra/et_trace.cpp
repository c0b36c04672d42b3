#include "chakra/et_trace.hpp"

#include <bit>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>

#include <zlib.h>

#include "chakra/wire.hpp"

namespace commscope::profiler::chakra {

namespace {

// Field numbers of et_def.proto.
namespace field {
constexpr std::uint32_t kAttrName = 1, kAttrDoubleVal = 3, kAttrFloatVal = 5, kAttrInt32Val = 7, kAttrInt64Val = 9,
                        kAttrUint32Val = 11, kAttrUint64Val = 13, kAttrSint32Val = 15, kAttrSint64Val = 17,
                        kAttrFixed32Val = 19, kAttrFixed64Val = 21, kAttrSfixed32Val = 23, kAttrSfixed64Val = 25,
                        kAttrBoolVal = 27, kAttrStringVal = 29, kAttrBytesVal = 31;
constexpr std::uint32_t kMetaVersion = 1, kMetaAttr = 2;
constexpr std::uint32_t kNodeId = 1, kNodeName = 2, kNodeType = 3, kNodeCtrlDeps = 4, kNodeDataDeps = 5,
                        kNodeStartTime = 6, kNodeDuration = 7, kNodeAttr = 10;
}  // namespace field

[[noreturn]] void wrong_type(const std::string& what, const WireField& f) {
  throw ChakraError(what + ": field " + std::to_string(f.number) + " has wire type " +
                    std::to_string(static_cast<int>(f.type)) + ", not the schema's");
}

std::int64_t zigzag(std::uint64_t v) {
  return static_cast<std::int64_t>(v >> 1) ^ -static_cast<std::int64_t>(v & 1);
}

// The value of one oneof field of AttributeProto, by its field number and wire type.
void decode_attr_value(Attribute& a, const WireField& f, const std::string& what) {
  using namespace field;
  const auto want = [&](WireType t) {
    if (f.type != t) wrong_type(what, f);
  };
  switch (f.number) {
    case kAttrDoubleVal:
      want(WireType::kFixed64), a.value = std::bit_cast<double>(f.value);
      return;
    case kAttrFloatVal:
      want(WireType::kFixed32),
          a.value = static_cast<double>(std::bit_cast<float>(static_cast<std::uint32_t>(f.value)));
      return;
    case kAttrInt32Val:
      want(WireType::kVarint), a.value = static_cast<std::int32_t>(f.value);
      return;
    case kAttrInt64Val:
      want(WireType::kVarint), a.value = static_cast<std::int64_t>(f.value);
      return;
    case kAttrUint32Val:
    case kAttrUint64Val:
      want(WireType::kVarint), a.value = f.value;
      return;
    case kAttrSint32Val:
      want(WireType::kVarint), a.value = static_cast<std::int32_t>(zigzag(f.value));
      return;
    case kAttrSint64Val:
      want(WireType::kVarint), a.value = zigzag(f.value);
      return;
    case kAttrFixed32Val:
      want(WireType::kFixed32), a.value = f.value;
      return;
    case kAttrFixed64Val:
      want(WireType::kFixed64), a.value = f.value;
      return;
    case kAttrSfixed32Val:
      want(WireType::kFixed32), a.value = static_cast<std::int32_t>(f.value);
      return;
    case kAttrSfixed64Val:
      want(WireType::kFixed64), a.value = static_cast<std::int64_t>(f.value);
      return;
    case kAttrBoolVal:
      want(WireType::kVarint), a.value = f.value != 0;
      return;
    case kAttrStringVal:
    case kAttrBytesVal:
      want(WireType::kLengthDelimited), a.value = std::string(f.bytes);
      return;
    default:
      return;  // doc_string (2), the list kinds (even numbers 4..32) and later fields: not used here
  }
}

Attribute decode_attr(std::string_view bytes, const std::string& what) {
  Attribute a;
  WireReader r(bytes, what);
  WireField f;
  while (r.next(f)) {
    if (f.number == field::kAttrName) {
      if (f.type != WireType::kLengthDelimited) wrong_type(what, f);
      a.name = std::string(f.bytes);
    } else {
      decode_attr_value(a, f, what);
    }
  }
  return a;
}

std::string encode_attr(const Attribute& a) {
  WireWriter w;
  w.bytes(field::kAttrName, a.name);
  // int32_val: negative values sign-extended to 64 bits, as protobuf writes them.
  if (const auto* i = std::get_if<std::int32_t>(&a.value))
    w.varint(field::kAttrInt32Val, static_cast<std::uint64_t>(static_cast<std::int64_t>(*i)));
  if (const auto* i = std::get_if<std::int64_t>(&a.value))
    w.varint(field::kAttrInt64Val, static_cast<std::uint64_t>(*i));
  if (const auto* u = std::get_if<std::uint64_t>(&a.value)) w.varint(field::kAttrUint64Val, *u);
  if (const auto* d = std::get_if<double>(&a.value)) w.fixed64(field::kAttrDoubleVal, std::bit_cast<std::uint64_t>(*d));
  if (const auto* b = std::get_if<bool>(&a.value)) w.varint(field::kAttrBoolVal, *b ? 1 : 0);
  if (const auto* s = std::get_if<std::string>(&a.value)) w.bytes(field::kAttrStringVal, *s);
  return w.data();
}

bool is_gzip(std::string_view data) {
  return data.size() >= 2 && static_cast<unsigned char>(data[0]) == 0x1f && static_cast<unsigned char>(data[1]) == 0x8b;
}

std::string read_all(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw ChakraError(path + ": cannot open for reading");
  std::ostringstream ss;
  ss << in.rdbuf();
  if (in.bad()) throw ChakraError(path + ": read error");
  return ss.str();
}

// A gzip-compressed trace (Chakra's protolib reads those too), decompressed; a damaged or
// truncated stream is a ChakraError.
std::string gunzip_file(const std::string& path) {
  gzFile f = gzopen(path.c_str(), "rb");
  if (f == nullptr) throw ChakraError(path + ": cannot open for reading");
  std::string out;
  std::vector<char> buf(1 << 16);
  int n = 0;
  while ((n = gzread(f, buf.data(), static_cast<unsigned>(buf.size()))) > 0)
    out.append(buf.data(), static_cast<std::size_t>(n));
  int err = Z_OK;
  std::string why = gzerror(f, &err);
  if (why.starts_with(path + ": ")) why.erase(0, path.size() + 2);  // zlib names the file itself
  gzclose(f);
  if (n < 0 || (err != Z_OK && err != Z_STREAM_END))
    throw ChakraError(path + ": gzip-compressed, damaged or truncated: " + why);
  return out;
}

}  // namespace

std::string_view node_type_name(NodeType t) {
  static constexpr std::string_view kNames[kNodeTypeCount] = {
      "INVALID_NODE",   "METADATA_NODE",  "MEM_LOAD_NODE", "MEM_STORE_NODE", "COMP_NODE",      "COMM_SEND_NODE",
      "COMM_RECV_NODE", "COMM_COLL_NODE", "STORAGE_NODE",  "BATCH_NODE",     "CHECKPOINT_NODE"};
  const auto i = static_cast<std::uint32_t>(t);
  return i < kNodeTypeCount ? kNames[i] : "unknown";
}

std::optional<std::int64_t> integer_value(const Attribute& a) {
  if (const auto* i = std::get_if<std::int32_t>(&a.value)) return *i;
  if (const auto* i = std::get_if<std::int64_t>(&a.value)) return *i;
  if (const auto* u = std::get_if<std::uint64_t>(&a.value)) return static_cast<std::int64_t>(*u);
  if (const auto* b = std::get_if<bool>(&a.value)) return *b ? 1 : 0;
  return std::nullopt;
}

const Attribute* find_attribute(const std::vector<Attribute>& attrs, std::string_view name) {
  for (const Attribute& a : attrs)
    if (a.name == name) return &a;
  return nullptr;
}

std::string encode(const GlobalMetadata& m) {
  WireWriter w;
  w.bytes(field::kMetaVersion, m.version);
  for (const Attribute& a : m.attrs) w.bytes(field::kMetaAttr, encode_attr(a));
  return w.data();
}

std::string encode(const Node& n) {
  WireWriter w;
  w.varint(field::kNodeId, n.id);
  w.bytes(field::kNodeName, n.name);
  w.varint(field::kNodeType, static_cast<std::uint64_t>(n.type));
  w.packed_varints(field::kNodeCtrlDeps, n.ctrl_deps);
  w.packed_varints(field::kNodeDataDeps, n.data_deps);
  if (n.has_start_time) w.varint(field::kNodeStartTime, n.start_time_micros);
  w.varint(field::kNodeDuration, n.duration_micros);
  for (const Attribute& a : n.attrs) w.bytes(field::kNodeAttr, encode_attr(a));
  return w.data();
}

GlobalMetadata decode_metadata(std::string_view bytes, const std::string& what) {
  GlobalMetadata m;
  WireReader r(bytes, what);
  WireField f;
  while (r.next(f)) {
    if (f.number != field::kMetaVersion && f.number != field::kMetaAttr) continue;  // a later field
    if (f.type != WireType::kLengthDelimited) wrong_type(what, f);
    if (f.number == field::kMetaVersion) m.version = std::string(f.bytes);
    if (f.number == field::kMetaAttr) m.attrs.push_back(decode_attr(f.bytes, what + " attribute"));
  }
  return m;
}

Node decode_node(std::string_view bytes, const std::string& what) {
  Node n;
  WireReader r(bytes, what);
  WireField f;
  const auto want = [&](WireType t) {
    if (f.type != t) wrong_type(what, f);
  };
  while (r.next(f)) {
    switch (f.number) {
      case field::kNodeId:
        want(WireType::kVarint), n.id = f.value;
        break;
      case field::kNodeName:
        want(WireType::kLengthDelimited), n.name = std::string(f.bytes);
        break;
      case field::kNodeType:
        want(WireType::kVarint);
        if (f.value >= kNodeTypeCount) throw ChakraError(what + ": node type " + std::to_string(f.value));
        n.type = static_cast<NodeType>(f.value);
        break;
      case field::kNodeCtrlDeps:
        r.repeated_varints(f, n.ctrl_deps);
        break;
      case field::kNodeDataDeps:
        r.repeated_varints(f, n.data_deps);
        break;
      case field::kNodeStartTime:
        want(WireType::kVarint), n.start_time_micros = f.value, n.has_start_time = true;
        break;
      case field::kNodeDuration:
        want(WireType::kVarint), n.duration_micros = f.value;
        break;
      case field::kNodeAttr:
        want(WireType::kLengthDelimited), n.attrs.push_back(decode_attr(f.bytes, what + " attribute"));
        break;
      default:
        break;  // inputs, outputs (IOInfo) and fields added later
    }
  }
  return n;
}

EtTrace parse_et(std::string_view data) {
  if (data.empty()) throw ChakraError("empty file, not a Chakra execution trace");
  if (is_gzip(data)) throw ChakraError("gzip-compressed: read it with read_et_file");
  std::vector<std::string_view> messages;
  try {
    messages = split_delimited(data);
  } catch (const ChakraError& e) {
    throw ChakraError(std::string("not a Chakra execution trace, or truncated: ") + e.what());
  }
  EtTrace t;
  try {
    t.metadata = decode_metadata(messages[0], "message 0 (GlobalMetadata)");
  } catch (const ChakraError& e) {
    throw ChakraError(std::string("not a Chakra execution trace: ") + e.what());
  }
  t.nodes.reserve(messages.size() - 1);
  for (std::size_t i = 1; i < messages.size(); ++i)
    t.nodes.push_back(decode_node(messages[i], "message " + std::to_string(i) + " (Node)"));
  return t;
}

EtTrace read_et_file(const std::string& path) {
  std::string data = read_all(path);
  if (is_gzip(data)) data = gunzip_file(path);
  try {
    return parse_et(data);
  } catch (const ChakraError& e) {
    throw ChakraError(path + ": " + e.what());
  }
}

void write_et_file(const std::string& path, const EtTrace& trace) {
  const std::string partial = path + ".partial";
  {
    std::ofstream out(partial, std::ios::binary | std::ios::trunc);
    if (!out) throw ChakraError(partial + ": cannot open for writing");
    std::string prefix;
    const auto put = [&](const std::string& message) {
      prefix.clear();
      WireWriter::append_varint(prefix, message.size());
      out.write(prefix.data(), static_cast<std::streamsize>(prefix.size()));
      out.write(message.data(), static_cast<std::streamsize>(message.size()));
    };
    put(encode(trace.metadata));
    for (const Node& n : trace.nodes) put(encode(n));
    out.close();
    if (!out) throw ChakraError(partial + ": write error");
  }
  std::error_code ec;
  std::filesystem::rename(partial, path, ec);
  if (ec) throw ChakraError(path + ": cannot rename " + partial + ": " + ec.message());
}

}  // namespace commscope::profiler::chakra
