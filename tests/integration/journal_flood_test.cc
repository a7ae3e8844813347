// The space cannot flush the journal: 10,000 refusals after an allowed tunnel and an attempt on
// the always-refused name leave both on record. Identical refusals are coalesced (one record,
// its count, first and last time); the first refusal of each word is pinned; allow records keep
// their share of the ring.
#include <gtest/gtest.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>

#include "tests/integration/harness.h"
#include "tests/support/environment.h"

namespace {

using gk_it::Gatekeeper;
using gk_it::TestNet;

// One refused CONNECT, read to the gatekeeper's close.
std::string refused(Gatekeeper& gk, const std::string& target) {
  const int fd = gk_it::connect_tcp("127.0.0.1", gk.corridor);
  if (fd < 0) return "";
  gk_it::send_all(fd, "CONNECT " + target + " HTTP/1.1\r\nHost: " + target + "\r\n\r\n");
  std::string answer = gk_it::read_until_close(fd, 5000);
  close(fd);
  return answer;
}

const Gatekeeper::Record* find(const std::vector<Gatekeeper::Record>& j, const std::string& host,
                               const std::string& decision) {
  auto it = std::find_if(j.begin(), j.end(), [&](const Gatekeeper::Record& r) {
    return r.host == host && r.decision == decision;
  });
  return it == j.end() ? nullptr : &*it;
}

TEST(JournalFloodTest, TenThousandRefusalsLeaveTheEarlierAllowAndAlwaysRefusedAttempt) {
  GK_REQUIRE(gk_test::running_as_root() && gk_test::can_use_network_namespaces(),
             "root and network namespaces (ip netns) for the 198.18.0.x test hosts");
  TestNet net;
  ASSERT_TRUE(net.ok()) << net.error;
  Gatekeeper gk({"--dns-server", net.dns()});
  ASSERT_TRUE(gk.ready()) << gk.stderr_text();
  gk.allow({"public.test"});

  auto t = gk_it::open_tunnel(gk.corridor, "public.test:443", "ECHO\nevidence");
  ASSERT_EQ(t.head, gk_it::k200);
  shutdown(t.fd, SHUT_WR);
  EXPECT_EQ(gk_it::read_until_close(t.fd, 5000), "evidence");
  close(t.fd);
  ASSERT_EQ(refused(gk, "auth.openai.com:443"), gk_it::k403);
  ASSERT_EQ(refused(gk, "exfil.example.com:443"), gk_it::k403);

  // The flood: half the same always-refused attempt again, half a new name each time.
  constexpr int kFlood = 10000;
  for (int i = 0; i < kFlood; ++i) {
    const std::string target = i % 2 == 0 ? "auth.openai.com:443" : "flood-" + std::to_string(i) + ".example.com:443";
    ASSERT_EQ(refused(gk, target), gk_it::k403) << i;
  }

  const auto j = gk.journal();
  EXPECT_LE(j.size(), 500u);
  const auto* allow = find(j, "public.test", "allow");
  ASSERT_NE(allow, nullptr) << "the earlier allow was pushed out";
  const auto* always = find(j, "auth.openai.com", "deny:always-refused");
  ASSERT_NE(always, nullptr) << "the earlier always-refused attempt was pushed out";
  EXPECT_EQ(always->count, 1 + kFlood / 2);
  const auto* first_of_word = find(j, "exfil.example.com", "deny:not-on-allowlist");
  EXPECT_NE(first_of_word, nullptr) << "the first refusal of its word was pushed out";
  // The distinct names overflowed and were counted; the newest are still there.
  const std::string body = gk.request("GET", "/journal").body;
  EXPECT_EQ(body.find("\"dropped\":0"), std::string::npos) << body.substr(body.size() - 200);
  EXPECT_NE(find(j, "flood-" + std::to_string(kFlood - 1) + ".example.com", "deny:not-on-allowlist"), nullptr);
}

TEST(JournalFloodTest, IdenticalRefusalsAreOneRecordWithItsCount) {
  GK_REQUIRE(gk_test::running_as_root(), "root, to start the gatekeeper as its own uid");
  Gatekeeper gk({});
  ASSERT_TRUE(gk.ready()) << gk.stderr_text();
  for (int i = 0; i < 3; ++i) ASSERT_EQ(refused(gk, "169.254.169.254:443"), gk_it::k403);
  ASSERT_EQ(refused(gk, "127.0.0.1:443"), gk_it::k403);
  const auto j = gk.journal();
  ASSERT_EQ(j.size(), 2u);
  EXPECT_EQ(j[0].host, "169.254.169.254");
  EXPECT_EQ(j[0].decision, "deny:not-a-name");
  EXPECT_EQ(j[0].count, 3);
  EXPECT_EQ(j[1].host, "127.0.0.1");
  EXPECT_EQ(j[1].count, 1);
  const std::string body = gk.request("GET", "/journal").body;
  EXPECT_NE(body.find("\"count\":3,\"last\":\""), std::string::npos) << body;
}

}  // namespace
