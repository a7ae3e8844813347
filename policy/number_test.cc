#include "policy/number.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <limits>

namespace policy {
namespace {

TEST(ParseNumberTest, TheWholeTextIsTheNumber) {
  EXPECT_EQ(parse_number<int>("0"), 0);
  EXPECT_EQ(parse_number<int>("75"), 75);
  EXPECT_EQ(parse_number<long>("-1"), -1);
  EXPECT_EQ(parse_number<unsigned>("ff", 16), 255u);
  for (const char* bad : {"", " 1", "1 ", "+1", "0x1", "1a", "12\n", "--1", "1.5"}) {
    EXPECT_FALSE(parse_number<int>(bad).has_value()) << "\"" << bad << "\"";
  }
}

TEST(ParseNumberTest, AMinusIsReadOnlyIntoASignedType) {
  EXPECT_FALSE(parse_number<unsigned>("-1").has_value());
  EXPECT_FALSE(parse_number<std::uint64_t>("-0").has_value());
  EXPECT_EQ(parse_number<std::int64_t>("-0"), 0);
}

TEST(ParseNumberTest, AValueThatDoesNotFitIsNoValueAtTheLimitAndOnePast) {
  EXPECT_EQ(parse_number<std::uint16_t>("65535"), 65535);
  EXPECT_FALSE(parse_number<std::uint16_t>("65536").has_value());
  EXPECT_EQ(parse_number<std::int64_t>("9223372036854775807"),
            std::numeric_limits<std::int64_t>::max());
  EXPECT_FALSE(parse_number<std::int64_t>("9223372036854775808").has_value());
  EXPECT_EQ(parse_number<std::uint64_t>("18446744073709551615"),
            std::numeric_limits<std::uint64_t>::max());
  EXPECT_FALSE(parse_number<std::uint64_t>("18446744073709551616").has_value());
}

TEST(ParseNumberTest, AFloatingValueIsDecimalTextAndNothingElse) {
  EXPECT_EQ(parse_number<double>("1.5"), 1.5);
  EXPECT_EQ(parse_number<double>("-0.25"), -0.25);
  EXPECT_EQ(parse_number<double>("2e3"), 2000.0);
  EXPECT_EQ(parse_number<double>("7"), 7.0);
  for (const char* bad : {"", " 1.5", "1.5 ", "+1.5", "1.5ms", "inf", "nan", "-inf", "-nan",
                          "0x1p3", ".", "-", "1e999"}) {
    EXPECT_FALSE(parse_number<double>(bad).has_value()) << "\"" << bad << "\"";
  }
}

}  // namespace
}  // namespace policy
