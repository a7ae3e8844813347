// DELETE /grants/<id>: the grant and its secret are gone at once, and so are its pooled upstream
// connections, idle or busy; the deletion is journalled.
#include <gtest/gtest.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <thread>

#include "tests/integration/harness.h"
#include "tests/integration/window_fixture.h"

namespace gk_window_test {
namespace {

TEST_F(WindowTest, DeletedGrantIsRefusedAndItsIdleConnectionIsNotReused) {
  start();
  EXPECT_EQ(send_raw(gk_->window, get(window_path("anthropic", "/before"))).status, 200);
  EXPECT_EQ(tls_->connections.load(), 1);  // kept idle in the pool

  const auto deleted = gk_->request("DELETE", "/grants/anthropic");
  ASSERT_EQ(deleted.status, 200) << deleted.body;
  EXPECT_EQ(gk_->request("GET", "/policy").body.find("\"anthropic\""), std::string::npos);
  const Answer refused = send_raw(gk_->window, get(window_path("anthropic", "/after")));
  EXPECT_EQ(refused.status, 403);
  EXPECT_EQ(refused.body, kNoSuchGrant);
  const auto j = gk_->journal();
  EXPECT_TRUE(std::any_of(j.begin(), j.end(), [](const Gatekeeper::Record& r) {
    return r.listener == "window" && r.host == "anthropic" && r.decision == "deny:policy-changed";
  }));

  // The same grant again: its request goes on a new connection (the old one was closed).
  grant(R"({"id":"anthropic","upstream":"https://public.test:8443/","header":"x-api-key","secret":")" +
        kApiKeySecret + R"("})");
  EXPECT_EQ(send_raw(gk_->window, get(window_path("anthropic", "/again"))).status, 200);
  EXPECT_EQ(tls_->connections.load(), 2);
  // Another grant's pooled connection was left alone: "bearer" shares the upstream, not the pool key.
  EXPECT_EQ(gk_->request("DELETE", "/grants/anthropic").status, 200);
  EXPECT_EQ(gk_->request("DELETE", "/grants/anthropic").status, 404);
  EXPECT_EQ(gk_->request("DELETE", "/grants/no%20such").status, 404);
}

TEST_F(WindowTest, DeletingAGrantEndsItsRequestInFlight) {
  start({"--idle-seconds", "30"});
  const int fd = gk_it::connect_tcp("127.0.0.1", gk_->window);
  ASSERT_GE(fd, 0);
  gk_it::send_all(fd, get(window_path("anthropic", "/hang")));
  for (int i = 0; i < 50 && tls_->hits.load() == 0; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(100));
  ASSERT_EQ(tls_->hits.load(), 1);
  const auto start_at = std::chrono::steady_clock::now();
  ASSERT_EQ(gk_->request("DELETE", "/grants/anthropic").status, 200);
  const Answer a = parse_answer(gk_it::read_until_close(fd, 10000));
  close(fd);
  EXPECT_EQ(a.status, 502) << a.raw;
  EXPECT_LT(std::chrono::steady_clock::now() - start_at, std::chrono::seconds(5));
  const auto decisions = window_decisions();
  EXPECT_NE(std::find(decisions.begin(), decisions.end(), "failed:grant-deleted"), decisions.end());
  for (int i = 0; i < 50 && tls_->hang_closed.load() == 0; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(100));
  EXPECT_EQ(tls_->hang_closed.load(), 1);
}

}  // namespace
}  // namespace gk_window_test
