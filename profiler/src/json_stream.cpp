#include "commscope/profiler/json_stream.hpp"

#include <zlib.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <limits>
#include <utility>

namespace commscope::profiler {

// Where the bytes come from: a zlib stream (plain files are read through unchanged) or a string.
struct JsonReader::Source {
  gzFile gz = nullptr;
  std::string text;
  std::size_t text_pos = 0;

  ~Source() {
    if (gz != nullptr) gzclose(gz);
  }
  // Bytes read into `out` (0 at the end); throws a message on a read or decompression error.
  std::size_t read(char* out, std::size_t n, std::uint64_t at) {
    if (gz == nullptr) {
      const std::size_t k = std::min(n, text.size() - text_pos);
      std::memcpy(out, text.data() + text_pos, k);
      text_pos += k;
      return k;
    }
    const int got = gzread(gz, out, static_cast<unsigned>(std::min<std::size_t>(n, 1u << 30)));
    int err = Z_OK;
    const char* msg = gzerror(gz, &err);
    if (got < 0 || (err != Z_OK && err != Z_BUF_ERROR)) {
      const std::string why = err == Z_ERRNO ? std::strerror(errno) : (msg != nullptr ? msg : "read error");
      throw JsonError("cannot read: " + why, at);
    }
    // Z_BUF_ERROR: the gzip stream ended early (a truncated file). What was decompressed is
    // delivered first; the error is raised once nothing more comes.
    if (got == 0 && err == Z_BUF_ERROR) throw JsonError("truncated gzip stream", at);
    return static_cast<std::size_t>(got);
  }
};

JsonReader::JsonReader(std::unique_ptr<Source> source) : source_(std::move(source)), buf_(std::size_t{1} << 18) {}
JsonReader::JsonReader(JsonReader&&) noexcept = default;
JsonReader& JsonReader::operator=(JsonReader&&) noexcept = default;
JsonReader::~JsonReader() = default;

JsonReader JsonReader::open(const std::string& path) {
  auto source = std::make_unique<Source>();
  errno = 0;
  source->gz = gzopen(path.c_str(), "rb");
  if (source->gz == nullptr)
    throw JsonError(std::string("cannot open: ") + (errno != 0 ? std::strerror(errno) : "out of memory"), 0);
  gzbuffer(source->gz, 1u << 17);
  return JsonReader(std::move(source));
}

JsonReader JsonReader::from_string(std::string text) {
  auto source = std::make_unique<Source>();
  source->text = std::move(text);
  return JsonReader(std::move(source));
}

bool JsonReader::fill() {
  base_ += end_;
  pos_ = end_ = 0;
  end_ = source_->read(buf_.data(), buf_.size(), base_);
  return end_ > 0;
}

void JsonReader::fail(const std::string& what) const {
  fail_at(what, bytes_read());
}

void JsonReader::fail_at(const std::string& what, std::uint64_t byte) const {
  throw JsonError(what, byte);
}

int JsonReader::skip_space() {
  for (;;) {
    const int c = peek();
    if (c != ' ' && c != '\t' && c != '\n' && c != '\r') return c;
    ++pos_;
  }
}

namespace {

std::string describe(int c) {
  if (c < 0) return "the end of the input";
  if (c >= 0x20 && c < 0x7f) return std::string("'") + static_cast<char>(c) + "'";
  char hex[16];
  std::snprintf(hex, sizeof hex, "0x%02x", c);
  return std::string("byte ") + hex;
}

void append_utf8(std::string& out, std::uint32_t cp) {
  if (cp < 0x80) {
    out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    out += static_cast<char>(0xc0 | (cp >> 6));
    out += static_cast<char>(0x80 | (cp & 0x3f));
  } else if (cp < 0x10000) {
    out += static_cast<char>(0xe0 | (cp >> 12));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3f));
    out += static_cast<char>(0x80 | (cp & 0x3f));
  } else {
    out += static_cast<char>(0xf0 | (cp >> 18));
    out += static_cast<char>(0x80 | ((cp >> 12) & 0x3f));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3f));
    out += static_cast<char>(0x80 | (cp & 0x3f));
  }
}

int hex_value(int c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

}  // namespace

void JsonReader::read_string() {
  // At the opening quote.
  ++pos_;
  text_.clear();
  for (;;) {
    if (pos_ == end_ && !fill()) fail("unterminated string");
    // Copy the run of plain characters in the buffer at once.
    std::size_t run = pos_;
    while (run < end_) {
      const auto c = static_cast<unsigned char>(buf_[run]);
      if (c == '"' || c == '\\' || c < 0x20) break;
      ++run;
    }
    text_.append(buf_.data() + pos_, run - pos_);
    pos_ = run;
    if (text_.size() > kMaxString) fail("string longer than 64 MiB");
    if (pos_ == end_) continue;
    const auto c = static_cast<unsigned char>(buf_[pos_]);
    if (c == '"') {
      ++pos_;
      return;
    }
    if (c < 0x20) fail("control character " + describe(c) + " in a string");
    // A backslash escape.
    ++pos_;
    const int e = peek();
    if (e < 0) fail("unterminated string");
    ++pos_;
    switch (e) {
      case '"':
        text_ += '"';
        break;
      case '\\':
        text_ += '\\';
        break;
      case '/':
        text_ += '/';
        break;
      case 'b':
        text_ += '\b';
        break;
      case 'f':
        text_ += '\f';
        break;
      case 'n':
        text_ += '\n';
        break;
      case 'r':
        text_ += '\r';
        break;
      case 't':
        text_ += '\t';
        break;
      case 'u': {
        auto hex4 = [&]() -> std::uint32_t {
          std::uint32_t v = 0;
          for (int i = 0; i < 4; ++i) {
            const int h = hex_value(peek());
            if (h < 0) fail("bad \\u escape in a string");
            ++pos_;
            v = v * 16 + static_cast<std::uint32_t>(h);
          }
          return v;
        };
        std::uint32_t cp = hex4();
        if (cp >= 0xd800 && cp < 0xdc00) {
          // A high surrogate: a low one should follow; alone it becomes U+FFFD.
          if (peek() == '\\') {
            ++pos_;
            if (peek() != 'u') fail("bad escape after a \\u surrogate");
            ++pos_;
            const std::uint32_t lo = hex4();
            if (lo >= 0xdc00 && lo < 0xe000) {
              cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
            } else {
              append_utf8(text_, 0xfffd);
              cp = lo >= 0xd800 && lo < 0xe000 ? 0xfffd : lo;
            }
          } else {
            cp = 0xfffd;
          }
        } else if (cp >= 0xdc00 && cp < 0xe000) {
          cp = 0xfffd;
        }
        append_utf8(text_, cp);
        break;
      }
      default:
        fail("bad escape \\" + describe(e) + " in a string");
    }
  }
}

void JsonReader::read_number() {
  // -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?
  text_.clear();
  auto take = [&] {
    text_ += static_cast<char>(buf_[pos_]);
    ++pos_;
    if (text_.size() > 512) fail("number longer than 512 characters");
  };
  auto digits = [&](const char* what) {
    int c = peek();
    if (c < '0' || c > '9') fail("expected a digit " + std::string(what) + ", found " + describe(c));
    while (c >= '0' && c <= '9') {
      take();
      c = peek();
    }
  };
  if (peek() == '-') take();
  int c = peek();
  if (c == '0') {
    take();
  } else {
    digits("in a number");
  }
  c = peek();
  if (c == '.') {
    take();
    digits("after a decimal point");
    c = peek();
  }
  if (c == 'e' || c == 'E') {
    take();
    c = peek();
    if (c == '+' || c == '-') take();
    digits("in an exponent");
  }
}

void JsonReader::read_literal(std::string_view word) {
  for (const char w : word) {
    const int c = peek();
    if (c != w) fail("expected '" + std::string(word) + "', found " + describe(c));
    ++pos_;
  }
}

JsonToken JsonReader::value(int c) {
  switch (c) {
    case '{':
    case '[':
      if (stack_.size() >= kMaxDepth) fail("nesting deeper than 512 levels");
      ++pos_;
      stack_.push_back(c == '{');
      state_ = c == '{' ? State::kKeyOrEnd : State::kValueOrEnd;
      return c == '{' ? JsonToken::kObjectBegin : JsonToken::kArrayBegin;
    case '"':
      read_string();
      after_value();
      return JsonToken::kString;
    case 't':
      read_literal("true");
      after_value();
      return JsonToken::kTrue;
    case 'f':
      read_literal("false");
      after_value();
      return JsonToken::kFalse;
    case 'n':
      read_literal("null");
      after_value();
      return JsonToken::kNull;
    default:
      if (c == '-' || (c >= '0' && c <= '9')) {
        read_number();
        after_value();
        return JsonToken::kNumber;
      }
      fail("expected a value, found " + describe(c));
  }
}

JsonToken JsonReader::next() {
  for (;;) {
    const int c = skip_space();
    token_byte_ = bytes_read();
    switch (state_) {
      case State::kDone:
        if (c < 0) return JsonToken::kEnd;
        fail("unexpected " + describe(c) + " after the end of the document");
      case State::kValue:
        if (c < 0) fail("unexpected end of the input");
        return value(c);
      case State::kValueOrEnd:
        if (c == ']') {
          ++pos_;
          stack_.pop_back();
          after_value();
          return JsonToken::kArrayEnd;
        }
        if (c < 0) fail("unexpected end of the input");
        return value(c);
      case State::kKeyOrEnd:
      case State::kKey:
        if (c == '}' && state_ == State::kKeyOrEnd) {
          ++pos_;
          stack_.pop_back();
          after_value();
          return JsonToken::kObjectEnd;
        }
        if (c != '"') fail("expected a member name, found " + describe(c));
        read_string();
        if (skip_space() != ':') fail("expected ':' after a member name, found " + describe(peek()));
        ++pos_;
        state_ = State::kValue;
        return JsonToken::kKey;
      case State::kCommaOrEnd: {
        const bool object = stack_.back();
        if (c == ',') {
          ++pos_;
          state_ = object ? State::kKey : State::kValue;
          continue;
        }
        if (c == (object ? '}' : ']')) {
          ++pos_;
          stack_.pop_back();
          after_value();
          return object ? JsonToken::kObjectEnd : JsonToken::kArrayEnd;
        }
        fail(std::string("expected ',' or '") + (object ? '}' : ']') + "', found " + describe(c));
      }
    }
  }
}

void JsonReader::skip_value() {
  const std::size_t level = stack_.size();
  const JsonToken t = next();
  if (t == JsonToken::kObjectBegin || t == JsonToken::kArrayBegin) {
    while (stack_.size() > level) (void)next();
  } else if (t == JsonToken::kKey || t == JsonToken::kObjectEnd || t == JsonToken::kArrayEnd || t == JsonToken::kEnd) {
    fail_at("expected a value", token_byte_);
  }
}

}  // namespace commscope::profiler
