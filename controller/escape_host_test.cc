#include "controller/escape_host.h"

#include <gtest/gtest.h>

#include <string>

namespace controller {
namespace {

constexpr const char* kHeader =
    "Iface\tDestination\tGateway \tFlags\tRefCnt\tUse\tMetric\tMask\t\tMTU\tWindow\tIRTT\n";

TEST(FreeTestSubnetTest, PicksTheFirstSlash24NoRouteOverlaps) {
  const std::string table = std::string(kHeader) +
                            "eth0\t00000000\t010200C0\t0003\t0\t0\t0\t00000000\t0\t0\t0\n"
                            // 198.18.231.0/24 is taken (E7 12 C6 read as a host integer)
                            "br-1\t00E712C6\t00000000\t0001\t0\t0\t0\t00FFFFFF\t0\t0\t0\n";
  const Result<std::string> got = free_test_subnet(table);
  ASSERT_TRUE(got.ok()) << got.error().message;
  EXPECT_EQ(*got, "198.18.232.0/24");
}

// sscanf skipped such a line and the pick could overlap the route it held.
TEST(FreeTestSubnetTest, RefusesARouteTableWithALineTheKernelWouldNotPrint) {
  for (const char* bad : {"br-1\t00E712C6\t00000000\t0001\t0\t0\t0\n",                // no mask
                          "br-1\t00E712C6\t00000000\t0001\t0\t0\t0\t00FFFFFFjunk\n",  // junk
                          "br-1\t-0E712C6\t00000000\t0001\t0\t0\t0\t00FFFFFF\n",      // a sign
                          "br-1\t100E712C6\t00000000\t0001\t0\t0\t0\t00FFFFFF\n"}) {  // overflow
    const Result<std::string> got = free_test_subnet(std::string(kHeader) + bad);
    ASSERT_FALSE(got.ok()) << bad;
    EXPECT_NE(got.error().message.find("pick a test subnet: read /proc/net/route"),
              std::string::npos)
        << got.error().message;
  }
}

TEST(FreeTestSubnetTest, SaysSoWhenEverySlash24IsTaken) {
  // 198.18.0.0/16 covers every candidate.
  const Result<std::string> got = free_test_subnet(
      std::string(kHeader) + "br-1\t000012C6\t00000000\t0001\t0\t0\t0\t0000FFFF\t0\t0\t0\n");
  ASSERT_FALSE(got.ok());
  EXPECT_NE(got.error().message.find("no free /24"), std::string::npos) << got.error().message;
}

}  // namespace
}  // namespace controller
