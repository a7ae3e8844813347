#include "policy/address.h"

#include <gtest/gtest.h>

#include <string>

namespace policy {
namespace {

using namespace std::string_literals;

std::string canonical(std::string_view text) {
  std::optional<Address> address = parse_answer(text);
  return address ? address->to_string() : "(refused)";
}

TEST(AddressTest, ParsesDottedQuadDecimal) {
  EXPECT_EQ(canonical("0.0.0.0"), "0.0.0.0");
  EXPECT_EQ(canonical("255.255.255.255"), "255.255.255.255");
  EXPECT_EQ(canonical("104.18.41.241"), "104.18.41.241");
  std::optional<Address> address = parse_ipv4_strict("10.1.2.3");
  ASSERT_TRUE(address.has_value());
  EXPECT_TRUE(address->is_v4());
  EXPECT_EQ(address->v4_host_order(), 0x0a010203u);
  EXPECT_EQ(address->bytes()[0], 10);
  EXPECT_EQ(address->bytes()[3], 3);
  EXPECT_EQ(address->bytes()[4], 0);
}

TEST(AddressTest, RefusesEveryOtherIpv4Spelling) {
  for (std::string text : {""s, "1.2.3"s, "1.2.3.4.5"s, "127.1"s, "2130706433"s, "0x7f.0.0.1"s,
                           "0x7f000001"s, "0177.0.0.1"s, "01.2.3.4"s, "1.2.3.04"s, "00.0.0.0"s,
                           "127.000.000.001"s, "256.0.0.0"s, "1.2.3.256"s, "1.2.3.1000"s,
                           " 1.2.3.4"s, "1.2.3.4 "s, "1.2.3.4."s, ".1.2.3.4"s, "1..2.3"s,
                           "1.2.3.-4"s, "+1.2.3.4"s, "1.2.3.4\n"s, "1.2.3.4/32"s, "1.2.3.4:443"s,
                           "1.2.3.4%eth0"s, "1.2.3.4\0"s, "1.2\0.3.4"s, "\uff11.2.3.4"s,
                           "1\u30022.3.4"s, "1.2.3.a"s, "a.b.c.d"s, "...."s, "1.2.3.4.."s}) {
    EXPECT_FALSE(parse_ipv4_strict(text).has_value()) << text;
  }
}

TEST(AddressTest, ParsesRfc4291TextForms) {
  EXPECT_EQ(canonical("::"), "::");
  EXPECT_EQ(canonical("::1"), "::1");
  EXPECT_EQ(canonical("1::"), "1::");
  EXPECT_EQ(canonical("2001:DB8::1"), "2001:db8::1");
  EXPECT_EQ(canonical("2001:0db8:0000:0000:0000:0000:0000:0001"), "2001:db8::1");
  EXPECT_EQ(canonical("1:2:3:4:5:6:7:8"), "1:2:3:4:5:6:7:8");
  EXPECT_EQ(canonical("1:2:3:4:5:6:7::"), "1:2:3:4:5:6:7:0");  // "::" may stand for one group
  EXPECT_EQ(canonical("::2:3:4:5:6:7:8"), "0:2:3:4:5:6:7:8");
  EXPECT_EQ(canonical("1:2:3:4:5:6:1.2.3.4"), "1:2:3:4:5:6:102:304");
  EXPECT_EQ(canonical("::ffff:1.2.3.4"), "::ffff:1.2.3.4");
  EXPECT_EQ(canonical("::13.1.68.3"), "::13.1.68.3");
  EXPECT_EQ(canonical("fe80::1"), "fe80::1");
  EXPECT_EQ(canonical("0000:0000:0000:0000:0000:0000:255.255.255.255"), "::255.255.255.255");
}

TEST(AddressTest, Ipv6BytesAreInNetworkOrder) {
  std::optional<Address> address = parse_ipv6_strict("2001:db8::ff01");
  ASSERT_TRUE(address.has_value());
  EXPECT_FALSE(address->is_v4());
  EXPECT_EQ(address->family(), Address::Family::kV6);
  std::array<std::uint8_t, 16> want{0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0,
                                    0,    0,    0,    0,    0, 0, 0xff, 0x01};
  EXPECT_EQ(address->bytes(), want);
}

TEST(AddressTest, RefusesMalformedIpv6Text) {
  for (std::string text :
       {""s, ":"s, ":::"s, "1:::2"s, "1::2::3"s, "::1::"s, "1:2:3:4:5:6:7:8:9"s, "1:2:3:4:5:6:7"s,
        "1:2:3:4:5:6:7:8::"s, "::1:2:3:4:5:6:7:8"s, "1:2:3:4::5:6:7:8"s, "12345::"s, "g::"s,
        "::g"s, "[::1]"s, "[::1]:443"s, "::1%eth0"s, "fe80::1%25eth0"s, "fe80::1%1"s, " ::1"s,
        "::1 "s, "::1\n"s, ":1::"s, "1::2:"s, ":1:2:3:4:5:6:7:8"s, "1:2:3:4:5:6:7:8:"s,
        "1:2:3:4:5:6:7:1.2.3.4"s, "::1.2.3"s, "::1.2.3.04"s, "::1.2.3.4:5"s, "1.2.3.4::"s,
        "::ffff:1.2.3.256"s, "1.2.3.4"s, "::ffff:0x7f.0.0.1"s, "::ffff:127.1"s, "::-1"s, "::+1"s,
        "0x::1"s, "::1\0"s, "::\0001"s, "\uff1a\uff1a1"s, "::1/128"s,
        "0000:0000:0000:0000:0000:0000:0000:00001"s,
        "00000:0000:0000:0000:0000:0000:255.255.255.255"s}) {
    EXPECT_FALSE(parse_ipv6_strict(text).has_value()) << text;
  }
}

TEST(AddressTest, PrintsRfc5952CanonicalText) {
  // RFC 5952 §4.1 no leading zeros, §4.2.1 longest run, §4.2.2 never one group, §4.2.3 first of
  // equal runs, §4.3 lower case.
  EXPECT_EQ(canonical("2001:0db8:0:0:1:0:0:1"), "2001:db8::1:0:0:1");
  EXPECT_EQ(canonical("2001:db8:0:1:1:1:1:1"), "2001:db8:0:1:1:1:1:1");
  EXPECT_EQ(canonical("2001:0:0:1:0:0:0:1"), "2001:0:0:1::1");
  EXPECT_EQ(canonical("ABCD:EF01::"), "abcd:ef01::");
  EXPECT_EQ(canonical("1:0:0:0:0:0:0:0"), "1::");
  EXPECT_EQ(canonical("0:0:0:0:0:0:0:0"), "::");
  EXPECT_EQ(canonical("0:1:0:1:0:1:0:1"), "0:1:0:1:0:1:0:1");
  EXPECT_EQ(canonical("2001:db8:0:0:0:0:2:1"), "2001:db8::2:1");
}

TEST(AddressTest, PrintsIpv4InsideIpv6AsDottedQuadOnlyForMappedAndCompatible) {
  // RFC 5952 §5.
  EXPECT_EQ(canonical("::ffff:0102:0304"), "::ffff:1.2.3.4");
  EXPECT_EQ(canonical("::ffff:0.0.0.0"), "::ffff:0.0.0.0");
  EXPECT_EQ(canonical("::0102:0304"), "::1.2.3.4");
  EXPECT_EQ(canonical("::0.0.0.2"), "::2");
  EXPECT_EQ(canonical("::ffff:0:0102:0304"), "::ffff:0:102:304");
  EXPECT_EQ(canonical("64:ff9b::1.2.3.4"), "64:ff9b::102:304");
}

TEST(AddressTest, BuildsFromHostOrderAndBytes) {
  EXPECT_EQ(Address::v4(0x7f000001u).to_string(), "127.0.0.1");
  EXPECT_EQ(Address::v4(0xffffffffu).to_string(), "255.255.255.255");
  EXPECT_EQ(Address::v4_bytes({192, 0, 2, 1}), Address::v4(0xc0000201u));
  EXPECT_EQ(Address::v4(0xc0000201u).v4_host_order(), 0xc0000201u);
}

TEST(AddressTest, EqualityRespectsFamily) {
  EXPECT_NE(*parse_answer("1.2.3.4"), *parse_answer("::ffff:1.2.3.4"));
  EXPECT_NE(*parse_answer("0.0.0.0"), *parse_answer("::"));
  EXPECT_EQ(*parse_answer("2001:db8::1"), *parse_answer("2001:0DB8:0:0::0:1"));
}

TEST(AddressTest, ParseAnswerTakesEitherFamilyAndNothingElse) {
  EXPECT_TRUE(parse_answer("93.184.215.14").has_value());
  EXPECT_TRUE(parse_answer("2606:2800:21f:cb07:6820:80da:af6b:8b2c").has_value());
  EXPECT_FALSE(parse_answer("localhost").has_value());
  EXPECT_FALSE(parse_answer("127.1").has_value());
  EXPECT_FALSE(parse_answer("[::1]").has_value());
  EXPECT_FALSE(parse_answer("").has_value());
}

TEST(AddressTest, CanonicalTextParsesBackToTheSameAddress) {
  for (std::string_view text : {"::", "::1", "::ffff:1.2.3.4", "::1.2.3.4", "2001:db8::1:0:0:1",
                                "fe80::1", "1::", "ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff",
                                "0.0.0.0", "255.255.255.255"}) {
    std::optional<Address> address = parse_answer(text);
    ASSERT_TRUE(address.has_value()) << text;
    EXPECT_EQ(address->to_string(), text);
    EXPECT_EQ(parse_answer(address->to_string()), address) << text;
  }
}

}  // namespace
}  // namespace policy
