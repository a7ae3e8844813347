// The window's client keep-alive (RFC 9112 §9.3): many requests on one connection, pipelining,
// a decision per request, the idle close, HTTP/1.0 and close-delimited answers, half-closing
// clients, and eviction of the idlest connection at the socket cap.
#include <gtest/gtest.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <set>
#include <string>
#include <vector>

#include "tests/integration/harness.h"
#include "tests/integration/http_upstream.h"
#include "tests/integration/window_fixture.h"

namespace gk_window_test {
namespace {

TEST_F(WindowTest, KeptAliveClientSendsTwentyRequestsOnOneConnection) {
  start();
  const int fd = gk_it::connect_tcp("127.0.0.1", gk_->window);
  ASSERT_GE(fd, 0);
  for (int i = 0; i < 20; ++i) {
    ASSERT_TRUE(gk_it::send_all(fd, get(window_path("anthropic", "/v1/k" + std::to_string(i)))));
    const Answer a = read_answer(fd);
    ASSERT_EQ(a.status, 200) << i << "\n" << a.raw;
    EXPECT_EQ(a.body, "ok /v1/k" + std::to_string(i) + "\n");
    EXPECT_NE(a.head.find("\r\nKeep-Alive: timeout=5"), std::string::npos) << a.head;
  }
  close(fd);
  EXPECT_EQ(tls_->hits.load(), 20);
  EXPECT_EQ(tls_->connections.load(), 1);
  EXPECT_EQ(metric(*gk_, R"(gatekeeper_connections_accepted_total{listener="window"})"), 1);
  EXPECT_EQ(window_decisions(), std::vector<std::string>(20, "allow"));  // each request decided
}

TEST_F(WindowTest, PipelinedRequestsAreAnsweredInOrder) {
  start();
  const int fd = gk_it::connect_tcp("127.0.0.1", gk_->window);
  ASSERT_GE(fd, 0);
  // Three requests in one write: the second has a body, the third asks for the close.
  ASSERT_TRUE(gk_it::send_all(fd, get(window_path("anthropic", "/v1/p1")) + "POST " + window_path("registry", "/upload") +
                                      " HTTP/1.1\r\nHost: g\r\nContent-Length: 5\r\n\r\nhello" +
                                      get(window_path("bearer", "/p3"), "Connection: close\r\n")));
  const Answer first = read_answer(fd);
  const Answer second = read_answer(fd);
  const Answer third = read_answer(fd);
  EXPECT_EQ(first.status, 200) << first.raw;
  EXPECT_EQ(first.body, "ok /v1/p1\n");
  EXPECT_EQ(second.status, 200) << second.raw;
  EXPECT_EQ(second.body, gk_it::sha256_hex("hello") + "\n");
  EXPECT_EQ(third.status, 200) << third.raw;
  EXPECT_EQ(third.body, "ok /v1/p3\n");
  EXPECT_NE(third.head.find("\r\nConnection: close"), std::string::npos) << third.head;
  EXPECT_TRUE(closed_by_peer(fd, 3000));
  close(fd);
  EXPECT_EQ(window_decisions(), std::vector<std::string>(3, "allow"));
}

TEST_F(WindowTest, EachKeptAliveRequestIsDecidedAfreshAndARefusalEndsTheConnection) {
  start();
  for (const std::string& refused : {window_path("registry", "/../admin"), "/k/" + std::string(64, 'f') + "/model/registry/x",
                                     window_path("no-such", "/x")}) {
    const int fd = gk_it::connect_tcp("127.0.0.1", gk_->window);
    ASSERT_GE(fd, 0);
    ASSERT_TRUE(gk_it::send_all(fd, get(window_path("registry", "/ok"))));
    EXPECT_EQ(read_answer(fd).status, 200);
    ASSERT_TRUE(gk_it::send_all(fd, get(refused)));
    const Answer a = read_answer(fd);
    EXPECT_EQ(a.status, 403) << refused;
    EXPECT_EQ(a.body, kNoSuchGrant) << refused;
    EXPECT_TRUE(closed_by_peer(fd, 3000)) << refused;
    close(fd);
  }
  EXPECT_EQ(plain_->hits.load(), 3);  // only the three allowed requests reached the upstream
  EXPECT_EQ(window_decisions(), (std::vector<std::string>{"allow", "deny:path-walks-out", "allow", "deny:bad-window-key",
                                                          "allow", "deny:no-grant"}));
}

TEST_F(WindowTest, IdleKeptAliveConnectionIsClosedQuietlyAfterFiveSeconds) {
  start();
  const int fd = gk_it::connect_tcp("127.0.0.1", gk_->window);
  ASSERT_GE(fd, 0);
  ASSERT_TRUE(gk_it::send_all(fd, get(window_path("registry", "/x"))));
  ASSERT_EQ(read_answer(fd).status, 200);
  const auto answered = std::chrono::steady_clock::now();
  EXPECT_TRUE(closed_by_peer(fd, 9000));  // a FIN and no byte: no 400 for a request never sent
  const auto waited = std::chrono::steady_clock::now() - answered;
  close(fd);
  EXPECT_GE(waited, std::chrono::milliseconds(4500));
  EXPECT_EQ(window_decisions(), std::vector<std::string>{"allow"});  // no deny:unreadable-request
}

TEST_F(WindowTest, Http10ConnectionCloseAndCloseDelimitedAnswersEndTheConnection) {
  start();
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"GET " + window_path("registry", "/a") + " HTTP/1.0\r\nHost: g\r\n\r\n", "ok /npm/a\n"},
      {"GET " + window_path("registry", "/a") + " HTTP/1.0\r\nHost: g\r\nConnection: keep-alive\r\n\r\n", "ok /npm/a\n"},
      {get(window_path("registry", "/b"), "Connection: close\r\n"), "ok /npm/b\n"},
      {get(window_path("registry", "/eof")), "until the close\n"},
  };
  for (const auto& [request, body] : cases) {
    const int fd = gk_it::connect_tcp("127.0.0.1", gk_->window);
    ASSERT_GE(fd, 0);
    ASSERT_TRUE(gk_it::send_all(fd, request));
    const Answer a = read_answer(fd);
    EXPECT_EQ(a.status, 200) << request << a.raw;
    EXPECT_EQ(a.body, body) << request;
    EXPECT_NE(a.head.find("\r\nConnection: close"), std::string::npos) << request << a.head;
    EXPECT_TRUE(closed_by_peer(fd, 3000)) << request;
    close(fd);
  }
  // An answer that ends with the connection is a whole answer, not a failure of the upstream.
  for (const std::string& d : window_decisions()) EXPECT_EQ(d, "allow");
}

TEST_F(WindowTest, ClientThatHalfClosesAfterItsRequestStillGetsTheAnswer) {
  start();
  // `nc` and shutdown(SHUT_WR) clients: the FIN can arrive while the window resolves, waits for
  // the pool or connects; each of those states must still answer a whole request.
  for (int i = 0; i < 20; ++i) {
    const int fd = gk_it::connect_tcp("127.0.0.1", gk_->window);
    ASSERT_GE(fd, 0);
    const bool with_body = i % 2 == 1;
    const std::string request = with_body ? "POST " + window_path("registry", "/upload") +
                                                " HTTP/1.1\r\nHost: g\r\nContent-Length: 4\r\n\r\nbody"
                                          : get(window_path(i % 4 == 0 ? "registry" : "anthropic", "/half"));
    ASSERT_TRUE(gk_it::send_all(fd, request));
    shutdown(fd, SHUT_WR);
    const Answer a = read_answer(fd);
    EXPECT_EQ(a.status, 200) << i << "\n" << a.raw;
    EXPECT_EQ(a.body, with_body ? gk_it::sha256_hex("body") + "\n" : (i % 4 == 0 ? "ok /npm/half\n" : "ok /half\n")) << i;
    // The head may have gone out before the FIN was read (then it offered keep-alive): either
    // way the window ends the connection after the answer.
    EXPECT_TRUE(closed_by_peer(fd, 3000)) << i;
    close(fd);
  }
  // A body cut short by the FIN is an unreadable request: the bare 400, never a 504 much later.
  const int fd = gk_it::connect_tcp("127.0.0.1", gk_->window);
  ASSERT_GE(fd, 0);
  ASSERT_TRUE(gk_it::send_all(fd, "POST " + window_path("registry", "/upload") +
                                      " HTTP/1.1\r\nHost: g\r\nContent-Length: 10\r\n\r\nfour"));
  shutdown(fd, SHUT_WR);
  const auto sent = std::chrono::steady_clock::now();
  EXPECT_EQ(gk_it::read_until_close(fd, 10000), gk_it::k400);
  EXPECT_LT(std::chrono::steady_clock::now() - sent, std::chrono::seconds(5));
  close(fd);
}

TEST_F(WindowTest, AtTheSocketCapTheOldestIdleConnectionMakesRoom) {
  start({"--max-window-sockets", "4"});
  std::vector<int> fds;
  for (int i = 0; i < 4; ++i) {
    const int fd = gk_it::connect_tcp("127.0.0.1", gk_->window);
    ASSERT_GE(fd, 0);
    ASSERT_TRUE(gk_it::send_all(fd, get(window_path("registry", "/idle" + std::to_string(i)))));
    ASSERT_EQ(read_answer(fd).status, 200) << i;
    fds.push_back(fd);
    usleep(20000);  // a clear order of idleness
  }
  // All four sockets are idle between requests: a fifth client is served, the oldest idle goes.
  const Answer fifth = send_raw(gk_->window, get(window_path("registry", "/fifth")));
  EXPECT_EQ(fifth.status, 200) << fifth.raw;
  EXPECT_TRUE(closed_by_peer(fds[0], 3000));
  for (int i = 1; i < 4; ++i) {
    ASSERT_TRUE(gk_it::send_all(fds[i], get(window_path("registry", "/again"))));
    EXPECT_EQ(read_answer(fds[i]).status, 200) << i;
  }
  for (int fd : fds) close(fd);
  EXPECT_EQ(metric(*gk_, R"(gatekeeper_connections_over_cap_total{listener="window"})"), 0);
}

}  // namespace
}  // namespace gk_window_test
