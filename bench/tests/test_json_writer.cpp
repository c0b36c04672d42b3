// The JSON writer: nesting, escapes, and misuse refused.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstdio>

#include "commscope/collectives/error.hpp"
#include "compat/json_writer.hpp"

using namespace commscope;
using namespace commscope::bench;

TEST(Json, WriterNestsEscapesAndRefusesMisuse) {
  char buf[512] = {};
  std::FILE* f = fmemopen(buf, sizeof buf - 1, "w");
  ASSERT_NE(f, nullptr);
  JsonWriter j(f);
  j.begin_object();
  j.key("a").begin_list().value(1).value(-2).value(std::uint64_t{18446744073709551615u}).value("x\"y\n\x01");
  j.null().value(std::nan("")).value(0.5).end_list();
  j.key("b").begin_object().key("c").flag(true).end_object();
  EXPECT_THROW(j.value(3), InvalidArgument);  // an object's value needs a key
  EXPECT_THROW(j.end_list(), InvalidArgument);
  j.key("open").begin_list().value("left open");
  j.close_all();
  EXPECT_TRUE(j.complete());
  std::fclose(f);
  EXPECT_STREQ(buf,
               "{\"a\":[1,-2,18446744073709551615,\"x\\\"y\\n\\u0001\",null,\"nan\",0.5],\"b\":{\"c\":\"true\"},"
               "\"open\":[\"left open\"]}");
}

// Text that is not ASCII (a host or GPU name, a command line): well-formed UTF-8 as it is, a byte
// that is not UTF-8 as U+FFFD, as the Chrome trace writes them. The writer once wrote each
// byte from 0x7f up as \u00XX, which JSON reads as another character ("é", C3 A9, read back as
// "Ã©").
TEST(Json, WriterKeepsUtf8AndReplacesBadBytes) {
  char buf[256] = {};
  std::FILE* f = fmemopen(buf, sizeof buf - 1, "w");
  ASSERT_NE(f, nullptr);
  JsonWriter j(f);
  j.begin_list()
      .value("caf\xC3\xA9 \xE2\x82\xAC")
      .value(
          "a\xFF"
          "b\xC3")
      .value("\r\b\f\x7f")
      .end_list();
  std::fclose(f);
  EXPECT_STREQ(buf,
               "[\"caf\xC3\xA9 \xE2\x82\xAC\",\"a\xEF\xBF\xBD"
               "b\xEF\xBF\xBD\",\"\\r\\b\\f\x7f\"]");
}
