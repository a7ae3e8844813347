// Hand-written probes for the address classifier, shared by ranges_test.cc (release policy) and
// ranges_test_build_test.cc (test-build policy). Written from the registries
// (docs/reference-behaviour.md#blocked-addresses), not from ranges.cc: for every row, its first and
// last address and one address just outside each end, with the verdict expected there. An outside
// address that falls into another blocked row expects "blocked". ranges_test.cc fails when a row
// of the table has no probe at its ends, so a new row cannot land without its probes.
#pragma once

#include <array>
#include <string_view>

namespace policy_test {

enum class Verdict {
  kBlocked,
  kAllowed,
  // Blocked in the release build; public in the test build (198.18.0.0/15 and 2001:2::/48).
  kBlockedReleaseOnly,
};

struct Probe {
  std::string_view address;
  Verdict verdict;
};

inline constexpr Verdict B = Verdict::kBlocked;
inline constexpr Verdict A = Verdict::kAllowed;
inline constexpr Verdict T = Verdict::kBlockedReleaseOnly;

inline constexpr auto kIpv4Probes = std::to_array<Probe>({
    // 0.0.0.0/8 This network; 0.0.0.0/32 This host (nothing before 0.0.0.0)
    {"0.0.0.0", B}, {"0.0.0.1", B}, {"0.255.255.255", B}, {"1.0.0.0", A},
    // 10.0.0.0/8 Private-Use
    {"9.255.255.255", A}, {"10.0.0.0", B}, {"10.255.255.255", B}, {"11.0.0.0", A},
    // 100.64.0.0/10 Shared Address Space (smokescreen's "just outside CGNAT" cases)
    {"100.63.255.255", A}, {"100.64.0.0", B}, {"100.127.255.255", B}, {"100.128.0.0", A},
    // 100.100.100.200/32 Alibaba metadata, inside 100.64.0.0/10
    {"100.100.100.199", B}, {"100.100.100.200", B}, {"100.100.100.201", B},
    // 127.0.0.0/8 Loopback
    {"126.255.255.255", A}, {"127.0.0.0", B}, {"127.255.255.255", B}, {"128.0.0.0", A},
    // 168.63.129.16/32 Azure WireServer, a public-range address
    {"168.63.129.15", A}, {"168.63.129.16", B}, {"168.63.129.17", A},
    // 169.254.0.0/16 Link Local
    {"169.253.255.255", A}, {"169.254.0.0", B}, {"169.254.255.255", B}, {"169.255.0.0", A},
    // 169.254.169.254/32, 169.254.170.2/32, 169.254.170.23/32 metadata, inside 169.254.0.0/16
    {"169.254.169.253", B}, {"169.254.169.254", B}, {"169.254.169.255", B},
    {"169.254.170.1", B}, {"169.254.170.2", B}, {"169.254.170.3", B},
    {"169.254.170.22", B}, {"169.254.170.23", B}, {"169.254.170.24", B},
    // 172.16.0.0/12 Private-Use
    {"172.15.255.255", A}, {"172.16.0.0", B}, {"172.31.255.255", B}, {"172.32.0.0", A},
    // 192.0.0.0/24 IETF Protocol Assignments
    {"191.255.255.255", A}, {"192.0.0.0", B}, {"192.0.0.255", B}, {"192.0.1.0", A},
    // 192.0.0.0/29 Service Continuity; then the /32 rows inside 192.0.0.0/24
    {"192.0.0.7", B}, {"192.0.0.8", B}, {"192.0.0.9", B}, {"192.0.0.10", B}, {"192.0.0.11", B},
    {"192.0.0.169", B}, {"192.0.0.170", B}, {"192.0.0.171", B}, {"192.0.0.172", B},
    {"192.0.0.191", B}, {"192.0.0.192", B}, {"192.0.0.193", B},
    // 192.0.2.0/24 TEST-NET-1
    {"192.0.1.255", A}, {"192.0.2.0", B}, {"192.0.2.255", B}, {"192.0.3.0", A},
    // 192.31.196.0/24 AS112-v4
    {"192.31.195.255", A}, {"192.31.196.0", B}, {"192.31.196.255", B}, {"192.31.197.0", A},
    // 192.52.193.0/24 AMT
    {"192.52.192.255", A}, {"192.52.193.0", B}, {"192.52.193.255", B}, {"192.52.194.0", A},
    // 192.88.99.0/24 deprecated 6to4 relay anycast; 192.88.99.2/32 6a44 relay inside it
    {"192.88.98.255", A}, {"192.88.99.0", B}, {"192.88.99.255", B}, {"192.88.100.0", A},
    {"192.88.99.1", B}, {"192.88.99.2", B}, {"192.88.99.3", B},
    // 192.168.0.0/16 Private-Use
    {"192.167.255.255", A}, {"192.168.0.0", B}, {"192.168.255.255", B}, {"192.169.0.0", A},
    // 192.175.48.0/24 Direct Delegation AS112
    {"192.175.47.255", A}, {"192.175.48.0", B}, {"192.175.48.255", B}, {"192.175.49.0", A},
    // 198.18.0.0/15 Benchmarking (public only in the test build)
    {"198.17.255.255", A}, {"198.18.0.0", T}, {"198.18.0.1", T}, {"198.19.255.255", T},
    {"198.20.0.0", A},
    // 198.51.100.0/24 TEST-NET-2
    {"198.51.99.255", A}, {"198.51.100.0", B}, {"198.51.100.255", B}, {"198.51.101.0", A},
    // 203.0.113.0/24 TEST-NET-3
    {"203.0.112.255", A}, {"203.0.113.0", B}, {"203.0.113.255", B}, {"203.0.114.0", A},
    // 224.0.0.0/4 Multicast
    {"223.255.255.255", A}, {"224.0.0.0", B}, {"239.255.255.255", B},
    // 240.0.0.0/4 Reserved; 255.255.255.255/32 Limited Broadcast (nothing after it)
    {"240.0.0.0", B}, {"255.255.255.254", B}, {"255.255.255.255", B},
    // Public addresses
    {"1.1.1.1", A}, {"8.8.8.8", A}, {"104.18.41.241", A}, {"172.32.0.1", A},
});

inline constexpr auto kIpv6Probes = std::to_array<Probe>({
    // ::/3, outside 2000::/3 (nothing before ::); ::/128, ::1/128; ::/96 IPv4-compatible
    {"::", B}, {"::1", B}, {"::2", B}, {"::ffff:ffff", B}, {"::1:0:0", B},
    {"1fff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", B}, {"2000::", A},
    // ::ffff:0:0/96 IPv4-mapped
    {"::fffe:ffff:ffff", B}, {"::ffff:0.0.0.0", B}, {"::ffff:255.255.255.255", B}, {"::1:0:0:0", B},
    // ::ffff:0:0:0/96 IPv4-translated (RFC 2765)
    {"::fffe:ffff:ffff:ffff", B}, {"::ffff:0:0:0", B}, {"::ffff:0:ffff:ffff", B},
    {"::ffff:1:0:0", B},
    // 64:ff9b::/96 NAT64 well-known
    {"64:ff9a:ffff:ffff:ffff:ffff:ffff:ffff", B}, {"64:ff9b::", B}, {"64:ff9b::ffff:ffff", B},
    {"64:ff9b::1:0:0", B}, {"64:ff9c::1", B},
    // 64:ff9b:1::/48 NAT64 local-use
    {"64:ff9b:0:ffff:ffff:ffff:ffff:ffff", B}, {"64:ff9b:1::", B},
    {"64:ff9b:1:ffff:ffff:ffff:ffff:ffff", B}, {"64:ff9b:2::", B},
    // 100::/64 Discard-Only; 100:0:0:1::/64 Dummy prefix
    {"ff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", B}, {"100::", B}, {"100::ffff:ffff:ffff:ffff", B},
    {"100:0:0:1::", B}, {"100:0:0:1:ffff:ffff:ffff:ffff", B}, {"100:0:0:2::", B},
    // 2001::/23 IETF Protocol Assignments; 2001::/32 Teredo
    {"2000:ffff:ffff:ffff:ffff:ffff:ffff:ffff", A}, {"2001::", B},
    {"2001:0:ffff:ffff:ffff:ffff:ffff:ffff", B}, {"2001:1::", B},
    {"2001:1ff:ffff:ffff:ffff:ffff:ffff:ffff", B}, {"2001:200::", A},
    // 2001:1::1, 2001:1::2, 2001:1::3 anycast
    {"2001:1::1", B}, {"2001:1::2", B}, {"2001:1::3", B}, {"2001:1::4", B},
    // 2001:2::/48 Benchmarking (public only in the test build)
    {"2001:1:ffff:ffff:ffff:ffff:ffff:ffff", B}, {"2001:2::", T}, {"2001:2::1", T},
    {"2001:2:0:ffff:ffff:ffff:ffff:ffff", T}, {"2001:2:1::", B},
    // 2001:3::/32 AMT
    {"2001:2:ffff:ffff:ffff:ffff:ffff:ffff", B}, {"2001:3::", B},
    {"2001:3:ffff:ffff:ffff:ffff:ffff:ffff", B}, {"2001:4::", B},
    // 2001:4:112::/48 AS112-v6
    {"2001:4:111:ffff:ffff:ffff:ffff:ffff", B}, {"2001:4:112::", B},
    {"2001:4:112:ffff:ffff:ffff:ffff:ffff", B}, {"2001:4:113::", B},
    // 2001:10::/28 ORCHID (deprecated), 2001:20::/28 ORCHIDv2, 2001:30::/28 DETs
    {"2001:f:ffff:ffff:ffff:ffff:ffff:ffff", B}, {"2001:10::", B},
    {"2001:1f:ffff:ffff:ffff:ffff:ffff:ffff", B}, {"2001:20::", B},
    {"2001:2f:ffff:ffff:ffff:ffff:ffff:ffff", B}, {"2001:30::", B},
    {"2001:3f:ffff:ffff:ffff:ffff:ffff:ffff", B}, {"2001:40::", B},
    // 2001:db8::/32 Documentation
    {"2001:db7:ffff:ffff:ffff:ffff:ffff:ffff", A}, {"2001:db8::", B}, {"2001:db8::1", B},
    {"2001:db8:ffff:ffff:ffff:ffff:ffff:ffff", B}, {"2001:db9::", A},
    // 2002::/16 6to4
    {"2001:ffff:ffff:ffff:ffff:ffff:ffff:ffff", A}, {"2002::", B},
    {"2002:ffff:ffff:ffff:ffff:ffff:ffff:ffff", B}, {"2003::", A},
    // 2620:4f:8000::/48 Direct Delegation AS112
    {"2620:4f:7fff:ffff:ffff:ffff:ffff:ffff", A}, {"2620:4f:8000::", B},
    {"2620:4f:8000:ffff:ffff:ffff:ffff:ffff", B}, {"2620:4f:8001::", A},
    // 3fff::/20 Documentation
    {"3ffe:ffff:ffff:ffff:ffff:ffff:ffff:ffff", A}, {"3fff::", B},
    {"3fff:fff:ffff:ffff:ffff:ffff:ffff:ffff", B}, {"3fff:1000::", A},
    // 4000::/2 outside 2000::/3 (just before it: the last global unicast address)
    {"3fff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", A}, {"4000::", B}, {"4000::1", B},
    // 5f00::/16 SRv6 SIDs, inside 4000::/2
    {"5eff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", B}, {"5f00::", B},
    {"5f00:ffff:ffff:ffff:ffff:ffff:ffff:ffff", B}, {"5f01::", B},
    // 8000::/1 outside 2000::/3
    {"7fff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", B}, {"8000::", B},
    // fc00::/7 Unique-Local
    {"fbff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", B}, {"fc00::", B},
    {"fdff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", B}, {"fe00::", B},
    // AWS and GCP IPv6 platform endpoints, inside fc00::/7
    {"fd00:ec2::22", B}, {"fd00:ec2::23", B}, {"fd00:ec2::24", B},
    {"fd00:ec2::122", B}, {"fd00:ec2::123", B}, {"fd00:ec2::124", B},
    {"fd00:ec2::252", B}, {"fd00:ec2::253", B}, {"fd00:ec2::254", B}, {"fd00:ec2::255", B},
    {"fd20:ce::253", B}, {"fd20:ce::254", B}, {"fd20:ce::255", B},
    // fe80::/10 Link-Local; fec0::/10 Site-Local (deprecated)
    {"fe7f:ffff:ffff:ffff:ffff:ffff:ffff:ffff", B}, {"fe80::", B},
    {"febf:ffff:ffff:ffff:ffff:ffff:ffff:ffff", B}, {"fec0::", B},
    {"feff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", B},
    // ff00::/8 Multicast (nothing after it)
    {"ff00::", B}, {"ff02::1", B}, {"ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", B},
    // Public addresses
    {"2606:4700::1", A}, {"2001:4860:4860::8888", A}, {"2a00:1450:4001:80b::200e", A},
    {"2400:cb00:2048:1::c629:d7a2", A}, {"3ffe::1", A},
});

}  // namespace policy_test
