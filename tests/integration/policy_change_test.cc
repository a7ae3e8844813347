// POST /network reaches live tunnels: a tunnel whose name the new policy refuses (removed from the
// allowlist, or a switch from open to allowlist) is closed and journalled deny:policy-changed;
// one the new policy still allows carries on.
#include <gtest/gtest.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>

#include "tests/integration/harness.h"
#include "tests/support/environment.h"

namespace {

using gk_it::Gatekeeper;
using gk_it::TestNet;

bool echoes(int fd, const std::string& text) {
  gk_it::send_all(fd, text);
  std::string back;
  gk_it::set_timeout(fd, 5000);
  char buf[256];
  while (back.size() < text.size()) {
    const ssize_t n = recv(fd, buf, sizeof buf, 0);
    if (n <= 0) break;
    back.append(buf, static_cast<std::size_t>(n));
  }
  return back == text;
}

bool journalled(Gatekeeper& gk, const std::string& host, const std::string& decision) {
  const auto j = gk.journal();
  return std::any_of(j.begin(), j.end(), [&](const Gatekeeper::Record& r) {
    return r.listener == "corridor" && r.host == host && r.decision == decision;
  });
}

class PolicyChangeTest : public ::testing::Test {
 protected:
  void SetUp() override {
    GK_REQUIRE(gk_test::running_as_root() && gk_test::can_use_network_namespaces(),
               "root and network namespaces (ip netns) for the 198.18.0.x test hosts");
    net = std::make_unique<TestNet>();
    ASSERT_TRUE(net->ok()) << net->error;
    gk = std::make_unique<Gatekeeper>(std::vector<std::string>{"--dns-server", net->dns()});
    ASSERT_TRUE(gk->ready()) << gk->stderr_text();
  }
  std::unique_ptr<TestNet> net;
  std::unique_ptr<Gatekeeper> gk;
};

TEST_F(PolicyChangeTest, RemovingANameClosesItsLiveTunnelAndKeepsTheOthers) {
  gk->allow({"public.test", "alias.test"});
  auto removed = gk_it::open_tunnel(gk->corridor, "public.test:443", "ECHO\n");
  auto kept = gk_it::open_tunnel(gk->corridor, "alias.test:443", "ECHO\n");
  ASSERT_EQ(removed.head, gk_it::k200);
  ASSERT_EQ(kept.head, gk_it::k200);
  ASSERT_TRUE(echoes(removed.fd, "one"));
  ASSERT_TRUE(echoes(kept.fd, "one"));

  gk->allow({"alias.test"});
  bool eof = false;
  gk_it::read_until_close(removed.fd, 5000, &eof);
  EXPECT_TRUE(eof) << "the tunnel to the removed name is still open";
  close(removed.fd);
  EXPECT_TRUE(echoes(kept.fd, "two")) << "the tunnel to the name still listed was closed";
  close(kept.fd);
  EXPECT_TRUE(journalled(*gk, "public.test", "deny:policy-changed"));
  EXPECT_FALSE(journalled(*gk, "alias.test", "deny:policy-changed"));
}

TEST_F(PolicyChangeTest, SwitchingFromOpenToAllowlistClosesTunnelsItRefuses) {
  gk->allow({}, "open");
  auto t = gk_it::open_tunnel(gk->corridor, "public.test:443", "ECHO\n");
  ASSERT_EQ(t.head, gk_it::k200);
  ASSERT_TRUE(echoes(t.fd, "open"));
  gk->allow({"alias.test"}, "allowlist");
  bool eof = false;
  gk_it::read_until_close(t.fd, 5000, &eof);
  EXPECT_TRUE(eof);
  close(t.fd);
  EXPECT_TRUE(journalled(*gk, "public.test", "deny:policy-changed"));
  // A tunnel the stricter policy still allows is untouched by a later change of other names.
  gk->allow({"public.test"}, "allowlist");
  auto again = gk_it::open_tunnel(gk->corridor, "public.test:443", "ECHO\n");
  ASSERT_EQ(again.head, gk_it::k200);
  gk->allow({"public.test", "alias.test"}, "allowlist");
  EXPECT_TRUE(echoes(again.fd, "still"));
  close(again.fd);
}

TEST_F(PolicyChangeTest, TunnelStillConnectingIsRefusedWithTheGeneric403) {
  gk->allow({"slow.test"});
  // slow.test answers an address where nothing answers: the connect hangs (--connect-seconds 10).
  const int fd = gk_it::connect_tcp("127.0.0.1", gk->corridor);
  ASSERT_GE(fd, 0);
  gk_it::send_all(fd, "CONNECT slow.test:443 HTTP/1.1\r\nHost: slow.test:443\r\n\r\n");
  usleep(500000);
  gk->allow({"public.test"});
  EXPECT_EQ(gk_it::read_until_close(fd, 5000), gk_it::k403);
  close(fd);
  EXPECT_TRUE(journalled(*gk, "slow.test", "deny:policy-changed"));
}

}  // namespace
