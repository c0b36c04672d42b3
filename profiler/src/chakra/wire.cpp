#include "chakra/wire.hpp"

#include <string>

namespace commscope::profiler::chakra {

void WireWriter::append_varint(std::string& out, std::uint64_t value) {
  while (value >= 0x80) {
    out.push_back(static_cast<char>((value & 0x7f) | 0x80));
    value >>= 7;
  }
  out.push_back(static_cast<char>(value));
}

void WireWriter::tag(std::uint32_t field, WireType type) {
  append_varint(data_, (static_cast<std::uint64_t>(field) << 3) | static_cast<std::uint64_t>(type));
}

void WireWriter::varint(std::uint32_t field, std::uint64_t value) {
  tag(field, WireType::kVarint);
  append_varint(data_, value);
}

void WireWriter::fixed64(std::uint32_t field, std::uint64_t bits) {
  tag(field, WireType::kFixed64);
  for (int i = 0; i < 8; ++i) data_.push_back(static_cast<char>((bits >> (8 * i)) & 0xff));
}

void WireWriter::bytes(std::uint32_t field, std::string_view data) {
  tag(field, WireType::kLengthDelimited);
  append_varint(data_, data.size());
  data_.append(data);
}

void WireWriter::packed_varints(std::uint32_t field, const std::vector<std::uint64_t>& values) {
  if (values.empty()) return;  // proto3 writes nothing for an empty repeated field
  std::string packed;
  for (const std::uint64_t v : values) append_varint(packed, v);
  bytes(field, packed);
}

bool WireReader::read_varint(std::string_view data, std::size_t& pos, std::uint64_t& value) {
  value = 0;
  for (int shift = 0; shift < 64; shift += 7) {
    if (pos >= data.size()) return false;
    const auto b = static_cast<std::uint8_t>(data[pos++]);
    value |= static_cast<std::uint64_t>(b & 0x7f) << shift;
    if ((b & 0x80) == 0) return true;
  }
  return false;  // more than 10 bytes
}

bool WireReader::next(WireField& field) {
  if (pos_ >= data_.size()) return false;
  const std::size_t at = pos_;
  const auto bad = [&](const std::string& why) {
    return ChakraError(what_ + ": " + why + " at byte " + std::to_string(at) + " of " + std::to_string(data_.size()));
  };
  std::uint64_t key = 0;
  if (!read_varint(data_, pos_, key)) throw bad("truncated field key");
  field.number = static_cast<std::uint32_t>(key >> 3);
  if (field.number == 0 || (key >> 3) > 0x1fffffff) throw bad("field number " + std::to_string(key >> 3));
  field.bytes = {};
  field.value = 0;
  switch (key & 7) {
    case 0:
      field.type = WireType::kVarint;
      if (!read_varint(data_, pos_, field.value)) throw bad("truncated varint");
      return true;
    case 1:
    case 5: {
      const std::size_t n = (key & 7) == 1 ? 8 : 4;
      field.type = n == 8 ? WireType::kFixed64 : WireType::kFixed32;
      if (data_.size() - pos_ < n) throw bad("truncated fixed-width value");
      for (std::size_t i = 0; i < n; ++i)
        field.value |= static_cast<std::uint64_t>(static_cast<std::uint8_t>(data_[pos_ + i])) << (8 * i);
      pos_ += n;
      return true;
    }
    case 2: {
      field.type = WireType::kLengthDelimited;
      std::uint64_t len = 0;
      if (!read_varint(data_, pos_, len)) throw bad("truncated length");
      if (len > data_.size() - pos_) throw bad("length " + std::to_string(len) + " past the end");
      field.bytes = data_.substr(pos_, len);
      pos_ += len;
      return true;
    }
    default:
      throw bad("wire type " + std::to_string(key & 7) + " (not used by proto3)");
  }
}

void WireReader::repeated_varints(const WireField& field, std::vector<std::uint64_t>& out) const {
  if (field.type == WireType::kVarint) {
    out.push_back(field.value);
    return;
  }
  if (field.type != WireType::kLengthDelimited)
    throw ChakraError(what_ + ": field " + std::to_string(field.number) + " is not a repeated integer");
  std::size_t pos = 0;
  while (pos < field.bytes.size()) {
    std::uint64_t v = 0;
    if (!read_varint(field.bytes, pos, v))
      throw ChakraError(what_ + ": truncated packed field " + std::to_string(field.number));
    out.push_back(v);
  }
}

std::vector<std::string_view> split_delimited(std::string_view data) {
  std::vector<std::string_view> out;
  std::size_t pos = 0;
  while (pos < data.size()) {
    const std::size_t at = pos;
    std::uint64_t len = 0;
    if (!WireReader::read_varint(data, pos, len) || len > data.size() - pos)
      throw ChakraError("message " + std::to_string(out.size()) + " at byte " + std::to_string(at) +
                        " runs past the end of the file (" + std::to_string(data.size()) + " bytes): truncated?");
    out.push_back(data.substr(pos, len));
    pos += len;
  }
  return out;
}

}  // namespace commscope::profiler::chakra
