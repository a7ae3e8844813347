// Operator-blocked ranges (`serve --block`, `POST /blocked`): in open mode a name that resolves to
// the place's own host address must not reach it, although the table calls that address public.
#include <gtest/gtest.h>
#include <sys/socket.h>
#include <unistd.h>

#include "tests/integration/harness.h"
#include "tests/support/environment.h"

namespace {

using gk_it::Gatekeeper;
using gk_it::TestNet;

std::string refused_bytes(Gatekeeper& gk, const std::string& target) {
  auto t = gk_it::open_tunnel(gk.corridor, target);
  std::string all = t.head + gk_it::read_until_close(t.fd, 5000);
  close(t.fd);
  return all;
}

bool carries(Gatekeeper& gk) {
  auto t = gk_it::open_tunnel(gk.corridor, "public.test:443", "ECHO\nping");
  const bool ok = t.head == gk_it::k200;
  shutdown(t.fd, SHUT_WR);
  const std::string back = gk_it::read_until_close(t.fd, 5000);
  close(t.fd);
  return ok && back == "ping";
}

TEST(BlockTest, BlockedRangeRefusesTheNameInOpenModeAndControlReplacesIt) {
  GK_REQUIRE(gk_test::running_as_root() && gk_test::can_use_network_namespaces(),
             "root and network namespaces (ip netns) for the 198.18.0.x test hosts");
  TestNet net;
  ASSERT_TRUE(net.ok()) << net.error;
  Gatekeeper gk({"--dns-server", net.dns(), "--block", net.prefix() + "2/32"});
  ASSERT_TRUE(gk.ready()) << gk.stderr_text();
  gk.allow({}, "open");
  EXPECT_EQ(refused_bytes(gk, "public.test:443"), gk_it::k403);
  EXPECT_EQ(gk.journal().back().decision, "deny:blocked-address");
  EXPECT_EQ(gk.request("GET", "/blocked").body, R"({"ranges":[")" + net.prefix() + R"(2/32"]})");

  // The control channel replaces the list: empty, the name is reached; a /24 around it, refused.
  EXPECT_EQ(gk.request("POST", "/blocked", R"({"ranges":[]})").status, 200);
  EXPECT_TRUE(carries(gk));
  EXPECT_EQ(gk.request("POST", "/blocked", R"({"ranges":[")" + net.prefix() + R"(0/24"]})").status, 200);
  EXPECT_EQ(refused_bytes(gk, "public.test:443"), gk_it::k403);
  // The same refusal again: coalesced into the first record (the journal keeps one with its count).
  const auto j = gk.journal();
  ASSERT_FALSE(j.empty());
  EXPECT_EQ(j.front().decision, "deny:blocked-address");
  EXPECT_EQ(j.front().count, 2);
  // A range with host bits set is refused, and the list stays as it was.
  const auto bad = gk.request("POST", "/blocked", R"({"ranges":[")" + net.prefix() + R"(2/24"]})");
  EXPECT_EQ(bad.status, 400);
  EXPECT_NE(bad.body.find("ADDRESS/LENGTH"), std::string::npos) << bad.body;
  EXPECT_EQ(refused_bytes(gk, "public.test:443"), gk_it::k403);
}

TEST(BlockTest, RangeWithHostBitsIsAStartUpProblem) {
  GK_REQUIRE(gk_test::running_as_root(), "root, to start the gatekeeper as its own uid");
  Gatekeeper gk({"--block", "10.0.0.1/8"});
  EXPECT_FALSE(gk.ready());
  EXPECT_NE(gk.stderr_text().find("--block"), std::string::npos) << gk.stderr_text();
}

}  // namespace
