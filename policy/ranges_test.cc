// The address classifier in the release policy. Probe table: policy/ranges_probes_test.h.
#include "policy/ranges.h"

#include <gtest/gtest.h>

#include <optional>
#include <set>
#include <string>
#include <utility>

#include "policy/ranges_probes_test.h"

namespace policy {
namespace {

using policy_test::kIpv4Probes;
using policy_test::kIpv6Probes;
using policy_test::Probe;
using policy_test::Verdict;

Address parsed(std::string_view text) {
  std::optional<Address> address = parse_answer(text);
  if (!address) ADD_FAILURE() << "probe does not parse: " << text;
  return address.value_or(Address::v4(0));
}

bool blocked(std::string_view text) { return classify(parsed(text)).blocked; }

std::string_view row_name(std::string_view text) {
  Classification verdict = classify(parsed(text));
  return verdict.row == nullptr ? std::string_view("(none)") : verdict.row->name;
}

// One step from an address, with carry; nullopt past either end of the family's space.
std::optional<Address> step(const Address& address, int delta) {
  std::array<std::uint8_t, 16> bytes = address.bytes();
  std::size_t size = address.is_v4() ? 4 : 16;
  std::uint8_t wrap = delta > 0 ? 0xff : 0x00;
  std::size_t i = size;
  while (i > 0) {
    --i;
    bool carries = bytes[i] == wrap;
    bytes[i] = static_cast<std::uint8_t>(bytes[i] + delta);
    if (!carries) break;
    if (i == 0) return std::nullopt;
  }
  if (address.is_v4()) return Address::v4_bytes({bytes[0], bytes[1], bytes[2], bytes[3]});
  return Address::v6(bytes);
}

void expect_probes_in_release(std::span<const Probe> probes) {
  for (const Probe& probe : probes) {
    bool want_blocked = probe.verdict != Verdict::kAllowed;
    EXPECT_EQ(blocked(probe.address), want_blocked) << probe.address;
  }
}

void expect_every_row_probed(std::span<const Range> rows, std::span<const Probe> probes) {
  std::set<std::array<std::uint8_t, 16>> probed;
  for (const Probe& probe : probes) probed.insert(parsed(probe.address).bytes());
  for (const Range& range : rows) {
    std::string row = range.prefix.to_string() + "/" + std::to_string(range.length);
    EXPECT_TRUE(probed.contains(range.prefix.bytes()))
        << "no probe at the first address of " << row;
    EXPECT_TRUE(probed.contains(range_last(range).bytes()))
        << "no probe at the last address of " << row << ": " << range_last(range).to_string();
    if (std::optional<Address> before = step(range.prefix, -1)) {
      EXPECT_TRUE(probed.contains(before->bytes()))
          << "no probe just before " << row << ": " << before->to_string();
    }
    if (std::optional<Address> after = step(range_last(range), +1)) {
      EXPECT_TRUE(probed.contains(after->bytes()))
          << "no probe just after " << row << ": " << after->to_string();
    }
  }
}

void expect_rows_well_formed(std::span<const Range> rows, Address::Family family) {
  std::set<std::pair<std::array<std::uint8_t, 16>, int>> seen;
  for (const Range& range : rows) {
    std::string row = range.prefix.to_string() + "/" + std::to_string(range.length);
    EXPECT_EQ(range.prefix.family(), family) << row;
    EXPECT_LE(range.length, family == Address::Family::kV4 ? 32 : 128) << row;
    EXPECT_FALSE(range.name.empty()) << row;
    EXPECT_FALSE(range.rfc.empty()) << row;
    EXPECT_FALSE(range.reason.empty()) << row;
    EXPECT_TRUE(range_contains(range, range.prefix)) << row;
    EXPECT_TRUE(range_contains(range, range_last(range))) << row;
    EXPECT_TRUE(seen.insert({range.prefix.bytes(), range.length}).second) << "duplicate " << row;
  }
}

TEST(RangesTest, EveryIpv4ProbeHasItsExpectedVerdict) { expect_probes_in_release(kIpv4Probes); }

TEST(RangesTest, EveryIpv6ProbeHasItsExpectedVerdict) { expect_probes_in_release(kIpv6Probes); }

TEST(RangesTest, EveryIpv4RowIsProbedAtBothEndsAndJustOutside) {
  expect_every_row_probed(ipv4_blocked_ranges(), kIpv4Probes);
}

TEST(RangesTest, EveryIpv6RowIsProbedAtBothEndsAndJustOutside) {
  expect_every_row_probed(ipv6_blocked_ranges(), kIpv6Probes);
}

TEST(RangesTest, EveryRowCarriesNameRfcAndReason) {
  expect_rows_well_formed(ipv4_blocked_ranges(), Address::Family::kV4);
  expect_rows_well_formed(ipv6_blocked_ranges(), Address::Family::kV6);
}

TEST(RangesTest, OnlyTheBenchmarkingRowsArePublicInTheTestBuild) {
  std::set<std::string> rows;
  for (std::span<const Range> table : {ipv4_blocked_ranges(), ipv6_blocked_ranges()}) {
    for (const Range& range : table) {
      if (!range.public_in_test_build) continue;
      rows.insert(range.prefix.to_string() + "/" + std::to_string(range.length));
    }
  }
  EXPECT_EQ(rows, (std::set<std::string>{"198.18.0.0/15", "2001:2::/48"}));
}

TEST(RangesTest, ReleaseBuildRefusesBenchmarkingRanges) {
  EXPECT_FALSE(unsafe_test_ranges_public());
  EXPECT_TRUE(blocked("198.18.0.1"));
  EXPECT_TRUE(blocked("198.19.255.254"));
  EXPECT_TRUE(blocked("2001:2::1"));
  EXPECT_EQ(row_name("198.18.0.1"), "Benchmarking");
  EXPECT_EQ(row_name("2001:2::1"), "Benchmarking");
}

TEST(RangesTest, TableIsDated) { EXPECT_EQ(ranges_table_date(), "2026-11-30"); }

TEST(RangesTest, AllowsPeerEgressEdgeCasesJustOutsidePrivateRanges) {
  EXPECT_FALSE(blocked("100.63.255.255"));
  EXPECT_FALSE(blocked("100.128.0.0"));
  EXPECT_FALSE(blocked("172.15.255.255"));
  EXPECT_FALSE(blocked("172.32.0.0"));
  EXPECT_FALSE(blocked("2606:4700::1"));
}

TEST(RangesTest, AllowedAddressHasNoRow) {
  Classification verdict = classify(parsed("104.18.41.241"));
  EXPECT_FALSE(verdict.blocked);
  EXPECT_EQ(verdict.row, nullptr);
}

TEST(RangesTest, ZeroValueClassificationRefuses) { EXPECT_TRUE(Classification{}.blocked); }

TEST(RangesTest, RefusesEveryIpv6AddressOutside2000Slash3) {
  // Walk every first 16-bit group: only 2000..3fff is global unicast (IANA IPv6 address space).
  for (unsigned group = 0; group <= 0xffff; ++group) {
    std::array<std::uint8_t, 16> bytes{};
    bytes[0] = static_cast<std::uint8_t>(group >> 8);
    bytes[1] = static_cast<std::uint8_t>(group);
    bytes[15] = 1;
    if ((group & 0xe000) == 0x2000) continue;
    EXPECT_TRUE(classify(Address::v6(bytes)).blocked) << Address::v6(bytes).to_string();
  }
}

TEST(RangesTest, NamesOutsideGlobalUnicastAsTheReason) {
  EXPECT_EQ(row_name("64:ff9c::1"), "outside 2000::/3");
  EXPECT_EQ(row_name("4000::1"), "outside 2000::/3");
  EXPECT_EQ(row_name("8000::1"), "outside 2000::/3");
  EXPECT_EQ(row_name("1000::1"), "outside 2000::/3");
}

TEST(RangesTest, MostSpecificRowNamesTheReason) {
  EXPECT_EQ(row_name("169.254.169.254"), "Cloud instance metadata");
  EXPECT_EQ(row_name("169.254.1.1"), "Link Local");
  EXPECT_EQ(row_name("169.254.170.2"), "AWS ECS task credentials");
  EXPECT_EQ(row_name("169.254.170.23"), "AWS EKS Pod Identity");
  EXPECT_EQ(row_name("100.100.100.200"), "Alibaba Cloud metadata");
  EXPECT_EQ(row_name("100.100.100.201"), "Shared Address Space");
  EXPECT_EQ(row_name("192.0.0.192"), "Oracle Cloud metadata");
  EXPECT_EQ(row_name("192.0.0.9"), "Port Control Protocol Anycast");
  EXPECT_EQ(row_name("192.0.0.100"), "IETF Protocol Assignments");
  EXPECT_EQ(row_name("168.63.129.16"), "Azure WireServer");
  EXPECT_EQ(row_name("255.255.255.255"), "Limited Broadcast");
  EXPECT_EQ(row_name("255.255.255.254"), "Reserved");
  EXPECT_EQ(row_name("0.0.0.0"), "This host on this network");
  EXPECT_EQ(row_name("::"), "Unspecified Address");
  EXPECT_EQ(row_name("::1"), "Loopback Address");
  EXPECT_EQ(row_name("fd00:ec2::254"), "AWS instance metadata (IPv6)");
  EXPECT_EQ(row_name("fd20:ce::254"), "GCP instance metadata (IPv6)");
  EXPECT_EQ(row_name("fd00::1"), "Unique-Local");
  EXPECT_EQ(row_name("2001:1::3"), "DNS-SD Service Registration Protocol Anycast");
  EXPECT_EQ(row_name("5f00::1"), "Segment Routing (SRv6) SIDs");
}

TEST(RangesTest, RefusesEveryIpv6FormThatEmbedsAnIpv4Address) {
  // Public 8.8.8.8 inside each form: the form is refused, not decoded.
  EXPECT_EQ(row_name("::ffff:8.8.8.8"), "IPv4-mapped Address");
  EXPECT_EQ(row_name("::ffff:0:8.8.8.8"), "IPv4-translated Address");
  EXPECT_EQ(row_name("::8.8.8.8"), "IPv4-compatible (deprecated)");
  EXPECT_EQ(row_name("64:ff9b::8.8.8.8"), "IPv4-IPv6 Translation (NAT64 well-known)");
  EXPECT_EQ(row_name("64:ff9b:1::808:808"), "IPv4-IPv6 Translation (local-use)");
  EXPECT_EQ(row_name("2002:808:808::1"), "6to4");
  EXPECT_EQ(row_name("2001:0:4136:e378:8000:63bf:f7f7:f7f7"), "TEREDO");
  EXPECT_TRUE(blocked("::ffff:127.0.0.1"));
  EXPECT_TRUE(blocked("::ffff:7f00:1"));
  EXPECT_TRUE(blocked("64:ff9b::7f00:1"));
  EXPECT_TRUE(blocked("2002:7f00:1::1"));
}

// The reference's unit tests allowed some addresses this table refuses on purpose
// (docs/reference-behaviour.md#blocked-addresses): documentation ranges and embedded-IPv4 forms.
TEST(RangesTest, RefusesDocumentationAndEmbeddedFormsTheReferenceAllowed) {
  EXPECT_TRUE(blocked("203.0.113.7"));
  EXPECT_TRUE(blocked("198.51.100.7"));
  EXPECT_TRUE(blocked("192.0.2.1"));
  EXPECT_TRUE(blocked("192.88.99.1"));
  EXPECT_TRUE(blocked("2001:db8::1"));
  EXPECT_TRUE(blocked("::ffff:203.0.113.7"));
  EXPECT_TRUE(blocked("2002:cb00:7107::1"));
  EXPECT_TRUE(blocked("2001::1"));
  EXPECT_TRUE(blocked("64:ff9b:1::1"));
  EXPECT_TRUE(blocked("fec0::1"));
}

TEST(RangesTest, AllowsWhatTheReferenceAllowsOutsideSpecialRanges) {
  EXPECT_FALSE(blocked("104.18.41.241"));
  EXPECT_FALSE(blocked("172.32.0.1"));
  EXPECT_FALSE(blocked("172.15.255.255"));
  EXPECT_FALSE(blocked("100.63.255.255"));
  EXPECT_FALSE(blocked("2606:4700::6812:29f1"));
}

TEST(RangesTest, RangeContainsHonoursPartialBytes) {
  const Range* cgnat = classify(parsed("100.64.0.1")).row;
  ASSERT_NE(cgnat, nullptr);
  EXPECT_TRUE(range_contains(*cgnat, parsed("100.127.0.1")));
  EXPECT_FALSE(range_contains(*cgnat, parsed("100.128.0.1")));
  EXPECT_FALSE(range_contains(*cgnat, parsed("::ffff:100.64.0.1")));  // other family
  EXPECT_EQ(range_last(*cgnat).to_string(), "100.127.255.255");
}

TEST(RangesTest, RangeLastOfIpv6Row) {
  const Range* ula = classify(parsed("fc00::1")).row;
  ASSERT_NE(ula, nullptr);
  EXPECT_EQ(range_last(*ula).to_string(), "fdff:ffff:ffff:ffff:ffff:ffff:ffff:ffff");
}

TEST(RangesTest, EachCloudEndpointNameIsExactlyOneSingleAddressRow) {
  for (std::string_view name : cloud_endpoint_rows()) {
    int found = 0;
    for (auto table : {ipv4_blocked_ranges(), ipv6_blocked_ranges()}) {
      for (const Range& r : table) {
        if (r.name != name) continue;
        ++found;
        EXPECT_EQ(r.length, r.prefix.is_v4() ? 32 : 128) << name;
        EXPECT_TRUE(is_cloud_endpoint(r.prefix)) << name;
      }
    }
    EXPECT_EQ(found, 1) << name;
  }
  EXPECT_FALSE(is_cloud_endpoint(*parse_answer("169.254.169.253")));  // just outside the metadata /32
  EXPECT_FALSE(is_cloud_endpoint(*parse_answer("10.0.0.1")));
}

TEST(RangesTest, PrivateNetworksAreTheRfc1918Rfc6598AndUniqueLocalRowsOnly) {
  for (const char* a : {"10.1.2.3", "172.20.0.1", "192.168.1.1", "100.64.0.1", "fd12::1"}) {
    EXPECT_TRUE(is_private_network(*parse_answer(a))) << a;
  }
  for (const char* a : {"127.0.0.1", "169.254.169.254", "169.254.1.1", "100.100.100.200", "fd00:ec2::254",
                        "fe80::1", "::ffff:10.0.0.1", "93.184.215.14", "224.0.0.1"}) {
    EXPECT_FALSE(is_private_network(*parse_answer(a))) << a;
  }
}

}  // namespace
}  // namespace policy
