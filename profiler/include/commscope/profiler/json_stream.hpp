#pragma once
// A pull tokenizer for JSON (RFC 8259) that reads its input in pieces: a plain or gzip-compressed
// file (zlib's gzread reads both) or a string. It holds one token at a time, never the document,
// so a trace of any size is read in constant memory. Structure is checked as it goes (commas,
// colons, brackets, literals, number grammar, string escapes, no trailing data); every problem is a
// JsonError naming the byte offset (in the decompressed text) where it was found.
//
//   JsonReader in = JsonReader::open("trace.json.gz");
//   in.next();                    // JsonToken::kObjectBegin
//   while (in.next() == JsonToken::kKey) {
//     if (in.text() == "traceEvents") ... else in.skip_value();
//   }

#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace commscope::profiler {

class JsonError : public std::runtime_error {
 public:
  JsonError(const std::string& what, std::uint64_t byte) : std::runtime_error(what), byte_(byte) {}
  // Offset in the (decompressed) input at which the problem was found.
  std::uint64_t byte() const noexcept { return byte_; }

 private:
  std::uint64_t byte_;
};

enum class JsonToken : std::uint8_t {
  kObjectBegin,
  kObjectEnd,
  kArrayBegin,
  kArrayEnd,
  kKey,     // an object member's name; text() holds it (unescaped); the value follows
  kString,  // text() holds it (unescaped, UTF-8)
  kNumber,  // text() holds it as written (valid JSON number grammar)
  kTrue,
  kFalse,
  kNull,
  kEnd,  // the input ended after one complete value
};

class JsonReader {
 public:
  // Reads a file, gzip-compressed or not. Throws JsonError (byte 0) when it cannot be opened.
  static JsonReader open(const std::string& path);
  // Reads `text` (tests, small inputs).
  static JsonReader from_string(std::string text);

  JsonReader(JsonReader&&) noexcept;
  JsonReader& operator=(JsonReader&&) noexcept;
  ~JsonReader();

  // The next token. Throws JsonError on malformed input or a read error.
  JsonToken next();
  // The key, string or number of the last token.
  std::string_view text() const noexcept { return text_; }
  // Skips one whole value: call it after kKey, or where a value is due (then the next token is
  // read and, if it opens a container, everything up to its end).
  void skip_value();
  // Containers open around the current position.
  std::size_t depth() const noexcept { return stack_.size(); }
  // Offset of the last token's first byte in the (decompressed) input.
  std::uint64_t token_byte() const noexcept { return token_byte_; }
  // Bytes consumed so far.
  std::uint64_t bytes_read() const noexcept { return base_ + pos_; }

  static constexpr std::size_t kMaxDepth = 512;
  static constexpr std::size_t kMaxString = std::size_t{64} << 20;

 private:
  struct Source;
  enum class State : std::uint8_t { kValue, kValueOrEnd, kKey, kKeyOrEnd, kCommaOrEnd, kDone };

  explicit JsonReader(std::unique_ptr<Source> source);
  bool fill();  // more input into buf_; false at the end
  int peek() {
    if (pos_ == end_ && !fill()) return -1;
    return static_cast<unsigned char>(buf_[pos_]);
  }
  int skip_space();
  [[noreturn]] void fail(const std::string& what) const;
  [[noreturn]] void fail_at(const std::string& what, std::uint64_t byte) const;
  JsonToken value(int c);
  void read_string();
  void read_number();
  void read_literal(std::string_view word);
  void after_value() { state_ = stack_.empty() ? State::kDone : State::kCommaOrEnd; }

  std::unique_ptr<Source> source_;
  std::vector<char> buf_;
  std::size_t pos_ = 0, end_ = 0;
  std::uint64_t base_ = 0;  // input offset of buf_[0]
  std::uint64_t token_byte_ = 0;
  std::string text_;
  std::vector<bool> stack_;  // true = object
  State state_ = State::kValue;
};

}  // namespace commscope::profiler
