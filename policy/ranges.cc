// The address classifier table.
//
// Table date: 2026-11-30 (ranges_table_date()). Compared row by row on that date with:
//   - IANA IPv4 Special-Purpose Address Registry
//     https://www.iana.org/assignments/iana-ipv4-special-registry/iana-ipv4-special-registry-1.csv
//   - IANA IPv6 Special-Purpose Address Registry
//     https://www.iana.org/assignments/iana-ipv6-special-registry/iana-ipv6-special-registry-1.csv
//   - IANA IPv6 Address Space (only 2000::/3 is Global Unicast)
//     https://www.iana.org/assignments/ipv6-address-space/ipv6-address-space-1.csv
//   - IANA IPv4 Multicast Address Space and IPv6 Multicast Address Space registries
//   - the cloud providers' documentation for their metadata and platform endpoints
// as summarised in docs/reference-behaviour.md#blocked-addresses.
//
// To refresh: download the registries above as CSV, compare them row by row with the tables below
// (every row, whatever its "Globally Reachable" column says, becomes a blocked row with its RFC
// and a one-line reason), update ranges_table_date(), and add probes for the first and last
// address of every new row and one address just outside each end to policy/ranges_probes_test.h.
// ranges_test.cc fails while a row has no probes. The registries gained four IPv6 rows in
// 2024-2025 (3fff::/20, 5f00::/16, 2001:1::3/128, 100:0:0:1::/64): refresh at least yearly.
//
// Deliberate over-blocks (docs/reference-behaviour.md#blocked-addresses): the rows the registries
// mark globally reachable (PCP and TURN anycast, AS112, AMT, ORCHIDv2, DETs, NAT64 64:ff9b::/96)
// are infrastructure, not destinations an agent needs, so they are refused too.
//
// IPv6 forms that embed an IPv4 address are refused outright, never decoded: IPv4-mapped
// ::ffff:0:0/96, IPv4-translated ::ffff:0:0:0/96, IPv4-compatible ::/96, NAT64 64:ff9b::/96 and
// 64:ff9b:1::/48, 6to4 2002::/16 and Teredo 2001::/32. Decoding the embedded address means a
// second parser whose reading must agree with every kernel and tunnel endpoint on where the IPv4
// bits sit (Teredo holds two, the client's with every bit inverted); each disagreement is a way
// around the IPv4 table.
// Refusing the whole form is simpler to audit and costs nothing on a dual-stack or IPv4 host.
// Cost: on an IPv6-only host behind DNS64 every name resolves into 64:ff9b::/96, so every
// corridor request there is refused with deny:blocked-address. Such a place needs an IPv4 path
// (or a future explicit opt-in that decodes NAT64 answers and judges the embedded IPv4 address).
#include "policy/ranges.h"

#include <array>
#include <optional>

#include "policy/crash.h"

namespace policy {
namespace {

constexpr std::string_view kOutsideGlobalUnicast = "outside 2000::/3";
constexpr std::string_view kAddressSpaceRegistry =
    "IANA IPv6 Address Space registry; RFC 4291 §2.4";
constexpr std::string_view kOutsideReason =
    "not global unicast: only 2000::/3 is allocated for public IPv6 unicast";

// A table row from text. The tables are fixed in this file, so a row that does not parse or has
// host bits set is a programming error caught at the first classification (and by the tests).
Range row(std::string_view prefix, std::uint8_t length, std::string_view name, std::string_view rfc,
          std::string_view reason, bool public_in_test_build = false) {
  std::optional<Address> address = parse_answer(prefix);
  if (!address) contract_broken();
  Range range{*address, length, name, rfc, reason, public_in_test_build};
  std::size_t bits = address->is_v4() ? 32 : 128;
  if (length > bits) contract_broken();
  for (std::size_t bit = length; bit < bits; ++bit) {
    if ((address->bytes()[bit / 8] >> (7 - bit % 8)) & 1u) contract_broken();
  }
  return range;
}

}  // namespace

std::span<const Range> ipv4_blocked_ranges() {
  static const auto table = std::to_array<Range>({
      row("0.0.0.0", 8, "This network", "RFC 791 §3.2",
          "source-only addresses, never a destination"),
      row("0.0.0.0", 32, "This host on this network", "RFC 1122 §3.2.1.3",
          "the unspecified address; connecting to it reaches the local host"),
      row("10.0.0.0", 8, "Private-Use", "RFC 1918",
          "private network, not reachable from the internet"),
      row("100.64.0.0", 10, "Shared Address Space", "RFC 6598",
          "carrier-grade NAT space, internal to a provider"),
      row("100.100.100.200", 32, "Alibaba Cloud metadata", "Alibaba Cloud ECS docs; RFC 6598 range",
          "instance metadata service: hands out credentials"),
      row("127.0.0.0", 8, "Loopback", "RFC 1122 §3.2.1.3", "the gatekeeper's own host"),
      row("168.63.129.16", 32, "Azure WireServer", "Microsoft Azure docs (virtual public IP)",
          "platform DNS, health and agent endpoint behind a public-range address"),
      row("169.254.0.0", 16, "Link Local", "RFC 3927", "link-local, never routed"),
      row("169.254.169.254", 32, "Cloud instance metadata",
          "AWS/GCP/Azure/OpenStack docs; RFC 3927 range",
          "instance metadata service: hands out credentials"),
      row("169.254.170.2", 32, "AWS ECS task credentials", "AWS ECS docs; RFC 3927 range",
          "container credentials endpoint"),
      row("169.254.170.23", 32, "AWS EKS Pod Identity", "AWS EKS docs; RFC 3927 range",
          "pod identity agent: hands out credentials"),
      row("172.16.0.0", 12, "Private-Use", "RFC 1918",
          "private network, not reachable from the internet"),
      row("192.0.0.0", 24, "IETF Protocol Assignments", "RFC 6890 §2.1",
          "reserved for protocol assignments, not globally reachable"),
      row("192.0.0.0", 29, "IPv4 Service Continuity Prefix", "RFC 7335",
          "DS-Lite/464XLAT internal addresses"),
      row("192.0.0.8", 32, "IPv4 dummy address", "RFC 7600", "placeholder source address"),
      row("192.0.0.9", 32, "Port Control Protocol Anycast", "RFC 7723",
          "anycast infrastructure (globally reachable; deliberate over-block)"),
      row("192.0.0.10", 32, "Traversal Using Relays around NAT Anycast", "RFC 8155",
          "anycast infrastructure (globally reachable; deliberate over-block)"),
      row("192.0.0.170", 32, "NAT64/DNS64 Discovery", "RFC 8880; RFC 7050 §2.2",
          "well-known name answer, not a host"),
      row("192.0.0.171", 32, "NAT64/DNS64 Discovery", "RFC 8880; RFC 7050 §2.2",
          "well-known name answer, not a host"),
      row("192.0.0.192", 32, "Oracle Cloud metadata", "Oracle Cloud docs; RFC 6890 range",
          "instance metadata service (classic)"),
      row("192.0.2.0", 24, "Documentation (TEST-NET-1)", "RFC 5737",
          "documentation only, never a real host"),
      row("192.31.196.0", 24, "AS112-v4", "RFC 7535",
          "reverse-DNS sink (globally reachable; deliberate over-block)"),
      row("192.52.193.0", 24, "Automatic Multicast Tunneling", "RFC 7450",
          "multicast relay (globally reachable; deliberate over-block)"),
      row("192.88.99.0", 24, "Deprecated (6to4 Relay Anycast)", "RFC 7526",
          "6to4 relays, deprecated; embeds IPv6 tunnels"),
      row("192.88.99.2", 32, "6a44-relay anycast address", "RFC 6751", "IPv6 tunnel relay"),
      row("192.168.0.0", 16, "Private-Use", "RFC 1918",
          "private network, not reachable from the internet"),
      row("192.175.48.0", 24, "Direct Delegation AS112 Service", "RFC 7534",
          "reverse-DNS sink (globally reachable; deliberate over-block)"),
      // The test build treats this row as public so tests can run upstreams here.
      row("198.18.0.0", 15, "Benchmarking", "RFC 2544 (cited correctly in RFC 6815 §4.2)",
          "network benchmarking, not globally reachable", true),
      row("198.51.100.0", 24, "Documentation (TEST-NET-2)", "RFC 5737",
          "documentation only, never a real host"),
      row("203.0.113.0", 24, "Documentation (TEST-NET-3)", "RFC 5737",
          "documentation only, never a real host"),
      row("224.0.0.0", 4, "Multicast", "RFC 5771", "multicast, not a unicast destination"),
      row("240.0.0.0", 4, "Reserved", "RFC 1112 §4", "reserved for future use, not routed"),
      row("255.255.255.255", 32, "Limited Broadcast", "RFC 8190; RFC 919 §7",
          "broadcast, not a host"),
  });
  return table;
}

std::span<const Range> ipv6_blocked_ranges() {
  static const auto table = std::to_array<Range>({
      // The allow-list rule as rows: the complement of 2000::/3.
      row("::", 3, kOutsideGlobalUnicast, kAddressSpaceRegistry, kOutsideReason),
      row("4000::", 2, kOutsideGlobalUnicast, kAddressSpaceRegistry, kOutsideReason),
      row("8000::", 1, kOutsideGlobalUnicast, kAddressSpaceRegistry, kOutsideReason),
      row("::", 128, "Unspecified Address", "RFC 4291 §2.5.2", "the unspecified address"),
      row("::1", 128, "Loopback Address", "RFC 4291 §2.5.3", "the gatekeeper's own host"),
      row("::", 96, "IPv4-compatible (deprecated)", "RFC 4291 §2.5.5.1",
          "embeds an IPv4 address: refused outright"),
      row("::ffff:0:0", 96, "IPv4-mapped Address", "RFC 4291 §2.5.5.2",
          "embeds an IPv4 address: refused outright"),
      row("::ffff:0:0:0", 96, "IPv4-translated Address", "RFC 2765 §2.1",
          "embeds an IPv4 address: refused outright"),
      row("64:ff9b::", 96, "IPv4-IPv6 Translation (NAT64 well-known)", "RFC 6052",
          "embeds an IPv4 address: refused outright (costs DNS64-only hosts all egress)"),
      row("64:ff9b:1::", 48, "IPv4-IPv6 Translation (local-use)", "RFC 8215",
          "embeds an IPv4 address: refused outright"),
      row("100::", 64, "Discard-Only Address Block", "RFC 6666", "black-hole prefix"),
      row("100:0:0:1::", 64, "Dummy IPv6 Prefix", "RFC 9780",
          "placeholder addresses, never routed"),
      row("2001::", 23, "IETF Protocol Assignments", "RFC 2928",
          "reserved for protocol assignments, not globally reachable"),
      row("2001::", 32, "TEREDO", "RFC 4380; RFC 8190", "embeds an IPv4 address: refused outright"),
      row("2001:1::1", 128, "Port Control Protocol Anycast", "RFC 7723",
          "anycast infrastructure (globally reachable; deliberate over-block)"),
      row("2001:1::2", 128, "Traversal Using Relays around NAT Anycast", "RFC 8155",
          "anycast infrastructure (globally reachable; deliberate over-block)"),
      row("2001:1::3", 128, "DNS-SD Service Registration Protocol Anycast", "RFC 9665",
          "anycast infrastructure (globally reachable; deliberate over-block)"),
      // The test build treats this row as public so tests can run upstreams here.
      row("2001:2::", 48, "Benchmarking", "RFC 5180 (Errata 1752)",
          "network benchmarking, not globally reachable", true),
      row("2001:3::", 32, "Automatic Multicast Tunneling", "RFC 7450",
          "multicast relay (globally reachable; deliberate over-block)"),
      row("2001:4:112::", 48, "AS112-v6", "RFC 7535",
          "reverse-DNS sink (globally reachable; deliberate over-block)"),
      row("2001:10::", 28, "Deprecated (previously ORCHID)", "RFC 4843",
          "cryptographic identifiers, not hosts"),
      row("2001:20::", 28, "ORCHIDv2", "RFC 7343",
          "cryptographic identifiers (globally reachable; deliberate over-block)"),
      row("2001:30::", 28, "Drone Remote ID Protocol Entity Tags (DETs) Prefix", "RFC 9374",
          "drone identifiers (globally reachable; deliberate over-block)"),
      row("2001:db8::", 32, "Documentation", "RFC 3849", "documentation only, never a real host"),
      row("2002::", 16, "6to4", "RFC 3056", "embeds an IPv4 address: refused outright"),
      row("2620:4f:8000::", 48, "Direct Delegation AS112 Service", "RFC 7534",
          "reverse-DNS sink (globally reachable; deliberate over-block)"),
      row("3fff::", 20, "Documentation", "RFC 9637", "documentation only, never a real host"),
      row("5f00::", 16, "Segment Routing (SRv6) SIDs", "RFC 9602",
          "segment identifiers inside one domain"),
      row("fc00::", 7, "Unique-Local", "RFC 4193; RFC 8190",
          "private network, not globally routed"),
      row("fd00:ec2::23", 128, "AWS EKS Pod Identity (IPv6)", "AWS EKS docs; RFC 4193 range",
          "pod identity agent: hands out credentials"),
      row("fd00:ec2::123", 128, "Amazon Time Sync (IPv6)", "AWS EC2 docs; RFC 4193 range",
          "platform time service"),
      row("fd00:ec2::253", 128, "Amazon Route 53 Resolver (IPv6)", "AWS VPC docs; RFC 4193 range",
          "platform DNS resolver"),
      row("fd00:ec2::254", 128, "AWS instance metadata (IPv6)", "AWS EC2 docs; RFC 4193 range",
          "instance metadata service: hands out credentials"),
      row("fd20:ce::254", 128, "GCP instance metadata (IPv6)", "Google Cloud docs; RFC 4193 range",
          "instance metadata service: hands out credentials"),
      row("fe80::", 10, "Link-Local Unicast", "RFC 4291 §2.5.6", "link-local, never routed"),
      row("fec0::", 10, "Site-Local (deprecated)", "RFC 3879", "deprecated private addressing"),
      row("ff00::", 8, "Multicast", "RFC 4291 §2.7", "multicast, not a unicast destination"),
  });
  return table;
}

std::string_view ranges_table_date() { return "2026-11-30"; }

bool unsafe_test_ranges_public() {
#ifdef GATEKEEPER_UNSAFE_TEST_RANGES_PUBLIC
  return true;
#else
  return false;
#endif
}

bool in_any_range(std::span<const Range> ranges, const Address& address) {
  for (const Range& r : ranges) {
    if (range_contains(r, address)) return true;
  }
  return false;
}

bool range_contains(const Range& range, const Address& address) {
  if (range.prefix.family() != address.family()) return false;
  const std::array<std::uint8_t, 16>& want = range.prefix.bytes();
  const std::array<std::uint8_t, 16>& have = address.bytes();
  std::size_t full_bytes = range.length / 8;
  for (std::size_t i = 0; i < full_bytes; ++i) {
    if (want[i] != have[i]) return false;
  }
  unsigned rest = range.length % 8;
  if (rest == 0) return true;
  auto mask = static_cast<std::uint8_t>(0xffu << (8 - rest));
  return (want[full_bytes] & mask) == (have[full_bytes] & mask);
}

Address range_last(const Range& range) {
  std::array<std::uint8_t, 16> bytes = range.prefix.bytes();
  std::size_t bits = range.prefix.is_v4() ? 32 : 128;
  for (std::size_t bit = range.length; bit < bits; ++bit) {
    bytes[bit / 8] = static_cast<std::uint8_t>(bytes[bit / 8] | (1u << (7 - bit % 8)));
  }
  if (range.prefix.is_v4()) return Address::v4_bytes({bytes[0], bytes[1], bytes[2], bytes[3]});
  return Address::v6(bytes);
}

Classification classify(const Address& address) {
  std::span<const Range> table = address.is_v4() ? ipv4_blocked_ranges() : ipv6_blocked_ranges();
  const Range* best = nullptr;
  for (const Range& range : table) {
    if (range_contains(range, address) && (best == nullptr || range.length > best->length)) {
      best = &range;
    }
  }
  if (best == nullptr) return Classification{false, nullptr};
#ifdef GATEKEEPER_UNSAFE_TEST_RANGES_PUBLIC
  // Only when the test row is the most specific match: 2001:2::/48 lies inside the blocked
  // 2001::/23, and skipping the row alone would leave that one deciding.
  if (best->public_in_test_build) return Classification{false, nullptr};
#endif
  return Classification{true, best};
}

std::optional<Range> parse_operator_range(std::string_view text) {
  const std::size_t slash = text.find('/');
  if (slash == std::string_view::npos) return std::nullopt;
  const std::optional<Address> prefix = parse_answer(text.substr(0, slash));
  const std::string_view digits = text.substr(slash + 1);
  if (!prefix || digits.empty() || digits.size() > 3 || (digits.size() > 1 && digits[0] == '0')) {
    return std::nullopt;
  }
  unsigned length = 0;
  for (char c : digits) {
    if (c < '0' || c > '9') return std::nullopt;
    length = length * 10 + static_cast<unsigned>(c - '0');
  }
  if (length > (prefix->is_v4() ? 32u : 128u)) return std::nullopt;
  Range range{*prefix, static_cast<std::uint8_t>(length), "Operator-Blocked", "serve --block",
              "the operator blocks it (e.g. the place's own host addresses)", false};
  // No host bit past the length: the range's first address must be the one written.
  const std::array<std::uint8_t, 16>& bytes = prefix->bytes();
  const std::size_t width = prefix->is_v4() ? 4 : 16;
  for (std::size_t bit = length; bit < width * 8; ++bit) {
    if ((bytes[bit / 8] >> (7 - bit % 8)) & 1u) return std::nullopt;
  }
  return range;
}

std::string range_text(const Range& range) {
  return range.prefix.to_string() + "/" + std::to_string(range.length);
}

std::span<const std::string_view> cloud_endpoint_rows() {
  // Names of rows above; ranges_test.cc proves each names exactly one /32 or /128 row.
  static constexpr std::array<std::string_view, 11> kRows = {
      "Cloud instance metadata",     "AWS ECS task credentials",       "AWS EKS Pod Identity",
      "Azure WireServer",            "Alibaba Cloud metadata",         "Oracle Cloud metadata",
      "AWS instance metadata (IPv6)", "AWS EKS Pod Identity (IPv6)",   "Amazon Time Sync (IPv6)",
      "Amazon Route 53 Resolver (IPv6)", "GCP instance metadata (IPv6)"};
  return kRows;
}

bool is_cloud_endpoint(const Address& address) {
  std::span<const Range> table = address.is_v4() ? ipv4_blocked_ranges() : ipv6_blocked_ranges();
  for (const Range& range : table) {
    if (!range_contains(range, address)) continue;
    for (std::string_view name : cloud_endpoint_rows()) {
      if (range.name == name) return true;
    }
  }
  return false;
}

bool is_private_network(const Address& address) {
  const Classification c = classify(address);
  if (!c.blocked || c.row == nullptr) return false;
  return c.row->name == "Private-Use" || c.row->name == "Shared Address Space" || c.row->name == "Unique-Local";
}

}  // namespace policy
