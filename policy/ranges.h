// The address classifier: which DNS answers the corridor refuses.
//
// One table row per range, each with its RFC and a one-line reason, built as
// docs/reference-behaviour.md#blocked-addresses says. IPv4 is a block-list (every special
// purpose row, multicast, cloud endpoints); IPv6 is an allow-list: only 2000::/3 is public, minus
// the rows of the table. Every IPv6 form that embeds an IPv4 address is refused outright.
// ranges.cc says when the table was read from the registries and how to refresh it.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "policy/address.h"

namespace policy {

struct Range {
  Address prefix;           // first address of the range
  std::uint8_t length;      // prefix length in bits
  std::string_view name;    // e.g. "Private-Use"
  std::string_view rfc;     // e.g. "RFC 1918"
  std::string_view reason;  // one line: why the corridor refuses it
  // Rows that only the test build (compile switch GATEKEEPER_UNSAFE_TEST_RANGES_PUBLIC) treats as
  // public: 198.18.0.0/15 and 2001:2::/48, used for test upstreams. Never public in a release build.
  bool public_in_test_build;
};

// The date the table was last compared with the IANA registries (YYYY-MM-DD).
std::string_view ranges_table_date();

std::span<const Range> ipv4_blocked_ranges();
// Blocked rows inside and outside 2000::/3. Anything outside 2000::/3 is blocked even without a
// row (the allow-list rule), and reported with the row "outside 2000::/3".
std::span<const Range> ipv6_blocked_ranges();

struct Classification {
  bool blocked = true;          // zero value refuses
  const Range* row = nullptr;   // the most specific matching row, when blocked
};

// True when this binary was built with the unsafe test switch (198.18.0.0/15 and 2001:2::/48
// public). The release gatekeeper must answer false; a test proves it.
bool unsafe_test_ranges_public();

Classification classify(const Address& address);

// The cloud platform endpoints of the table (instance metadata, task credentials, WireServer, pod
// identity, time sync, the VPC resolver): single-address rows no window grant may reach, whatever
// the host said at POST /grants.
std::span<const std::string_view> cloud_endpoint_rows();  // the rows' names
bool is_cloud_endpoint(const Address& address);

// True when the most specific row for `address` is a private network a host may open a window
// grant to with unsafe_private_upstream: Private-Use (RFC 1918), Shared Address Space (RFC 6598)
// or Unique-Local (RFC 4193). Loopback, link-local, multicast, the embedded-IPv4 forms and every
// other row are not.
bool is_private_network(const Address& address);

// True when `address` lies within `range`.
bool range_contains(const Range& range, const Address& address);
// True when `address` lies within any of `ranges` (the operator's blocked list).
bool in_any_range(std::span<const Range> ranges, const Address& address);
// The last address of a range.
Address range_last(const Range& range);

// A range the operator blocks on top of the table (`serve --block`, `POST /blocked`): the place's
// own host addresses, a LAN the table calls public. "ADDRESS/LENGTH": a strict address
// (parse_answer), '/', a decimal length 0..32 or 0..128 without a leading zero; no host bit set
// past the length (so "10.0.0.1/8" is refused, not silently widened). nullopt otherwise.
inline constexpr std::size_t kMaxOperatorRanges = 64;
std::optional<Range> parse_operator_range(std::string_view text);
// The canonical text of a range: "203.0.113.0/24".
std::string range_text(const Range& range);

}  // namespace policy
