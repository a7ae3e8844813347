// The ASCII classes at every edge: the bytes just outside each range, and 0x80-0xFF never in one.
#include "policy/ascii.h"

#include <gtest/gtest.h>

namespace policy::ascii {
namespace {

TEST(AsciiTest, ClassesEndAtTheirEdges) {
  EXPECT_TRUE(is_digit('0') && is_digit('9'));
  EXPECT_FALSE(is_digit('/') || is_digit(':'));
  EXPECT_TRUE(is_lower('a') && is_lower('z') && is_upper('A') && is_upper('Z'));
  EXPECT_FALSE(is_lower('`') || is_lower('{') || is_upper('@') || is_upper('['));
  EXPECT_TRUE(is_hex('f') && is_hex('F') && is_lower_hex('f'));
  EXPECT_FALSE(is_hex('g') || is_hex('G') || is_lower_hex('F'));
  EXPECT_EQ(hex_value('0'), 0);
  EXPECT_EQ(hex_value('9'), 9);
  EXPECT_EQ(hex_value('a'), 10);
  EXPECT_EQ(hex_value('F'), 15);
  EXPECT_EQ(hex_value('g'), -1);
  EXPECT_EQ(hex_value('/'), -1);
  EXPECT_EQ(to_lower('A'), 'a');
  EXPECT_EQ(to_lower('Z'), 'z');
  EXPECT_EQ(to_lower('@'), '@');
  EXPECT_EQ(to_lower('['), '[');
}

TEST(AsciiTest, BytesPast0x7FAreInNoClass) {
  for (int b = 0x80; b <= 0xff; ++b) {
    const char c = static_cast<char>(b);
    EXPECT_FALSE(is_alnum(c) || is_hex(c) || hex_value(c) != -1) << b;
    EXPECT_EQ(to_lower(c), c) << b;
  }
}

}  // namespace
}  // namespace policy::ascii
