#include "policy/name.h"

#include <gtest/gtest.h>

#include <string>

namespace policy {
namespace {

using namespace std::string_literals;

std::string label(std::size_t length, char fill = 'a') { return std::string(length, fill); }

// A name of exactly `length` characters (length > 68): labels of 63 joined by dots, a shorter
// label, then ".com".
std::string name_of_length(std::size_t length) {
  std::string out;
  while (length - 4 - out.size() > kMaxLabelLength + 1) out += label(kMaxLabelLength, 'b') + ".";
  out += label(length - 4 - out.size(), 'b');
  return out + ".com";
}

TEST(NameTest, NormalisationLowerCasesAndDropsOneTrailingDot) {
  EXPECT_EQ(normalise_name("EXAMPLE.com."), "example.com");
  EXPECT_EQ(normalise_name("example.com.."), "example.com.");
  EXPECT_EQ(normalise_name("."), "");
  EXPECT_EQ(normalise_name(""), "");
  EXPECT_EQ(normalise_name(" Example.COM "), " example.com ");  // no trimming: judged later
  EXPECT_EQ(normalise_name("\u00c9XAMPLE.com"), "\u00c9xample.com");  // ASCII letters only
}

TEST(NameTest, AcceptsTheReferenceExamples) {
  for (std::string_view raw : {"example.com", "anything.example.org", "sub.domain.example.co.uk",
                               "a.io", "xn--80ak6aa92e.com", "registry-1.docker.io",
                               "api.anthropic.com", "1.1.1.1.example.com", "v2.example.com",
                               "EXAMPLE.com."}) {
    EXPECT_TRUE(checked_name(raw).has_value()) << raw;
  }
}

TEST(NameTest, AcceptsNamesThatOnlyLookNumeric) {
  for (std::string_view raw : {"1e100.net", "3com.com", "xn--bcher-kva.de", "0x7f.example.com",
                               "127.0.0.1.example.com", "0177.0.0.1.example.com",
                               "2130706433.example.com", "example.0xg", "example.0x7fz",
                               "example.1e3", "example.0b1", "example.o0", "a.x0", "ex--ample.com",
                               "123.a1"}) {
    EXPECT_TRUE(checked_name(raw).has_value()) << raw;
  }
}

TEST(NameTest, RefusesNumericLastLabelInEverySpelling) {
  for (std::string_view raw :
       {"127.1", "2130706433", "0177.0.0.1", "0x7f000001", "0X7F000001", "1.1.257",
        "0x1.0x1.0x1.0x1", "017700000001", "127.000.000.001", "1746020849", "0.0x0.0",
        "16843009", "4294967295", "0x01010101", "0xc0a80001", "1.16843009", "192.168.257",
        "example.0x", "example.0X", "example.0xff", "example.0XFF", "example.0o", "example.0o17",
        "example.0O17", "example.123", "example.0", "a.b.c.00", "1.0o1"}) {
    EXPECT_FALSE(checked_name(raw).has_value()) << raw;
  }
}

TEST(NameTest, RefusesSingleLabelNames) {
  for (std::string_view raw :
       {"localhost", "localhost.", "metadata", "instance-data", "com", "a"}) {
    EXPECT_FALSE(checked_name(raw).has_value()) << raw;
  }
}

TEST(NameTest, RefusesEmptyLabels) {
  for (std::string_view raw : {"", ".", "..", ".example.com", "example..com", "example.com..",
                               "..com", "example.", "a..b.c"}) {
    EXPECT_FALSE(checked_name(raw).has_value()) << raw;
  }
}

TEST(NameTest, RefusesHyphenAtEitherEndOfALabel) {
  for (std::string_view raw : {"-example.com", "example-.com", "example.-com", "example.com-",
                               "a.-.com", "xn--.com", "-.com"}) {
    EXPECT_FALSE(checked_name(raw).has_value()) << raw;
  }
}

TEST(NameTest, RefusesCharactersOutsideLettersDigitsAndHyphen) {
  for (std::string raw : {"exa_mple.com"s, "exam ple.com"s, "example.com "s, " example.com"s,
                          "exa\tmple.com"s, "example.com\r\n"s, "exa\0mple.com"s,
                          "*.example.com"s, "user@example.com"s, "example.com/x"s,
                          "example.com:443"s, "[example.com]"s, "exa%41mple.com"s,
                          "ex\xc3\xa9mple.com"s, "auth.openai.com\u3002"s, "auth.openai\uff0ecom"s,
                          "auth\uff61openai.com"s, "\u2460.example.com"s, "\xff.example.com"s}) {
    EXPECT_FALSE(checked_name(raw).has_value()) << raw;
  }
}

TEST(NameTest, IsNameExpectsNormalisedInput) {
  EXPECT_FALSE(is_name("Example.com"));
  EXPECT_FALSE(is_name("example.com."));
  EXPECT_TRUE(is_name("example.com"));
}

TEST(NameTest, LabelLengthLimitIsSixtyThree) {
  EXPECT_TRUE(checked_name(label(kMaxLabelLength) + ".com").has_value());
  EXPECT_FALSE(checked_name(label(kMaxLabelLength + 1) + ".com").has_value());
  EXPECT_TRUE(checked_name("example." + label(kMaxLabelLength)).has_value());
  EXPECT_FALSE(checked_name("example." + label(kMaxLabelLength + 1)).has_value());
}

TEST(NameTest, NameLengthLimitIsTwoHundredFiftyThree) {
  std::string longest = name_of_length(kMaxNameLength);
  ASSERT_EQ(longest.size(), kMaxNameLength);
  EXPECT_TRUE(checked_name(longest).has_value());
  EXPECT_TRUE(checked_name(longest + ".").has_value());  // the trailing dot does not count
  std::string too_long = name_of_length(kMaxNameLength + 1);
  ASSERT_EQ(too_long.size(), kMaxNameLength + 1);
  EXPECT_FALSE(checked_name(too_long).has_value());
  EXPECT_FALSE(checked_name(too_long + ".").has_value());
}

TEST(NameTest, CheckedNameReturnsTheNormalisedName) {
  EXPECT_EQ(checked_name("API.Anthropic.COM."), "api.anthropic.com");
  EXPECT_EQ(checked_name("xn--BCHER-kva.DE"), "xn--bcher-kva.de");
}

}  // namespace
}  // namespace policy
