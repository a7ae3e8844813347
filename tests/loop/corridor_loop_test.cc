// The corridor's refusals on a real loop and real sockets on 127.0.0.1, without root: the head,
// the decisions before DNS, the answers the scripted resolver gives, the slot and the query of a
// client that leaves. Each asserts the space's bytes and the journal's decision word.
#include <gtest/gtest.h>

#include <string>

#include "policy/ranges.h"
#include "tests/loop/fixture.h"

namespace gk_loop_test {
namespace {

constexpr std::string_view k400 = "HTTP/1.1 400 Bad Request\r\nConnection: close\r\n\r\n";
constexpr std::string_view k403 = "HTTP/1.1 403 Forbidden\r\nConnection: close\r\n\r\n";

std::string connect_head(const std::string& target) {
  return "CONNECT " + target + " HTTP/1.1\r\nHost: " + target + "\r\n\r\n";
}

class CorridorLoopTest : public LoopFixture {
 protected:
  void open_mode() {
    ASSERT_NE(control("POST", "/network", R"({"mode":"open","domains":[]})").find(" 200 "),
              std::string::npos);
  }
};

TEST_F(CorridorLoopTest, RefusesNameThatResolvesToLoopback) {
  open_mode();
  resolver_->answer("evil.test", {"127.0.0.1"});
  const Reply r = exchange(corridor_port_, connect_head("evil.test:443"));
  EXPECT_EQ(r.bytes, k403);
  EXPECT_TRUE(r.closed);
  EXPECT_TRUE(journalled("deny:blocked-address"));
  EXPECT_EQ(resolver_->asked, std::vector<std::string>{"evil.test"});
}

TEST_F(CorridorLoopTest, OneBlockedAnswerAmongPublicOnesRefusesTheName) {
  open_mode();
  resolver_->answer("mixed.test", {"198.18.0.7", "169.254.169.254"});
  EXPECT_EQ(exchange(corridor_port_, connect_head("mixed.test:443")).bytes, k403);
  EXPECT_TRUE(journalled("deny:blocked-address"));
}

TEST_F(CorridorLoopTest, OperatorBlockedRangeRefusesAPublicAnswer) {
  open_mode();
  ctx_->blocked = {policy::parse_operator_range("198.18.0.0/24").value()};
  resolver_->answer("host.test", {"198.18.0.7"});
  EXPECT_EQ(exchange(corridor_port_, connect_head("host.test:443")).bytes, k403);
  EXPECT_TRUE(journalled("deny:blocked-address"));
}

TEST_F(CorridorLoopTest, UnresolvedNameIsRefusedWithTheResolversWord) {
  open_mode();
  resolver_->fail("gone.test", "ENOTFOUND");
  EXPECT_EQ(exchange(corridor_port_, connect_head("gone.test:443")).bytes, k403);
  EXPECT_TRUE(journalled("deny:unresolved:ENOTFOUND"));
}

TEST_F(CorridorLoopTest, AllowlistRefusesAnUnlistedNameBeforeAnyQuery) {
  EXPECT_EQ(exchange(corridor_port_, connect_head("example.test:443")).bytes, k403);
  EXPECT_TRUE(journalled("deny:not-on-allowlist"));
  EXPECT_TRUE(resolver_->asked.empty());
}

TEST_F(CorridorLoopTest, UnreadableHeadIsABare400) {
  EXPECT_EQ(exchange(corridor_port_, "CONNECT example.test:443\r\n\r\n").bytes, k400);
  EXPECT_TRUE(journalled("deny:unreadable-request"));
  // One byte over the 16 KiB head: unreadable as well, before any decision.
  const std::string start = "CONNECT a.test:443 HTTP/1.1\r\nX-Pad: ";
  const std::string over = start + std::string(16 * 1024 + 1 - start.size() - 4, 'p') + "\r\n\r\n";
  EXPECT_EQ(exchange(corridor_port_, over).bytes, k400);
  EXPECT_TRUE(resolver_->asked.empty());
}

TEST_F(CorridorLoopTest, ObsFoldAndAHeaderLinePastTheCapAreUnreadable) {
  // One llhttp adapter for every listener (appliance/http): a folded field line (RFC 9112 §5.2)
  // and a 129th field line are unreadable in a CONNECT head too, before any decision.
  open_mode();
  EXPECT_EQ(
      exchange(corridor_port_, "CONNECT a.test:443 HTTP/1.1\r\nX-A: one\r\n two\r\n\r\n").bytes,
      k400);
  std::string many = "CONNECT a.test:443 HTTP/1.1\r\n";
  for (int i = 0; i < 129; ++i) many += "X-" + std::to_string(i) + ": v\r\n";
  EXPECT_EQ(exchange(corridor_port_, many + "\r\n").bytes, k400);
  EXPECT_TRUE(journalled("deny:unreadable-request"));
  EXPECT_TRUE(resolver_->asked.empty());
}

TEST_F(CorridorLoopTest, PlainProxyRequestIsRefused) {
  EXPECT_EQ(
      exchange(corridor_port_, "GET http://example.test/ HTTP/1.1\r\nHost: example.test\r\n\r\n")
          .bytes,
      k403);
  EXPECT_TRUE(journalled("deny:not-connect"));
}

TEST_F(CorridorLoopTest, ClientThatLeavesWhileResolvingFreesItsSlotAndItsQuery) {
  open_mode();
  resolver_->hold(true);
  const int fd = connect_to(corridor_port_);
  ASSERT_GE(fd, 0);
  const std::string head = connect_head("slow.test:443");
  ASSERT_EQ(::send(fd, head.data(), head.size(), MSG_NOSIGNAL), static_cast<ssize_t>(head.size()));
  ASSERT_TRUE(run_until([&] { return resolver_->asked.size() == 1; }));
  EXPECT_EQ(ctx_->open_tunnels, 1u) << "the slot is taken before DNS";
  ::close(fd);
  EXPECT_TRUE(run_until([&] { return ctx_->open_tunnels == 0 && resolver_->cancelled == 1; }));
  EXPECT_EQ(resolver_->outstanding(), 0u);
}

}  // namespace
}  // namespace gk_loop_test
