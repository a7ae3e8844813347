// Secret sources on real Docker (label docker; skip without an engine, fail under CI=true), with
// the TEST-ONLY gatekeeper and an upstream in this process on an --internal test bridge
// (198.18.0.0/15; the same setup as docker_live_test.cc's window test):
//   - a grant from an environment variable survives `space stop`/`space start` without
//     needs-access, and the upstream sees that value;
//   - a grant from a helper (testing/token_helper.cc, 12-second tokens) is renewed by
//     `spacectl serve`'s keeper, and the upstream sees the newest token, never an older one;
//   - no secret is in serve's log, the records, or `docker inspect` of either container.
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <memory>
#include <thread>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "controller/docker_place.h"
#include "controller/escape_host.h"
#include "controller/process.h"
#include "controller/testing/live_space.h"
#include "controller/testing/test_bridge.h"
#include "tests/integration/http_upstream.h"
#include "tests/support/environment.h"

namespace controller::grants {
namespace {

using nlohmann::json;
using namespace std::chrono_literals;

using testing::docker;

std::string read_all(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

class GrantKeeperLiveTest : public ::testing::Test {
 protected:
  GrantKeeperLiveTest()
      : live_(testing::LiveSpaceOptions{"granttest", testing::kTestPin, std::chrono::minutes(3), 0,
                                        false}) {}
  void SetUp() override { setenv("SPACECTL_LIVE_KEY", env_secret_.c_str(), 1); }
  void TearDown() override {
    stop_serve();
    unsetenv("SPACECTL_LIVE_KEY");
  }
  ProcessOutcome spacectl(const std::vector<std::string>& args) { return live_.spacectl(args); }
  void stop_serve() { live_.stop_serve(); }
  int helper_calls() const {
    std::ifstream in(dir_ + "/count");
    int n = 0;
    in >> n;
    return n;
  }
  static json doc(const ProcessOutcome& o) { return json::parse(o.out, nullptr, false); }

  // The shared live fixture (testing/live_space.h): owner, state under dir_, the leftover check.
  testing::LiveSpace live_;
  const std::string& owner_ = live_.owner();
  const std::string& dir_ = live_.dir();
  const std::string& state_ = live_.state();
  const std::string env_secret_ = "sk-live-env-" + random_hex(12);
};

TEST_F(GrantKeeperLiveTest, EnvGrantSurvivesARestartAndServeRenewsAHelperTokenTheUpstreamSees) {
  GK_REQUIRE(live_.ready(), "no Docker engine, images or seccomp profiles");
  ProcessOutcome o = spacectl({"space", "create", "--name", "grants", "--memory", "256m"});
  ASSERT_EQ(o.exit_code, 0) << o.out << o.err;
  const std::string id = doc(o)["id"], window = doc(o)["window"];
  const std::string key = window.substr(window.rfind('/') + 1);
  const std::string bridge = "gk-" + id + "-test-upstream";
  bool bridge_made = false;
  std::unique_ptr<gk_it::HttpUpstream> upstream;
  struct AtEnd {
    std::function<void()> run;
    ~AtEnd() { run(); }
  } at_end{[&] {
    stop_serve();
    const ProcessOutcome removed = spacectl({"space", "remove", id});
    EXPECT_EQ(removed.exit_code, 0) << removed.out << removed.err;
    upstream.reset();
    if (bridge_made) {
      EXPECT_TRUE(docker({"network", "rm", bridge}).succeeded());
    }
  }};
  const Result<std::string> gateway = testing::make_test_bridge(bridge, owner_);
  bridge_made = gateway.ok();
  ASSERT_TRUE(bridge_made) << gateway.error().message;
  std::uint16_t port = 0;
  const int listen_fd = testing::listen_on(*gateway, port);
  ASSERT_GE(listen_fd, 0) << "listen on " << *gateway << ": " << std::strerror(errno);
  const std::string authority = *gateway + ":" + std::to_string(port);
  upstream = std::make_unique<gk_it::HttpUpstream>(listen_fd, nullptr);

  // A secret over plain http goes only to an address literal the host marked private.
  o = spacectl({"grant", "add", id, "envkey", "--upstream", "http://" + authority + "/v1",
                "--header", "x-api-key", "--unsafe-private-upstream", "--secret-env",
                "SPACECTL_LIVE_KEY"});
  ASSERT_EQ(o.exit_code, 0) << o.out << o.err;
  o = spacectl({"grant", "add", id, "tokens", "--upstream", "http://" + authority + "/v1",
                "--header", "authorization", "--unsafe-private-upstream", "--secret-helper",
                std::string(TOKEN_HELPER) + " ok " + dir_ + "/count 12"});
  ASSERT_EQ(o.exit_code, 0) << o.out << o.err;

  // Stop and start: both are said again, nothing needs access.
  o = spacectl({"space", "stop", id});
  ASSERT_EQ(o.exit_code, 0) << o.out << o.err;
  o = spacectl({"space", "start", id});
  ASSERT_EQ(o.exit_code, 0) << o.out << o.err;
  EXPECT_EQ(doc(o)["needs_access"], json::array()) << o.out;
  EXPECT_EQ(doc(o)["grants_restored"], json::array({"envkey", "tokens"})) << o.out;
  EXPECT_EQ(doc(o)["state"], "running") << o.out;
  EXPECT_EQ(helper_calls(), 2);
  // Only now the gatekeeper joins the test bridge: verify refuses to start a gatekeeper on a
  // network that is not its own.
  ASSERT_TRUE(docker({"network", "connect", bridge, "gk-" + id + "-gatekeeper"}).succeeded());

  // serve's keeper renews the 12-second token at half its life, again and again.
  ASSERT_TRUE(live_.start_serve()) << read_all(dir_ + "/serve.err");
  const auto deadline = std::chrono::steady_clock::now() + 40s;
  while (helper_calls() < 4 && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(200ms);
  }
  ASSERT_GE(helper_calls(), 4) << read_all(dir_ + "/serve.err");
  auto ask = [&](const std::string& grant) {
    ProcessRequest r;
    r.argv = {SPACECTL, "--owner",
              owner_,   "--state-dir",
              state_,   "space",
              "exec",   id,
              "--",     "sh",
              "-c",     "cat > /tmp/request && exec nc -w 5 gatekeeper 8080 < /tmp/request"};
    r.stdin_bytes = "GET /k/" + key + "/model/" + grant +
                    "/ping HTTP/1.0\r\nHost: gatekeeper\r\nAuthorization: Bearer fake\r\n\r\n";
    r.timeout = 60s;
    return run_process(r);
  };
  const int before = helper_calls();
  const ProcessOutcome asked_tokens = ask("tokens");
  const int after = helper_calls();
  const ProcessOutcome asked_env = ask("envkey");
  EXPECT_EQ(asked_tokens.out.rfind("HTTP/1.1 200 OK\r\n", 0), 0u)
      << asked_tokens.out << asked_tokens.err;
  EXPECT_EQ(asked_env.out.rfind("HTTP/1.1 200 OK\r\n", 0), 0u) << asked_env.out << asked_env.err;
  const std::vector<gk_it::SeenRequest> seen = upstream->requests();
  ASSERT_EQ(seen.size(), 2u);
  // The newest token (the one current while the request went), never an earlier one.
  int seen_token = 0;
  for (int k = 1; k <= after; ++k) {
    if (seen[0].credential_sha256.count("authorization") != 0 &&
        seen[0].credential_sha256.at("authorization") ==
            gk_it::sha256_hex("Bearer sk-helper-token-" + std::to_string(k))) {
      seen_token = k;
    }
  }
  EXPECT_GE(seen_token, 3) << "the upstream saw a token from before serve renewed it";
  EXPECT_GE(seen_token, before - 1)
      << "the upstream saw an older token than the current one (helper ran " << before << " times)";
  EXPECT_EQ(seen[1].credential_sha256,
            (std::map<std::string, std::string>{{"x-api-key", gk_it::sha256_hex(env_secret_)}}));

  stop_serve();
  const std::string log = read_all(dir_ + "/serve.err");
  EXPECT_NE(log.find("renewed"), std::string::npos) << log;
  std::vector<std::string> secrets = {env_secret_};
  for (int k = 1; k <= helper_calls(); ++k) {
    secrets.push_back("sk-helper-token-" + std::to_string(k));
  }
  const ProcessOutcome inspected =
      docker({"inspect", "gk-" + id + "-space", "gk-" + id + "-gatekeeper"});
  ASSERT_TRUE(inspected.succeeded()) << inspected.err;
  for (const std::string& secret : secrets) {
    EXPECT_EQ(log.find(secret), std::string::npos) << secret << " in serve's log";
    EXPECT_EQ(inspected.out.find(secret), std::string::npos) << secret << " in docker inspect";
    EXPECT_EQ(asked_tokens.out.find(secret), std::string::npos) << secret << " reached the space";
    for (const auto& entry : std::filesystem::recursive_directory_iterator(state_)) {
      if (entry.is_regular_file()) {
        EXPECT_EQ(read_all(entry.path()).find(secret), std::string::npos)
            << secret << " in " << entry.path();
      }
    }
  }
}

}  // namespace
}  // namespace controller::grants
