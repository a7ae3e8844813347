#include "tests/support/socket_io.h"

#include <gtest/gtest.h>

namespace gk_test {
namespace {

TEST(DecimalWordTest, TheFirstWordIsTheNumber) {
  EXPECT_EQ(decimal_word("200 OK\r\n"), 200);
  EXPECT_EQ(decimal_word("101\r\n"), 101);
  EXPECT_EQ(decimal_word("40123 window=127.0.0.1:40124"), 40123);
  EXPECT_EQ(decimal_word("0"), 0);
}

// The old reader took the digits a word starts with: "2x0" was status 2, "-1" a port.
TEST(DecimalWordTest, AWordThatIsNotWhollyADecimalNumberIsNone) {
  for (const char* bad :
       {"", " 200 OK", "2x0 OK", "-1 OK", "+200 OK", "0x1f", "2147483648 OK", "200OK", "\r\n"}) {
    EXPECT_EQ(decimal_word(bad), -1) << "'" << bad << "'";
  }
}

}  // namespace
}  // namespace gk_test
