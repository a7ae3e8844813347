// Hostile clients end only their own socket: a header slowloris, the malicious lines of the
// reference escape suite (case 49), a 1200-socket flood (case 50), held refusals past the socket
// cap; SIGTERM closes tunnels and the loop ends with no handle open.
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>

#include "tests/integration/harness.h"
#include "tests/support/environment.h"

namespace {

using gk_it::Gatekeeper;
using gk_it::TestNet;

void reset_close(int fd) {
  linger l{1, 0};
  setsockopt(fd, SOL_SOCKET, SO_LINGER, &l, sizeof l);
  close(fd);
}

bool corridor_carries(Gatekeeper& gk) {
  auto t = gk_it::open_tunnel(gk.corridor, "public.test:443", "ECHO\nping");
  const bool ok = t.head == gk_it::k200;
  shutdown(t.fd, SHUT_WR);
  const std::string back = gk_it::read_until_close(t.fd, 5000);
  close(t.fd);
  return ok && back == "ping";
}

class RobustnessTest : public ::testing::Test {
 protected:
  void start(std::vector<std::string> extra = {}) {
    GK_REQUIRE(gk_test::running_as_root() && gk_test::can_use_network_namespaces(),
               "root and network namespaces (ip netns) for the 198.18.0.x test hosts");
    rlimit r{8192, 8192};
    setrlimit(RLIMIT_NOFILE, &r);  // the flood needs more than 1024 descriptors (inherited)
    net = std::make_unique<TestNet>();
    ASSERT_TRUE(net->ok()) << net->error;
    extra.push_back("--dns-server");
    extra.push_back(net->dns());
    gk = std::make_unique<Gatekeeper>(extra);
    ASSERT_TRUE(gk->ready()) << gk->ready_line << gk->stderr_text();
    gk->allow({"public.test"});
  }
  std::unique_ptr<TestNet> net;
  std::unique_ptr<Gatekeeper> gk;
};

TEST_F(RobustnessTest, HeaderSlowlorisIsCutAtTheHeadDeadline) {
  start();
  if (HasFatalFailure() || IsSkipped()) return;
  const int fd = gk_it::connect_tcp("127.0.0.1", gk->corridor);
  const auto begin = std::chrono::steady_clock::now();
  std::string answer;
  bool eof = false;
  // One byte a second never finishes the head.
  const std::string head = "CONNECT public.test:443 HTTP/1.1\r\n";
  for (std::size_t i = 0; i < head.size() && !eof; ++i) {
    gk_it::send_all(fd, head.substr(i, 1));
    answer += gk_it::read_until_close(fd, 1000, &eof);
  }
  answer += gk_it::read_until_close(fd, 5000, &eof);
  const auto took = std::chrono::steady_clock::now() - begin;
  close(fd);
  EXPECT_EQ(answer, gk_it::k400);
  EXPECT_GE(took, std::chrono::milliseconds(9500));
  EXPECT_LT(took, std::chrono::milliseconds(12500));
  EXPECT_EQ(gk->journal().back().decision, "deny:unreadable-request");
}

TEST_F(RobustnessTest, SurvivesTheMaliciousClientsOfEscapeCase49) {
  start();
  if (HasFatalFailure() || IsSkipped()) return;
  const std::vector<std::string> lines = {
      "CONNECT\r\n\r\n",
      "CONNECT :443 HTTP/1.1\r\n\r\n",
      "CONNECT example.com: HTTP/1.1\r\n\r\n",
      "CONNECT [::1:443 HTTP/1.1\r\n\r\n",
      "GET / HTTP/1.1\r\n\r\n",
      std::string(40000, 'x'),
      "CONNECT public.test:443 HTTP/1.1\r\nX: " + std::string(100000, 'a') + "\r\n\r\n",
  };
  for (int round = 0; round < 12; ++round) {
    for (const std::string& line : lines) {
      for (bool reset : {false, true}) {
        const int fd = gk_it::connect_tcp("127.0.0.1", gk->corridor);
        ASSERT_GE(fd, 0) << "round " << round;
        if (reset) {
          gk_it::send_all(fd, line.substr(0, line.size() / 2));
          reset_close(fd);
        } else {
          gk_it::send_all(fd, line);
          const std::string answer = gk_it::read_until_close(fd, 5000);
          EXPECT_TRUE(answer == gk_it::k400 || answer == gk_it::k403) << answer.substr(0, 80);
          close(fd);
        }
      }
    }
  }
  EXPECT_TRUE(gk->alive());
  EXPECT_TRUE(corridor_carries(*gk));
}

TEST_F(RobustnessTest, SurvivesA1200SocketFloodAndStillCarries) {
  start();
  if (HasFatalFailure() || IsSkipped()) return;
  const std::size_t before = gk->journal().size();
  std::vector<int> fds;
  for (std::uint16_t port : {gk->corridor, gk->window, gk->control}) {
    for (int i = 0; i < 400; ++i) {
      const int fd = gk_it::connect_tcp("127.0.0.1", port);
      if (fd >= 0) fds.push_back(fd);
    }
  }
  EXPECT_EQ(fds.size(), 1200u);
  usleep(300000);
  EXPECT_TRUE(gk->alive());
  for (int fd : fds) close(fd);
  usleep(300000);
  ASSERT_TRUE(gk->alive());
  auto j = gk->journal();
  EXPECT_GE(j.size(), before);
  int notes = 0;
  for (const auto& r : j) notes += r.decision == "deny:too-many-connections";
  EXPECT_GE(notes, 1);
  EXPECT_LT(notes, 5) << "notes are rate-limited per (listener, decision)";
  const std::string metrics = gk->request("GET", "/metrics").body;
  EXPECT_NE(metrics.find("gatekeeper_connections_over_cap_total{listener=\"corridor\"} 272"), std::string::npos)
      << "400 sockets against a cap of 128: 272 dropped and counted";
  EXPECT_TRUE(corridor_carries(*gk));
}

TEST_F(RobustnessTest, ThreeTimesTheSocketCapOfHeldRefusalsAreAllAnswered) {
  start({"--max-corridor-sockets", "32"});
  if (HasFatalFailure() || IsSkipped()) return;
  std::vector<int> held;
  int answered = 0;
  for (int i = 0; i < 96; ++i) {
    auto t = gk_it::open_tunnel(gk->corridor, "public.test:80");  // deny:port
    answered += t.head == gk_it::k403;
    held.push_back(t.fd);  // read the refusal, never close: the gatekeeper must let go
  }
  EXPECT_EQ(answered, 96);
  for (int fd : held) close(fd);
  EXPECT_TRUE(corridor_carries(*gk));
}

TEST_F(RobustnessTest, SigtermClosesTunnelsAndLeavesNoHandleOpen) {
  start();
  if (HasFatalFailure() || IsSkipped()) return;
  std::vector<int> held;
  for (int i = 0; i < 8; ++i) {
    auto t = gk_it::open_tunnel(gk->corridor, "public.test:443", "HOLD\n");
    ASSERT_EQ(t.head, gk_it::k200);
    held.push_back(t.fd);
  }
  const int idle = gk_it::connect_tcp("127.0.0.1", gk->control);
  EXPECT_EQ(gk->terminate(), 0) << gk->stderr_text();
  EXPECT_EQ(gk->stderr_text().find("handles still open"), std::string::npos);
  for (int fd : held) {
    bool eof = false;
    gk_it::read_until_close(fd, 2000, &eof);
    EXPECT_TRUE(eof);
    close(fd);
  }
  close(idle);
}

}  // namespace
