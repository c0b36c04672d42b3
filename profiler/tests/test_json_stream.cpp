// The streaming JSON tokenizer: tokens and their text, escapes, numbers, skip_value, the input
// split over buffer refills, gzip and plain files, and malformed input as JsonError with the byte
// offset of the problem.
#include <gtest/gtest.h>
#include <zlib.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "commscope/profiler/json_stream.hpp"

namespace cp = commscope::profiler;
using cp::JsonToken;

namespace {

// Every token as "kind:text".
std::vector<std::string> tokens(const std::string& text) {
  cp::JsonReader in = cp::JsonReader::from_string(text);
  std::vector<std::string> out;
  for (;;) {
    const JsonToken t = in.next();
    switch (t) {
      case JsonToken::kObjectBegin:
        out.push_back("{");
        break;
      case JsonToken::kObjectEnd:
        out.push_back("}");
        break;
      case JsonToken::kArrayBegin:
        out.push_back("[");
        break;
      case JsonToken::kArrayEnd:
        out.push_back("]");
        break;
      case JsonToken::kKey:
        out.push_back("key:" + std::string(in.text()));
        break;
      case JsonToken::kString:
        out.push_back("str:" + std::string(in.text()));
        break;
      case JsonToken::kNumber:
        out.push_back("num:" + std::string(in.text()));
        break;
      case JsonToken::kTrue:
        out.push_back("true");
        break;
      case JsonToken::kFalse:
        out.push_back("false");
        break;
      case JsonToken::kNull:
        out.push_back("null");
        break;
      case JsonToken::kEnd:
        return out;
    }
  }
}

// The byte offset of the JsonError the text raises, or -1.
long long error_byte(const std::string& text) {
  try {
    (void)tokens(text);
  } catch (const cp::JsonError& e) {
    return static_cast<long long>(e.byte());
  }
  return -1;
}

std::filesystem::path temp_dir() {
  const char* env = std::getenv("COMMSCOPE_TEST_TMP");
  auto dir = std::filesystem::path(env != nullptr ? env : std::filesystem::temp_directory_path().string()) / "json";
  std::filesystem::create_directories(dir);
  return dir;
}

}  // namespace

TEST(JsonStream, TokensOfADocument) {
  const auto t = tokens(R"( {"a": [1, -2.5e3, 0], "b": {"c": true, "d": false, "e": null}, "f": "x"} )");
  const std::vector<std::string> want = {"{",     "key:a", "[",     "num:1", "num:-2.5e3", "num:0", "]",
                                         "key:b", "{",     "key:c", "true",  "key:d",      "false", "key:e",
                                         "null",  "}",     "key:f", "str:x", "}"};
  EXPECT_EQ(t, want);
  EXPECT_EQ(tokens("[]"), (std::vector<std::string>{"[", "]"}));
  EXPECT_EQ(tokens("{}"), (std::vector<std::string>{"{", "}"}));
  EXPECT_EQ(tokens("7"), (std::vector<std::string>{"num:7"}));
}

TEST(JsonStream, StringEscapesBecomeUtf8) {
  EXPECT_EQ(tokens(R"("a\"b\\c\/d\b\f\n\r\t")"), (std::vector<std::string>{"str:a\"b\\c/d\b\f\n\r\t"}));
  EXPECT_EQ(tokens(R"("\u00e9\u20ac")"), (std::vector<std::string>{"str:\xc3\xa9\xe2\x82\xac"}));
  EXPECT_EQ(tokens(R"("\ud83d\ude00")"), (std::vector<std::string>{"str:\xf0\x9f\x98\x80"}));  // a surrogate pair
  EXPECT_EQ(tokens(R"("\ud83dx")"), (std::vector<std::string>{"str:\xef\xbf\xbdx"}));          // a lone one: U+FFFD
  EXPECT_EQ(tokens("\"caf\xc3\xa9\""), (std::vector<std::string>{"str:caf\xc3\xa9"}));         // raw UTF-8 kept
}

TEST(JsonStream, SkipValueSkipsWholeContainers) {
  cp::JsonReader in = cp::JsonReader::from_string(R"({"skip": {"x": [1, {"y": [[]]}], "z": "}"}, "keep": 3})");
  ASSERT_EQ(in.next(), JsonToken::kObjectBegin);
  ASSERT_EQ(in.next(), JsonToken::kKey);
  EXPECT_EQ(in.text(), "skip");
  in.skip_value();
  ASSERT_EQ(in.next(), JsonToken::kKey);
  EXPECT_EQ(in.text(), "keep");
  ASSERT_EQ(in.next(), JsonToken::kNumber);
  EXPECT_EQ(in.text(), "3");
  EXPECT_EQ(in.next(), JsonToken::kObjectEnd);
  EXPECT_EQ(in.next(), JsonToken::kEnd);
}

TEST(JsonStream, TokensSpanningBufferRefills) {
  // A string and a number longer than... the buffer holds 256 KiB: put tokens across its edges.
  std::string big(300000, 'x');
  std::string doc = "[\"" + big + "\", " + std::string(262140 - big.size() % 7, ' ') + "123.456, \"\\u00e9\"]";
  const auto t = tokens(doc);
  ASSERT_EQ(t.size(), 5u);
  EXPECT_EQ(t[1], "str:" + big);
  EXPECT_EQ(t[2], "num:123.456");
  EXPECT_EQ(t[3], "str:\xc3\xa9");
}

TEST(JsonStream, MalformedInputNamesTheByte) {
  EXPECT_EQ(error_byte("[1, 2,]"), 6);             // a trailing comma: ']' where a value is due
  EXPECT_EQ(error_byte(R"({"a" 1})"), 5);          // no colon
  EXPECT_EQ(error_byte(R"({"a": 1 "b": 2})"), 8);  // no comma
  EXPECT_EQ(error_byte("[tru]"), 4);
  EXPECT_EQ(error_byte("[01]"), 2);  // a leading zero: '1' after the number 0
  EXPECT_EQ(error_byte("[1.]"), 3);
  EXPECT_EQ(error_byte("[-]"), 2);
  EXPECT_EQ(error_byte("{\"a\": \"x\ny\"}"), 8);  // a raw control character in a string
  EXPECT_EQ(error_byte(R"(["\q"])"), 4);
  EXPECT_EQ(error_byte(R"(["\u12g4"])"), 6);
  EXPECT_EQ(error_byte("[1] 2"), 4);   // data after the document
  EXPECT_EQ(error_byte("[1, [2"), 6);  // truncated
  EXPECT_EQ(error_byte("\"abc"), 4);
  EXPECT_EQ(error_byte(""), 0);
  EXPECT_EQ(error_byte("{1: 2}"), 1);
  EXPECT_EQ(error_byte(std::string(600, '[')), 512);  // nesting deeper than kMaxDepth
  EXPECT_EQ(error_byte(std::string(500, '[') + std::string(500, ']')), -1);
}

TEST(JsonStream, ReadsGzipAndPlainFiles) {
  const std::string doc = R"({"traceEvents": [{"ph": "X", "ts": 1.5}], "n": 2})";
  const auto dir = temp_dir();
  const auto plain = dir / "t.json", packed = dir / "t.json.gz", cut = dir / "cut.json.gz";
  std::ofstream(plain) << doc;
  gzFile gz = gzopen(packed.c_str(), "wb");
  ASSERT_NE(gz, nullptr);
  ASSERT_EQ(gzwrite(gz, doc.data(), static_cast<unsigned>(doc.size())), static_cast<int>(doc.size()));
  gzclose(gz);
  for (const auto& p : {plain, packed}) {
    cp::JsonReader in = cp::JsonReader::open(p.string());
    int n = 0;
    while (in.next() != JsonToken::kEnd) ++n;
    EXPECT_EQ(n, 13) << p;
  }
  // A gzip stream cut short: what was decompressed comes first, then an error.
  std::ifstream src(packed, std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(src)), std::istreambuf_iterator<char>());
  std::ofstream(cut, std::ios::binary) << bytes.substr(0, bytes.size() - 12);
  cp::JsonReader in = cp::JsonReader::open(cut.string());
  EXPECT_THROW(
      {
        while (in.next() != JsonToken::kEnd) {
        }
      },
      cp::JsonError);
  EXPECT_THROW((void)cp::JsonReader::open((dir / "missing.json").string()), cp::JsonError);
}
