// Faults a host really sees, on real Docker (label docker; skip without an engine, fail under
// CI=true): the gatekeeper killed with SIGKILL while the space holds connections to it, and a
// space that floods its output, exhausts its pids and memory and spins its CPUs while the host
// drives it. Each asserts what the user sees and that the boundary stayed closed. Every test
// uses its own owner and ends by proving nothing of that owner is left.
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "controller/docker_place.h"
#include "controller/process.h"
#include "controller/testing/live_space.h"
#include "controller/testing/spawn.h"
#include "policy/number.h"
#include "tests/support/environment.h"

extern char** environ;

namespace controller {
namespace {

using nlohmann::json;
using Clock = std::chrono::steady_clock;

using testing::docker;

class FaultsDockerTest : public ::testing::Test {
 protected:
  // The shared live fixture (testing/live_space.h): owner, state, pins, profiles, and at the
  // end the proof that nothing of the owner is left.
  FaultsDockerTest() : live_(testing::LiveSpaceOptions{"faults"}) {}
  void TearDown() override {
    for (pid_t p : background_) {
      kill(p, SIGKILL);
      waitpid(p, nullptr, 0);
    }
    if (gk_test::docker_engine_answers() && !id_.empty()) (void)spacectl({"space", "remove", id_});
  }
  bool ready() { return live_.ready(); }
  std::vector<std::string> argv(const std::vector<std::string>& args) const {
    std::vector<std::string> a = live_.base();
    a.insert(a.end(), args.begin(), args.end());
    return a;
  }
  ProcessOutcome spacectl(const std::vector<std::string>& args, const std::string& stdin_bytes = {},
                          std::chrono::milliseconds timeout = std::chrono::minutes(5)) {
    ProcessRequest r;
    r.argv = argv(args);
    r.stdin_bytes = stdin_bytes;
    r.timeout = timeout;
    return run_process(r);
  }
  // spacectl in the background, output discarded (ended in TearDown at the latest).
  pid_t background(const std::vector<std::string>& args) {
    const pid_t pid = testing::spawn_quiet(argv(args));
    EXPECT_GT(pid, 0) << "spawn " << SPACECTL;
    if (pid > 0) background_.push_back(pid);
    return pid;
  }
  static json doc(const ProcessOutcome& o) { return json::parse(o.out, nullptr, false); }
  json listed() {
    const json d = doc(spacectl({"space", "list"}));
    return d.is_object() && d["spaces"].is_array() && d["spaces"].size() == 1 ? d["spaces"][0]
                                                                              : json();
  }
  std::string create(const std::string& memory = "256m") {
    const ProcessOutcome o = spacectl({"space", "create", "--name", "faults", "--memory", memory});
    EXPECT_EQ(o.exit_code, 0) << o.out << o.err;
    const json d = doc(o);
    id_ = d.is_object() && d.contains("id") && d["id"].is_string() ? d["id"].get<std::string>()
                                                                   : std::string();
    return id_;
  }
  // The gatekeeper's address on the space's inner network ("" when it has none).
  std::string gatekeeper_address() {
    const std::string inner = "gk-" + id_ + "-network";
    std::string out = docker({"inspect", "--format",
                              "{{(index .NetworkSettings.Networks \"" + inner + "\").IPAddress}}",
                              "gk-" + id_ + "-gatekeeper"})
                          .out;
    while (!out.empty() && (out.back() == '\n' || out.back() == ' ')) out.pop_back();
    return out;
  }
  // Waits (up to `seconds`) until the gatekeeper holds `want` connections from the space.
  bool gatekeeper_sockets_at_least(int want, int seconds) {
    for (int i = 0; i < seconds * 4; ++i) {
      const ProcessOutcome o = docker(
          {"exec", "gk-" + id_ + "-gatekeeper", "/gatekeeper", "control", "GET", "/metrics"});
      // The corridor's and the window's (the control listener holds this query's own).
      int open = 0;
      for (const char* listener : {"corridor", "window"}) {
        const std::string key =
            std::string("gatekeeper_open_sockets{listener=\"") + listener + "\"} ";
        if (const std::size_t at = o.out.find(key); at != std::string::npos) {
          const std::size_t from = at + key.size();
          const std::string value = o.out.substr(from, o.out.find('\n', from) - from);
          const std::optional<int> n = policy::parse_number<int>(value);
          EXPECT_TRUE(n.has_value()) << key << "'" << value << "' is not a count";
          open += n.value_or(0);
        }
      }
      if (open >= want) return true;
      usleep(250000);
    }
    return false;
  }

  testing::LiveSpace live_;
  std::string id_;
  std::vector<pid_t> background_;
};

TEST_F(FaultsDockerTest, AGatekeeperKilledWithConnectionsOpenLeavesNoWayOutAndStartRestoresIt) {
  GK_REQUIRE(ready(),
             "needs a Docker engine and the pinned images (cmake --build <dir> --target images)");
  const std::string id = create();
  ASSERT_TRUE(is_space_id(id));
  ProcessOutcome o =
      spacectl({"network", "set", id, "--mode", "allowlist", "--domain", "example.com"});
  ASSERT_EQ(o.exit_code, 0) << o.out << o.err;
  o = spacectl({"grant", "add", id, "model", "--upstream", "https://api.example.com/v1", "--header",
                "x-api-key"},
               "sk-" + random_hex(8));
  ASSERT_EQ(o.exit_code, 0) << o.out << o.err;
  // Connections the space holds open at the corridor and the window: heads started, never ended
  // (no traffic leaves; the gatekeeper waits for the rest).
  // By address, not by the `gatekeeper` alias: the name needs the engine's embedded DNS, the
  // address only the inner network (and after the kill, the name's failure would prove nothing).
  const std::string gk = gatekeeper_address();
  ASSERT_FALSE(gk.empty());
  background({"space", "exec", id, "--", "/bin/sh", "-c",
              "(printf 'CONNECT example.com:4'; sleep 120) | nc " + gk +
                  " 3128 & "
                  "(printf 'GET /k/'; sleep 120) | nc " +
                  gk + " 8080 & sleep 120"});
  ASSERT_TRUE(gatekeeper_sockets_at_least(2, 30))
      << "the space's connections never reached the gatekeeper";

  ASSERT_TRUE(docker({"kill", "--signal", "KILL", "gk-" + id + "-gatekeeper"}).succeeded());
  // At once, from inside: the gatekeeper's ports answer nothing, and nothing else is a way out
  // (the inner network is internal: no route to any address; test addresses of RFC 2544 only).
  const auto tried = Clock::now();
  o = spacectl({"space", "exec", id, "--", "/bin/sh", "-c",
                "for t in '" + gk + " 3128' '" + gk +
                    " 8080' 'gatekeeper 3128' '198.18.0.1 443' '198.19.255.1 80'; do "
                    "if nc -w 3 $t </dev/null; then echo \"OPEN $t\"; fi; done; echo done"},
               {}, std::chrono::seconds(60));
  ASSERT_EQ(o.exit_code, 0) << o.out << o.err;
  EXPECT_EQ(o.out, "done\n") << "a way out after the gatekeeper died: " << o.out;
  EXPECT_LT(Clock::now() - tried, std::chrono::seconds(45));
  // The user sees it.
  json s = listed();
  EXPECT_EQ(s["state"], "unreachable") << s;
  EXPECT_EQ(s["gatekeeper"], "exited") << s;
  // space start brings it back with the network choice; the secret grant needs the user again.
  o = spacectl({"space", "start", id});
  ASSERT_EQ(o.exit_code, 0) << o.out << o.err;
  EXPECT_EQ(doc(o)["network_restored"], true) << o.out;
  EXPECT_EQ(doc(o)["needs_access"], json::array({"model"})) << o.out;
  o = spacectl({"policy", id});
  EXPECT_EQ(doc(o)["mode"], "allowlist") << o.out;
  EXPECT_EQ(doc(o)["domains"], json::array({"example.com"})) << o.out;
  s = listed();
  EXPECT_EQ(s["state"], "needs-access") << s;
  EXPECT_EQ(s["needs_access"], json::array({"model"})) << s;
  o = spacectl({"space", "verify", id});
  EXPECT_EQ(o.exit_code, 0) << o.out << o.err;
  // The corridor is back and still refuses what the policy refuses.
  o = spacectl({"space", "exec", id, "--", "nc", "-w", "5", gatekeeper_address(), "3128"},
               "GET / HTTP/1.0\r\n\r\n");
  EXPECT_EQ(o.out.rfind("HTTP/1.1 403", 0), 0u) << o.out << o.err;
}

// A space that floods its stdout and stderr, forks until its pids limit, fills its memory and
// spins every CPU it has while the host drives it: every host command answers within its deadline.
TEST_F(FaultsDockerTest, AHostileSpaceCannotMakeHostCommandsMissTheirDeadlines) {
  GK_REQUIRE(ready(),
             "needs a Docker engine and the pinned images (cmake --build <dir> --target images)");
  const std::string id = create("128m");
  ASSERT_TRUE(is_space_id(id));
  // The space's own processes (its main process' output goes to the capped log driver).
  background({"space", "exec", id, "--", "/bin/sh", "-c",
              "busybox yes flood-out & busybox yes flood-err >&2 & sleep 120"});
  background({"space", "exec", id, "--", "/bin/sh", "-c",
              "while :; do :; done & while :; do :; done & sleep 120"});
  background(
      {"space", "exec", id, "--", "/bin/sh", "-c", "f() { f & f; }; f 2>/dev/null; sleep 120"});
  background({"space", "exec", id, "--", "/bin/sh", "-c", "x=a; while :; do x=$x$x; done"});
  usleep(3000000);  // let the pids and memory fill
  const std::vector<std::vector<std::string>> commands = {
      {"space", "list"},
      {"space", "show", id},
      {"policy", id},
      {"journal", id},
      {"network", "set", id, "--mode", "allowlist", "--domain", "example.org"},
      {"space", "verify", id}};
  for (const std::vector<std::string>& args : commands) {
    SCOPED_TRACE(args[0] + " " + args[1]);
    const auto started = Clock::now();
    const ProcessOutcome o = spacectl(args, {}, std::chrono::seconds(90));
    EXPECT_TRUE(o.exited) << o.describe();
    EXPECT_EQ(o.exit_code, 0) << o.out << o.err;
    EXPECT_LT(Clock::now() - started, std::chrono::seconds(60));
  }
  // A command into the flooded space itself ends at its deadline with a named error, or answers.
  const auto started = Clock::now();
  const ProcessOutcome o =
      spacectl({"space", "exec", id, "--", "echo", "alive"}, {}, std::chrono::seconds(120));
  EXPECT_TRUE(o.exited) << o.describe();
  EXPECT_LT(Clock::now() - started, std::chrono::seconds(100));
  EXPECT_EQ(listed()["state"], "running");
  ProcessOutcome stopped = spacectl({"space", "stop", id}, {}, std::chrono::seconds(90));
  EXPECT_EQ(stopped.exit_code, 0) << stopped.out << stopped.err;
}

}  // namespace
}  // namespace controller
