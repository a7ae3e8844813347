#include "policy/special_names.h"

#include <array>

namespace policy {
namespace {

#ifdef GATEKEEPER_UNSAFE_TEST_RANGES_PUBLIC
constexpr bool kTestBuild = true;
#else
constexpr bool kTestBuild = false;
#endif

// One row per suffix, compared with the IANA Special-Use Domain Names registry on 2026-12-01.
// .internal has no RFC: ICANN's board reserved it for private use (resolution 2024.07.29.06).
constexpr std::array<SpecialUseName, 12> kNames = {{
    {"localhost", "RFC 6761 §6.3", "loopback: resolvers answer 127.0.0.1 / ::1 for it and below it"},
    {"local", "RFC 6762", "multicast DNS: names of devices on the local link"},
    {"onion", "RFC 7686", "Tor onion services: must never reach the DNS"},
    {"invalid", "RFC 6761 §6.4", "guaranteed not to exist: an answer means a hostile resolver"},
    {"test", "RFC 6761 §6.2", "testing names, answered only by local resolvers", true},
    {"example", "RFC 6761 §6.5", "documentation names, answered only by local resolvers"},
    {"home.arpa", "RFC 8375", "the home network's own names (its router, its NAS)"},
    {"internal", "ICANN resolution 2024.07.29.06", "private-use zone: cloud and corporate internal names"},
    {"alt", "RFC 9476", "names of alternative, non-DNS namespaces"},
    {"in-addr.arpa", "RFC 1035 §3.5", "IPv4 reverse mapping: an address, not a host name"},
    {"ip6.arpa", "RFC 3596 §2.5", "IPv6 reverse mapping: an address, not a host name"},
    {"ipv4only.arpa", "RFC 8880 (RFC 7050)", "NAT64 discovery: answers fixed well-known addresses"},
}};

bool under(std::string_view name, std::string_view suffix) {
  if (name == suffix) return true;
  return name.size() > suffix.size() && name.ends_with(suffix) && name[name.size() - suffix.size() - 1] == '.';
}

}  // namespace

std::span<const SpecialUseName> special_use_names() { return kNames; }

const SpecialUseName* special_use_row(std::string_view normalised) {
  for (const SpecialUseName& row : kNames) {
    if (kTestBuild && row.allowed_in_test_build) continue;
    if (under(normalised, row.suffix)) return &row;
  }
  return nullptr;
}

}  // namespace policy
