// The window's refusals on a real loop and real sockets on 127.0.0.1, without root: the key,
// the grant, the upstream's answers from the scripted resolver and the operator's blocked
// ranges. Each asserts the space's answer and the journal's decision word.
#include <gtest/gtest.h>

#include <string>

#include "policy/ranges.h"
#include "tests/loop/fixture.h"

namespace gk_loop_test {
namespace {

const std::string kKey(64, 'a');
constexpr std::string_view kNoSuchGrant = R"({"error":"no such grant"})";
constexpr std::string_view kRefused = R"({"error":"refused destination"})";

std::string get(const std::string& target) {
  return "GET " + target + " HTTP/1.1\r\nHost: gatekeeper\r\n\r\n";
}

std::string body_of(const std::string& answer) {
  const auto at = answer.find("\r\n\r\n");
  return at == std::string::npos ? "" : answer.substr(at + 4);
}

class WindowLoopTest : public LoopFixture {
 protected:
  void set_key_and_grant() {
    ASSERT_NE(control("POST", "/window-key", R"({"key":")" + kKey + R"("})").find(" 200 "),
              std::string::npos);
    ASSERT_NE(
        control("POST", "/grants", R"({"id":"model","upstream":"http://model.test:8080/v1/"})")
            .find(" 200 "),
        std::string::npos);
  }
  std::string model(const std::string& rest) { return "/k/" + kKey + "/model/model" + rest; }
};

TEST_F(WindowLoopTest, EveryRequestIsRefusedUntilAKeyIsSet) {
  const Reply r = exchange(window_port_, get("/k/" + kKey + "/model/model/x"));
  EXPECT_NE(r.bytes.find("HTTP/1.1 403 "), std::string::npos) << r.bytes;
  EXPECT_EQ(body_of(r.bytes), kNoSuchGrant);
  EXPECT_TRUE(journalled("deny:bad-window-key"));
}

TEST_F(WindowLoopTest, UnknownGrantAndAWalkOutGetTheSameAnswer) {
  set_key_and_grant();
  EXPECT_EQ(body_of(exchange(window_port_, get("/k/" + kKey + "/model/other/x")).bytes),
            kNoSuchGrant);
  EXPECT_TRUE(journalled("deny:no-grant"));
  EXPECT_EQ(body_of(exchange(window_port_, get(model("/../../admin"))).bytes), kNoSuchGrant);
  EXPECT_TRUE(journalled("deny:path-walks-out"));
  EXPECT_TRUE(resolver_->asked.empty());
}

TEST_F(WindowLoopTest, UpstreamAnswerInsideAnOperatorBlockedRangeIsRefusedBeforeAnyDial) {
  set_key_and_grant();
  ctx_->blocked = {policy::parse_operator_range("198.18.0.0/24").value()};
  resolver_->answer("model.test", {"198.18.0.7"});
  const Reply r = exchange(window_port_, get(model("/chat")));
  EXPECT_NE(r.bytes.find("HTTP/1.1 403 "), std::string::npos) << r.bytes;
  EXPECT_EQ(body_of(r.bytes), kRefused);
  EXPECT_TRUE(journalled("deny:blocked-address"));
  EXPECT_EQ(pool_->dialled(), 0u);
}

TEST_F(WindowLoopTest, UpstreamThatResolvesToLoopbackOnAnotherPortIsRefused) {
  set_key_and_grant();
  resolver_->answer("model.test", {"127.0.0.1"});
  EXPECT_EQ(body_of(exchange(window_port_, get(model("/chat"))).bytes), kRefused);
  EXPECT_TRUE(journalled("deny:blocked-address"));
  EXPECT_EQ(pool_->dialled(), 0u);
}

TEST_F(WindowLoopTest, UnresolvedUpstreamIsA502) {
  set_key_and_grant();
  resolver_->fail("model.test", "ENOTFOUND");
  const Reply r = exchange(window_port_, get(model("/chat")));
  EXPECT_NE(r.bytes.find("HTTP/1.1 502 "), std::string::npos) << r.bytes;
  EXPECT_EQ(body_of(r.bytes), R"({"error":"the upstream of this grant does not resolve"})");
  EXPECT_TRUE(journalled("deny:unresolved:ENOTFOUND"));
}

TEST_F(WindowLoopTest, SmugglingShapeIsABare400) {
  set_key_and_grant();
  const Reply r = exchange(window_port_, "POST " + model("/x") +
                                             " HTTP/1.1\r\nHost: g\r\nContent-Length: 3\r\n"
                                             "Transfer-Encoding: chunked\r\n\r\n0\r\n\r\n");
  EXPECT_EQ(r.bytes, "HTTP/1.1 400 Bad Request\r\nConnection: close\r\n\r\n");
  EXPECT_TRUE(journalled("deny:malformed"));
}

}  // namespace
}  // namespace gk_loop_test
