#include "compat/json_writer.hpp"

#include <cmath>
#include <string>

#include "commscope/collectives/error.hpp"
#include "commscope/common/json_string.hpp"

namespace commscope::bench {

void JsonWriter::before_value() {
  if (pending_key_) {
    pending_key_ = false;
    return;
  }
  if (!stack_.empty()) {
    if (stack_.back().close == '}') throw InvalidArgument("JSON: a value inside an object needs a key");
    if (!stack_.back().empty) std::fputc(',', out_);
    stack_.back().empty = false;
  } else if (wrote_any_) {
    throw InvalidArgument("JSON: a second top-level value");
  }
  wrote_any_ = true;
}

JsonWriter& JsonWriter::begin_object() {
  before_value();
  std::fputc('{', out_);
  stack_.push_back({'}'});
  return *this;
}

JsonWriter& JsonWriter::begin_list() {
  before_value();
  std::fputc('[', out_);
  stack_.push_back({']'});
  return *this;
}

JsonWriter& JsonWriter::end_object() {
  if (stack_.empty() || stack_.back().close != '}' || pending_key_) throw InvalidArgument("JSON: no object to end");
  std::fputc('}', out_);
  stack_.pop_back();
  return *this;
}

JsonWriter& JsonWriter::end_list() {
  if (stack_.empty() || stack_.back().close != ']') throw InvalidArgument("JSON: no list to end");
  std::fputc(']', out_);
  stack_.pop_back();
  return *this;
}

JsonWriter& JsonWriter::key(std::string_view k) {
  if (stack_.empty() || stack_.back().close != '}' || pending_key_)
    throw InvalidArgument("JSON: a key outside an object");
  if (!stack_.back().empty) std::fputc(',', out_);
  stack_.back().empty = false;
  write_string(k);
  std::fputc(':', out_);
  pending_key_ = true;
  return *this;
}

JsonWriter& JsonWriter::value(std::string_view s) {
  before_value();
  write_string(s);
  return *this;
}

void JsonWriter::write_string(std::string_view s) {
  std::string quoted;
  quoted.reserve(s.size() + 2);
  json::append_string(quoted, s);
  std::fwrite(quoted.data(), 1, quoted.size(), out_);
}

JsonWriter& JsonWriter::value(double v) {
  if (std::isnan(v)) return value("nan");
  if (std::isinf(v)) return value(v > 0 ? "inf" : "-inf");
  before_value();
  std::fprintf(out_, "%.10g", v);
  return *this;
}

JsonWriter& JsonWriter::signed_integer(long long v) {
  before_value();
  std::fprintf(out_, "%lld", v);
  return *this;
}

JsonWriter& JsonWriter::unsigned_integer(unsigned long long v) {
  before_value();
  std::fprintf(out_, "%llu", v);
  return *this;
}

JsonWriter& JsonWriter::null() {
  before_value();
  std::fputs("null", out_);
  return *this;
}

void JsonWriter::close_all() {
  if (pending_key_) null();
  while (!stack_.empty()) {
    std::fputc(stack_.back().close, out_);
    stack_.pop_back();
  }
}

}  // namespace commscope::bench
