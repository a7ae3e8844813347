// The kernel's IPv4 route and neighbour tables as text (/proc/net/route, /proc/net/arp), read
// strictly: the suite reads them inside a space, the host runner reads the host's. A line whose
// fields are not what the kernel prints is an error naming the table and the field, never a row
// of zeros (a zero gateway would read as "on-link", a zero mask as "the default route").
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "policy/result.h"

namespace escape {

// One data line of /proc/net/route:
//   Iface Destination Gateway Flags RefCnt Use Metric Mask MTU Window IRTT
// The kernel prints each address word as "%08X" of the network-order value read as a host
// integer; these fields hold that integer as printed (ntohl() gives the address's host order).
struct RouteRow {
  std::string device;
  std::uint32_t destination = 0;
  std::uint32_t gateway = 0;
  std::uint32_t flags = 0;
  std::uint32_t mask = 0;
};
inline constexpr std::uint32_t kRouteFlagGateway = 0x2;  // RTF_GATEWAY

// One data line of /proc/net/arp:  IP-address HW-type Flags HW-address Mask Device
// HW type and flags are printed "0x%x".
struct ArpRow {
  std::string address;
  std::uint32_t hw_type = 0;
  std::uint32_t flags = 0;
};
inline constexpr std::uint32_t kArpFlagComplete = 0x2;  // ATF_COM: someone answered

policy::Result<RouteRow> parse_route_line(std::string_view line);
policy::Result<ArpRow> parse_arp_line(std::string_view line);

}  // namespace escape
