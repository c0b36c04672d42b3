// parse_size, the tools' sizes on their command lines (the bench's -b/-e and the doctor's --bytes):
// powers of 1024, and a std::invalid_argument naming the text where it is not a size.
#include "commscope/common/byte_size.hpp"

#include <gtest/gtest.h>

#include <stdexcept>
#include <string>

using commscope::parse_size;

TEST(ByteSize, PowersOf1024) {
  EXPECT_EQ(parse_size("8"), 8u);
  EXPECT_EQ(parse_size("64K"), 65536u);
  EXPECT_EQ(parse_size("64k"), 65536u);
  EXPECT_EQ(parse_size("1.5M"), 1572864u);
  EXPECT_EQ(parse_size("2G"), 2147483648u);
  EXPECT_EQ(parse_size("0"), 0u);
}

TEST(ByteSize, RefusalsNameTheText) {
  for (const char* bad : {"", "x", "4KB", "1T", "-1", "2e15"}) {
    try {
      parse_size(bad);
      ADD_FAILURE() << "accepted '" << bad << "'";
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find("bad size '" + std::string(bad) + "'"), std::string::npos) << e.what();
    }
  }
}
