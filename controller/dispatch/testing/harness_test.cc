// The test harness's own reading of answers: a test that reads a garbled answer as a good one
// passes for the wrong reason.
#include "controller/dispatch/testing/harness.h"

#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <string>

namespace controller::dispatch::testing {
namespace {

// A listener on 127.0.0.1 that answers the one client it accepts with `answer`.
class OneAnswerServer {
 public:
  OneAnswerServer() {
    fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in sin{};
    sin.sin_family = AF_INET;
    sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof sin;
    if (::bind(fd_, reinterpret_cast<const sockaddr*>(&sin), sizeof sin) == 0 &&
        ::listen(fd_, 1) == 0 && ::getsockname(fd_, reinterpret_cast<sockaddr*>(&sin), &len) == 0) {
      port_ = ntohs(sin.sin_port);
    }
  }
  ~OneAnswerServer() { ::close(fd_); }
  OneAnswerServer(const OneAnswerServer&) = delete;
  OneAnswerServer& operator=(const OneAnswerServer&) = delete;
  [[nodiscard]] int port() const { return port_; }
  // Accepts the client that already connected (the backlog holds it) and answers.
  bool answer(const std::string& bytes) {
    const int c = ::accept4(fd_, nullptr, nullptr, SOCK_CLOEXEC);
    if (c < 0) return false;
    const bool ok =
        ::send(c, bytes.data(), bytes.size(), MSG_NOSIGNAL) == static_cast<ssize_t>(bytes.size());
    ::close(c);
    return ok;
  }

 private:
  int fd_ = -1;
  int port_ = 0;
};

Answer upgrade_answer(const std::string& bytes) {
  OneAnswerServer server;
  EXPECT_NE(server.port(), 0);
  Client client(server.port());
  EXPECT_TRUE(client.connected());
  EXPECT_TRUE(server.answer(bytes));
  return client.read_upgrade(10000);
}

TEST(HarnessTest, ReadsAnUpgradeAnswersStatusAndFields) {
  const Answer a = upgrade_answer("HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\n\r\n");
  ASSERT_TRUE(a.ok);
  EXPECT_EQ(a.status, 101);
  EXPECT_EQ(a.header("Upgrade"), "websocket");
}

// atoi read "1x1" as status 1 and "+01" as 1, and the answer counted as whole.
TEST(HarnessTest, AnUpgradeAnswerWhoseStatusIsNotThreeDigitsIsNoAnswer) {
  for (const char* line :
       {"HTTP/1.1 1x1 Switching Protocols", "HTTP/1.1 +01 Switching Protocols",
        "HTTP/1.1 -01 Switching Protocols", "HTTP/1.1 abc Switching Protocols",
        "HTTP/1.1 1010 Switching Protocols", "HTTP/1.1 099 Switching Protocols"}) {
    const Answer a = upgrade_answer(std::string(line) + "\r\nUpgrade: websocket\r\n\r\n");
    EXPECT_FALSE(a.ok) << line << " read as status " << a.status;
  }
}

}  // namespace
}  // namespace controller::dispatch::testing
