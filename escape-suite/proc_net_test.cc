#include "escape-suite/proc_net.h"

#include <gtest/gtest.h>

#include <string>

namespace escape {
namespace {

constexpr const char* kDefaultRoute =
    "eth0\t00000000\t010200C0\t0003\t0\t0\t0\t00000000\t0\t0\t0   ";
constexpr const char* kOnLinkRoute =
    "docker0\t000011AC\t00000000\t0001\t0\t0\t0\t0000FFFF\t0\t0\t0";

TEST(ProcNetTest, ReadsTheKernelsRouteLines) {
  const policy::Result<RouteRow> r = parse_route_line(kDefaultRoute);
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->device, "eth0");
  EXPECT_EQ(r->destination, 0u);
  EXPECT_EQ(r->gateway, 0x010200C0u);  // 192.0.2.1 in network order, printed as a host integer
  EXPECT_EQ(r->flags & kRouteFlagGateway, kRouteFlagGateway);
  EXPECT_EQ(r->mask, 0u);
  const policy::Result<RouteRow> on_link = parse_route_line(kOnLinkRoute);
  ASSERT_TRUE(on_link.ok()) << on_link.error().message;
  EXPECT_EQ(on_link->destination, 0x000011ACu);
  EXPECT_EQ(on_link->mask, 0x0000FFFFu);
  EXPECT_EQ(on_link->gateway, 0u);
}

// Each of these read as a row of zeros (or of a prefix) through sscanf/strtoul: a gateway of 0 is
// "on-link", a mask of 0 is "the default route".
TEST(ProcNetTest, RefusesARouteLineWhoseFieldsAreNotTheKernels) {
  const struct {
    const char* line;
    const char* field;
  } bad[] = {
      {"eth0\t00000000\t\t0003\t0\t0\t0\t00000000", "fields"},           // empty gateway: 7 fields
      {"eth0\t00000000\tzz0200C0\t0003\t0\t0\t0\t00000000", "Gateway"},  // not hex
      {"eth0\t00000000\t010200C0junk\t0003\t0\t0\t0\t00000000", "Gateway"},  // trailing bytes
      {"eth0\t00000000\t-10200C0\t0003\t0\t0\t0\t00000000", "Gateway"},      // a sign
      {"eth0\t00000000\t1010200C0\t0003\t0\t0\t0\t00000000", "Gateway"},     // 36 bits: overflow
      {"eth0\t00000000\t0102\t0003\t0\t0\t0\t00000000", "Gateway"},          // short word
      {"eth0\t00000000\t010200C0\t3\t0\t0\t0\t00000000", "Flags"},
      {"eth0\t00000000\t010200C0\t0003\tx\t0\t0\t00000000", "RefCnt"},
      {"eth0\t00000000\t010200C0\t0003\t0\t-1\t0\t00000000", "Use"},
      {"eth0\t00000000\t010200C0\t0003\t0\t0\t99999999999\t00000000", "Metric"},
      {"eth0\t00000000\t010200C0\t0003\t0\t0\t0\t+0000000", "Mask"},
      {"", "fields"},
  };
  for (const auto& b : bad) {
    const policy::Result<RouteRow> r = parse_route_line(b.line);
    ASSERT_FALSE(r.ok()) << b.line;
    EXPECT_NE(r.error().message.find("/proc/net/route"), std::string::npos) << r.error().message;
    EXPECT_NE(r.error().message.find(b.field), std::string::npos) << r.error().message;
  }
}

TEST(ProcNetTest, ReadsTheKernelsNeighbourLines) {
  const policy::Result<ArpRow> r = parse_arp_line(
      "192.0.2.1        0x1         0x2         02:fc:00:00:00:05     *        eth0");
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->address, "192.0.2.1");
  EXPECT_EQ(r->hw_type, 1u);
  EXPECT_EQ(r->flags & kArpFlagComplete, kArpFlagComplete);
}

TEST(ProcNetTest, RefusesANeighbourLineWhoseFieldsAreNotTheKernels) {
  const struct {
    const char* line;
    const char* field;
  } bad[] = {
      {"192.0.2.1 0x1", "fields"},
      {"192.0.2.1 1 0x2 02:fc:00:00:00:05 * eth0", "HW type"},          // no 0x
      {"192.0.2.1 0x1 0x 02:fc:00:00:00:05 * eth0", "Flags"},           // no digits
      {"192.0.2.1 0x1 0x2z 02:fc:00:00:00:05 * eth0", "Flags"},         // trailing junk
      {"192.0.2.1 0x1 0x-2 02:fc:00:00:00:05 * eth0", "Flags"},         // a sign
      {"192.0.2.1 0x1 0x100000000 02:fc:00:00:00:05 * eth0", "Flags"},  // overflow
  };
  for (const auto& b : bad) {
    const policy::Result<ArpRow> r = parse_arp_line(b.line);
    ASSERT_FALSE(r.ok()) << b.line;
    EXPECT_NE(r.error().message.find("/proc/net/arp"), std::string::npos) << r.error().message;
    EXPECT_NE(r.error().message.find(b.field), std::string::npos) << r.error().message;
  }
}

}  // namespace
}  // namespace escape
