// The control channel (docs/reference-behaviour.md#control-endpoints shapes), /metrics, the window
// placeholder, the client mode's exit codes, and start-up problems. Loopback only; no namespace
// needed.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <sstream>

#include "tests/integration/harness.h"

namespace {

using gk_it::Gatekeeper;

const std::string kBinary = GK_BINARY_DIR "/bin/gatekeeper-test";

// Runs a shell command line (test only); returns (exit code, stdout).
std::pair<int, std::string> shell(const std::string& command) {
  const std::string out = "/tmp/gk-ctl-" + std::to_string(getpid()) + ".out";
  const int status = std::system((command + " >" + out).c_str());
  std::ifstream in(out);
  std::stringstream s;
  s << in.rdbuf();
  unlink(out.c_str());
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, s.str()};
}

TEST(ControlTest, ReadyLineNamesTheBoundPortsAndControlIsOnLoopback) {
  Gatekeeper gk({});
  ASSERT_TRUE(gk.ready()) << gk.ready_line << gk.stderr_text();
  EXPECT_NE(gk.ready_line.find(" control=127.0.0.1:"), std::string::npos);
  EXPECT_NE(gk.ready_line.find("corridor=127.0.0.1:"), std::string::npos);
}

TEST(ControlTest, AnswersTheReferenceShapes) {
  Gatekeeper gk({});
  ASSERT_TRUE(gk.ready());
  auto health = gk.request("GET", "/health");
  EXPECT_EQ(health.status, 200);
  EXPECT_EQ(health.body, R"({"ready":true,"mode":"allowlist","domains":0,"grants":0})");
  auto policy = gk.request("GET", "/policy?x=1");
  EXPECT_EQ(policy.body, R"({"mode":"allowlist","domains":[],"grants":[]})");
  for (auto [m, p] : {std::pair{"GET", "/grants"}, {"POST", "/anything"}, {"GET", "/"}}) {
    auto a = gk.request(m, p);
    EXPECT_EQ(a.status, 404) << m << " " << p;
    EXPECT_EQ(a.body, R"({"error":"no such control endpoint"})");
  }
  auto not_json = gk.request("POST", "/network", "{");
  EXPECT_EQ(not_json.status, 400);
  EXPECT_EQ(not_json.body, R"({"error":"the body is not JSON"})");
  auto empty = gk.request("POST", "/network", "");
  EXPECT_EQ(empty.body, R"({"error":"the body is not JSON"})");
  auto not_object = gk.request("POST", "/network", "[]");
  EXPECT_EQ(not_object.body, R"({"error":"the body is not an object"})");
  auto bad_mode = gk.request("POST", "/network", R"({"mode":"wide","domains":[]})");
  EXPECT_EQ(bad_mode.body, R"({"error":"mode is \"allowlist\" or \"open\""})");
  auto ok = gk.request("POST", "/network", R"({"mode":"open","domains":["Example.COM."]})");
  EXPECT_EQ(ok.status, 200);
  EXPECT_EQ(ok.body, R"({"ok":true})");
  EXPECT_EQ(gk.request("GET", "/policy").body, R"({"mode":"open","domains":["example.com"],"grants":[]})");
}

TEST(ControlTest, BodyOverOneMebibyteIsNotJsonAndAtTheLimitIsRead) {
  Gatekeeper gk({});
  ASSERT_TRUE(gk.ready());
  const std::string prefix = R"({"mode":"open","domains":[],"pad":")";
  const std::string at_limit = prefix + std::string((1 << 20) - prefix.size() - 2, 'a') + "\"}";
  ASSERT_EQ(at_limit.size(), 1u << 20);
  EXPECT_NE(gk.request("POST", "/network", at_limit).body, R"({"error":"the body is not JSON"})");
  const std::string over = prefix + std::string((1 << 20) - prefix.size() - 1, 'a') + "\"}";
  auto a = gk.request("POST", "/network", over);
  EXPECT_EQ(a.status, 400);
  EXPECT_EQ(a.body, R"({"error":"the body is not JSON"})");
}

TEST(ControlTest, GrantsAreStoredAndPolicyNeverShowsTheSecret) {
  Gatekeeper gk({});
  ASSERT_TRUE(gk.ready());
  auto a = gk.request("POST", "/grants",
                      R"({"id":"anthropic","upstream":"https://api.anthropic.com/","header":"x-api-key","secret":"s3cr3t-VALUE"})");
  EXPECT_EQ(a.status, 200) << a.body;
  auto bad = gk.request("POST", "/grants", R"({"id":"../../etc","upstream":"https://a.example/"})");
  EXPECT_EQ(bad.status, 400);
  EXPECT_EQ(bad.body, R"({"error":"a grant id is 1 to 64 letters, digits, dots, dashes or underscores"})");
  const std::string policy = gk.request("GET", "/policy").body;
  EXPECT_EQ(policy, R"({"mode":"allowlist","domains":[],"grants":["anthropic"]})");
  for (const char* path : {"/policy", "/health", "/journal", "/metrics"}) {
    EXPECT_EQ(gk.request("GET", path).body.find("s3cr3t"), std::string::npos) << path;
  }
}

TEST(ControlTest, MetricsCountDecisionsPerListenerAndWord) {
  Gatekeeper gk({});
  ASSERT_TRUE(gk.ready());
  for (int i = 0; i < 3; ++i) {
    auto t = gk_it::open_tunnel(gk.corridor, "example.com:80");
    gk_it::read_until_close(t.fd, 5000);
    close(t.fd);
  }
  auto m = gk.request("GET", "/metrics");
  EXPECT_EQ(m.status, 200);
  EXPECT_NE(m.body.find("gatekeeper_decisions_total{listener=\"corridor\",decision=\"deny:port\"} 3\n"),
            std::string::npos) << m.body;
  EXPECT_NE(m.body.find("gatekeeper_refused_connections_total{listener=\"corridor\",status=\"403\"} 3\n"),
            std::string::npos);
  EXPECT_NE(m.body.find("# TYPE gatekeeper_open_tunnels gauge\n"), std::string::npos);
}

TEST(ControlTest, WindowRefusesEveryRequestWhileNoWindowKeyIsSet) {
  Gatekeeper gk({});
  ASSERT_TRUE(gk.ready());
  const int fd = gk_it::connect_tcp("127.0.0.1", gk.window);
  gk_it::send_all(fd, "GET /model/anthropic/v1/messages?secret=1 HTTP/1.1\r\nHost: x\r\n\r\n");
  const std::string answer = gk_it::read_until_close(fd, 5000);
  close(fd);
  EXPECT_EQ(answer.rfind("HTTP/1.1 403 Forbidden\r\n", 0), 0u);
  EXPECT_NE(answer.find("\r\n\r\n{\"error\":\"no such grant\"}"), std::string::npos);
  auto j = gk.journal();
  ASSERT_FALSE(j.empty());
  EXPECT_EQ(j.back().listener, "window");
  EXPECT_EQ(j.back().host, "window-key");
  EXPECT_EQ(j.back().decision, "deny:bad-window-key");
}

TEST(ControlClientTest, ExitCodesSeparateUnreachableFromHttpError) {
  Gatekeeper gk({});
  ASSERT_TRUE(gk.ready());
  const std::string port = std::to_string(gk.control);
  auto ok = shell(kBinary + " control GET /health --port " + port + " </dev/null 2>/dev/null");
  EXPECT_EQ(ok.first, 0);
  EXPECT_EQ(ok.second, "{\"ready\":true,\"mode\":\"allowlist\",\"domains\":0,\"grants\":0}\n");
  auto posted = shell("echo '{\"mode\":\"open\",\"domains\":[\"a.example\"]}' | " + kBinary +
                      " control POST /network --port " + port);
  EXPECT_EQ(posted.first, 0);
  EXPECT_EQ(gk.request("GET", "/policy").body, R"({"mode":"open","domains":["a.example"],"grants":[]})");
  auto missing = shell(kBinary + " control GET /nope --port " + port + " </dev/null");
  EXPECT_EQ(missing.first, 4);
  EXPECT_EQ(missing.second, "{\"error\":\"no such control endpoint\"}\n");
  EXPECT_EQ(gk.terminate(), 0);
  auto unreachable = shell(kBinary + " control GET /health --port " + port + " </dev/null");
  EXPECT_EQ(unreachable.first, 3);
}

TEST(ServeStartupTest, StartupProblemsExitTwoWithOneLine) {
  for (const char* args : {"--bind 0.0.0.0", "--bind 192.0.2.1", "--inner-subnet 240.0.0.0/24", "--inner-subnet 127.0.0.0/33",
                           "--bind 127.0.0.1 --corridor-port 70000", "--bind 127.0.0.1 --frobnicate 1",
                           "--bind 127.0.0.1 --inner-subnet 127.0.0.0/8"}) {
    const std::string err = "/tmp/gk-startup-" + std::to_string(getpid()) + ".err";
    auto r = shell("timeout 5 " + kBinary + " serve " + args +
                   " --control-port 0 --window-port 0 --corridor-port 0 2>" + err);
    EXPECT_EQ(r.first, 2) << args;
    EXPECT_EQ(r.second, "") << "the ready line must not appear: " << args;
    std::ifstream in(err);
    std::string line;
    int problem_lines = 0;
    while (std::getline(in, line)) {
      if (line.find("unsafe test build") == std::string::npos) ++problem_lines;
    }
    unlink(err.c_str());
    EXPECT_EQ(problem_lines, 1) << args;
  }
}

}  // namespace
