// Names the escape runner's test resolver answers for the twin's gatekeeper, and only for it
// (controller/escape_dns.h; `serve --dns-server` of the TEST-ONLY twin). Each is on the twin's
// allowlist, and each answers first with the test upstream (an address the test image calls
// public, so the gatekeeper would dial it) and then with one address of a blocked class: only the
// check the case names can refuse it, and with that check gone the gatekeeper dials the test
// upstream (a 200, never traffic to the blocked address). The release gatekeeper never resolves
// them (they are not on its allowlist). Shared by the binary (the cases) and the runner (the
// answers, and the journal and query checks that prove the check was reached).
#pragma once

namespace escape {

// Which check alone refuses the name, and so which the runner's journal check expects.
enum class ResolveCheck {
  kRangeTable,     // policy::classify: the blocked-range table
  kOwnAddress,     // the gatekeeper's own interface addresses
  kOperatorBlock,  // `serve --block`: the place's host addresses
};

// Which address the runner adds after the test upstream's: a literal, or one it knows at run time.
enum class ResolveExtra {
  kLiteral,
  kGatekeeperOwn,  // the twin gatekeeper's address on the test upstream's bridge (198.18/15)
  kHost,           // the host's address on that bridge (198.18/15; the twin gets it as --block)
};

struct ResolveCase {
  const char* id;
  const char* name;
  ResolveCheck check;
  ResolveExtra extra;
  const char* address;  // kLiteral: the blocked address (an IPv6 one goes in the AAAA answer)
  const char* why;
};

// A name only the blocked-range table refuses: its blocked answer is the literal `address`.
constexpr ResolveCase by_table(const char* id, const char* name, const char* address,
                               const char* why) {
  return {id, name, ResolveCheck::kRangeTable, ResolveExtra::kLiteral, address, why};
}

inline constexpr ResolveCase kResolveCases[] = {
    // 127.0.0.2, not .1: 127.0.0.1 is also one of the gatekeeper's own interface addresses, so
    // the own-address check would refuse it too and a missing table row could go unnoticed.
    by_table("corridor.resolves-loopback", "loopback.resolve.test", "127.0.0.2",
             "a name pointed at the gatekeeper's loopback (RFC 1122)"),
    by_table("corridor.resolves-loopback-high", "loopback-high.resolve.test", "127.255.255.254",
             "the last usable loopback address"),
    by_table("corridor.resolves-unspecified", "unspecified.resolve.test", "0.0.0.0",
             "0.0.0.0 dials loopback on Linux (RFC 1122 this-network)"),
    by_table("corridor.resolves-private-10", "private-10.resolve.test", "10.0.0.1",
             "RFC 1918 10/8"),
    by_table("corridor.resolves-private-172", "private-172.resolve.test", "172.16.0.1",
             "RFC 1918 172.16/12 (Docker's networks)"),
    by_table("corridor.resolves-private-192", "private-192.resolve.test", "192.168.0.1",
             "RFC 1918 192.168/16 (home routers)"),
    by_table("corridor.resolves-link-local", "link-local.resolve.test", "169.254.1.1",
             "RFC 3927 link-local"),
    by_table("corridor.resolves-metadata", "metadata.resolve.test", "169.254.169.254",
             "cloud metadata (IMDS) by a name the allowlist holds"),
    by_table("corridor.resolves-cgnat", "cgnat.resolve.test", "100.64.0.1",
             "RFC 6598 shared address space"),
    by_table("corridor.resolves-ipv6-loopback", "ipv6-loopback.resolve.test", "::1",
             "IPv6 loopback in the AAAA answer (RFC 4291)"),
    by_table("corridor.resolves-ipv4-mapped", "ipv4-mapped.resolve.test", "::ffff:127.0.0.1",
             "IPv4-mapped IPv6 of loopback (RFC 4291 2.5.5.2)"),
    by_table("corridor.resolves-ipv4-mapped-metadata", "ipv4-mapped-metadata.resolve.test",
             "::ffff:169.254.169.254", "IPv4-mapped IPv6 of the metadata service"),
    by_table("corridor.resolves-nat64", "nat64.resolve.test", "64:ff9b::a9fe:a9fe",
             "NAT64 embedding of the metadata service (RFC 6052)"),
    by_table("corridor.resolves-nat64-loopback", "nat64-loopback.resolve.test", "64:ff9b::7f00:1",
             "NAT64 embedding of loopback (RFC 6052)"),
    by_table("corridor.resolves-ipv6-unique-local", "ipv6-ula.resolve.test", "fd00::1",
             "RFC 4193 unique local"),
    by_table("corridor.resolves-ipv6-link-local", "ipv6-link-local.resolve.test", "fe80::1",
             "IPv6 link-local (RFC 4291)"),
    {"corridor.resolves-gatekeeper-own", "gatekeeper-own.resolve.test", ResolveCheck::kOwnAddress,
     ResolveExtra::kGatekeeperOwn, "",
     "the gatekeeper's own address, which the test image's table calls public"},
    {"corridor.resolves-host", "host.resolve.test", ResolveCheck::kOperatorBlock,
     ResolveExtra::kHost, "",
     "the place's host by an address the table calls public (refused by --block only)"},
};

// Answers the test upstream's address and 127.0.0.2 (which only the table refuses) in turn, one
// per A query, TTL 0: the gatekeeper must dial the address it checked (the test upstream's echo)
// or refuse; a dial of the loopback answer finds nothing on 443 (a 502).
inline constexpr const char* kRebindName = "rebind.resolve.test";
inline constexpr const char* kRebindCase = "corridor.rebinding-dials-checked-address";
inline constexpr int kRebindConnects = 4;

}  // namespace escape
