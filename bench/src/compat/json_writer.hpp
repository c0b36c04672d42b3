// A small streaming JSON writer: values go straight to a FILE as they come, so a long run's
// file grows line by line (nccl-tests' -J file). It keeps the stack of open objects and lists
// to place the commas; strings are escaped as the Chrome trace's are (commscope/common/
// json_string.hpp), so that the output is always valid JSON.
#pragma once

#include <concepts>
#include <cstdint>
#include <cstdio>
#include <string_view>
#include <type_traits>
#include <vector>

namespace commscope::bench {

class JsonWriter {
 public:
  explicit JsonWriter(std::FILE* out) : out_(out) {}

  JsonWriter& begin_object();
  JsonWriter& end_object();
  JsonWriter& begin_list();
  JsonWriter& end_list();
  // Inside an object: the key of the next value.
  JsonWriter& key(std::string_view k);

  JsonWriter& value(std::string_view s);
  JsonWriter& value(const char* s) { return value(std::string_view(s)); }
  // Finite numbers as numbers; NaN and infinities as the strings "nan", "inf", "-inf" (as
  // nccl-tests writes NaN).
  JsonWriter& value(double v);
  template <std::integral T>
  requires(!std::same_as<T, bool>) JsonWriter& value(T v) {
    if constexpr (std::is_signed_v<T>)
      return signed_integer(v);
    else
      return unsigned_integer(v);
  }
  // nccl-tests writes its booleans as the strings "true" and "false".
  JsonWriter& flag(bool b) { return value(b ? "true" : "false"); }
  JsonWriter& null();

  // Close whatever is open (a key without its value gets null).
  void close_all();
  bool complete() const { return stack_.empty() && wrote_any_; }

 private:
  JsonWriter& signed_integer(long long v);
  JsonWriter& unsigned_integer(unsigned long long v);
  void before_value();
  void write_string(std::string_view s);

  std::FILE* out_;
  struct Level {
    char close;  // '}' or ']'
    bool empty = true;
  };
  std::vector<Level> stack_;
  bool pending_key_ = false;  // a key was written; its value comes next
  bool wrote_any_ = false;
};

}  // namespace commscope::bench
