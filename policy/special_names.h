// Special-use domain names the resolver never sees (IANA "Special-Use Domain Names" registry,
// RFC 6761 §4-§6 and the RFCs of each row). A name that is one of these suffixes, or ends in
// "." plus one, is refused by name before any query, in both listeners and every mode: each row is
// answered by something other than the public DNS (the resolver's own loopback, mDNS on the LAN,
// Tor, the home router, the cloud's internal zone) or by nothing at all, so sending it to c-ares
// can only reach the inside or leak the name.
//
// The test build (GATEKEEPER_UNSAFE_TEST_RANGES_PUBLIC, like 198.18.0.0/15) keeps `.test`: the
// integration harness names its dnsmasq hosts *.test and the escape runner's upstream is
// upstream.test. The release build refuses it like every other row.
#pragma once

#include <span>
#include <string_view>

namespace policy {

struct SpecialUseName {
  std::string_view suffix;  // lower case, no leading or trailing dot
  std::string_view rfc;     // where it is reserved
  std::string_view reason;  // one line: why the gatekeeper never resolves it
  bool allowed_in_test_build = false;
};

std::span<const SpecialUseName> special_use_names();

// The row `normalised` (normalise_name's output) falls under, or nullptr. Rows the test build
// keeps are not returned by the test build.
const SpecialUseName* special_use_row(std::string_view normalised);

}  // namespace policy
