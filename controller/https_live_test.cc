// Live Docker (LABEL docker; skip without an engine, fail under CI=true): the default space image
// is one an agent can work in. From inside a real space, Debian's curl fetches an allowed name over
// HTTPS through the corridor (the space's own https_proxy), and the same request to a name that is
// not on the allowlist fails at the corridor; git works in the space.
//
// The upstream: a TLS server in this process (tests/integration/http_upstream.h, a test CA made
// here) on the host's address of a bridge in 198.18.0.0/15 that this test creates; a relay
// container on that bridge answers as `upstream.test` and `blocked.test` (Docker's DNS, which the
// gatekeeper's resolver asks) and pipes each connection to it. The space runs behind the TEST-ONLY
// gatekeeper (198.18.0.0/15 counts as public there; the release gatekeeper refuses it). The test
// CA goes into the space's /tmp for this test only: curl is given it with --cacert, and without it
// the same fetch fails verification, so the image trusts Debian's bundle and nothing else.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <memory>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "controller/docker_place.h"
#include "controller/escape_host.h"
#include "controller/process.h"
#include "controller/testing/live_space.h"
#include "controller/testing/test_bridge.h"
#include "tests/integration/http_upstream.h"
#include "tests/support/environment.h"

namespace controller {
namespace {

using nlohmann::json;

using testing::docker;

const std::string& kBin = testing::kLiveBin;

std::string read_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

std::string trimmed(std::string s) {
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) s.pop_back();
  return s;
}

// The shared live fixture (testing/live_space.h) behind the TEST-ONLY gatekeeper.
class HttpsLiveTest : public ::testing::Test {
 protected:
  HttpsLiveTest()
      : live_(testing::LiveSpaceOptions{"httpstest", testing::kTestPin, std::chrono::minutes(2), 0,
                                        false}) {}
  bool ready() { return live_.ready(); }
  ProcessOutcome spacectl(const std::vector<std::string>& args, const std::string& stdin_bytes = {},
                          bool as_json = true) {
    return live_.spacectl(args, stdin_bytes, as_json);
  }
  // A command in the space, as its user; the space's environment (https_proxy) applies.
  ProcessOutcome inside(const std::string& id, const std::vector<std::string>& argv,
                        const std::string& stdin_bytes = {}) {
    return live_.inside(id, argv, stdin_bytes);
  }
  // The corridor's journal records as "decision host:port".
  std::vector<std::string> corridor_records(const std::string& id) {
    std::vector<std::string> out;
    const json records = json::parse(spacectl({"journal", id}).out, nullptr, false);
    if (records.is_object() && records.contains("records") && records["records"].is_array()) {
      for (const json& r : records["records"]) {
        if (r.is_object() && r.value("listener", "") == "corridor") {
          out.push_back(r.value("decision", "") + " " + r.value("host", "") + ":" +
                        std::to_string(r.value("port", 0)));
        }
      }
    }
    return out;
  }

  testing::LiveSpace live_;
  const std::string& owner_ = live_.owner();
  const std::string& state_ = live_.state();
};

TEST_F(HttpsLiveTest, CurlFetchesAnAllowedNameThroughTheCorridorAndNotAnotherName) {
  GK_REQUIRE(ready(),
             "no Docker engine, pinned images (cmake --build --target images) or seccomp profiles");
  ProcessOutcome o = spacectl({"space", "create", "--name", "https", "--memory", "256m"});
  ASSERT_EQ(o.exit_code, 0) << o.out << o.err;
  const std::string id = json::parse(o.out)["id"];
  const std::string bridge = "gk-" + id + "-https-upstream", relay = "gk-" + id + "-https-relay";
  bool bridge_made = false;
  std::unique_ptr<gk_it::HttpUpstream> upstream;
  // However the body ends: the space, the relay and the upstream, then the bridge.
  struct AtEnd {
    std::function<void()> run;
    ~AtEnd() { run(); }
  } at_end{[&] {
    const ProcessOutcome removed = spacectl({"space", "remove", id});
    EXPECT_EQ(removed.exit_code, 0) << removed.out << removed.err;
    (void)docker({"rm", "--force", relay});
    upstream.reset();
    if (bridge_made) {
      EXPECT_TRUE(docker({"network", "rm", bridge}).succeeded());
    }
  }};

  // The host's address on the bridge, where the TLS upstream listens.
  const Result<std::string> gateway = testing::make_test_bridge(bridge, owner_);
  bridge_made = gateway.ok();
  ASSERT_TRUE(bridge_made) << gateway.error().message;
  const gk_it::TestPki pki = gk_it::make_test_pki(state_, {"upstream.test", "blocked.test"});
  ASSERT_TRUE(pki.ok);
  std::uint16_t port = 0;
  const int listen_fd = testing::listen_on(*gateway, port);
  ASSERT_GE(listen_fd, 0) << "listen on " << *gateway << ": " << std::strerror(errno);
  upstream =
      std::make_unique<gk_it::HttpUpstream>(listen_fd, &pki);  // closes the socket when reset

  // The relay: the space image's busybox nc, hardened like a space, answering on 443 under both
  // names and piping each connection to the upstream.
  const std::string image = trimmed(read_text(kBin + "/space-image.id"));
  o = docker({"run",
              "--detach",
              "--name",
              relay,
              "--network",
              bridge,
              "--network-alias",
              "upstream.test",
              "--network-alias",
              "blocked.test",
              "--read-only",
              "--cap-drop",
              "ALL",
              "--security-opt",
              "no-new-privileges",
              "--user",
              "70000:70000",
              "--pids-limit",
              "64",
              "--memory",
              "64m",
              "--label",
              "spacectl.space.owner=" + owner_,
              image,
              "nc",
              "-ll",
              "-p",
              "443",
              "-e",
              "nc",
              *gateway,
              std::to_string(port)});
  ASSERT_TRUE(o.succeeded()) << o.describe();
  ASSERT_TRUE(docker({"network", "connect", bridge, "gk-" + id + "-gatekeeper"}).succeeded());
  o = spacectl({"network", "set", id, "--mode", "allowlist", "--domain", "upstream.test"});
  ASSERT_EQ(o.exit_code, 0) << o.out << o.err;
  o = inside(id, {"sh", "-c", "cat > /tmp/test-ca.pem"}, read_text(pki.ca_file));
  ASSERT_EQ(o.exit_code, 0) << o.describe();

  // The allowed name, over HTTPS, through the corridor the space's environment names.
  const ProcessOutcome fetched =
      inside(id, {"curl", "--silent", "--show-error", "--max-time", "20", "--cacert",
                  "/tmp/test-ca.pem", "https://upstream.test/hello"});
  EXPECT_EQ(fetched.exit_code, 0) << fetched.describe() << "\ncorridor: "
                                  << ::testing::PrintToString(corridor_records(id));
  EXPECT_EQ(fetched.out, "ok /hello\n");
  const std::vector<gk_it::SeenRequest> seen = upstream->requests();
  ASSERT_EQ(seen.size(), 1u) << "requests at the upstream after " << upstream->connections
                             << " connections";
  EXPECT_EQ(seen[0].method, "GET");
  EXPECT_EQ(seen[0].target, "/hello");
  EXPECT_EQ(seen[0].host, "upstream.test");

  // Without the test CA the same fetch fails verification (curl exit 60): the image trusts
  // Debian's bundle only, and the test CA is in no image.
  const ProcessOutcome untrusted =
      inside(id, {"curl", "--silent", "--max-time", "20", "https://upstream.test/untrusted"});
  EXPECT_EQ(untrusted.exit_code, 60) << untrusted.describe();

  // A name the allowlist does not hold: the corridor answers the CONNECT with 403 (curl exit 56)
  // and nothing reaches the upstream, though the relay answers that name too.
  const ProcessOutcome refused =
      inside(id, {"curl", "--silent", "--show-error", "--max-time", "20", "--cacert",
                  "/tmp/test-ca.pem", "https://blocked.test/hello"});
  EXPECT_EQ(refused.exit_code, 56) << refused.describe();
  EXPECT_NE(refused.err.find("403"), std::string::npos) << refused.err;
  EXPECT_EQ(upstream->requests().size(), 1u);
  const std::vector<std::string> records = corridor_records(id);
  EXPECT_EQ(std::count(records.begin(), records.end(), "allow upstream.test:443"), 2)
      << ::testing::PrintToString(records);
  EXPECT_EQ(std::count(records.begin(), records.end(), "deny:not-on-allowlist blocked.test:443"), 1)
      << ::testing::PrintToString(records);

  // git's own HTTPS transport works through the corridor too (the agent's `git clone https://`):
  // git-remote-https asks the upstream for the repository's refs over TLS. The test upstream is
  // no git server, so the command itself fails; what counts is the request git made.
  const ProcessOutcome ls_remote = inside(id, {"git", "-c", "http.sslCAInfo=/tmp/test-ca.pem",
                                               "ls-remote", "https://upstream.test/project.git"});
  EXPECT_EQ(ls_remote.err.find("remote helper"), std::string::npos) << ls_remote.describe();
  const std::vector<gk_it::SeenRequest> after_git = upstream->requests();
  ASSERT_EQ(after_git.size(), 2u) << ls_remote.describe();
  EXPECT_EQ(after_git[1].method, "GET");
  EXPECT_EQ(after_git[1].target, "/project.git/info/refs?service=git-upload-pack");
  EXPECT_EQ(after_git[1].host, "upstream.test");

  // git works in the space: a repository, a commit by the space's user, its log.
  const ProcessOutcome git =
      inside(id, {"sh", "-c",
                  "git init -q /tmp/g && cd /tmp/g && echo hi > a && git add a && "
                  "git -c user.name=agent -c user.email=agent@example.invalid commit -qm first && "
                  "git log --format=%s && git status --porcelain | wc -l"});
  EXPECT_EQ(git.exit_code, 0) << git.describe();
  EXPECT_EQ(git.out, "first\n0\n");
}

}  // namespace
}  // namespace controller
