// The corridor's decision words and status lines, end to end: a real gatekeeper-test process,
// dnsmasq in a namespace, an upstream at 198.18.0.2:443. Every denial checks the exact bytes the
// space saw and the journal's decision word.
#include <gtest/gtest.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>

#include "tests/integration/harness.h"
#include "tests/support/environment.h"

namespace {

using gk_it::Gatekeeper;
using gk_it::TestNet;

#define GK_NEEDS_NETNS()                                                                   \
  GK_REQUIRE(gk_test::running_as_root() && gk_test::can_use_network_namespaces(),           \
             "root and network namespaces (ip netns) for the 198.18.0.x test hosts")

class CorridorTest : public ::testing::Test {
 protected:
  void SetUp() override {
    GK_NEEDS_NETNS();
    net = std::make_unique<TestNet>();
    ASSERT_TRUE(net->ok()) << net->error;
    gk = std::make_unique<Gatekeeper>(std::vector<std::string>{"--dns-server", net->dns(),
                                                               "--connect-seconds", "1"});
    ASSERT_TRUE(gk->ready()) << gk->ready_line << gk->stderr_text();
  }
  // The bytes a refused CONNECT gets, read to the gatekeeper's FIN.
  std::string refusal_for(const std::string& target) {
    auto t = gk_it::open_tunnel(gk->corridor, target);
    std::string all = t.head;
    bool eof = false;
    all += gk_it::read_until_close(t.fd, 10000, &eof);
    EXPECT_TRUE(eof) << "the refused socket must end with FIN";
    close(t.fd);
    return all;
  }
  std::string last_decision(std::string* host = nullptr, long* port = nullptr) {
    auto j = gk->journal();
    if (j.empty()) return "";
    if (host) *host = j.back().host;
    if (port) *port = j.back().port;
    return j.back().decision;
  }
  std::unique_ptr<TestNet> net;
  std::unique_ptr<Gatekeeper> gk;
};

TEST_F(CorridorTest, AllowsListedPublicNameAndCarriesBytes) {
  gk->allow({"public.test"});
  auto t = gk_it::open_tunnel(gk->corridor, "public.test:443", "ECHO\nhello");
  ASSERT_EQ(t.head, gk_it::k200);
  shutdown(t.fd, SHUT_WR);
  EXPECT_EQ(gk_it::read_until_close(t.fd, 5000), "hello");
  close(t.fd);
  std::string host;
  long port = 0;
  EXPECT_EQ(last_decision(&host, &port), "allow");
  EXPECT_EQ(host, "public.test");
  EXPECT_EQ(port, 443);
}

TEST_F(CorridorTest, RefusesNameNotOnAllowlist) {
  gk->allow({"other.test"});
  EXPECT_EQ(refusal_for("public.test:443"), gk_it::k403);
  EXPECT_EQ(last_decision(), "deny:not-on-allowlist");
}

TEST_F(CorridorTest, RefusesPortOtherThan443) {
  gk->allow({"public.test"}, "open");
  EXPECT_EQ(refusal_for("public.test:80"), gk_it::k403);
  EXPECT_EQ(last_decision(), "deny:port");
}

TEST_F(CorridorTest, RefusesAddressLiteralEvenWhenPublic) {
  gk->allow({}, "open");
  EXPECT_EQ(refusal_for("198.18.0.2:443"), gk_it::k403);
  EXPECT_EQ(last_decision(), "deny:not-a-name");
}

TEST_F(CorridorTest, RefusesMalformedTargetWith400) {
  gk->allow({}, "open");
  EXPECT_EQ(refusal_for("public.test:99999"), gk_it::k400);
  EXPECT_EQ(last_decision(), "deny:malformed");
}

TEST_F(CorridorTest, RefusesAlwaysRefusedNameInOpenMode) {
  gk->allow({"auth.openai.com"}, "open");
  EXPECT_EQ(refusal_for("auth.openai.com:443"), gk_it::k403);
  EXPECT_EQ(last_decision(), "deny:always-refused");
}

TEST_F(CorridorTest, RefusesNameThatResolvesToLoopback) {
  gk->allow({"loop.test"});
  EXPECT_EQ(refusal_for("loop.test:443"), gk_it::k403);
  EXPECT_EQ(last_decision(), "deny:blocked-address");
}

TEST_F(CorridorTest, RefusesNameWithMixedPublicAndPrivateAnswers) {
  gk->allow({"mixed.test"});
  EXPECT_EQ(refusal_for("mixed.test:443"), gk_it::k403);
  EXPECT_EQ(last_decision(), "deny:blocked-address");
}

TEST_F(CorridorTest, RefusesUnknownNameAsUnresolved) {
  gk->allow({"nx.test"});
  EXPECT_EQ(refusal_for("nx.test:443"), gk_it::k403);
  EXPECT_EQ(last_decision(), "deny:unresolved:ENOTFOUND");
}

TEST_F(CorridorTest, AnswersBadGatewayWhenConnectIsRefused) {
  gk->allow({"refused.test"});
  EXPECT_EQ(refusal_for("refused.test:443"), gk_it::k502);
  auto j = gk->journal();
  ASSERT_GE(j.size(), 2u);
  EXPECT_EQ(j[j.size() - 2].decision, "allow");
  EXPECT_EQ(j.back().decision, "failed:ECONNREFUSED");
}

TEST_F(CorridorTest, ConnectTimeoutJournalsFailedTimeoutAndAnswers502) {
  gk->allow({"slow.test"});
  const auto start = std::chrono::steady_clock::now();
  EXPECT_EQ(refusal_for("slow.test:443"), gk_it::k502);
  const auto took = std::chrono::steady_clock::now() - start;
  EXPECT_LT(took, std::chrono::milliseconds(2900)) << "--connect-seconds 1 must cut the connect";
  EXPECT_EQ(last_decision(), "failed:timeout");
}

TEST_F(CorridorTest, RefusesPlainProxyRequestJournallingOnlyTheHost) {
  const int fd = gk_it::connect_tcp("127.0.0.1", gk->corridor);
  gk_it::send_all(fd, "GET http://Public.Test/secret-path?secret-query=1 HTTP/1.1\r\nHost: public.test\r\n\r\n");
  EXPECT_EQ(gk_it::read_until_close(fd, 5000), gk_it::k403);
  close(fd);
  std::string host;
  long port = -1;
  EXPECT_EQ(last_decision(&host, &port), "deny:not-connect");
  EXPECT_EQ(host, "public.test");
  EXPECT_EQ(port, 0);
  EXPECT_EQ(gk->request("GET", "/journal").body.find("secret"), std::string::npos);
}

TEST_F(CorridorTest, SwitchesAllowlistLiveWithoutRestart) {
  gk->allow({"public.test"});
  auto t = gk_it::open_tunnel(gk->corridor, "public.test:443", "HOLD\n");
  EXPECT_EQ(t.head, gk_it::k200);
  close(t.fd);
  gk->allow({"other.test"});
  EXPECT_EQ(refusal_for("public.test:443"), gk_it::k403);
  EXPECT_EQ(last_decision(), "deny:not-on-allowlist");
  gk->allow({"public.test"});
  auto again = gk_it::open_tunnel(gk->corridor, "public.test:443", "HOLD\n");
  EXPECT_EQ(again.head, gk_it::k200);
  close(again.fd);
}

TEST_F(CorridorTest, RefusesVersionlessRequestLineAsUnreadable) {
  const int fd = gk_it::connect_tcp("127.0.0.1", gk->corridor);
  gk_it::send_all(fd, "CONNECT public.test:443\n\n");
  EXPECT_EQ(gk_it::read_until_close(fd, 5000), gk_it::k400);
  close(fd);
  EXPECT_EQ(last_decision(), "deny:unreadable-request");
}

TEST_F(CorridorTest, HeadOfExactly16KiBIsReadAndOneByteMoreIsRefused) {
  gk->allow({"public.test"});
  const std::string start = "CONNECT public.test:443 HTTP/1.1\r\nX-Pad: ";
  const std::string end = "\r\n\r\n";
  const std::string at_limit = start + std::string(16384 - start.size() - end.size(), 'a') + end;
  ASSERT_EQ(at_limit.size(), 16384u);
  int fd = gk_it::connect_tcp("127.0.0.1", gk->corridor);
  gk_it::send_all(fd, at_limit + "HOLD\n");
  EXPECT_EQ(gk_it::read_head(fd, 5000), gk_it::k200);
  close(fd);
  const std::string over = start + std::string(16385 - start.size() - end.size(), 'a') + end;
  fd = gk_it::connect_tcp("127.0.0.1", gk->corridor);
  gk_it::send_all(fd, over);
  EXPECT_EQ(gk_it::read_until_close(fd, 5000), gk_it::k400);
  close(fd);
}

TEST(CorridorDnsTest, UnansweredDnsEndsAsUnresolvedWithinTheDeadline) {
  gk_it::SilentDns silent;
  Gatekeeper gk({"--dns-server", "127.0.0.1:" + std::to_string(silent.port)});
  ASSERT_TRUE(gk.ready()) << gk.stderr_text();
  gk.allow({"public.test"});
  const auto start = std::chrono::steady_clock::now();
  auto t = gk_it::open_tunnel(gk.corridor, "public.test:443");
  std::string all = t.head + gk_it::read_until_close(t.fd, 10000);
  close(t.fd);
  EXPECT_EQ(all, gk_it::k403);
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::milliseconds(6000));
  auto j = gk.journal();
  ASSERT_FALSE(j.empty());
  EXPECT_EQ(j.back().decision.rfind("deny:unresolved:", 0), 0u) << j.back().decision;
}

}  // namespace
