#pragma once
// The protobuf wire format, as much of it as Chakra's execution traces use: varints, 64- and 32-bit
// fixed fields, length-delimited fields (strings, bytes, nested messages, packed repeated
// numbers), and a file as a stream of messages, each preceded by its length as a varint
// (Chakra's protoio/protolib encode_message). Written by hand so that the Chakra interop needs
// no protobuf library: https://protobuf.dev/programming-guides/encoding/.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "commscope/profiler/chakra.hpp"

namespace commscope::profiler::chakra {

// A file or message that is not what the wire format or Chakra's schema says: what() is one line.
using commscope::profiler::ChakraError;

enum class WireType : std::uint8_t { kVarint = 0, kFixed64 = 1, kLengthDelimited = 2, kFixed32 = 5 };

// Appends fields to a message's bytes. Zero values are written too (proto3 would leave them out;
// a reader sees the same message either way).
class WireWriter {
 public:
  void varint(std::uint32_t field, std::uint64_t value);
  void fixed64(std::uint32_t field, std::uint64_t bits);
  void bytes(std::uint32_t field, std::string_view data);  // also strings and nested messages
  void packed_varints(std::uint32_t field, const std::vector<std::uint64_t>& values);
  const std::string& data() const { return data_; }

  static void append_varint(std::string& out, std::uint64_t value);

 private:
  void tag(std::uint32_t field, WireType type);
  std::string data_;
};

// One field as read: its number, wire type, and either its integer value (varint, fixed) or its
// bytes (length-delimited; a view into the message being read).
struct WireField {
  std::uint32_t number = 0;
  WireType type = WireType::kVarint;
  std::uint64_t value = 0;
  std::string_view bytes;
};

// Reads a message's fields in order; ChakraError (naming `what`, the message being read) on a
// truncated field, an overlong varint, a wire type protobuf no longer uses (groups) or field 0.
class WireReader {
 public:
  WireReader(std::string_view data, std::string what) : data_(data), what_(std::move(what)) {}
  bool next(WireField& field);
  // The varints of a repeated field, packed (length-delimited) or one per field.
  void repeated_varints(const WireField& field, std::vector<std::uint64_t>& out) const;

  // Reads a varint at data[pos], advancing pos; false at a truncated or overlong one.
  static bool read_varint(std::string_view data, std::size_t& pos, std::uint64_t& value);

 private:
  std::string_view data_;
  std::size_t pos_ = 0;
  std::string what_;
};

// Splits a file's bytes into its length-delimited messages (what Chakra's decode_message reads
// one at a time). ChakraError, naming the message's index and byte offset, when a length runs
// past the end of the data.
std::vector<std::string_view> split_delimited(std::string_view data);

}  // namespace commscope::profiler::chakra
